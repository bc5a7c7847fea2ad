"""Shared fixtures: the Discord stand-in, a storage on disk, and the real bot on both."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from krigbot.bot import KrigBot
from krigbot.config import Settings
from krigbot.storage import Storage
from tests.standin import DiscordStandIn, run_bot
from tests.standin.fixtures import SampleWorld, standin, standin_world

__all__ = ["standin", "standin_world"]


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    """Return where this test's database lives."""
    return tmp_path / "data" / "krig.db"


@pytest.fixture
async def storage(db_path: Path) -> AsyncIterator[Storage]:
    """Return an opened storage on a fresh file."""
    opened = await Storage.open(db_path)
    yield opened
    await opened.close()


def make_settings(db_path: Path, **changes: object) -> Settings:
    """Return settings for a test bot."""
    return Settings(token="fake-token", db_path=db_path, **changes)  # type: ignore[arg-type]


@pytest.fixture
async def bot(
    standin: DiscordStandIn, standin_world: SampleWorld, storage: Storage, db_path: Path
) -> AsyncIterator[KrigBot]:
    """Return the real bot, connected to the stand-in and ready."""
    krigbot = KrigBot(make_settings(db_path), storage, guild_ready_timeout=0.05)
    async with run_bot(krigbot, standin) as running:
        yield running
