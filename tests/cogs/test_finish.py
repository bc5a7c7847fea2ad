"""/krig finish: every other player agrees, and the game is played to its end at once."""

from __future__ import annotations

import asyncio
import json
import re
import shlex
from pathlib import Path

import pytest

from krigbot import sim
from krigbot.cogs.autoplay import AutoplayCog
from krigbot.engine import Game, Rules, run_to_end
from krigbot.i18n import t
from krigbot.render.replays import rebuild
from tests.standin import DiscordStandIn
from tests.standin.fixtures import SampleWorld
from tests.support.handsfree import command, running_bot
from tests.support.players import (
    UPDATE_MESSAGE,
    ChosenSeeds,
    buttons,
    enabled_buttons,
    flip,
    game_row,
    press,
    public_messages,
    settled,
    start_game,
    text_of,
)
from tests.support.texts import pattern

LONG_SEED = 17
"""Standard: 117 rounds, Bob (seat 1) wins, ten wars."""
ETERNAL_SEED = 49
"""Standard with pickup=table: round 145 repeats round 94 (every 52 rounds), a draw."""


def yes(game_id: int) -> str:
    return f"krig:finish:{game_id}:yes"


def no(game_id: int) -> str:
    return f"krig:finish:{game_id}:no"


async def test_the_game_is_played_to_its_end_once_every_other_player_agrees(
    standin: DiscordStandIn,
    world: SampleWorld,
    db_path: Path,
    capsys: pytest.CaptureFixture[str],
    seeds: ChosenSeeds,
) -> None:
    seeds.fix(LONG_SEED)
    expected = Game.new(Rules.preset("standard"), LONG_SEED)
    outcome = run_to_end(expected)
    story = rebuild(expected.to_dict())
    big = story.biggest_war
    assert big is not None
    async with running_bot(standin, db_path, seeds) as bot:
        table = await start_game(standin, world.no_channel, world.alice, world.bob)
        await flip(standin, world.no_channel, world.alice, count=10)

        asked = await command(standin, world.no_channel, world.alice, "finish")

        assert not asked.ephemeral
        assert not asked.content  # the one who has to agree is named, not pinged
        assert asked.message is not None
        assert asked.message.pinged == []
        assert t("nb", "finish.ask", name="Alice") in text_of(asked)
        assert t("nb", "challenge.waiting", players="Bob") in text_of(asked)
        assert list(buttons(asked)) == [yes(table.game_id), no(table.game_id)]
        assert asked.message is not None
        assert (await game_row(bot, table.game_id)).round == 10  # nothing played yet

        done = await press(standin, asked.message, yes(table.game_id), world.bob)

        assert done.type == UPDATE_MESSAGE
        shown = text_of(done)
        assert t("nb", "finish.done", game=table.game_id) in shown
        assert "🏆 " + t("nb", "over.winner", name="**Bob**") in shown
        wars, changes = len(story.story.wars), story.story.lead_changes
        assert t("nb", "summary.rounds", rounds=outcome.rounds, wars=wars, changes=changes) in shown
        assert (
            t(
                "nb",
                "summary.biggest_war",
                count=big.steps,
                round=big.round,
                steps=big.steps,
                name=["Alice", "Bob"][big.winner or 0],
                cards=big.cards,
            )
            in shown
        )
        # The summary's figures, not the result's again.
        assert pattern("nb", "over.stats").search(shown) is None
        assert t("nb", "fair.seed", seed=LONG_SEED) in shown
        assert list(buttons(done)) == [f"krig:rematch:{table.game_id}"]
        assert "story.png" in {name for name, _ in done.files}  # the chart: pictures are on
        row = await game_row(bot, table.game_id)
        assert row.status == "finished"
        assert row.round == outcome.rounds
        assert row.state == expected.to_dict()
        assert row.result is not None

    # Anyone can check the result: the command in the message prints the same game.
    (line,) = re.findall(r"`(python -m krigbot\.sim play [^`]+)`", shown)
    assert sim.main(shlex.split(line)[3:]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["seed"] == row.seed
    assert printed["rules"] == row.rules
    assert (printed["winners"], printed["rounds"], printed["reason"]) == (
        row.result["winners"],
        row.result["rounds"],
        row.result["reason"],
    )


async def test_without_every_agreement_nothing_is_played(
    standin: DiscordStandIn, world: SampleWorld, db_path: Path, seeds: ChosenSeeds
) -> None:
    seeds.fix(LONG_SEED)
    async with running_bot(standin, db_path, seeds) as bot:
        table = await start_game(standin, world.no_channel, world.alice, world.bob, world.carol)
        asked = await command(standin, world.no_channel, world.alice, "finish")
        assert asked.message is not None
        message = asked.message

        again = await press(standin, message, yes(table.game_id), world.alice)
        onlooker = await press(standin, message, yes(table.game_id), world.moderator)
        one = await press(standin, message, yes(table.game_id), world.bob)

        assert again.ephemeral
        assert again.content == t("nb", "finish.already_agreed")
        assert onlooker.ephemeral
        assert onlooker.content == t("nb", "err.not_player")
        assert one.type == UPDATE_MESSAGE
        assert t("nb", "challenge.waiting", players="Carol") in text_of(one)
        assert (await game_row(bot, table.game_id)).round == 0

        declined = await press(standin, message, no(table.game_id), world.carol)

        assert declined.type == UPDATE_MESSAGE
        assert t("nb", "finish.declined", name="Carol") in text_of(declined)
        assert buttons(declined) == {}
        row = await game_row(bot, table.game_id)
        assert (row.status, row.round) == ("running", 0)
        assert not row.extra.get("finish")
        answer = await flip(standin, world.no_channel, world.alice)
        assert t("nb", "table.title", round=1) in text_of(answer)


async def test_an_eternal_deal_is_explained_as_a_draw(
    standin: DiscordStandIn, world: SampleWorld, db_path: Path, seeds: ChosenSeeds
) -> None:
    seeds.fix(ETERNAL_SEED)
    async with running_bot(standin, db_path, seeds) as bot:
        table = await start_game(standin, world.no_channel, world.alice, world.bob, pickup="table")
        asked = await command(standin, world.no_channel, world.bob, "finish")
        assert asked.message is not None

        done = await press(standin, asked.message, yes(table.game_id), world.alice)

        shown = text_of(done)
        assert t("nb", "over.draw") in shown
        assert t("nb", "summary.eternal", count=52, n=52, start=94) in shown
        assert t("nb", "over.reason.eternal_cycle", count=52, n=52) not in shown  # told once
        assert "🏆" not in shown
        assert "--set pickup=table" in shown
        row = await game_row(bot, table.game_id)
        assert row.result is not None
        assert (row.result["reason"], row.result["cycle"], row.round) == ("eternal", 52, 145)


async def test_only_players_may_ask_and_only_in_a_running_game(
    standin: DiscordStandIn, world: SampleWorld, db_path: Path
) -> None:
    async with running_bot(standin, db_path):
        none = await command(standin, world.no_channel, world.alice, "finish")
        await start_game(standin, world.no_channel, world.alice, world.bob)
        onlooker = await command(standin, world.no_channel, world.carol, "finish")

        assert none.ephemeral
        assert none.content == t("nb", "err.no_game")
        assert onlooker.ephemeral
        assert onlooker.content == t("en", "err.not_player")


async def test_a_finish_agreed_just_before_the_bot_stopped_greys_its_request_when_it_is_back(
    standin: DiscordStandIn,
    world: SampleWorld,
    db_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    seeds: ChosenSeeds,
) -> None:
    seeds.fix(LONG_SEED)
    async with running_bot(standin, db_path, seeds) as first:
        table = await start_game(standin, world.no_channel, world.alice, world.bob)
        shown = await flip(standin, world.no_channel, world.alice, count=10)
        asked = await command(standin, world.no_channel, world.alice, "finish")
        assert asked.message is not None
        await settled()
        committed = asyncio.Event()

        async def stopped_before_the_answer(*args: object, **kwargs: object) -> None:
            committed.set()
            await asyncio.Event().wait()  # the bot stops here: the end is committed

        monkeypatch.setattr(AutoplayCog, "_finished", stopped_before_the_answer)
        await standin.click(asked.message, yes(table.game_id), user=world.bob)
        await asyncio.wait_for(committed.wait(), timeout=5)
        assert (await game_row(first, table.game_id)).status == "finished"
        monkeypatch.undo()
    watcher = standin.watch(world.no_channel)

    async with running_bot(standin, db_path, seeds):
        told = await watcher.next("create", timeout=5)
        await settled()

    assert t("nb", "end.after_restart", game=table.game_id) in text_of(told.revision)
    # What still offered buttons for the game is grey and says why.
    assert enabled_buttons(asked.message) == []
    assert t("nb", "finish.game_ended") in text_of(asked.message)
    assert t("nb", "challenge.waiting", players="Bob") not in text_of(asked.message)
    assert shown.message is not None
    assert enabled_buttons(shown.message) == []
    assert t("nb", "end.shown_below") in text_of(shown.message)


@pytest.mark.parametrize("players", [3, 4])
async def test_with_three_or_four_players_the_story_goes_into_the_request_as_with_two(
    standin: DiscordStandIn, world: SampleWorld, db_path: Path, seeds: ChosenSeeds, players: int
) -> None:
    seeds.fix(LONG_SEED)
    others = [world.bob, world.carol, world.moderator][: players - 1]
    async with running_bot(standin, db_path, seeds):
        table = await start_game(standin, world.no_channel, world.alice, *others)
        newest = (await flip(standin, world.no_channel, world.alice, count=3)).message
        assert newest is not None
        asked = await command(standin, world.no_channel, world.alice, "finish")
        assert asked.message is not None
        before = len(public_messages(standin, world.no_channel))
        answers = [await press(standin, asked.message, yes(table.game_id), others[0])]
        await settled()
        # Still waiting: the table keeps its Flip button (the request is no table).
        still = enabled_buttons(newest)
        answers += [await press(standin, asked.message, yes(table.game_id), o) for o in others[1:]]
        await settled()
        after = len(public_messages(standin, world.no_channel))

    assert [a.type for a in answers] == [UPDATE_MESSAGE] * len(others)
    assert t("nb", "finish.done", game=table.game_id) in text_of(answers[-1])
    assert t("nb", "finish.done", game=table.game_id) in text_of(asked.message)
    assert after == before  # no new message: the story is in the request
    assert still == [f"krig:flip:{table.game_id}:3"]


async def test_a_request_asked_before_a_restart_goes_grey_when_the_game_ends_after_it(
    standin: DiscordStandIn, world: SampleWorld, db_path: Path, seeds: ChosenSeeds
) -> None:
    seeds.fix(LONG_SEED)
    async with running_bot(standin, db_path, seeds):
        table = await start_game(standin, world.no_channel, world.alice, world.bob)
        asked = await command(standin, world.no_channel, world.alice, "finish")
        assert asked.message is not None
        await settled()
    async with running_bot(standin, db_path, seeds) as restarted:
        while (await game_row(restarted, table.game_id)).status == "running":
            await flip(standin, world.no_channel, world.bob, count=50)
        await settled()

    assert enabled_buttons(asked.message) == []
    assert t("nb", "finish.game_ended") in text_of(asked.message)


async def test_a_request_asked_before_a_restart_goes_grey_when_a_new_one_replaces_it(
    standin: DiscordStandIn, world: SampleWorld, db_path: Path, seeds: ChosenSeeds
) -> None:
    seeds.fix(LONG_SEED)
    async with running_bot(standin, db_path, seeds):
        table = await start_game(standin, world.no_channel, world.alice, world.bob)
        older = await command(standin, world.no_channel, world.alice, "finish")
        assert older.message is not None
        await settled()
    async with running_bot(standin, db_path, seeds):
        newer = await command(standin, world.no_channel, world.bob, "finish")
        assert newer.message is not None
        await settled()

    # Only the newer request still asks; the older one says why it no longer does.
    assert enabled_buttons(older.message) == []
    assert t("nb", "finish.replaced") in text_of(older.message)
    assert enabled_buttons(newer.message) == [yes(table.game_id), no(table.game_id)]
