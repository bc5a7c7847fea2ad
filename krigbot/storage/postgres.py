"""The PostgreSQL backend (asyncpg): its connections, its dialect, its migrations, its database.

Many bot processes may share one PostgreSQL database. What keeps them apart is in the SQL
itself, as in SQLite: every change to a game checks in its ``WHERE`` clause that the game is
still as its writer read it (the round, the status, the accepted players), and PostgreSQL
re-checks that clause once a concurrent writer of the row has committed. The one-active-game-
per-channel index decides between two challenges. Migrations run under an advisory lock, and
so does each look at a start bucket's identify turn (``take_identify_turn``).
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from contextlib import asynccontextmanager
from functools import cache
from typing import TYPE_CHECKING, Any, Final, Self
from urllib.parse import urlsplit, urlunsplit

import asyncpg  # type: ignore[import-untyped]  # asyncpg ships no type hints

from krigbot.storage import migrations
from krigbot.storage.base import Coalesced, Connection, Database, Dialect, Row
from krigbot.storage.errors import (
    CannotOpenDatabaseError,
    MigrationError,
    StorageClosedError,
    StorageError,
    translate_postgres_error,
)

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Sequence

log = logging.getLogger(__name__)

POOL_SIZE: Final = 4
"""Connections per bot process: reads go on beside the writes, each kind of write one at a time."""
CONNECT_SECONDS: Final = 10.0
PROBE_SECONDS: Final = 1.0
MIGRATION_LOCK: Final = 0x6B726967_6D696772  # "krigmigr": one advisory lock key for migrating
VERSION_TABLE: Final = "krig_schema_version"
IDENTIFY_LOCKS: Final = 0x6B726967  # "krig": the advisory locks (this, bucket) of identify turns
TURN_SECONDS: Final = 5.0
"""Longest one look at a bucket's turn may take before the database counts as out of reach."""
TURN_IDLE_SECONDS = 2.0
"""Longest a look at a bucket's turn may sit between its statements holding the bucket's lock:
PostgreSQL then ends that session, so a process stopped there (SIGSTOP, a stalled machine)
holds the bucket up this long, not until it runs again. Well below ``TURN_SECONDS``."""
LISTEN_RETRY_SECONDS: Final = 0.2
"""Ceiling of the first pause before opening a lost listening connection again; doubled after
each failure up to ``LISTEN_RETRY_MOST_SECONDS``. Each pause is a random part (half to all) of
it, so the processes cut off by one restart of PostgreSQL do not come back in step."""
LISTEN_RETRY_MOST_SECONDS: Final = 5.0
LISTEN_PING_SECONDS = 15.0
"""How often a listening connection is asked a question (``SELECT 1``): a link that drops every
packet and closes nothing (a NAT or firewall that forgot the connection) is noticed only so;
without it the notifications would go quiet for good."""
LISTEN_ANSWER_SECONDS = 5.0
"""How long that question's answer may take before the connection counts as lost (and is
opened again, as a connection PostgreSQL closed is)."""
_ERRORS: Final = (
    asyncpg.PostgresError,
    asyncpg.InterfaceError,
    asyncpg.InternalClientError,
    OSError,
)


class LookEndedError(StorageError):
    """A look at an identify turn failed once it had its connection: the process stalled in the
    middle of it past ``TURN_IDLE_SECONDS`` (PostgreSQL ended its session), or the server went
    away."""


@cache
def positional(sql: str) -> str:
    """Rewrite the query modules' ``?`` placeholders as PostgreSQL's ``$1, $2, ...``."""
    pieces = sql.split("'")
    # Even pieces are outside string literals ('' inside a literal splits into two odd ones).
    number = 0
    for index in range(0, len(pieces), 2):
        parts = pieces[index].split("?")
        text = parts[0]
        for part in parts[1:]:
            number += 1
            text += f"${number}{part}"
        pieces[index] = text
    return "'".join(pieces)


def _count(status: str) -> int:
    """Return the row count of a command status such as ``UPDATE 3`` or ``INSERT 0 1``."""
    last = status.rsplit(" ", 1)[-1]
    return int(last) if last.isdigit() else 0


