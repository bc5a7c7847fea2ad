"""Discord forgets an interaction not answered within 3 s: slow work is deferred, then delivered."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from krigbot.bot import KrigBot
from krigbot.storage import Storage
from tests.cogs.helpers import (
    DEFERRED_CHANNEL_MESSAGE,
    DEFERRED_UPDATE,
    flip,
    flip_button,
    game_row,
    start_game,
    text_of,
)
from tests.standin import DiscordStandIn
from tests.standin.fixtures import SampleWorld

DISCORD_DEADLINE = 3.0
SLOW_SAVE = 2.5


@pytest.fixture
def slow_saves(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make saving a round take 2.5 s, as a busy disk might."""
    real = Storage.save_round

    async def save_round(self: Storage, *args: Any, **kwargs: Any) -> bool:
        await asyncio.sleep(SLOW_SAVE)  # the system under test is slowed, the test waits on events
        return await real(self, *args, **kwargs)

    monkeypatch.setattr(Storage, "save_round", save_round)


async def test_a_slow_flip_command_is_deferred_in_time_and_the_round_follows(
    standin: DiscordStandIn, world: SampleWorld, bot: KrigBot, slow_saves: None
) -> None:
    table = await start_game(standin, world.no_channel, world.alice, world.bob)

    rec = await standin.slash("flip", user=world.alice, channel=world.no_channel)
    first = await rec.response()

    assert first.type == DEFERRED_CHANNEL_MESSAGE
    assert first.latency < DISCORD_DEADLINE
    assert not first.ephemeral  # the round will be public, so the "thinking" message is too
    delivered = await rec.followup(timeout=SLOW_SAVE + 2)
    assert "Krig — runde 1" in text_of(delivered)
    assert not delivered.ephemeral
    assert rec.rejected == []
    assert (await game_row(bot, table.game_id)).round == 1


async def test_a_slow_flip_button_is_deferred_in_time_and_the_table_edited_after(
    standin: DiscordStandIn, world: SampleWorld, bot: KrigBot, slow_saves: None
) -> None:
    table = await start_game(standin, world.no_channel, world.alice, world.bob)

    rec = await standin.click(table.message, flip_button(table.message), user=world.bob)
    first = await rec.response()

    assert first.type == DEFERRED_UPDATE
    assert first.latency < DISCORD_DEADLINE
    edited = await rec.original_edit(timeout=SLOW_SAVE + 2)
    assert "Krig — runde 1" in text_of(edited)
    assert "Krig — runde 1" in text_of(table.message)
    assert flip_button(table.message).endswith(":1")
    assert rec.rejected == []


async def test_a_fast_flip_is_answered_at_once_without_deferring(
    standin: DiscordStandIn, world: SampleWorld, bot: KrigBot
) -> None:
    await start_game(standin, world.no_channel, world.alice, world.bob)

    answer = await flip(standin, world.no_channel, world.alice, count=50)

    assert not answer.deferred
    assert answer.latency < 1.0
