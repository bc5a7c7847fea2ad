"""The Storage facade: opening, configuring, migrating and closing the database."""

from __future__ import annotations

import asyncio
import logging
import sqlite3
from pathlib import Path
from typing import TYPE_CHECKING, Final, Literal, Self

import aiosqlite

from krigbot.storage.base import run
from krigbot.storage.checkpoints import DEFAULT_PAGES, Checkpointer
from krigbot.storage.errors import CannotOpenDatabaseError, StorageError, translate_error
from krigbot.storage.games import GameStore
from krigbot.storage.matches import MatchStore
from krigbot.storage.migrations import migrate
from krigbot.storage.records import RecordStore
from krigbot.storage.settings import SettingsStore
from krigbot.storage.stats import StatsStore

if TYPE_CHECKING:
    from types import TracebackType

log = logging.getLogger(__name__)

MEMORY: Final = ":memory:"
PROBE_BUSY_MS: Final = 1000
"""How long a health check waits for the write lock (the bot's own writes take milliseconds)."""
Synchronous = Literal["NORMAL", "FULL"]


class Storage(GameStore, StatsStore, SettingsStore, MatchStore, RecordStore):
    """Krigbot's database; one instance is shared by every coroutine of the bot."""

    _checkpointer: Checkpointer | None = None
    _prober: aiosqlite.Connection | None = None

    @classmethod
    async def open(
        cls,
        path: str | Path,
        *,
        busy_timeout_ms: int = 5000,
        synchronous: Synchronous = "NORMAL",
        checkpoint_every: float = 1.0,
    ) -> Self:
        """Open (creating if needed) and migrate the database at path, or ':memory:'.

        A file database is checkpointed every ``checkpoint_every`` seconds from a connection
        of its own, never inside a write (see ``storage.checkpoints``).
        """
        if synchronous not in ("NORMAL", "FULL"):
            raise ValueError("synchronous must be 'NORMAL' or 'FULL'")
        location = str(path)
        if location != MEMORY:
            try:
                Path(location).parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise CannotOpenDatabaseError(
                    f"Cannot create the folder for the database {location}: {exc}"
                ) from exc
        # isolation_level=None: autocommit. Python's sqlite3 then issues no hidden
        # BEGINs; we write every BEGIN/COMMIT ourselves, and a lone statement is its
        # own transaction, committed when execute() returns.
        connecting = aiosqlite.connect(location, isolation_level=None)
        try:
            db = await connecting
        except BaseException as exc:
            # aiosqlite asks its thread to stop without waiting for it; the thread then reports
            # back to this event loop, which by then may be closed ("Event loop is closed" and a
            # traceback after the bot's one line). Wait until it has.
            await asyncio.to_thread(connecting._thread.join)
            if isinstance(exc, sqlite3.Error):
                raise translate_error(exc, location) from exc
            raise
        try:
            db.row_factory = sqlite3.Row
            await _configure(db, location, busy_timeout_ms, synchronous)
            await migrate(db, location)
        except BaseException as exc:
            await db.close()
            if isinstance(exc, sqlite3.Error):
                raise translate_error(exc, location) from exc
            raise
        storage = cls(db, location)
        if location != MEMORY:
            try:
                await storage._move_checkpoints(checkpoint_every)
            except BaseException:
                await storage.close()
                raise
        return storage

    async def _move_checkpoints(self, interval: float) -> None:
        """Start the checkpoint connection; only then stop the writes from checkpointing."""
        self._checkpointer = await Checkpointer.start(
            self._path, interval, self._checkpoint_with_writes
        )
        if self._checkpointer is not None:
            async with self._session() as db:
                await run(db, "PRAGMA wal_autocheckpoint = 0")

    async def _checkpoint_with_writes(self) -> None:
        """Let the writes checkpoint by themselves again, as SQLite does by default."""
        async with self._session() as db:
            await run(db, f"PRAGMA wal_autocheckpoint = {DEFAULT_PAGES}")

    async def checkpoint(self) -> tuple[int, int] | None:
        """Checkpoint now; return (pages in the log, pages copied).

        None if the writes checkpoint by themselves: an in-memory database, a checkpoint
        connection that could not be opened, or one whose checkpoint failed.
        """
        if self._checkpointer is None:
            return None
        return await self._checkpointer.checkpoint()

    async def probe(self) -> str | None:
        """Return None if the database would take a write now, or one line saying why not.

        For health checks. It asks from a connection of its own, so a locked database answers
        within ``PROBE_BUSY_MS`` instead of holding up the bot's writes: it takes the write lock
        (``BEGIN IMMEDIATE``) and gives it back at once, writing nothing.
        """
        try:
            if self._path == MEMORY:
                async with self._session() as db:
                    await run(db, "SELECT 1")
                return None
            if self._prober is None:
                self._prober = await aiosqlite.connect(self._path, isolation_level=None)
                await run(self._prober, f"PRAGMA busy_timeout = {PROBE_BUSY_MS}")
            await run(self._prober, "BEGIN IMMEDIATE")
            await run(self._prober, "ROLLBACK")
        except (sqlite3.Error, StorageError) as exc:
            return f"the database {self._path} does not take writes: {exc}"
        return None

    async def close(self) -> None:
        """Close the database; waits for the operation in progress. Safe to call twice."""
        prober, self._prober = self._prober, None
        if prober is not None:
            await prober.close()
        checkpointer, self._checkpointer = self._checkpointer, None
        if checkpointer is not None:
            await checkpointer.close()
        async with self._lock:
            db, self._db = self._db, None
            if db is None:
                return
            try:
                # Recommended on close: refreshes planner statistics where useful.
                await run(db, "PRAGMA optimize")
            except sqlite3.Error as exc:
                log.warning("PRAGMA optimize failed on %s: %s", self._path, exc)
            finally:
                await db.close()

    async def __aenter__(self) -> Self:
        """Use the storage as an async context manager that closes it."""
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        """Close the storage."""
        await self.close()


async def _configure(
    db: aiosqlite.Connection, location: str, busy_timeout_ms: int, synchronous: Synchronous
) -> None:
    """Set the connection's pragmas."""
    # First, so that even switching to WAL waits for another process's lock.
    await run(db, f"PRAGMA busy_timeout = {int(busy_timeout_ms):d}")
    await run(db, "PRAGMA foreign_keys = ON")
    # This is also the first statement that reads the file, so a non-database file
    # fails here with "file is not a database".
    rows = list(await db.execute_fetchall("PRAGMA journal_mode = WAL"))
    mode = str(rows[0][0]).lower()
    if location != MEMORY and mode != "wal":
        log.warning("The database %s stays in journal mode %r instead of WAL.", location, mode)
    # Durability: with WAL and synchronous=NORMAL, COMMIT returns once the transaction is
    # appended to the -wal file with write(), i.e. it is in the OS page cache. A SIGKILL
    # or crash of the bot cannot lose it: the OS still writes it out and the next open
    # replays the WAL. Only an OS crash or power cut can lose the last few commits, and
    # even then the database stays consistent (never corrupt). FULL adds an fsync per
    # commit, i.e. per card flip, costing milliseconds each on real disks; it is
    # available through Storage.open(..., synchronous="FULL") for hosts that want it.
    await run(db, f"PRAGMA synchronous = {synchronous}")
    rows = list(await db.execute_fetchall("PRAGMA foreign_keys"))
    if int(rows[0][0]) != 1:
        raise StorageError("This SQLite build does not enforce foreign keys.")
