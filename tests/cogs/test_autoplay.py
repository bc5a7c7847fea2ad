"""/krig auto: the bot plays in one message, within Discord's limits, until it should stop."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import pytest

from krigbot.engine import Game, Rules, run_to_end
from krigbot.i18n import t
from krigbot.storage import Storage
from tests.standin import DiscordStandIn, Message, RequestRecord
from tests.standin.fixtures import SampleWorld
from tests.support.autoplay import LONG_SEED, TITLE, round_shown
from tests.support.handsfree import AUTO_SECONDS, command, edit_of, running_bot
from tests.support.players import (
    UPDATE_MESSAGE,
    ChosenSeeds,
    buttons,
    flip,
    game_row,
    press,
    start_game,
    text_of,
)

STANDARD = Rules.preset("standard")
SHORT_SEED = 1230
"""Standard: 30 rounds, Alice (seat 0) takes every card."""
RETRY_AFTER = 0.3


def finished_game(seed: int) -> Game:
    game = Game.new(STANDARD, seed)
    run_to_end(game)
    return game


async def autoplaying(
    standin: DiscordStandIn, world: SampleWorld, **options: Any
) -> tuple[int, Message]:
    """Deal Alice and Bob a game, let Alice run /krig auto and wait for its first round.

    Return the game's id and autoplay's message."""
    table = await start_game(standin, world.no_channel, world.alice, world.bob)
    answer = await command(standin, world.no_channel, world.alice, "auto", **options)
    assert answer.message is not None
    await edit_of(standin, answer.message, lambda text: t("nb", "table.title", round=1) in text)
    return table.game_id, answer.message


def edits_of(standin: DiscordStandIn, message: Message) -> list[RequestRecord]:
    """Return the bot's edits of a message through the channel's REST route, in order."""
    return standin.requests_matching("PATCH", rf"^/channels/\d+/messages/{message.id}$")


async def stored_round(db_path: Path, game_id: int) -> int:
    """Return the round a game is at in the database, read while no bot runs."""
    async with await Storage.open(db_path) as storage:
        row = await storage.games.get_game(game_id)
    assert row is not None
    return row.round


async def test_autoplay_plays_to_the_end_in_one_message_at_most_one_edit_per_interval(
    standin: DiscordStandIn, world: SampleWorld, db_path: Path, seeds: ChosenSeeds
) -> None:
    seeds.fix(SHORT_SEED)
    expected = finished_game(SHORT_SEED)
    async with running_bot(standin, db_path, seeds) as bot:
        table = await start_game(standin, world.no_channel, world.alice, world.bob)

        answer = await command(standin, world.no_channel, world.alice, "auto", speed="fast")

        assert not answer.ephemeral
        message = answer.message
        assert message is not None
        running = t("nb", "auto.running", speed=t("nb", "speed.fast"), name="Alice")
        assert running in text_of(answer)
        assert list(buttons(answer)) == [
            f"krig:auto:{table.game_id}:pause",
            f"krig:auto:{table.game_id}:stop",
        ]
        over = await edit_of(standin, message, lambda text: t("nb", "auto.done") in text)

        shown = text_of(over.revision)
        assert t("nb", "table.title", round=30) in shown
        assert "🏆 " + t("nb", "over.winner", name="**Alice**") in shown
        assert t("nb", "fair.seed", seed=SHORT_SEED) in shown  # anyone can check the result
        assert f"`python -m krigbot.sim play --seed {SHORT_SEED} --variant standard`" in shown
        assert list(buttons(over.revision)) == [f"krig:rematch:{table.game_id}"]
        row = await game_row(bot, table.game_id)
        assert row.status == "finished"
        assert row.round == 30
        assert row.state == expected.to_dict()
        assert "autoplay" not in row.extra or not row.extra["autoplay"]
        edits = edits_of(standin, message)
        assert len(edits) == 30 // 5  # five rounds per edit, one message
        gaps = [b.at - a.at for a, b in itertools.pairwise(edits)]
        assert min(gaps) >= AUTO_SECONDS, gaps


async def test_autoplay_waits_out_rate_limits_and_keeps_its_spacing(
    standin: DiscordStandIn, world: SampleWorld, db_path: Path, seeds: ChosenSeeds
) -> None:
    seeds.fix(SHORT_SEED)
    expected = finished_game(SHORT_SEED)
    async with running_bot(standin, db_path, seeds) as bot:
        table = await start_game(standin, world.no_channel, world.alice, world.bob)
        answer = await command(standin, world.no_channel, world.alice, "auto", speed="fast")
        message = answer.message
        assert message is not None
        fault = standin.fail_next(
            "PATCH",
            rf"^/channels/\d+/messages/{message.id}$",
            status=429,
            times=2,
            retry_after=RETRY_AFTER,
        )

        await edit_of(standin, message, lambda text: t("nb", "auto.done") in text)

        assert len(fault.hits) == 2
        edits = edits_of(standin, message)
        assert [edit.status for edit in edits[:2]] == [429, 429]
        assert [edit.status for edit in edits[2:]] == [200] * (30 // 5)  # nothing was lost
        for before, after in itertools.pairwise(edits):
            wait = RETRY_AFTER if before.status == 429 else AUTO_SECONDS
            assert after.at - before.at >= wait, (before, after)
        row = await game_row(bot, table.game_id)
        assert row.state == expected.to_dict()
        assert t("nb", "table.title", round=30) in text_of(message)


async def test_a_player_pauses_resumes_and_stops_autoplay_and_others_are_refused(
    standin: DiscordStandIn, world: SampleWorld, db_path: Path, seeds: ChosenSeeds
) -> None:
    seeds.fix(LONG_SEED)
    async with running_bot(standin, db_path, seeds) as bot:
        game_id, message = await autoplaying(standin, world)
        pause = f"krig:auto:{game_id}:pause"

        refused = await press(standin, message, pause, world.carol)
        paused = await press(standin, message, pause, world.bob)

        assert refused.ephemeral
        assert refused.content == t("en", "err.not_player")
        assert paused.type == UPDATE_MESSAGE
        assert t("nb", "auto.paused", name="Bob") in text_of(paused)
        assert list(buttons(paused)) == [
            f"krig:auto:{game_id}:resume",
            f"krig:auto:{game_id}:stop",
        ]
        autoplay = bot.get_cog("Autoplay")
        assert autoplay is not None
        assert not autoplay.playing(world.no_channel.id)  # type: ignore[attr-defined]
        row = await game_row(bot, game_id)
        assert row.extra["autoplay"]["state"] == "paused"
        assert t("nb", "table.title", round=row.round) in text_of(
            paused
        )  # every round played is shown
        paused_at = row.round

        resumed = await press(standin, message, f"krig:auto:{game_id}:resume", world.alice)
        assert resumed.type == UPDATE_MESSAGE
        await edit_of(
            standin,
            message,
            lambda text: TITLE.search(text) is not None and round_shown(text) > paused_at,
        )
        stopped = await press(standin, message, f"krig:auto:{game_id}:stop", world.bob)

        assert t("nb", "auto.stopped", name="Bob") in text_of(stopped)
        row = await game_row(bot, game_id)
        assert row.status == "running"
        assert not row.extra.get("autoplay")
        assert not autoplay.playing(world.no_channel.id)  # type: ignore[attr-defined]
        assert list(buttons(stopped)) == [f"krig:flip:{game_id}:{row.round}"]
        by_hand = await press(standin, message, f"krig:flip:{game_id}:{row.round}", world.bob)
        assert by_hand.type == UPDATE_MESSAGE
        assert t("nb", "table.title", round=row.round + 1) in text_of(by_hand)


async def test_a_flip_by_hand_stops_autoplay(
    standin: DiscordStandIn, world: SampleWorld, db_path: Path, seeds: ChosenSeeds
) -> None:
    seeds.fix(LONG_SEED)
    async with running_bot(standin, db_path, seeds) as bot:
        game_id, message = await autoplaying(standin, world)

        by_hand = await flip(standin, world.no_channel, world.bob)
        stopped = await edit_of(standin, message, lambda text: t("nb", "auto.hand_flip") in text)

        assert not by_hand.ephemeral
        shown = text_of(stopped.revision)
        assert t("nb", "auto.hand_flip") in shown
        # It says only that it stopped: not also that the bot plays.
        assert t("nb", "auto.running", speed=t("nb", "speed.normal"), name="Alice") not in shown
        assert TITLE.search(shown)  # the table it showed is still there
        assert buttons(stopped.revision) == {}
        row = await game_row(bot, game_id)
        assert row.status == "running"
        assert not row.extra.get("autoplay")


async def test_autoplay_is_refused_to_onlookers_and_when_it_already_runs(
    standin: DiscordStandIn, world: SampleWorld, db_path: Path, seeds: ChosenSeeds
) -> None:
    seeds.fix(LONG_SEED)
    async with running_bot(standin, db_path, seeds):
        table = await start_game(standin, world.no_channel, world.alice, world.bob)

        onlooker = await command(standin, world.no_channel, world.carol, "auto")
        first = await command(standin, world.no_channel, world.alice, "auto")
        second = await command(standin, world.no_channel, world.bob, "auto")

        assert onlooker.ephemeral
        assert onlooker.content == t("en", "err.not_player")
        assert not first.ephemeral
        assert second.ephemeral
        assert second.content == t("sv", "auto.already")
        assert first.message is not None
        await press(standin, first.message, f"krig:auto:{table.game_id}:stop", world.alice)


async def test_autoplay_carries_on_after_a_restart(
    standin: DiscordStandIn, world: SampleWorld, db_path: Path, seeds: ChosenSeeds
) -> None:
    seeds.fix(LONG_SEED)
    async with running_bot(standin, db_path, seeds):
        game_id, message = await autoplaying(standin, world, speed="slow")
    before = await stored_round(db_path, game_id)
    events = len(standin.channel_events)

    async with running_bot(standin, db_path, seeds) as restarted:
        resumed = await edit_of(
            standin,
            message,
            lambda text: TITLE.search(text) is not None and round_shown(text) > before,
            start=events,
        )

        assert t("nb", "auto.running", speed=t("nb", "speed.slow"), name="Alice") in text_of(
            resumed.revision
        )
        row = await game_row(restarted, game_id)
        assert row.round > before
        assert row.extra["autoplay"]["state"] == "running"
        stopped = await press(standin, message, f"krig:auto:{game_id}:stop", world.alice)
        assert stopped.type == UPDATE_MESSAGE


async def test_autoplay_whose_message_is_gone_after_a_restart_stops_and_says_so(
    standin: DiscordStandIn, world: SampleWorld, db_path: Path, seeds: ChosenSeeds
) -> None:
    seeds.fix(LONG_SEED)
    async with running_bot(standin, db_path, seeds):
        game_id, message = await autoplaying(standin, world, speed="slow")
    # What Discord answers once someone deleted the message while the bot was away.
    standin.fail_next("PATCH", rf"^/channels/\d+/messages/{message.id}$", status=404, code=10008)
    watcher = standin.watch(world.no_channel)

    async with running_bot(standin, db_path, seeds) as restarted:
        told = await watcher.next("create")

        assert told.message.content == t("nb", "auto.gone")
        row = await game_row(restarted, game_id)
        assert row.status == "running"
        assert not row.extra.get("autoplay")


@pytest.mark.parametrize("ending", ["cancel", "finish"])
async def test_autoplay_stops_when_the_game_is_cancelled_or_played_out(
    standin: DiscordStandIn, world: SampleWorld, db_path: Path, ending: str, seeds: ChosenSeeds
) -> None:
    seeds.fix(LONG_SEED)
    async with running_bot(standin, db_path, seeds) as bot:
        game_id, message = await autoplaying(standin, world, speed="slow")

        if ending == "cancel":
            await command(standin, world.no_channel, world.moderator, "cancel")
        else:
            asked = await command(standin, world.no_channel, world.bob, "finish")
            assert asked.message is not None
            await press(standin, asked.message, f"krig:finish:{game_id}:yes", world.alice)
        stopped = await edit_of(standin, message, lambda text: t("nb", "auto.ended") in text)

        shown = text_of(stopped.revision)
        assert t("nb", "auto.ended") in shown
        assert t("nb", "auto.running", speed=t("nb", "speed.slow"), name="Alice") not in shown
        assert buttons(stopped.revision) == {}
        row = await game_row(bot, game_id)
        assert row.status == ("cancelled" if ending == "cancel" else "finished")
        assert not row.extra.get("autoplay")
        autoplay = bot.get_cog("Autoplay")
        assert autoplay is not None
        assert not autoplay.playing(world.no_channel.id)  # type: ignore[attr-defined]
