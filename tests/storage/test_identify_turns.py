"""Identify turns in PostgreSQL: processes on many machines, one identify per start bucket a pause.

Each machine is a storage of its own (its own pool of connections) on one real database; the
database's own record of every turn taken (a trigger, added here) shows how far apart they are.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
from collections.abc import AsyncIterator, Iterable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import asyncpg  # type: ignore[import-untyped]  # asyncpg ships no type hints
import pytest

from krigbot.storage import Storage
from krigbot.storage import postgres as postgres_backend
from krigbot.storage.base import Connection, Row
from krigbot.storage.postgres import IDENTIFY_LOCKS, POOL_SIZE, PostgresConnection
from tests.support.migrations import a_played_database, migrate_to
from tests.support.postgres import Cluster

PAUSE = 0.4
"""A bucket's pause between identifies (Discord's is 5 s)."""
LONG = 30.0
"""A pause no test waits out: a turn inside it is one that did not wait."""

TURN_LOG = """
CREATE TABLE turns_taken (n SERIAL, bucket INTEGER NOT NULL, at TIMESTAMPTZ NOT NULL);
CREATE FUNCTION log_turn() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO turns_taken (bucket, at) VALUES (NEW.bucket, NEW.last_at);
    RETURN NEW;
END $$;
CREATE TRIGGER log_turn AFTER INSERT OR UPDATE ON identify_turns
    FOR EACH ROW EXECUTE FUNCTION log_turn();
"""


@pytest.fixture
async def machines(postgres: Cluster, pg_dsn: str) -> AsyncIterator[tuple[Storage, Storage]]:
    """Return two storages on one database, each with its own pool: two machines' processes."""
    postgres.psql(TURN_LOG, pg_dsn)
    first, second = await asyncio.gather(Storage.open(pg_dsn), Storage.open(pg_dsn))
    try:
        yield first, second
    finally:
        await first.close()
        await second.close()


def turns_taken(postgres: Cluster, url: str, bucket: int) -> list[float]:
    """Return every time (database seconds) written as a bucket's last turn, in order."""
    listed = postgres.psql(
        f"SELECT EXTRACT(EPOCH FROM at) FROM turns_taken WHERE bucket = {bucket} ORDER BY n", url
    )
    return [float(line) for line in listed.split()]


def advisory_locks(postgres: Cluster, url: str) -> str:
    """Return the identify turns' advisory locks held or waited for in the database."""
    return postgres.psql(
        "SELECT string_agg(objid::text || ':' || granted::text, ',') FROM pg_locks "
        f"WHERE locktype = 'advisory' AND classid = {IDENTIFY_LOCKS}",
        url,
    )


async def test_two_machines_identifying_in_one_bucket_take_turns_a_pause_apart(
    machines: tuple[Storage, Storage], postgres: Cluster, pg_dsn: str
) -> None:
    # Two shards of the bucket on each machine, all asking at once.
    taken = await asyncio.gather(*(m.take_identify_turn(0, PAUSE) for m in machines * 2))
    assert taken == [True] * 4
    times = turns_taken(postgres, pg_dsn, 0)
    assert len(times) == 4
    assert min(b - a for a, b in itertools.pairwise(times)) >= PAUSE


async def test_a_start_with_more_shards_waiting_than_connections_gives_every_bucket_its_turns(
    machines: tuple[Storage, Storage], postgres: Cluster, pg_dsn: str
) -> None:
    # A large bot's start (max_concurrency 16): on each machine two shards of every bucket ask
    # at once, eight times as many as the machine's pool has connections.
    buckets = 16
    asking = [m.take_identify_turn(b, PAUSE) for m in machines * 2 for b in range(buckets)]
    assert len(asking) == 2 * buckets * 2 == 16 * POOL_SIZE
    taken = await asyncio.wait_for(asyncio.gather(*asking), timeout=LONG / 3)
    assert taken == [True] * len(asking)
    for bucket in range(buckets):
        times = turns_taken(postgres, pg_dsn, bucket)
        assert len(times) == 4
        assert min(b - a for a, b in itertools.pairwise(times)) >= PAUSE


async def test_another_bucket_s_turn_never_waits_for_this_one_s(
    machines: tuple[Storage, Storage], postgres: Cluster, pg_dsn: str
) -> None:
    first, second = machines
    assert await first.take_identify_turn(0, LONG)
    assert await asyncio.wait_for(second.take_identify_turn(1, LONG), timeout=LONG / 3)
    assert await asyncio.wait_for(first.take_identify_turn(2, LONG), timeout=LONG / 3)
    same = asyncio.create_task(second.take_identify_turn(0, LONG))
    done, _ = await asyncio.wait({same}, timeout=0.3)
    assert not done  # bucket 0's turn is the first machine's for the whole pause
    same.cancel()
    assert [len(turns_taken(postgres, pg_dsn, bucket)) for bucket in (0, 1, 2)] == [1, 1, 1]


async def test_a_wait_for_another_machine_s_pause_stops_at_once_holding_nothing(
    machines: tuple[Storage, Storage], postgres: Cluster, pg_dsn: str
) -> None:
    first, second = machines
    assert await first.take_identify_turn(0, LONG)
    waiting = asyncio.create_task(second.take_identify_turn(0, LONG))
    done, _ = await asyncio.wait({waiting}, timeout=0.3)
    assert not done

    waiting.cancel()  # a stop (SIGTERM) cancels every task
    done, _ = await asyncio.wait({waiting}, timeout=5)
    assert done
    assert waiting.cancelled()
    assert advisory_locks(postgres, pg_dsn) == ""
    assert len(turns_taken(postgres, pg_dsn, 0)) == 1  # the stopped one took no turn
    # Its pool still serves.
    assert await asyncio.wait_for(second.take_identify_turn(1, LONG), timeout=LONG / 3)


