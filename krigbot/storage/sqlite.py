"""The SQLite backend (aiosqlite): its connection, its dialect, its migrations, its database."""

from __future__ import annotations

import asyncio
import logging
import sqlite3
import time
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Literal, Self

import aiosqlite

from krigbot.storage import migrations
from krigbot.storage.base import Coalesced, Connection, Database, Dialect, Row
from krigbot.storage.checkpoints import DEFAULT_PAGES, Checkpointer
from krigbot.storage.errors import (
    CannotOpenDatabaseError,
    MigrationError,
    StorageClosedError,
    StorageError,
    translate_error,
)

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Iterable, Sequence

log = logging.getLogger(__name__)

MEMORY: Final = ":memory:"
PROBE_BUSY_MS: Final = 1000
"""How long a health check waits for the write lock (the bot's own writes take milliseconds)."""
Synchronous = Literal["NORMAL", "FULL"]


async def run(db: aiosqlite.Connection, sql: str, params: Iterable[Any] = ()) -> None:
    """Execute a statement whose rows (if any) are not needed."""
    # execute_fetchall creates, drains and drops the cursor on aiosqlite's worker thread
    # in one hop; a bare execute() would leave a cursor to be finalised on our thread.
    await db.execute_fetchall(sql, params)


async def rollback_quietly(db: aiosqlite.Connection) -> None:
    """Roll back the open transaction, if any, without raising."""
    try:
        await run(db, "ROLLBACK")
    except sqlite3.Error as exc:
        # SQLite rolls back by itself after some errors (e.g. disk full), and a cancelled
        # COMMIT may already have run; either way there is nothing left to undo.
        log.debug("rollback skipped: %s", exc)


class SqliteConnection:
    """The storage's one aiosqlite connection, as the query modules use it."""

    __slots__ = ("db",)

    def __init__(self, db: aiosqlite.Connection) -> None:
        self.db = db

    async def fetch(self, sql: str, params: Iterable[Any] = ()) -> list[Row]:
        """Run a query and return all its rows."""
        return list(await self.db.execute_fetchall(sql, params))

    async def run(self, sql: str, params: Iterable[Any] = ()) -> int:
        """Execute a data-changing statement and return how many rows it changed.

        Only while holding the connection alone: the count is the change in total_changes, which
        saves a second trip to aiosqlite's thread (a cursor, then closing it) on every write.
        """
        before = self.db.total_changes
        await run(self.db, sql, params)
        return self.db.total_changes - before

    async def run_many(self, sql: str, rows: Iterable[Sequence[Any]]) -> None:
        """Execute one statement once per row of parameters."""
        async with self.db.executemany(sql, rows):
            pass


class SqliteDialect(Dialect):
    """SQLite's SQL: JSON as text read with its JSON functions, batches as VALUES rows."""

    name = "sqlite"
    for_update = ""  # BEGIN IMMEDIATE already holds the only write lock
    snapshot = "BEGIN"  # a read transaction reads one snapshot (WAL) or holds off writers

    def batched(self, kind: Coalesced, n: int) -> str:
        """Return the statement writing ``n`` rows of a coalesced kind at once."""
        names = ", ".join(name for name, _ in kind.columns)
        row = "(" + ", ".join("?" * len(kind.columns)) + ")"
        values = ", ".join([row] * n)
        return f"WITH batch({names}) AS (VALUES {values})\n" + kind.update.format(batch="batch")

    def batch_params(self, batch: Sequence[tuple[Any, ...]]) -> list[Any]:
        """Return the parameters of :meth:`batched`: every row's, one after the other."""
        return [value for params in batch for value in params]

    index_hint = "INDEXED BY {index}"  # without statistics SQLite's planner would not pick it
    same_json = "json({column}) = json(?)"  # the texts may differ in spacing
    values_of_json = "SELECT value FROM json_each(?)"
    keys_of_json = "json_each({column}) AS {alias}"
    key_set = "json_extract({column}, '$.' || ?) IS NOT NULL"  # json_extract is NULL for null
    int_at = "json_extract({column}, '$.{path}')"
    text_at = "json_extract({column}, '$.{path}')"
    path_separator = "."
    elements_of_json = "json_each({column}) AS {alias}"
    list_has = "EXISTS (SELECT 1 FROM json_each({column}) AS p WHERE p.value = ?)"
    lease_holds = "{epoch} IS NULL"  # no leases in SQLite: only a write that names none


SQLITE: Final = SqliteDialect()

BATCHES: Final = sqlite3.sqlite_version_info >= (3, 35)
"""UPDATE ... FROM with RETURNING (SQLite 3.35); with an older SQLite every write goes alone."""