class PostgresConnection:
    """One pooled asyncpg connection, as the query modules use it."""

    __slots__ = ("conn",)

    def __init__(self, conn: asyncpg.Connection) -> None:
        self.conn = conn

    async def fetch(self, sql: str, params: Iterable[Any] = ()) -> list[Row]:
        """Run a query and return all its rows."""
        return list(await self.conn.fetch(positional(sql), *params))

    async def run(self, sql: str, params: Iterable[Any] = ()) -> int:
        """Execute a data-changing statement and return how many rows it changed."""
        values = tuple(params)
        if not values:
            # No parameters: the simple protocol, which also runs a script of statements.
            return _count(await self.conn.execute(sql))
        return _count(await self.conn.execute(positional(sql), *values))

    async def run_many(self, sql: str, rows: Iterable[Sequence[Any]]) -> None:
        """Execute one statement once per row of parameters (one round trip)."""
        await self.conn.executemany(positional(sql), rows)


class PostgresDialect(Dialect):
    """PostgreSQL's SQL: jsonb operators, batches as ``unnest`` of one array per column."""

    name = "postgres"
    # Read committed: a plain read followed by a write could lose another process's write.
    for_update = " FOR UPDATE"

    def batched(self, kind: Coalesced, n: int) -> str:
        """Return the statement writing any number of rows: one text, one prepared statement."""
        arrays = ", ".join(f"?::{kind_type}[]" for _, kind_type in kind.columns)
        names = ", ".join(name for name, _ in kind.columns)
        return kind.update.format(batch=f"unnest({arrays}) AS batch({names})")

    def batch_params(self, batch: Sequence[tuple[Any, ...]]) -> list[Any]:
        """Return one array per column of :meth:`batched`."""
        return [list(column) for column in zip(*batch, strict=True)]

    index_hint = ""  # the planner keeps statistics: the choice is its own
    same_json = "{column} = CAST(? AS JSONB)"  # as jsonb: equal values, whatever the spacing
    values_of_json = "SELECT jsonb_array_elements_text(CAST(? AS JSONB))"
    keys_of_json = "jsonb_object_keys({column}) AS {alias}(key)"
    key_set = "{column} ->> CAST(? AS TEXT) IS NOT NULL"  # ->> is NULL for a null
    int_at = "CAST({column} #>> '{{{path}}}' AS BIGINT)"
    text_at = "{column} #>> '{{{path}}}'"
    path_separator = ","
    elements_of_json = "jsonb_array_elements_text({column}) WITH ORDINALITY AS {alias}(value, key)"
    list_has = "{column} @> jsonb_build_array(CAST(? AS BIGINT))"
    lease_holds = "krig_lease_holds(CAST({epoch} AS BIGINT))"  # migration 0007


POSTGRES: Final = PostgresDialect()


