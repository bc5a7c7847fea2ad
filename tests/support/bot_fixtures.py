"""The cog tests' fixtures: the sample world, a clock the test moves, a bot with short timers."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from krigbot.bot import KrigBot
from krigbot.storage import Storage
from tests.standin import DiscordStandIn, run_bot
from tests.standin.fixtures import SampleWorld
from tests.support.players import ChosenSeeds, Clock
from tests.support.settings import make_settings

CHALLENGE_SECONDS = 0.5
"""How long a challenge lives on the quick bot: long enough to press a button, short to wait."""


@pytest.fixture
def world(standin_world: SampleWorld) -> SampleWorld:
    """Return the two servers and their people (alice nb, bob sv-SE, carol en-US, moderator)."""
    return standin_world


@pytest.fixture
def clock(bot: KrigBot) -> Clock:
    """Return a clock that tells the bot's game service the time."""
    moved = Clock()
    bot.service.registry.clock = moved
    return moved


@pytest.fixture
def errors_expected(standin: DiscordStandIn) -> None:
    """Let the bot log errors without ending the test's waits; the test checks them itself.

    The test must still claim them with ``standin.accept_bot_errors()``, or ``run_bot`` fails.
    """
    standin.fail_fast_on_bot_errors = False


@pytest.fixture
async def quick_bot(
    standin: DiscordStandIn,
    standin_world: SampleWorld,
    storage: Storage,
    db_path: Path,
    seeds: ChosenSeeds,
) -> AsyncIterator[KrigBot]:
    """Return the real bot whose challenges expire after ``CHALLENGE_SECONDS``."""
    krigbot = KrigBot(
        make_settings(db_path, challenge_seconds=CHALLENGE_SECONDS),
        storage,
        seeds=seeds,
        guild_ready_timeout=0.05,
    )
    async with run_bot(krigbot, standin) as running:
        await asyncio.wait_for(running.saved_games_checked.wait(), 30)
        yield running
