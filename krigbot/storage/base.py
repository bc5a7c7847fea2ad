"""The seam between the query modules and a database: connections, dialects, coalesced writes.

The query modules (games, matches, stats, settings, records) are written once, with ``?``
placeholders, against :class:`Connection` and :class:`Dialect`, and each holds the one
:class:`Database` of its storage; ``storage.sqlite`` and ``storage.postgres`` implement all
three for aiosqlite and asyncpg.
"""

from __future__ import annotations

import asyncio
import logging
import time
from abc import ABC, abstractmethod
from contextlib import AbstractAsyncContextManager, asynccontextmanager, suppress
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final, Protocol

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Iterator, Sequence

log = logging.getLogger(__name__)


class Row(Protocol):
    """One row of a result, by column name or position (sqlite3.Row, asyncpg.Record)."""

    def __getitem__(self, key: Any, /) -> Any: ...

    def __iter__(self) -> Iterator[Any]: ...


class Connection(Protocol):
    """What the query modules run their statements on, inside or outside a transaction."""

    async def fetch(self, sql: str, params: Iterable[Any] = ()) -> list[Row]:
        """Run a query and return all its rows."""
        ...

    async def run(self, sql: str, params: Iterable[Any] = ()) -> int:
        """Execute a data-changing statement and return how many rows it changed."""
        ...

    async def run_many(self, sql: str, rows: Iterable[Sequence[Any]]) -> None:
        """Execute one statement once per row of parameters."""
        ...


class Dialect(ABC):
    """The SQL that differs between the databases, as fragments the query modules splice in."""

    name: str
    for_update: str
    """Appended to a SELECT that is followed by a write to the rows it read."""
    snapshot: str = "START TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY"
    """Begins a transaction whose reads all see the database as it was at the first one."""

    @abstractmethod
    def batched(self, kind: Coalesced, n: int) -> str:
        """Return the statement writing ``n`` rows of a coalesced kind at once."""

    @abstractmethod
    def batch_params(self, batch: Sequence[tuple[Any, ...]]) -> list[Any]:
        """Return the parameters of :meth:`batched` for these writes."""

    index_hint: str
    """A hint to read a table through the index ``{index}`` (empty where the planner needs none)."""
    same_json: str
    """A condition: the JSON column ``{column}`` holds the same value as the JSON parameter."""
    values_of_json: str
    """A subquery of the values of a JSON list parameter (as text)."""
    keys_of_json: str
    """A FROM item listing the keys of the JSON object column ``{column}`` as ``{alias}.key``."""
    key_set: str
    """A condition: the key named by the parameter is in the object ``{column}``, and not null."""
    int_at: str
    """The integer at the path ``{path}`` inside the JSON column ``{column}`` (NULL if missing)."""
    text_at: str
    """The text at the path ``{path}`` inside the JSON column ``{column}`` (NULL if missing)."""
    path_separator: str
    """What joins the keys of a path in :attr:`int_at` and :attr:`text_at`."""
    elements_of_json: str
    """A FROM item listing a JSON list's elements as ``{alias}.key, {alias}.value``."""
    list_has: str
    """A condition: the JSON list column ``{column}`` holds the integer parameter."""
    lease_holds: str
    """A condition: the lease epoch ``{epoch}`` is NULL (static shards), or the shard's lease
    now and not run out (``KRIG_SHARDS=auto``, PostgreSQL only)."""

    def indexed_by(self, index: str) -> str:
        """Return a hint to read a table through an index (empty where the planner needs none)."""
        return self.index_hint.format(index=index)

    def json_same(self, column: str) -> str:
        """Return a condition: the JSON column holds the same value as the JSON parameter."""
        return self.same_json.format(column=column)

    def json_values(self) -> str:
        """Return a subquery of the values of a JSON list parameter (as text)."""
        return self.values_of_json

    def json_keys(self, column: str, alias: str) -> str:
        """Return a FROM item listing a JSON object column's keys as ``alias.key``."""
        return self.keys_of_json.format(column=column, alias=alias)

    def json_key_set(self, column: str) -> str:
        """Return a condition: the key named by the parameter is in the object, and not null."""
        return self.key_set.format(column=column)

    def json_int(self, column: str, *path: str) -> str:
        """Return the integer at a path of keys inside a JSON column (NULL if missing)."""
        return self.int_at.format(column=column, path=self.path_separator.join(path))

    def json_text(self, column: str, *path: str) -> str:
        """Return the text at a path of keys inside a JSON column (NULL if missing)."""
        return self.text_at.format(column=column, path=self.path_separator.join(path))

    def json_elements(self, column: str, alias: str) -> str:
        """Return a FROM item listing a JSON list's elements as ``alias.key, alias.value``."""
        return self.elements_of_json.format(column=column, alias=alias)

    def fenced(self, epoch: str = "?") -> str:
        """Return a condition: the write's lease epoch (``epoch``, an expression) still holds."""
        return self.lease_holds.format(epoch=epoch)

    def json_list_has(self, column: str) -> str:
        """Return a condition: the JSON list column holds the integer parameter."""
        return self.list_has.format(column=column)