async def test_a_wait_for_a_bucket_s_lock_stops_at_once_and_leaves_the_lock_free(
    machines: tuple[Storage, Storage], postgres: Cluster, pg_dsn: str
) -> None:
    first, second = machines
    # Another process in the middle of looking at bucket 0's turn, holding its lock.
    holder = await asyncpg.connect(pg_dsn)
    try:
        looking = holder.transaction()
        await looking.start()
        await holder.execute("SELECT pg_advisory_xact_lock($1, 0)", IDENTIFY_LOCKS)
        waiting = asyncio.create_task(first.take_identify_turn(0, PAUSE))
        done, _ = await asyncio.wait({waiting}, timeout=0.3)
        assert not done

        waiting.cancel()
        done, _ = await asyncio.wait({waiting}, timeout=5)
        assert done
        assert waiting.cancelled()
        # Only the holder's lock is left: the stopped one no longer waits for it.
        assert advisory_locks(postgres, pg_dsn) == "0:true"
        await looking.commit()
    finally:
        await holder.close()
    assert advisory_locks(postgres, pg_dsn) == ""
    assert await asyncio.wait_for(second.take_identify_turn(0, LONG), timeout=LONG / 3)
    assert await asyncio.wait_for(first.take_identify_turn(1, LONG), timeout=LONG / 3)


class Stopped(PostgresConnection):
    """A connection whose process stops (SIGSTOP, a stalled machine) once it holds a bucket's
    lock, before it reads the bucket's last turn, and runs nothing until ``resumed``."""

    __slots__ = ("reached", "resumed")

    def __init__(self, conn: asyncpg.Connection, reached: asyncio.Event) -> None:
        super().__init__(conn)
        self.reached = reached
        self.resumed = asyncio.Event()

    async def fetch(self, sql: str, params: Iterable[Any] = ()) -> list[Row]:
        if "FROM identify_turns" in sql:
            self.reached.set()
            while not self.resumed.is_set():
                # A stopped process's own timers do not fire either: its wait is not cut short.
                with contextlib.suppress(asyncio.CancelledError):
                    await self.resumed.wait()
        return await super().fetch(sql, params)


async def test_a_process_stopped_in_the_middle_of_its_turn_holds_the_bucket_up_a_moment_only(
    machines: tuple[Storage, Storage],
    postgres: Cluster,
    pg_dsn: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    first, second = machines
    monkeypatch.setattr(postgres_backend, "TURN_IDLE_SECONDS", 0.3)
    pool_session = first.database.session
    reached = asyncio.Event()
    stopped: list[Stopped] = []

    @asynccontextmanager
    async def stopping() -> AsyncIterator[Connection]:
        async with pool_session() as connection:
            assert isinstance(connection, PostgresConnection)
            if stopped:  # the process runs again
                yield connection
                return
            stopped.append(Stopped(connection.conn, reached))
            yield stopped[0]

    monkeypatch.setattr(first.database, "session", stopping)
    looking = asyncio.create_task(first.take_identify_turn(0, PAUSE))
    try:
        await asyncio.wait_for(reached.wait(), timeout=LONG / 3)
        assert advisory_locks(postgres, pg_dsn) == "0:true"  # the stopped one holds bucket 0
        # The other machine takes bucket 0's turn through the database all the same, once
        # PostgreSQL has ended the stopped one's look; it does not give the database up.
        assert await asyncio.wait_for(second.take_identify_turn(0, PAUSE), timeout=LONG / 3)

        # Running again, the stopped one finds its look ended and looks again: its turn comes
        # a pause after the other machine's.
        stopped[0].resumed.set()
        assert await asyncio.wait_for(looking, timeout=LONG / 3)
        others, its = turns_taken(postgres, pg_dsn, 0)
        assert its - others >= PAUSE
    finally:
        for connection in stopped:
            connection.resumed.set()
        looking.cancel()
        await asyncio.wait({looking})


async def test_a_last_turn_ahead_of_the_database_s_clock_waits_one_pause_not_until_then(
    machines: tuple[Storage, Storage], postgres: Cluster, pg_dsn: str
) -> None:
    first, second = machines
    assert await first.take_identify_turn(0, PAUSE)
    # The database's clock set back an hour after that turn.
    postgres.psql("UPDATE identify_turns SET last_at = last_at + INTERVAL '1 hour'", pg_dsn)
    assert await asyncio.wait_for(second.take_identify_turn(0, PAUSE), timeout=LONG / 3)
    # The time ahead was counted from the clock's now (one write), then the turn taken a pause on.
    first_turn, ahead, counted, turn = turns_taken(postgres, pg_dsn, 0)
    assert ahead > counted > first_turn
    assert turn - counted >= PAUSE


async def test_sqlite_keeps_no_turns_and_says_so_at_once(tmp_path: Path) -> None:
    async with await Storage.open(tmp_path / "krig.db") as storage:
        assert await storage.take_identify_turn(0, LONG) is False


async def test_a_database_a_bot_has_only_connected_through_takes_a_copy_of_sqlite(
    tmp_path: Path, pg_dsn: str
) -> None:
    # The bot was started on the new database once (it took a turn, played nothing), then
    # stopped for the move: its turns are no games, and the copy goes ahead.
    async with await Storage.open(pg_dsn) as pg:
        assert await pg.take_identify_turn(0, PAUSE)
    source = tmp_path / "krig.db"
    await a_played_database(source)
    status, out, err = await migrate_to(pg_dsn, source)
    assert (status, err) == (0, "")
    assert "all 3 games are the same there" in out
