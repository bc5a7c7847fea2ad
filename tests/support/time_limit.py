"""Time limits through the stand-in: a bot whose clock ticks quickly, and the time-up message."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from krigbot.bot import KrigBot
from krigbot.i18n import t
from krigbot.sessions import deadlines
from krigbot.storage import Storage
from tests.standin import ChannelEvent, DiscordStandIn, run_bot
from tests.support.players import Clock, text_of
from tests.support.settings import make_settings

TIME_UP = t("nb", "time.up_title")


@pytest.fixture
def quick_ticks(monkeypatch: pytest.MonkeyPatch) -> None:
    """Let the deadline scheduler look at the (test's) clock every few milliseconds."""
    monkeypatch.setattr(deadlines, "TICK_SECONDS", 0.02)


def time_up(event: ChannelEvent) -> bool:
    return event.kind == "create" and TIME_UP in text_of(event.revision)


@contextlib.asynccontextmanager
async def bot_on(standin: DiscordStandIn, db_path: Path, clock: Clock) -> AsyncIterator[KrigBot]:
    """Run a bot on the database file with the test's clock; a second one is a restart."""
    storage = await Storage.open(db_path)
    try:
        bot = KrigBot(make_settings(db_path), storage, guild_ready_timeout=0.05)
        bot.service.registry.clock = clock
        async with run_bot(bot, standin) as running:
            await asyncio.wait_for(running.saved_games_checked.wait(), 30)
            yield running
    finally:
        await storage.close()
