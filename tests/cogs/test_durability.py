"""Every round is saved before anyone sees it, and a restarted bot carries on where it stopped."""

from __future__ import annotations

import asyncio
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import discord
import pytest

from krigbot.bot import KrigBot
from krigbot.cogs.play import PlayCog
from krigbot.engine import Game, Rules
from krigbot.i18n import card_label, t
from krigbot.storage import DatabaseLockedError, GameStore
from tests.standin import DiscordStandIn, InteractionRecord, Message
from tests.standin.fixtures import SampleWorld
from tests.standin.world import Overwrite
from tests.support.flip_stream import round_shown
from tests.support.handsfree import running_bot
from tests.support.players import (
    UPDATE_MESSAGE,
    ChosenSeeds,
    Clock,
    answer_of,
    buttons,
    challenge_message,
    enabled_buttons,
    flip,
    flip_button,
    game_id_of,
    game_row,
    press,
    settled,
    start_game,
    text_of,
)
from tests.support.texts import pattern
from tests.support.time_limit import bot_on

SEED = 20_251_129


@pytest.mark.parametrize(
    ("opponents", "rounds_before"),
    [(1, 7), (2, 9)],  # three players shuffle won cards: the random state must survive too
    ids=["two players", "three players"],
)
async def test_a_restarted_bot_continues_the_game_with_the_same_future(
    standin: DiscordStandIn,
    world: SampleWorld,
    db_path: Path,
    opponents: int,
    rounds_before: int,
    seeds: ChosenSeeds,
) -> None:
    players = [world.alice, world.bob, world.carol][: opponents + 1]
    seeds.fix(SEED)
    async with running_bot(standin, db_path, seeds):
        table = await start_game(standin, world.no_channel, *players)
        newest = (await flip(standin, world.no_channel, world.alice, count=rounds_before)).message
        assert newest is not None

    async with running_bot(standin, db_path, seeds) as restarted:
        # The Flip button of the newest table message, sent by the bot before it stopped.
        answer = await press(standin, newest, flip_button(newest), world.bob)

        assert answer.type == UPDATE_MESSAGE
        row = await restarted.storage.games.get_game(table.game_id)
        assert row is not None
        expected = Game.new(Rules.from_dict(row.rules), row.seed)
        for _ in range(rounds_before):
            expected.play_round()
        next_round = expected.play_round()
        shown = text_of(newest)
        assert t("nb", "table.title", round=rounds_before + 1) in shown
        for _, card in next_round.battle:
            assert card_label(card, "nb") in shown
        assert row.round == rounds_before + 1
        assert row.state == expected.to_dict()


async def test_an_open_challenge_survives_a_restart_and_can_be_accepted(
    standin: DiscordStandIn, world: SampleWorld, db_path: Path
) -> None:
    async with running_bot(standin, db_path):
        message = await challenge_message(standin, world.no_channel, world.alice, world.bob)

    async with running_bot(standin, db_path):
        answer = await press(standin, message, f"krig:accept:{game_id_of(message)}", world.bob)

        assert answer.type == UPDATE_MESSAGE
        assert t("nb", "table.title", round=0) in text_of(message)
        assert flip_button(message) == f"krig:flip:{game_id_of(message)}:0"


async def test_an_open_challenge_still_expires_after_a_restart(
    standin: DiscordStandIn, world: SampleWorld, db_path: Path
) -> None:
    async with running_bot(standin, db_path, challenge_seconds=1.0):
        message = await challenge_message(standin, world.no_channel, world.alice, world.bob)
        game_id = game_id_of(message)
    watcher = standin.watch(world.no_channel)

    async with running_bot(standin, db_path, challenge_seconds=1.0) as restarted:
        expired = await watcher.next("edit", predicate=lambda e: e.message is message, timeout=5)

        assert pattern("nb", "challenge.expired").search(text_of(expired.revision))
        row = await restarted.storage.games.get_game(game_id)
        assert row is not None
        assert row.status == "expired"


