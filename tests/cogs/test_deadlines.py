"""Discord forgets an interaction not answered within 3 s: slow work is deferred, then delivered."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest

from krigbot.adapter.replies import DEFER_AFTER
from krigbot.bot import KrigBot
from krigbot.i18n import t
from krigbot.load import BUSY
from krigbot.storage import GameStore
from tests.standin import DiscordStandIn
from tests.standin.fixtures import SampleWorld
from tests.support.players import (
    DEFERRED_CHANNEL_MESSAGE,
    DEFERRED_UPDATE,
    flip_button,
    game_row,
    start_game,
    text_of,
    timed,
)

DISCORD_DEADLINE = 3.0
SLOW_SAVE = 2.5
WAIT = 30.0
"""How long a test waits for an answer that follows a slow save: a bound on the wait, not a
speed the bot owes (a busy machine may take far longer than the save itself)."""


@pytest.fixture
def slow_saves(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make saving a round take 2.5 s, as a busy disk might."""
    real = GameStore.save_round

    async def save_round(self: GameStore, *args: Any, **kwargs: Any) -> bool:
        await asyncio.sleep(SLOW_SAVE)  # the system under test is slowed, the test waits on events
        return await real(self, *args, **kwargs)

    monkeypatch.setattr(GameStore, "save_round", save_round)


async def test_a_slow_flip_command_is_deferred_in_time_and_the_round_follows(
    standin: DiscordStandIn, world: SampleWorld, bot: KrigBot, slow_saves: None
) -> None:
    table = await start_game(standin, world.no_channel, world.alice, world.bob)

    rec = await standin.slash("flip", user=world.alice, channel=world.no_channel)
    first = await rec.response()

    assert first.type == DEFERRED_CHANNEL_MESSAGE
    assert first.latency < DISCORD_DEADLINE
    assert not first.ephemeral  # the round will be public, so the "thinking" message is too
    delivered = await rec.followup(timeout=WAIT)
    assert t("nb", "table.title", round=1) in text_of(delivered)
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
    edited = await rec.original_edit(timeout=WAIT)
    assert t("nb", "table.title", round=1) in text_of(edited)
    assert t("nb", "table.title", round=1) in text_of(table.message)
    assert flip_button(table.message).endswith(":1")
    assert rec.rejected == []


async def test_a_fast_flip_is_answered_at_once_without_deferring(
    standin: DiscordStandIn, world: SampleWorld, bot: KrigBot
) -> None:
    await start_game(standin, world.no_channel, world.alice, world.bob)

    fifty = {"count": 50}
    stamp = timed(
        await standin.slash("flip", user=world.alice, channel=world.no_channel, options=fifty)
    )
    first = await stamp.rec.response()

    if first.deferred:
        # Only a machine too busy to give the bot its second makes it defer a fast flip, and
        # only once the second is up (the interaction's id tells when it was made, to the ms).
        assert first.latency >= DEFER_AFTER - 0.002
    else:
        assert stamp.own_latency < DEFER_AFTER


async def test_a_burst_at_a_bot_that_answered_few_lately_defers_before_the_work_starts(
    standin: DiscordStandIn, world: SampleWorld, bot: KrigBot, monkeypatch: pytest.MonkeyPatch
) -> None:
    # BUSY flips are kept in progress by a slow disk; the ones after them must not wait for a
    # timer behind that backlog: each is deferred before its round is even being saved.
    channels = [standin.add_channel(world.no_guild, f"busy-{n}") for n in range(BUSY + 3)]
    tables = [await start_game(standin, channel, world.alice, world.bob) for channel in channels]
    bot.load.start()  # as after a quiet second: the games' set-up is not what it answers lately
    saving: dict[int, float] = {}
    real = GameStore.save_round

    async def save_round(self: GameStore, game_id: int, *args: Any, **kwargs: Any) -> bool:
        saving[game_id] = time.perf_counter()
        await asyncio.sleep(SLOW_SAVE)  # the slow disk; the test itself waits on events
        return await real(self, game_id, *args, **kwargs)

    monkeypatch.setattr(GameStore, "save_round", save_round)

    records = [await standin.slash("flip", user=world.alice, channel=c) for c in channels]
    firsts = [await rec.response(timeout=10) for rec in records]

    for rec in records:
        assert t("nb", "table.title", round=1) in text_of(await rec.followup(timeout=WAIT))
        assert rec.rejected == []
        assert rec.latency is not None
        assert rec.latency < DISCORD_DEADLINE
    later = list(zip(tables, records, firsts, strict=True))[BUSY:]
    for table, rec, first in later:
        assert first.type == DEFERRED_CHANNEL_MESSAGE
        assert rec.responded_at is not None
        assert rec.responded_at < saving[table.game_id]  # deferred before the work began
