"""The shared connection, its lock, and the helpers every query module uses."""

from __future__ import annotations

import asyncio
import logging
import sqlite3
import time
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

from krigbot.storage.errors import StorageClosedError, translate_error

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Callable, Iterable

    import aiosqlite

log = logging.getLogger(__name__)


async def run(db: aiosqlite.Connection, sql: str, params: Iterable[Any] = ()) -> None:
    """Execute a statement whose rows (if any) are not needed."""
    # execute_fetchall creates, drains and drops the cursor on aiosqlite's worker thread
    # in one hop; a bare execute() would leave a cursor to be finalised on our thread.
    await db.execute_fetchall(sql, params)


async def run_counted(db: aiosqlite.Connection, sql: str, params: Iterable[Any]) -> int:
    """Execute a data-changing statement and return how many rows it changed.

    Only while holding the connection alone: the count is the change in total_changes, which
    saves a second trip to aiosqlite's thread (a cursor, then closing it) on every write.
    """
    before = db.total_changes
    await run(db, sql, params)
    return db.total_changes - before


async def rollback_quietly(db: aiosqlite.Connection) -> None:
    """Roll back the open transaction, if any, without raising."""
    try:
        await run(db, "ROLLBACK")
    except sqlite3.Error as exc:
        # SQLite rolls back by itself after some errors (e.g. disk full), and a cancelled
        # COMMIT may already have run; either way there is nothing left to undo.
        log.debug("rollback skipped: %s", exc)


BATCH_LIMIT: Final = 64
"""Most rows one coalesced statement writes (a bound on the statement texts SQLite caches)."""

BATCHES: Final = sqlite3.sqlite_version_info >= (3, 35)
"""UPDATE ... FROM with RETURNING (SQLite 3.35); with an older SQLite every write goes alone."""


@dataclass(frozen=True, slots=True)
class Coalesced:
    """One kind of single-row UPDATE whose writes, when many wait at once, go as one statement.

    Every write crosses to aiosqlite's thread and back, and under load that trip costs far more
    than the write: the worker thread and the event loop take turns at the GIL. So writes that
    arrive while one is on its way wait for it and then go together, as one statement (one
    trip, one transaction). Alone, a write goes at once, as the plain statement.

    ``single`` changes one row, its parameters ending with the game id and any further ``WHERE``
    values; ``batched(n)`` is the same change for ``n`` rows as one statement whose ``VALUES``
    rows hold the same parameters in the same order, ending with ``RETURNING games.id``.
    """

    single: str
    batched: Callable[[int], str]
    key: int
    """Index of the game id in a write's parameters."""


@dataclass(slots=True)
class _Waiting:
    """The writes of one kind waiting for a storage, and the task sending them."""

    writes: list[tuple[tuple[Any, ...], asyncio.Future[bool]]] = field(default_factory=list)
    task: asyncio.Task[None] | None = None