async def test_a_game_whose_save_cannot_be_read_is_ended_at_start_up_and_the_channel_told(
    standin: DiscordStandIn, world: SampleWorld, db_path: Path
) -> None:
    async with running_bot(standin, db_path) as first:
        table = await start_game(standin, world.no_channel, world.alice, world.bob)
        await flip(standin, world.no_channel, world.alice)
        row = await first.storage.games.get_game(table.game_id)
        assert row is not None
        assert row.state is not None
        damaged = {**row.state, "piles": [[999]]}  # not a card code any more
        await first.storage.games.save_round(
            row.id, expected_round=1, state=damaged, round=1, now=datetime.now(UTC)
        )
    watcher = standin.watch(world.no_channel)

    async with running_bot(standin, db_path) as restarted:
        # Saved games are checked in the background once the bot is connected, so the error
        # it logs comes while this test waits: expected here, and claimed below.
        standin.fail_fast_on_bot_errors = False
        told = await watcher.next("create", timeout=5)
        (logged,) = standin.accept_bot_errors()  # the damaged game, with its traceback

        assert told.revision.content == t("nb", "err.unreadable")
        assert told.message.mentions == []
        assert logged.exc_info is not None
        ended = await restarted.storage.games.get_game(table.game_id)
        assert ended is not None
        assert (ended.status, ended.result) == ("abandoned", {"error": "unreadable"})
        await challenge_message(standin, world.no_channel, world.bob, world.alice)


def reply_sent_at(standin: DiscordStandIn, rec: InteractionRecord) -> float:
    """Return when the request that showed the interaction's reply reached Discord.

    That is the answer itself, or after a deferral (a busy machine) what filled it in.
    """
    if rec.callbacks.items[0].deferred:
        shown = standin.requests_matching("*", f"/webhooks/.*/{rec.token}")
    else:
        shown = standin.requests_matching("POST", f"/interactions/{rec.id}/")
    return shown[0].at


async def test_every_round_is_saved_before_the_reply_goes_out(
    standin: DiscordStandIn, world: SampleWorld, bot: KrigBot, monkeypatch: pytest.MonkeyPatch
) -> None:
    table = await start_game(standin, world.no_channel, world.alice, world.bob)
    saved_at: list[float] = []
    real = GameStore.save_round

    async def save_round(self: GameStore, *args: Any, **kwargs: Any) -> bool:
        done = await real(self, *args, **kwargs)
        saved_at.append(time.perf_counter())
        return done

    monkeypatch.setattr(GameStore, "save_round", save_round)

    command = await standin.slash("flip", user=world.alice, channel=world.no_channel)
    newest = (await answer_of(standin, command)).message
    assert newest is not None
    button = await standin.click(newest, flip_button(newest), user=world.bob)
    await answer_of(standin, button)

    answered_at = [reply_sent_at(standin, rec) for rec in (command, button)]
    assert len(saved_at) == 2
    assert saved_at[0] < answered_at[0]
    assert saved_at[1] < answered_at[1]
    assert (await game_row(bot, table.game_id)).round == 2


async def test_a_round_that_cannot_be_saved_is_never_shown_and_is_dealt_again(
    standin: DiscordStandIn,
    world: SampleWorld,
    bot: KrigBot,
    monkeypatch: pytest.MonkeyPatch,
    errors_expected: None,
    seeds: ChosenSeeds,
) -> None:
    seeds.fix(SEED)
    table = await start_game(standin, world.no_channel, world.alice, world.bob)

    async def locked(self: GameStore, *args: Any, **kwargs: Any) -> bool:
        raise DatabaseLockedError("database is locked")

    with monkeypatch.context() as patch:
        patch.setattr(GameStore, "save_round", locked)
        failed = await flip(standin, world.no_channel, world.alice)
    (logged,) = standin.accept_bot_errors()

    assert "database is locked" in logged.getMessage()  # one line that says why
    assert failed.ephemeral
    assert failed.content == t("nb", "err.storage")
    assert t("nb", "table.title", round=1) not in text_of(table.message)
    expected = Game.new(Rules.preset("standard"), SEED)
    first_round = expected.play_round()
    played = await flip(standin, world.no_channel, world.alice)
    assert played.embeds[0]["title"] == t("nb", "table.title", round=1)
    for _, card in first_round.battle:
        assert card_label(card, "nb") in played.embeds[0]["description"]
    row = await bot.storage.games.get_game(table.game_id)
    assert row is not None
    assert row.state == expected.to_dict()