BATCH_LIMIT: Final = 64
"""Most rows one coalesced statement writes (in SQLite, a bound on the statement texts cached)."""


@dataclass(frozen=True, slots=True, eq=False)  # by identity: each kind is made once
class Coalesced:
    """One kind of single-row UPDATE whose writes, when many wait at once, go as one statement.

    Every write crosses to aiosqlite's thread and back, and under load that trip costs far more
    than the write: the worker thread and the event loop take turns at the GIL. On PostgreSQL
    every commit waits for the disk to sync its log, which a disk does only some hundreds of
    times a second. So writes that arrive while one is on its way wait for it and then go
    together, as one statement (one trip, one transaction, one sync). Alone, a write goes at
    once, as the plain statement.

    ``single`` changes one row, its parameters ending with the game id and any further ``WHERE``
    values. ``update`` is the same change for many rows, read from ``{batch}``: a relation
    named ``batch`` whose ``columns`` (name and PostgreSQL type) are those parameters in the
    same order; it ends with ``RETURNING games.id``. The dialect says where the rows come from
    (``VALUES`` rows in SQLite, ``unnest`` of one array per column in PostgreSQL).
    """

    single: str
    update: str
    columns: tuple[tuple[str, str], ...]
    key: int
    """Index of the game id in a write's parameters."""


@dataclass(slots=True)
class _Waiting:
    """The writes of one kind waiting for a database, and the task sending them."""

    writes: list[tuple[tuple[Any, ...], asyncio.Future[bool]]] = field(default_factory=list)
    task: asyncio.Task[None] | None = None


