"""Two processes of the bot holding one shard (a hand-off), each with its own copy of a game.

Both are the real bot on one database and one stand-in whose gateway keeps both sessions of the
shard (``Gateway.overlapping``), so the channel's interactions reach each in turn, and both
restore the same timers and the same autoplay.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from krigbot.bot import KrigBot
from krigbot.engine import load_game
from krigbot.i18n import t
from krigbot.render.embeds import names_of
from krigbot.render.steal import look_text
from krigbot.storage import GameRow
from tests.standin import DiscordStandIn, Message
from tests.standin.fixtures import SampleWorld
from tests.support.autoplay import LONG_SEED, TITLE, round_shown
from tests.support.handsfree import command, edit_of, running_bot
from tests.support.players import (
    UPDATE_MESSAGE,
    ChosenSeeds,
    Table,
    buttons,
    flip_button,
    game_row,
    press,
    start_game,
    text_of,
)
from tests.support.settings import BACKENDS
from tests.support.steal_war import STEAL_ONE, look_button, start_steal_war, table_id, top_buttons

pytestmark = pytest.mark.slow


def autoplaying(bot: KrigBot, channel_id: int) -> bool:
    """Tell whether autoplay plays in a channel in this process."""
    cog = bot.get_cog("Autoplay")
    assert cog is not None
    return bool(cog.playing(channel_id))  # type: ignore[attr-defined]


@dataclass
class HandedOff:
    """An autoplay both processes of a shard restored, and which of them plays it."""

    table: Table
    message: Message
    plays: KrigBot
    idle: KrigBot
    task: asyncio.Task[None]
    """The task that plays it, in ``plays``."""
    events: int
    """The channel events before the second process came up."""


@contextlib.asynccontextmanager
async def handed_off(
    standin: DiscordStandIn,
    world: SampleWorld,
    db_path: Path,
    database: str | Path,
    seeds: ChosenSeeds,
) -> AsyncIterator[HandedOff]:
    """Start autoplay in one process, then a second on the same shard; interactions for the
    channel then go to the one that does not play it (``Gateway.aimed``)."""
    standin.gateway.overlapping = True
    seeds.fix(LONG_SEED)
    channel = world.no_channel
    assert channel.guild is not None
    async with running_bot(standin, db_path, seeds, database=database) as first:
        table = await start_game(standin, channel, world.alice, world.bob)
        answer = await command(standin, channel, world.alice, "auto", speed="normal")
        message = answer.message
        assert message is not None
        await edit_of(standin, message, lambda text: t("nb", "table.title", round=2) in text)
        events = len(standin.channel_events)
        # The shard's new session comes up while the old one still plays: both restore it.
        async with running_bot(standin, db_path, seeds, database=database) as second:
            # The first step of one to lose left the game to the other.
            restored = (await game_row(second, table.game_id)).round
            await edit_of(
                standin,
                message,
                lambda text: TITLE.search(text) is not None and round_shown(text) >= restored + 8,
                start=events,
            )
            plays, idle = (first, second) if autoplaying(first, channel.id) else (second, first)
            assert autoplaying(plays, channel.id)
            assert not autoplaying(idle, channel.id)
            cog = plays.get_cog("Autoplay")
            assert cog is not None
            task = cog.task(channel.id)  # type: ignore[attr-defined]
            assert isinstance(task, asyncio.Task)
            newest, oldest = standin.gateway.sessions_for(channel.guild.id)
            standin.gateway.aimed = newest if idle is second else oldest
            yield HandedOff(table, message, plays, idle, task, events)


def shows_halted_by_bob(message: Message, row: GameRow, action: str) -> None:
    """Check that the message shows autoplay paused or stopped by Bob, at the round saved."""
    shown = text_of(message)
    assert t("nb", "table.title", round=row.round) in shown  # every round saved, none after
    assert t("nb", "auto.hand_flip") not in shown
    if action == "pause":
        assert t("nb", "auto.paused", name="Bob") in shown
        assert list(buttons(message)) == [f"krig:auto:{row.id}:resume", f"krig:auto:{row.id}:stop"]
        assert row.extra["autoplay"]["state"] == "paused"
    else:
        assert t("nb", "auto.stopped", name="Bob") in shown
        assert list(buttons(message)) == [f"krig:flip:{row.id}:{row.round}"]
        assert not row.extra.get("autoplay")


@pytest.mark.parametrize("backend", BACKENDS)
async def test_autoplay_both_processes_restored_is_played_by_one_and_the_other_says_nothing(
    standin: DiscordStandIn,
    world: SampleWorld,
    db_path: Path,
    database: str | Path,
    seeds: ChosenSeeds,
) -> None:
    # handed_off checks that one process plays it, and only one: the step that lost left the
    # game to the other.
    async with handed_off(standin, world, db_path, database, seeds) as off:
        row = await game_row(off.idle, off.table.game_id)

    edits = [
        text_of(event.revision)
        for event in standin.channel_events.items[off.events :]
        if event.kind == "edit" and event.message is off.message
    ]
    assert not [text for text in edits if t("nb", "auto.hand_flip") in text]
    assert row.extra["autoplay"]["state"] == "running"


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("action", ["pause", "stop"])
async def test_autoplay_paused_or_stopped_on_the_process_that_does_not_play_it_stops(
    standin: DiscordStandIn,
    world: SampleWorld,
    db_path: Path,
    database: str | Path,
    seeds: ChosenSeeds,
    action: str,
) -> None:
    async with handed_off(standin, world, db_path, database, seeds) as off:
        pressed = await press(
            standin, off.message, f"krig:auto:{off.table.game_id}:{action}", world.bob
        )
        # The process that plays finds its next step refused, and stops.
        await asyncio.wait_for(off.task, 10)
        row = await game_row(off.idle, off.table.game_id)
        still = [autoplaying(bot, world.no_channel.id) for bot in (off.plays, off.idle)]

    assert pressed.type == UPDATE_MESSAGE, text_of(pressed)
    assert still == [False, False]
    shows_halted_by_bob(off.message, row, action)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("action", ["pause", "stop"])
async def test_a_step_shown_after_the_other_process_answered_a_press_is_put_right(
    standin: DiscordStandIn,
    world: SampleWorld,
    db_path: Path,
    database: str | Path,
    seeds: ChosenSeeds,
    action: str,
) -> None:
    async with handed_off(standin, world, db_path, database, seeds) as off:
        # The next step is saved, and its edit of the message held up: it lands after the
        # other process's answer to the press, showing the bot playing on.
        edit = rf"/messages/({off.message.id}|@original)$"
        after = len(standin.requests)
        standin.delay("PATCH", edit, 2.0, times=1)
        await standin.requests.wait(
            lambda r: r.method == "PATCH" and re.search(edit, r.path) is not None,
            start=after,
            timeout=10,
            what="the edit of the next step",
        )
        pressed = await press(
            standin, off.message, f"krig:auto:{off.table.game_id}:{action}", world.bob
        )
        answered = len(standin.channel_events)
        await asyncio.wait_for(off.task, 10)
        row = await game_row(off.idle, off.table.game_id)

    assert pressed.type == UPDATE_MESSAGE, text_of(pressed)
    edits = [
        text_of(event.revision)
        for event in standin.channel_events.items[answered:]
        if event.kind == "edit" and event.message is off.message
    ]
    running = t("nb", "auto.running", speed=t("nb", "speed.normal"), name="Alice")
    assert running in edits[0]  # the step held up, after the answer
    shows_halted_by_bob(off.message, row, action)  # and then put right


@pytest.mark.parametrize("backend", BACKENDS)
async def test_steal_war_presses_reaching_either_process_are_each_made_once(
    standin: DiscordStandIn,
    world: SampleWorld,
    db_path: Path,
    database: str | Path,
    seeds: ChosenSeeds,
) -> None:
    standin.gateway.overlapping = True
    async with (
        running_bot(standin, db_path, seeds, database=database) as first,
        running_bot(standin, db_path, seeds, database=database),
    ):
        # The presses go to each process in turn (the stand-in's turns count every event, so
        # the Look, which posts nothing, makes the next press go to the other process): each
        # acts on a game the other one moved last.
        table, players = await start_steal_war(standin, world, seeds, STEAL_ONE)
        made = 0
        for _ in range(4):
            answer = await press(standin, table, flip_button(table), players[0])
            assert answer.type == UPDATE_MESSAGE, text_of(answer)
            made += 1
            # Bob looks at his next card: as the saved game has it, whoever answers.
            peek = await press(standin, table, look_button(table), players[1])
            row = await game_row(first, table_id(table))
            saved = load_game(row.state or {})
            assert peek.content == look_text(saved, 1, names_of(row), "sv"), text_of(peek)
            tops = top_buttons(table)
            if tops:
                custom_id = sorted(tops)[0]
                seat = int(custom_id.split(":")[4])
                answer = await press(standin, table, custom_id, players[seat])
                assert answer.type == UPDATE_MESSAGE, text_of(answer)
                made += 1
        row = await game_row(first, table_id(table))

    assert row.state is not None
    assert len(row.state["actions"]) == made  # every press, each once


@pytest.mark.parametrize("backend", BACKENDS)
async def test_status_on_the_process_that_did_not_play_shows_the_stored_round(
    standin: DiscordStandIn,
    world: SampleWorld,
    db_path: Path,
    database: str | Path,
    seeds: ChosenSeeds,
) -> None:
    standin.gateway.overlapping = True
    channel = world.no_channel
    assert channel.guild is not None
    async with running_bot(standin, db_path, seeds, database=database):
        table = await start_game(standin, channel, world.alice, world.bob)
        await press(standin, table.message, flip_button(table.message), world.alice)
        async with running_bot(standin, db_path, seeds, database=database) as second:
            newest, oldest = standin.gateway.sessions_for(channel.guild.id)
            # The new process reads the game (its status), then the old one plays on.
            standin.gateway.aimed = newest
            before = await command(standin, channel, world.alice, "status")
            standin.gateway.aimed = oldest
            for _ in range(4):
                answer = await press(standin, table.message, flip_button(table.message), world.bob)
                assert answer.type == UPDATE_MESSAGE, text_of(answer)
            standin.gateway.aimed = newest
            after = await command(standin, channel, world.alice, "status")
            stored = (await game_row(second, table.game_id)).round

    assert t("nb", "status.round", round=1) in text_of(before)
    assert stored == 5
    assert t("nb", "status.round", round=5) in text_of(after), text_of(after)