async def test_flips_in_two_channels_do_not_wait_for_each_other(
    standin: DiscordStandIn, world: SampleWorld, bot: KrigBot
) -> None:
    await start_game(standin, world.no_channel, world.alice, world.bob)
    await start_game(standin, world.sv_channel, world.alice, world.bob)
    hold = asyncio.Event()
    real = GameStore.save_round
    held_channel = world.no_channel.id

    async def save_round(self: GameStore, game_id: int, **kwargs: Any) -> bool:
        row = await self.get_game(game_id)
        if row is not None and row.channel_id == held_channel:
            await hold.wait()
        return await real(self, game_id, **kwargs)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(GameStore, "save_round", save_round)
        stuck = await standin.slash("flip", user=world.alice, channel=world.no_channel)
        free = await flip(standin, world.sv_channel, world.bob)
        assert free.embeds[0]["title"] == t("sv", "table.title", round=1)
        # Still saving in the other channel: nothing shown yet (a deferral at most).
        assert all(answer.deferred for answer in stuck.callbacks.items)
        assert stuck.followups.items == []
        hold.set()
        shown = await answer_of(standin, stuck)
        assert shown.embeds[0]["title"] == t("nb", "table.title", round=1)


ALICE_WINS = 132
"""Standard: 34 rounds, Alice (seat 0) takes every card."""


@pytest.mark.slow
async def test_an_end_committed_but_never_shown_is_shown_by_the_restarted_bot(
    standin: DiscordStandIn,
    world: SampleWorld,
    db_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    seeds: ChosenSeeds,
) -> None:
    seeds.fix(ALICE_WINS)
    async with running_bot(standin, db_path, seeds) as first:
        table = await start_game(standin, world.no_channel, world.alice, world.bob)
        await flip(standin, world.no_channel, world.alice, count=33)
        committed = asyncio.Event()

        async def stopped_before_the_answer(*args: Any, **kwargs: Any) -> None:
            committed.set()
            await asyncio.Event().wait()  # the bot stops here: the last round is committed

        monkeypatch.setattr(PlayCog, "_table_reply", stopped_before_the_answer)
        await standin.slash("flip", user=world.bob, channel=world.no_channel)
        await asyncio.wait_for(committed.wait(), timeout=5)
        assert (await game_row(first, table.game_id)).status == "finished"
        monkeypatch.undo()
    before = len(standin.messages(world.no_channel))
    watcher = standin.watch(world.no_channel)

    async with running_bot(standin, db_path, seeds) as restarted:
        told = await watcher.next("create", timeout=5)
        await settled()

        shown = text_of(told.revision)
        assert t("nb", "end.after_restart", game=table.game_id) in shown
        assert "🏆 " + t("nb", "over.winner", name="**Alice**") in shown
        assert t("nb", "fair.seed", seed=ALICE_WINS) in shown
        assert list(buttons(told.message)) == [f"krig:rematch:{table.game_id}"]
        assert told.message.pinged == []
        assert (await game_row(restarted, table.game_id)).extra.get("ending") is None

    async with running_bot(standin, db_path, seeds):
        await settled()
    assert len(standin.messages(world.no_channel)) == before + 1  # shown once, not again


async def test_a_challenge_that_expired_while_the_bot_was_down_loses_its_buttons_saying_why(
    standin: DiscordStandIn, world: SampleWorld, db_path: Path
) -> None:
    clock = Clock()
    async with bot_on(standin, db_path, clock):
        message = await challenge_message(standin, world.no_channel, world.alice, world.bob)
    clock.advance(minutes=6)  # challenges wait five minutes
    watcher = standin.watch(world.no_channel)

    async with bot_on(standin, db_path, clock):
        expired = await watcher.next("edit", predicate=lambda e: e.message is message, timeout=5)

    assert pattern("nb", "challenge.expired").search(text_of(expired.revision))
    assert enabled_buttons(message) == []