class Database(ABC):
    """One open database, shared by the parts of a storage: connections, dialect, writes.

    The query modules run their statements through it; ``storage.sqlite.SqliteDatabase`` and
    ``storage.postgres.PostgresDatabase`` open, hold and close the database itself.
    """

    dialect: Dialect
    batches: bool = True
    """Whether coalesced writes may go as one statement (not with an SQLite older than 3.35)."""

    def __init__(self, location: str) -> None:
        """Remember where the database is, for messages."""
        self._path = location
        self._waiting: dict[Coalesced, _Waiting] = {}
        self.on_write: Callable[[float, int], None] | None = None
        """Told of every write that commits: its seconds, and how many writes went together."""

    @property
    def path(self) -> str:
        """Return the database location this database was opened with (no password)."""
        return self._path

    @property
    def opens_at(self) -> str | None:
        """Return what another process opens this database with (a PostgreSQL URL keeps its
        password); None for one no other process can open (SQLite's ``:memory:``)."""
        return self._path

    @abstractmethod
    def session(self) -> AbstractAsyncContextManager[Connection]:
        """Hold a connection for a few statements, each its own transaction."""

    @abstractmethod
    def transaction(self) -> AbstractAsyncContextManager[Connection]:
        """Run the body as one write transaction that commits before returning."""

    @asynccontextmanager
    async def snapshot(self) -> AsyncIterator[Connection]:
        """Hold a connection for reads that all see one moment of the database."""
        async with self.session() as db:
            await db.run(self.dialect.snapshot)
            try:
                yield db
            finally:
                # Read only: nothing to keep. Ended on a cancellation too, or the connection
                # would carry the open transaction into its next use.
                with suppress(Exception):
                    await db.run("ROLLBACK")

    def committed(self, started: float) -> None:
        """Tell ``on_write`` of a transaction begun at ``started`` that has just committed."""
        if self.on_write is not None:
            self.on_write(time.perf_counter() - started, 1)

    async def write(self, sql: str, params: Iterable[Any]) -> int:
        """Run one statement as its own transaction and return the changed row count."""
        # Outside a transaction a single statement is already one, committed when it returns.
        async with self.session() as db:
            return await db.run(sql, params)

    async def coalesced(self, kind: Coalesced, params: tuple[Any, ...]) -> bool:
        """Write one row with others waiting at the same time; True if the row changed.

        As with any write, a caller cancelled while it waits does not stop it.
        """
        future: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
        waiting = self._waiting.get(kind)
        if waiting is None:
            waiting = self._waiting[kind] = _Waiting()
        waiting.writes.append((params, future))
        if waiting.task is None:
            waiting.task = asyncio.create_task(self._drain(kind, waiting))
        return await future

    async def _drain(self, kind: Coalesced, waiting: _Waiting) -> None:
        """Send the waiting writes of one kind, as many per statement as may go together."""
        try:
            while waiting.writes:
                batch = _next_batch(kind, waiting, BATCH_LIMIT if self.batches else 1)
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
            return {params[kind.key]} if await self.write(kind.single, params) == 1 else set()
        sql = self.dialect.batched(kind, len(batch))
        return {int(row[0]) for row in await self.fetchall(sql, self.dialect.batch_params(batch))}

    async def fetchall(self, sql: str, params: Iterable[Any] = ()) -> list[Row]:
        """Run a query and return all its rows."""
        async with self.session() as db:
            return await db.fetch(sql, params)

    async def fetchone(self, sql: str, params: Iterable[Any] = ()) -> Row | None:
        """Run a query and return its first row, if any."""
        rows = await self.fetchall(sql, params)
        return rows[0] if rows else None

    @abstractmethod
    async def checkpoint(self) -> tuple[int, int] | None:
        """Checkpoint SQLite's write-ahead log now; None where the database does it itself."""

    @abstractmethod
    async def probe(self) -> str | None:
        """Return None if the database would take a write now, or one line saying why not."""

    async def take_identify_turn(self, bucket: int, pause: float) -> bool:
        """Wait for ``bucket``'s turn to identify among all processes on the database; take it.

        True once taken; False, at once, where the database keeps no turns: SQLite's processes
        share one machine, and take their turns through lock files
        (``adapter.identify.IdentifyPacer``).
        """
        return False

    async def listen_notes(
        self, channel: str, heard: Callable[[str], None]
    ) -> Callable[[], Awaitable[None]]:
        """Call ``heard`` with the payload of each notification on ``channel`` (PostgreSQL
        only); return what stops it."""
        raise NotImplementedError(f"{self.dialect.name} sends no notifications")

    async def listen(
        self, channel: str, heard: Callable[[], None]
    ) -> Callable[[], Awaitable[None]]:
        """Call ``heard`` whenever any process notifies ``channel`` (PostgreSQL only); return
        what stops it."""
        raise NotImplementedError(f"{self.dialect.name} sends no notifications")

    @abstractmethod
    async def close(self) -> None:
        """Close the database; waits for the operation in progress. Safe to call twice."""

    @asynccontextmanager
    async def closed_on_failure(self) -> AsyncIterator[None]:
        """Close the database if the block fails (opening it goes no further)."""
        try:
            yield
        except BaseException:
            await self.close()
            raise


def _next_batch(
    kind: Coalesced, waiting: _Waiting, limit: int
) -> list[tuple[tuple[Any, ...], asyncio.Future[bool]]]:
    """Take the next writes that may go together: distinct games, up to the limit, in order."""
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


class Store:
    """One part of a storage (games, stats, settings, matches, records): queries on its database."""

    def __init__(self, database: Database) -> None:
        """Run the queries on the database the storage's parts share."""
        self._database = database
