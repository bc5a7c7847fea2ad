"""Shared fixtures: the Discord stand-in, a storage on disk, and the real bot on both.

And a check that the suite leaves no process of its own behind (:func:`pytest_sessionfinish`).
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from krigbot.bot import KrigBot
from krigbot.storage import Storage
from tests.standin import DiscordStandIn, run_bot
from tests.standin.fixtures import SampleWorld, standin, standin_world
from tests.support.players import ChosenSeeds
from tests.support.postgres import Cluster, cluster_running
from tests.support.processes import RUN_TAG, BotProcess, command_line, leftovers
from tests.support.settings import make_settings

__all__ = ["standin", "standin_world"]

os.environ[RUN_TAG] = str(os.getpid())


MIGRATED = "krig_migrated"
"""The PostgreSQL database each test's is copied from: migrated, no games."""


@pytest.fixture(scope="session")
def postgres() -> Iterator[Cluster]:
    """Run one PostgreSQL 15 cluster for the whole run (started at its first use).

    A machine without PostgreSQL fails the tests that need it: they are never skipped.
    """
    with cluster_running() as cluster:
        # Each test's database is a copy of one migrated once: copying is cheaper than migrating.
        cluster.psql(f"CREATE DATABASE {MIGRATED} TEMPLATE template0")
        asyncio.run(_migrate(cluster.dsn(MIGRATED)))
        yield cluster


async def _migrate(url: str) -> None:
    await (await Storage.open(url)).close()


@pytest.fixture
def pg_dsn(postgres: Cluster) -> str:
    """Return the URL of a new PostgreSQL database for this test, migrated, with no games."""
    return postgres.create_database(template=MIGRATED)


@pytest.fixture
def pg_empty_dsn(postgres: Cluster) -> str:
    """Return the URL of a new, empty PostgreSQL database (no tables) for this test."""
    return postgres.create_database()


@pytest.fixture
async def bot_process(standin: DiscordStandIn, tmp_path: Path) -> AsyncIterator[BotProcess]:
    """Return the bot as its own process (``python bot.py``) on the stand-in, for the test to
    start; it is killed after the test if still running."""
    process = BotProcess(standin, tmp_path)
    try:
        yield process
    finally:
        await process.stop()


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    """Return where this test's database lives."""
    return tmp_path / "data" / "krig.db"


@pytest.fixture
def backend() -> str:
    """Return the backend of the test's storage: SQLite, unless the test asks for both."""
    return "sqlite"


@pytest.fixture
def database(backend: str, db_path: Path, request: pytest.FixtureRequest) -> str | Path:
    """Return where the test's database is: a file, or a new PostgreSQL database."""
    if backend == "postgres":
        return str(request.getfixturevalue("pg_dsn"))
    return db_path


@pytest.fixture
async def storage(database: str | Path) -> AsyncIterator[Storage]:
    """Return an opened storage on a fresh database."""
    opened = await Storage.open(database)
    yield opened
    await opened.close()


@pytest.fixture
def seeds() -> ChosenSeeds:
    """Return the seeds of this test's deals: random until the test chooses them."""
    return ChosenSeeds()


@pytest.fixture
async def bot(
    standin: DiscordStandIn,
    standin_world: SampleWorld,
    storage: Storage,
    db_path: Path,
    seeds: ChosenSeeds,
) -> AsyncIterator[KrigBot]:
    """Return the real bot, connected to the stand-in and ready."""
    krigbot = KrigBot(make_settings(db_path), storage, seeds=seeds, guild_ready_timeout=0.05)
    async with run_bot(krigbot, standin) as running:
        # The start's look at the saved games is over: a game a test stores from here on is
        # the test's own (a half-made one would otherwise be found unreadable).
        await asyncio.wait_for(running.saved_games_checked.wait(), 30)
        yield running


# ---------------------------------------------------------------- processes left behind


_LEFT_BEHIND: list[str] = []


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Fail the run if a process it started (a bot, a drawing worker…) is still running."""
    from krigbot.render.worker import stop_workers

    stop_workers()  # the pool the in-process bots drew with: ours, and still in use until now
    _LEFT_BEHIND[:] = [f"{pid}: {command_line(pid) or '?'}" for pid in leftovers()]
    if _LEFT_BEHIND and session.exitstatus == pytest.ExitCode.OK:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """Name the processes the run left behind."""
    if _LEFT_BEHIND:
        terminalreporter.section("processes left running by the tests", red=True)
        for line in _LEFT_BEHIND:
            terminalreporter.line(line, red=True)