async def unstored_challenge(
    standin: DiscordStandIn,
    world: SampleWorld,
    db_path: Path,
    clock: Clock,
    monkeypatch: pytest.MonkeyPatch,
) -> Message:
    """Return a challenge the bot showed and stopped before storing which message it was in;
    another member wrote after it."""
    async with bot_on(standin, db_path, clock) as first:

        async def stopped_before_storing(*args: Any, **kwargs: Any) -> bool:
            return True  # the bot stops between showing the challenge and storing its message

        monkeypatch.setattr(GameStore, "set_challenge_message", stopped_before_storing)
        message = await challenge_message(standin, world.no_channel, world.alice, world.bob)
        standin.user_message(world.no_channel, world.carol, "kjør på!")
        assert (await game_row(first, game_id_of(message))).challenge_message_id is None
        monkeypatch.undo()
    return message


async def test_a_challenge_whose_message_was_never_stored_still_expires_after_a_restart(
    standin: DiscordStandIn, world: SampleWorld, db_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    clock = Clock()
    message = await unstored_challenge(standin, world, db_path, clock, monkeypatch)
    game_id = game_id_of(message)
    clock.advance(minutes=6)  # challenges wait five minutes
    watcher = standin.watch(world.no_channel)

    async with bot_on(standin, db_path, clock) as restarted:
        expired = await watcher.next("edit", predicate=lambda e: e.message is message, timeout=5)
        assert (await game_row(restarted, game_id)).status == "expired"

    assert pattern("nb", "challenge.expired").search(text_of(expired.revision))
    assert enabled_buttons(message) == []


async def test_an_unstored_challenge_the_bot_cannot_find_shows_its_expiry_when_pressed(
    standin: DiscordStandIn, world: SampleWorld, db_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    clock = Clock()
    message = await unstored_challenge(standin, world, db_path, clock, monkeypatch)
    game_id = game_id_of(message)
    # Nobody may read the channel's history: the bot cannot look for the message.
    history = discord.Permissions(read_message_history=True).value
    world.no_channel.overwrites[world.no_guild.id] = Overwrite(world.no_guild.id, 0, deny=history)
    clock.advance(minutes=6)

    async with bot_on(standin, db_path, clock) as restarted:
        answer = await press(standin, message, f"krig:accept:{game_id}", world.bob)
        assert (await game_row(restarted, game_id)).status == "expired"

    assert answer.type == UPDATE_MESSAGE
    assert pattern("nb", "challenge.expired").search(text_of(message))
    assert enabled_buttons(message) == []


async def test_a_flip_in_progress_when_the_bot_stops_is_answered_before_it_closes(
    standin: DiscordStandIn, world: SampleWorld, bot: KrigBot, monkeypatch: pytest.MonkeyPatch
) -> None:
    await start_game(standin, world.no_channel, world.alice, world.bob)
    saving, go_on = asyncio.Event(), asyncio.Event()
    real = GameStore.save_round

    async def save_round(self: GameStore, *args: Any, **kwargs: Any) -> bool:
        saving.set()
        await go_on.wait()
        return await real(self, *args, **kwargs)

    monkeypatch.setattr(GameStore, "save_round", save_round)
    command = await standin.slash("flip", user=world.alice, channel=world.no_channel)
    await asyncio.wait_for(saving.wait(), timeout=10)
    # A SIGTERM (a restart, an upgrade) comes while the flip is being saved: the bot's
    # connection to the gateway closes, so nothing more comes in...
    closed = standin.gateway_events.cursor()
    (running,) = [task for task in asyncio.all_tasks() if task.get_name() == "standin-bot"]
    standin.unwatch_task(running)  # it ends once the bot has closed, as the test asks
    closing = asyncio.create_task(bot.close())
    await closed.next(lambda event: event.kind == "close", timeout=10)
    # ...and the flip that came before is still played and shown, then the bot closes.
    go_on.set()
    answer = await answer_of(standin, command, shows=True)
    assert answer.message is not None
    assert round_shown(answer.message) == 1
    await asyncio.wait_for(closing, timeout=10)