def redacted(url: str) -> str:
    """Return the URL without its password, for messages and logs."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    netloc = parts.netloc.rsplit("@", 1)[1]
    user = parts.username or ""
    return urlunsplit(parts._replace(netloc=f"{user}:***@{netloc}"))


class PostgresDatabase(Database):
    """Krigbot's database in PostgreSQL, on a small pool of connections; many processes share it."""

    dialect = POSTGRES

    def __init__(self, pool: asyncpg.Pool, where: str) -> None:
        """Wrap an open pool on a migrated database."""
        super().__init__(where)
        self._pool: asyncpg.Pool | None = pool
        self._url: str | None = None
        """Where a connection of its own is opened to listen (:meth:`listen`)."""
        self._listening: list[_Subscription] = []
        self._ending: set[asyncio.Task[None]] = set()
        """The tasks of stopped listeners, until they have ended (:meth:`close` waits for them)."""

    @classmethod
    async def connect(cls, url: str, *, pool_size: int = POOL_SIZE) -> Self:
        """Connect to the database at ``url`` and migrate it."""
        where = redacted(url)
        try:
            pool = await asyncpg.create_pool(
                url,
                min_size=1,
                max_size=pool_size,
                timeout=CONNECT_SECONDS,
                server_settings={"application_name": "krigbot"},
            )
        except (TimeoutError, *_ERRORS) as exc:
            raise translate_postgres_error(exc, where) from exc
        database = cls(pool, where)
        database._url = url
        async with database.closed_on_failure(), database.session() as connection:
            assert isinstance(connection, PostgresConnection)
            await migrate(connection.conn, where)
        return database

    @property
    def opens_at(self) -> str | None:
        return self._url

    @asynccontextmanager
    async def session(self) -> AsyncIterator[Connection]:
        """Hold one connection of the pool and translate asyncpg errors."""
        if self._pool is None:
            raise StorageClosedError(f"The storage for {self._path} is closed.")
        try:
            async with self._pool.acquire() as conn:
                try:
                    yield PostgresConnection(conn)
                except asyncpg.InternalClientError:
                    # The server went away in the middle of a statement and left the connection's
                    # protocol out of step: closed, so the pool never hands it out again.
                    conn.terminate()
                    raise
        except asyncpg.InternalClientError as exc:
            raise CannotOpenDatabaseError(f"Lost the connection to {self._path} ({exc}).") from exc
        except _ERRORS as exc:
            raise translate_postgres_error(exc, self._path) from exc

    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[Connection]:
        """Run the body as one transaction that commits before returning."""
        async with self.session() as connection:
            assert isinstance(connection, PostgresConnection)
            started = time.perf_counter()
            async with connection.conn.transaction():
                yield connection
            self.committed(started)

    @asynccontextmanager
    async def importing(
        self,
    ) -> AsyncIterator[Callable[[str, Sequence[str], list[Row]], Awaitable[None]]]:
        """Copy rows into tables as one transaction; new ids go on after the last.

        The block gets a function ``load(table, columns, rows)``, which sends rows with COPY.
        """
        async with self.transaction() as connection:
            assert isinstance(connection, PostgresConnection)
            conn = connection.conn

            async def load(table: str, columns: Sequence[str], rows: list[Row]) -> None:
                await conn.copy_records_to_table(
                    table, records=[tuple(row) for row in rows], columns=list(columns)
                )

            yield load
            for table in ("games", "tournaments"):
                await conn.execute(
                    f"SELECT setval(pg_get_serial_sequence('{table}', 'id'), "
                    f"GREATEST((SELECT MAX(id) FROM {table}), 1), "
                    f"(SELECT MAX(id) FROM {table}) IS NOT NULL)"
                )

    async def checkpoint(self) -> tuple[int, int] | None:
        """Return None: PostgreSQL checkpoints by itself."""
        return None

    async def probe(self) -> str | None:
        """Return None if the database would take a write now, or one line saying why not."""
        try:
            async with asyncio.timeout(PROBE_SECONDS):
                row = await self.fetchone(
                    "SELECT NOT pg_is_in_recovery() AND "
                    "current_setting('transaction_read_only') = 'off'"
                )
        except (StorageError, TimeoutError) as exc:
            return f"the database {self._path} does not take writes: {exc or 'no answer'}"
        if row is None or not row[0]:
            return f"the database {self._path} does not take writes: it is read-only"
        return None

    async def take_identify_turn(self, bucket: int, pause: float) -> bool:
        """Wait for ``bucket``'s turn to identify among all processes on the database; take it.

        A turn comes ``pause`` seconds after the bucket's last one, by the database's clock: the
        machines' own clocks play no part. Nothing is held while waiting (no connection, no
        lock), so a stop ends the wait at once and a process that dies waiting holds no one up.
        """
        looked_again = False
        while True:
            try:
                async with asyncio.timeout(TURN_SECONDS):
                    wait = await self._identify_turn(bucket, pause)
            except TimeoutError as exc:
                raise StorageError(
                    f"the database {self._path} gave no identify turn in {TURN_SECONDS:g} s"
                ) from exc
            except LookEndedError:
                # This process stalled in the middle of its look (the others went on), or the
                # server went away: looked at again once, on another connection.
                if looked_again:
                    raise
                looked_again = True
                continue
            if wait <= 0:
                return True
            # Pacing, not waiting for something: the turn is another process's until then, and
            # whoever looks first after it takes it (under the lock).
            await asyncio.sleep(wait)

    async def _identify_turn(self, bucket: int, pause: float) -> float:
        """Take the bucket's turn if it has come (0.0), or return the seconds until it comes."""
        async with self.session() as connection:
            assert isinstance(connection, PostgresConnection)
            try:
                return await self._look_at_turn(connection, bucket, pause)
            except _ERRORS as exc:
                raise LookEndedError(
                    f"a look at an identify turn in {self._path} was cut short: {exc}"
                ) from exc

    @staticmethod
    async def _look_at_turn(connection: PostgresConnection, bucket: int, pause: float) -> float:
        """Look at the bucket's turn in one transaction: see ``_identify_turn``."""
        # Not transaction(): a turn is no write of the bot's, for on_write to count.
        async with connection.conn.transaction():
            # Held until the commit: the one look at the bucket and its one write. Not
            # held by a process that stops in between (the session's end frees it).
            await connection.fetch(
                "SELECT set_config('idle_in_transaction_session_timeout', ?, true), "
                "pg_advisory_xact_lock(?, ?)",
                (f"{round(TURN_IDLE_SECONDS * 1000)}ms", IDENTIFY_LOCKS, bucket),
            )
            rows = await connection.fetch(
                "SELECT CAST(EXTRACT(EPOCH FROM clock_timestamp() - last_at) AS FLOAT8) "
                "FROM identify_turns WHERE bucket = ?",
                (bucket,),
            )
            since = float(rows[0][0]) if rows else pause
            if since < 0:
                # A last turn ahead of the clock (the database's clock set back): counted
                # from now, so the bucket waits one pause, not until then.
                await connection.run(
                    "UPDATE identify_turns SET last_at = clock_timestamp() WHERE bucket = ?",
                    (bucket,),
                )
                return pause
            if since < pause:
                return pause - since
            await connection.run(
                "INSERT INTO identify_turns (bucket, last_at) VALUES (?, clock_timestamp()) "
                "ON CONFLICT (bucket) DO UPDATE SET last_at = EXCLUDED.last_at",
                (bucket,),
            )
        return 0.0

    async def listen_notes(
        self, channel: str, heard: Callable[[str], None]
    ) -> Callable[[], Awaitable[None]]:
        """Call ``heard`` with the payload of each notification on ``channel``; return what
        stops it (on a connection of its own, opened again when lost, as :meth:`listen`; what
        was sent meanwhile is lost)."""
        return await self._subscribe(channel, heard, None)

    async def listen(
        self, channel: str, heard: Callable[[], None]
    ) -> Callable[[], Awaitable[None]]:
        """Call ``heard`` whenever any process sends a notification on ``channel``; return
        what stops it.

        On a connection of its own, outside the pool, held until stopped (or the database is
        closed), so the pool's connections stay free for the bot's work. A lost connection
        (PostgreSQL restarted, the session ended, or a link that went silent: the connection is
        asked ``SELECT 1`` every ``LISTEN_PING_SECONDS``) is opened again, and ``heard`` is
        called once then: what was sent meanwhile is lost, so the caller looks again.
        """
        return await self._subscribe(channel, lambda _: heard(), heard)

    async def _subscribe(
        self, channel: str, heard: Callable[[str], None], again: Callable[[], None] | None
    ) -> Callable[[], Awaitable[None]]:
        """Listen on ``channel`` until stopped: ``heard`` gets each payload, ``again`` is called
        once the connection, lost, is opened again."""
        if self._url is None or self._pool is None:
            raise StorageClosedError(f"The storage for {self._path} cannot listen.")
        subscription = _Subscription(self._url, self._path, channel, heard, again)
        try:
            await subscription.connect()
        except (TimeoutError, *_ERRORS) as exc:
            raise translate_postgres_error(exc, self._path) from exc
        subscription.keep()
        self._listening.append(subscription)

        async def stop() -> None:
            if subscription in self._listening:
                self._listening.remove(subscription)
                self._end(subscription)

        return stop

    def _end(self, subscription: _Subscription) -> None:
        # At once, without giving way to another task: a process stopping hands its shards
        # over right after it stops listening, before its database is closed.
        ending = subscription.end()
        if ending is not None:
            self._ending.add(ending)
            ending.add_done_callback(self._ending.discard)

    async def close(self) -> None:
        """Close the pool, waiting for the statements in progress. Safe to call twice."""
        pool, self._pool = self._pool, None
        listening, self._listening = self._listening, []
        for subscription in listening:
            self._end(subscription)
        if self._ending:
            await asyncio.wait(set(self._ending))
        if pool is not None:
            await pool.close()


