"""Shared fixtures: the Discord stand-in, a storage on disk, and the real bot on both.

And a check that the suite leaves no process of its own behind (:func:`pytest_sessionfinish`).
"""

from __future__ import annotations

import asyncio
import os
import select
import time
from collections.abc import AsyncIterator, Iterable, Iterator
from pathlib import Path

import pytest

from krigbot.bot import KrigBot
from krigbot.config import Settings
from krigbot.storage import Storage
from tests.standin import DiscordStandIn, run_bot
from tests.standin.fixtures import SampleWorld, standin, standin_world
from tests.support.players import ChosenSeeds
from tests.support.postgres import Cluster, cluster_running

__all__ = ["standin", "standin_world"]

RUN_TAG = "KRIG_TEST_RUN"
"""Set to the pytest process's id in its environment, so every process the suite starts (and
each of theirs) carries it, even once it has been adopted by init when its parent died."""
os.environ[RUN_TAG] = str(os.getpid())
LEFTOVER_GRACE = 5.0
"""Seconds a process still there at the end may take to exit (a worker signalled just now)."""


BACKENDS = ("sqlite", "postgres")
"""The storages every contract test runs against (tests/storage) and the bot's slice of them."""
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


IDENTIFY_SECONDS = 0.05
"""The test bots' pause between identifies of a bucket, instead of Discord's 5 s.

The stand-in checks the pause only where a test asks it to (``identify_interval``, with the
bot's own setting to match); elsewhere a restarted bot would wait 5 s for nothing.
"""


def make_settings(db_path: Path, **changes: object) -> Settings:
    """Return settings for a test bot."""
    changes.setdefault("identify_seconds", IDENTIFY_SECONDS)
    return Settings(token="fake-token", db_path=db_path, **changes)  # type: ignore[arg-type]


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
        yield running


# ---------------------------------------------------------------- processes left behind


def _stat(pid: int) -> tuple[int, str] | None:
    """Return a process's parent and state (Linux), or None once it is gone."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = text.rsplit(")", 1)[1].split()  # the name in parentheses may hold spaces
    return int(fields[1]), fields[0]


def _pids() -> list[int]:
    return [int(name) for name in os.listdir("/proc") if name.isdigit()]


def command_line(pid: int) -> str:
    """Return how a process was started ("" once it is gone)."""
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return ""
    return raw.replace(b"\0", b" ").decode(errors="replace").strip()


def descendants(root: int) -> set[int]:
    """Return the living processes under ``root``: children, theirs, and so on."""
    parents = {pid: stat for pid in _pids() if (stat := _stat(pid)) is not None}
    found: set[int] = set()
    frontier = {root}
    while frontier:
        frontier = {
            pid
            for pid, (parent, state) in parents.items()
            if parent in frontier and pid not in found and state != "Z"
        }
        found |= frontier
    return found


def tagged(key: str, value: str) -> set[int]:
    """Return the living processes whose environment has ``key=value``."""
    wanted = f"{key}={value}".encode()
    found = set()
    for pid in _pids():
        try:
            environ = Path(f"/proc/{pid}/environ").read_bytes()  # empty for a zombie
        except OSError:
            continue
        if wanted in environ.split(b"\0"):
            found.add(pid)
    return found


def exits_within(pid: int, *, seconds: float) -> bool:
    """Wait for any process (not only a child of ours) to end; tell whether it did in time."""
    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        return True
    try:
        ready, _, _ = select.select([fd], [], [], seconds)  # readable once the process ends
        return bool(ready)
    finally:
        os.close(fd)


def still_running(pids: Iterable[int], *, seconds: float) -> list[int]:
    """Give each process up to ``seconds`` in all to end; return those that did not."""
    deadline = time.monotonic() + seconds
    return [
        pid
        for pid in sorted(pids)
        if not exits_within(pid, seconds=max(0.0, deadline - time.monotonic()))
    ]


def leftovers() -> list[int]:
    """Return the processes this test run started that are still running."""
    me = os.getpid()
    ours = (descendants(me) | tagged(RUN_TAG, str(me))) - {me}
    # multiprocessing's resource tracker serves this process itself and ends with it.
    ours = {
        pid
        for pid in ours
        if not (
            (_stat(pid) or (0, ""))[0] == me
            and "multiprocessing.resource_tracker" in command_line(pid)
        )
    }
    return still_running(ours, seconds=LEFTOVER_GRACE)


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