class SqliteDatabase(Database):
    """Krigbot's database in one SQLite file, on one connection shared by every coroutine."""

    # Why an asyncio.Lock around *every* use of the connection, reads included:
    # all coroutines share one sqlite3 connection, and a transaction on a connection is
    # visible to whatever runs on it next. Without the lock, a coroutine's statements
    # could land in the middle of another's BEGIN ... COMMIT: a second BEGIN fails
    # ("cannot start a transaction within a transaction"), a plain UPDATE silently joins
    # the foreign transaction (and is lost if that one rolls back after we acknowledged
    # it), and a read sees uncommitted rows. BEGIN IMMEDIATE alone cannot prevent this,
    # since SQLite's locks are per connection; we use it *as well*, so that another
    # process (a backup tool, a second bot) cannot write between our read and our write
    # and so that busy_timeout applies at BEGIN instead of failing at a lock upgrade.
    # aiosqlite runs everything on one thread anyway, so the lock costs no parallelism.

    dialect = SQLITE
    _checkpointer: Checkpointer | None = None
    _prober: aiosqlite.Connection | None = None

    def __init__(self, db: aiosqlite.Connection, path: str) -> None:
        """Wrap an open, configured and migrated connection."""
        super().__init__(path)
        self._db: aiosqlite.Connection | None = db
        self._connection = SqliteConnection(db)
        self._lock = asyncio.Lock()
        self.batches = BATCHES

    @classmethod
    async def connect(
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
        database = cls(db, location)
        if location != MEMORY:
            async with database.closed_on_failure():
                await database._move_checkpoints(checkpoint_every)
        return database

    @property
    def opens_at(self) -> str | None:
        return None if self.path == MEMORY else self.path

    @asynccontextmanager
    async def session(self) -> AsyncIterator[Connection]:
        """Hold the connection exclusively and translate sqlite3 errors."""
        async with self._lock:
            if self._db is None:
                raise StorageClosedError(f"The storage for {self._path} is closed.")
            try:
                yield self._connection
            except sqlite3.Error as exc:
                raise translate_error(exc, self._path) from exc

    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[Connection]:
        """Run the body as one write transaction that commits before returning."""
        async with self.session() as connection:
            db = self._connection.db
            try:
                # BEGIN inside the try: if we are cancelled while awaiting it, it still
                # runs on aiosqlite's thread, so it must be rolled back like the rest.
                started = time.perf_counter()
                await run(db, "BEGIN IMMEDIATE")
                yield connection
                await run(db, "COMMIT")
                self.committed(started)
            except BaseException:
                # BaseException: a cancelled task must not leave the transaction open,
                # or the next coroutine's statements would join it. The ROLLBACK is
                # queued on aiosqlite's FIFO thread before the lock is released, so it
                # runs before anything the next lock holder sends.
                await rollback_quietly(db)
                raise

    async def _move_checkpoints(self, interval: float) -> None:
        """Start the checkpoint connection; only then stop the writes from checkpointing."""
        self._checkpointer = await Checkpointer.start(
            self._path, interval, self._checkpoint_with_writes
        )
        if self._checkpointer is not None:
            await self.write("PRAGMA wal_autocheckpoint = 0", ())

    async def _checkpoint_with_writes(self) -> None:
        """Let the writes checkpoint by themselves again, as SQLite does by default."""
        await self.write(f"PRAGMA wal_autocheckpoint = {DEFAULT_PAGES}", ())

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

        It asks from a connection of its own, so a locked database answers within
        ``PROBE_BUSY_MS`` instead of holding up the bot's writes: it takes the write lock
        (``BEGIN IMMEDIATE``) and gives it back at once, writing nothing.
        """
        try:
            if self._path == MEMORY:
                await self.fetchall("SELECT 1")
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


async def _configure(
    db: aiosqlite.Connection, location: str, busy_timeout_ms: int, synchronous: Synchronous
) -> None:
    """Set the connection's pragmas."""
    # First, so that even switching to WAL waits for another process's lock.
    await run(db, f"PRAGMA busy_timeout = {int(busy_timeout_ms):d}")
    await run(db, "PRAGMA foreign_keys = ON")
    # This is also the first statement that reads the file, so a non-database file
    # fails here with "file is not a database".
    rows = await _journal_mode_wal(db, busy_timeout_ms / 1000)
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


WAL_POLL_SECONDS: Final = 0.02
"""How often a start tries again to put a new database into WAL mode while another has it."""


async def _journal_mode_wal(db: aiosqlite.Connection, within: float) -> list[Any]:
    """Put the database in WAL mode, waiting up to ``within`` seconds for another process.

    Two processes opening a new database at once both ask for WAL mode, which takes the file
    for itself; SQLite answers the one that loses "database is locked" at once, without its
    busy timeout (waiting there could deadlock).
    """
    deadline = time.monotonic() + within
    while True:
        try:
            return list(await db.execute_fetchall("PRAGMA journal_mode = WAL"))
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() >= deadline:
                raise
        # Pacing, not waiting for something: the lock is another process's, and no event
        # of this one says when it is free.
        await asyncio.sleep(WAL_POLL_SECONDS)


async def user_version(db: aiosqlite.Connection) -> int:
    """Read the schema version stored in the database header."""
    rows = list(await db.execute_fetchall("PRAGMA user_version"))
    return int(rows[0][0])


async def migrate(db: aiosqlite.Connection, path: str) -> int:
    """Apply every pending migration in one transaction and return the schema version.

    The version is SQLite's own ``PRAGMA user_version``, as it always was.
    """
    pending = migrations.load_migrations(SQLITE.name)
    latest = len(pending)
    current = await user_version(db)
    if not migrations.missing(pending, current, path):
        # Up to date: no write, so an up-to-date database opens without a write lock.
        return current
    try:
        await run(db, "BEGIN IMMEDIATE")
        # Read again under the write lock: another process may have migrated meanwhile.
        current = await user_version(db)
        for migration in migrations.missing(pending, current, path):
            for statement in migrations.split_statements(migration.sql):
                try:
                    await run(db, statement)
                except sqlite3.Error as exc:
                    error = translate_error(exc, path)
                    if type(error) is StorageError:
                        # Not an environment problem (lock, disk, ...): the SQL is at fault.
                        error = MigrationError(
                            f"Migration {migration.name} failed on {path}: {exc}"
                        )
                    raise error from exc
        # PRAGMA user_version is part of the transaction: all or nothing.
        await run(db, f"PRAGMA user_version = {latest:d}")
        await run(db, "COMMIT")
    except BaseException:
        await rollback_quietly(db)
        raise
    return latest