class _Subscription:
    """One channel listened to on a connection of its own, opened again whenever it is lost."""

    def __init__(
        self,
        url: str,
        where: str,
        channel: str,
        heard: Callable[[str], None],
        again: Callable[[], None] | None,
    ) -> None:
        """Prepare to listen on ``channel`` at ``url`` (``where`` is the URL without password):
        ``heard`` gets each notification's payload, ``again`` is called each time the connection
        is opened again."""
        self._url = url
        self._where = where
        self._channel = channel
        self._heard = heard
        self._again = again
        self._conn: asyncpg.Connection | None = None
        self._lost = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    async def connect(self) -> None:
        """Open the connection and listen on it; raise what asyncpg raises."""
        async with asyncio.timeout(CONNECT_SECONDS):
            conn = await asyncpg.connect(self._url, timeout=CONNECT_SECONDS)
            self._conn = conn
            try:
                # Watched before LISTEN is sent, so that no way of losing it goes unseen.
                conn.add_termination_listener(self._dropped)
                await conn.add_listener(self._channel, self._notified)
            except BaseException:
                self._conn = None
                conn.terminate()
                raise

    def keep(self) -> None:
        """Open the connection again whenever it is lost, until :meth:`end`."""
        self._task = asyncio.create_task(self._keep(), name=f"listen {self._channel}")

    def end(self) -> asyncio.Task[None] | None:
        """Stop listening and close the connection; return the task that keeps it, cancelled
        (an attempt to connect in progress closes what it opened as it ends)."""
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
        conn, self._conn = self._conn, None
        if conn is not None:
            conn.terminate()
        return task

    def _notified(self, *args: object) -> None:
        self._heard(str(args[-1]))

    def _dropped(self, conn: asyncpg.Connection) -> None:
        # asyncpg calls this for every closed connection, the ones closed on purpose too.
        if conn is self._conn:
            self._conn = None
            self._lost.set()

    async def _watch(self) -> None:
        """Return once the connection is lost: closed, or silent past a question."""
        while True:
            try:
                async with asyncio.timeout(LISTEN_PING_SECONDS):
                    await self._lost.wait()
                return
            except TimeoutError:
                pass
            conn = self._conn
            if conn is None:
                continue  # lost just now: _lost is set
            try:
                async with asyncio.timeout(LISTEN_ANSWER_SECONDS):
                    await conn.fetchval("SELECT 1")
            except (TimeoutError, *_ERRORS) as exc:
                log.debug("listening for %s: no answer to a question (%r)", self._channel, exc)
                # Closed here: the termination listener sets _lost, as for any lost connection.
                conn.terminate()
                if conn is self._conn:
                    self._dropped(conn)

    async def _keep(self) -> None:
        while True:
            await self._watch()
            self._lost.clear()
            log.warning(
                "lost the connection listening for %s on %s; opening it again",
                self._channel,
                self._where,
            )
            ceiling = LISTEN_RETRY_SECONDS
            while True:
                try:
                    await self.connect()
                except (TimeoutError, *_ERRORS) as exc:
                    log.debug(
                        "listening for %s: %s",
                        self._channel,
                        translate_postgres_error(exc, self._where),
                    )
                    await asyncio.sleep(random.uniform(ceiling / 2, ceiling))
                    ceiling = min(2 * ceiling, LISTEN_RETRY_MOST_SECONDS)
                else:
                    break
            log.debug("listening for %s on %s again", self._channel, self._where)
            if self._again is not None:
                # Called as a notification is: what it raises goes to the loop's handler, and
                # the subscription goes on.
                asyncio.get_running_loop().call_soon(self._again)