class StorageBase:
    """Own the connection and make every use of it exclusive."""

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

    def __init__(self, db: aiosqlite.Connection, path: str) -> None:
        """Wrap an open, configured and migrated connection."""
        self._db: aiosqlite.Connection | None = db
        self._path = path
        self._lock = asyncio.Lock()
        self._waiting: dict[Coalesced, _Waiting] = {}
        self.on_write: Callable[[float, int], None] | None = None
        """Told of every write that commits: its seconds, and how many writes went together."""

    @property
    def path(self) -> str:
        """Return the database location this storage was opened with."""
        return self._path

    @asynccontextmanager
    async def _session(self) -> AsyncIterator[aiosqlite.Connection]:
        """Hold the connection exclusively and translate sqlite3 errors."""
        async with self._lock:
            if self._db is None:
                raise StorageClosedError(f"The storage for {self._path} is closed.")
            try:
                yield self._db
            except sqlite3.Error as exc:
                raise translate_error(exc, self._path) from exc

    @asynccontextmanager
    async def _transaction(self) -> AsyncIterator[aiosqlite.Connection]:
        """Run the body as one write transaction that commits before returning."""
        async with self._session() as db:
            try:
                # BEGIN inside the try: if we are cancelled while awaiting it, it still
                # runs on aiosqlite's thread, so it must be rolled back like the rest.
                started = time.perf_counter()
                await run(db, "BEGIN IMMEDIATE")
                yield db
                await run(db, "COMMIT")
                if self.on_write is not None:
                    self.on_write(time.perf_counter() - started, 1)
            except BaseException:
                # BaseException: a cancelled task must not leave the transaction open,
                # or the next coroutine's statements would join it. The ROLLBACK is
                # queued on aiosqlite's FIFO thread before the lock is released, so it
                # runs before anything the next lock holder sends.
                await rollback_quietly(db)
                raise

    async def _write(self, sql: str, params: Iterable[Any]) -> int:
        """Run one statement as its own transaction and return the changed row count."""
        # The connection is in autocommit mode, so a single statement is already an
        # atomic transaction that is committed when execute() returns.
        async with self._session() as db:
            return await run_counted(db, sql, params)

    async def _coalesced(self, kind: Coalesced, params: tuple[Any, ...]) -> bool:
        """Write one row with others waiting at the same time; True if the row changed.

        As with any write, a caller cancelled while it waits does not stop it.
        """
        future: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
        waiting = self._waiting.setdefault(kind, _Waiting())
        waiting.writes.append((params, future))
        if waiting.task is None:
            waiting.task = asyncio.create_task(self._drain(kind, waiting))
        return await future

    async def _drain(self, kind: Coalesced, waiting: _Waiting) -> None:
        """Send the waiting writes of one kind, as many per statement as may go together."""
        try:
            while waiting.writes:
                batch = _next_batch(kind, waiting)
                started = time.perf_counter()
                try:
                    changed = await self._write_batch(kind, [params for params, _ in batch])
                except BaseException as exc:
                    for _, future in batch:
                        if future.done():
                            continue
                        if isinstance(exc, Exception):
                            future.set_exception(exc)
                        else:
                            future.cancel()
                    if not isinstance(exc, Exception):
                        raise
                    continue
                if self.on_write is not None:
                    self.on_write(time.perf_counter() - started, len(batch))
                for params, future in batch:
                    if not future.done():
                        future.set_result(params[kind.key] in changed)
        finally:
            waiting.task = None
            for _, future in waiting.writes:  # only if this task itself was cancelled
                future.cancel()
            waiting.writes.clear()

    async def _write_batch(self, kind: Coalesced, batch: list[tuple[Any, ...]]) -> set[int]:
        """Write the rows in one statement; return the ids of the games it changed."""
        if len(batch) == 1:
            (params,) = batch
            return {params[kind.key]} if await self._write(kind.single, params) == 1 else set()
        flat = [value for params in batch for value in params]
        return {int(row[0]) for row in await self._fetchall(kind.batched(len(batch)), flat)}

    async def _fetchall(self, sql: str, params: Iterable[Any] = ()) -> list[sqlite3.Row]:
        """Run a query and return all its rows."""
        async with self._session() as db:
            return list(await db.execute_fetchall(sql, params))

    async def _fetchone(self, sql: str, params: Iterable[Any] = ()) -> sqlite3.Row | None:
        """Run a query and return its first row, if any."""
        rows = await self._fetchall(sql, params)
        return rows[0] if rows else None


def _next_batch(
    kind: Coalesced, waiting: _Waiting
) -> list[tuple[tuple[Any, ...], asyncio.Future[bool]]]:
    """Take the next writes that may go together: distinct games, up to the limit, in order."""
    limit = BATCH_LIMIT if BATCHES else 1
    games: set[Any] = set()
    count = 0
    for params, _ in waiting.writes:
        if count == limit or params[kind.key] in games:
            break
        games.add(params[kind.key])
        count += 1
    batch = waiting.writes[:count]
    del waiting.writes[:count]
    return batch