async def _version(conn: asyncpg.Connection) -> int:
    """Read the schema version (0 on an empty database)."""
    if await conn.fetchval("SELECT to_regclass($1) IS NULL", VERSION_TABLE):
        return 0
    return int(await conn.fetchval(f"SELECT COALESCE(MAX(version), 0) FROM {VERSION_TABLE}"))


async def migrate(conn: asyncpg.Connection, where: str) -> int:
    """Apply every pending migration in one transaction, under an advisory lock.

    Two processes starting together on a new database: the second waits for the lock, then
    finds the first one's version and applies nothing.
    """
    pending = migrations.load_migrations(POSTGRES.name)
    latest = len(pending)
    current = await _version(conn)
    if not migrations.missing(pending, current, where):
        return current
    async with conn.transaction():
        await conn.execute("SELECT pg_advisory_xact_lock($1)", MIGRATION_LOCK)
        await conn.execute(f"CREATE TABLE IF NOT EXISTS {VERSION_TABLE} (version INTEGER NOT NULL)")
        current = await _version(conn)
        for migration in migrations.missing(pending, current, where):
            try:
                await conn.execute(migration.sql)
            except asyncpg.PostgresError as exc:
                error = translate_postgres_error(exc, where)
                if type(error) is StorageError:
                    error = MigrationError(f"Migration {migration.name} failed on {where}: {exc}")
                raise error from exc
        await conn.execute(f"DELETE FROM {VERSION_TABLE}")
        await conn.execute(f"INSERT INTO {VERSION_TABLE} (version) VALUES ($1)", latest)
    if current < latest:
        log.info("migrated %s from schema version %d to %d", where, current, latest)
    return latest
