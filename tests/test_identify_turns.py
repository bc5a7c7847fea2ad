"""Identify turns across machines: on PostgreSQL the bot's processes take them through the database.

Two machines are two folders of their own, so no lock file is shared between them; the database
is one real PostgreSQL. The end-to-end test runs two real `python bot.py` processes against one
stand-in that refuses an identify before its bucket's turn.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from krigbot.adapter.identify import IdentifyPacer
from krigbot.storage import Storage
from tests.standin import DiscordStandIn
from tests.support.cluster import IDENTIFY_SECONDS, ClusterDatabase, ShardProcess
from tests.support.postgres import Cluster

pytestmark = pytest.mark.slow

INTERVAL = 0.05
"""A bucket's pause in the pacer tests (Discord's is 5 s)."""


def machine(tmp_path: Path, name: str) -> Path:
    """Return one machine's own folder (the lock files of its processes go there)."""
    folder = tmp_path / name
    folder.mkdir()
    return folder


def lock_files(*folders: Path) -> list[Path]:
    """Return the identify turns' lock files in the folders."""
    return [path for folder in folders for path in folder.glob(".krig-identify-*")]


def last_turns(postgres: Cluster, url: str) -> str:
    """Return the buckets whose turns the database keeps."""
    return postgres.psql(
        "SELECT string_agg(bucket::text, ',' ORDER BY bucket) FROM identify_turns", url
    )


async def test_on_postgresql_the_turns_are_the_database_s_and_no_lock_file_is_written(
    tmp_path: Path, postgres: Cluster, pg_dsn: str
) -> None:
    here, there = machine(tmp_path, "a"), machine(tmp_path, "b")
    async with await Storage.open(pg_dsn) as first, await Storage.open(pg_dsn) as second:
        loop = asyncio.get_running_loop()
        taken: list[float] = []

        async def turn(pacer: IdentifyPacer) -> None:
            await pacer.wait_turn(0)
            taken.append(loop.time())

        await asyncio.gather(
            turn(IdentifyPacer(here, INTERVAL, first)),
            turn(IdentifyPacer(there, INTERVAL, second)),
        )
    assert abs(taken[1] - taken[0]) >= INTERVAL  # the second waited for the first's pause
    assert last_turns(postgres, pg_dsn) == "0"
    assert lock_files(here, there) == []


async def test_on_sqlite_the_turns_are_the_lock_files_beside_the_database(tmp_path: Path) -> None:
    async with await Storage.open(tmp_path / "krig.db") as storage:
        await IdentifyPacer(tmp_path, INTERVAL, storage).wait_turn(2)
    assert lock_files(tmp_path) == [tmp_path / ".krig-identify-2.lock"]


async def test_a_database_out_of_reach_paces_through_the_lock_files_until_it_answers_again(
    tmp_path: Path, postgres: Cluster, pg_dsn: str, caplog: pytest.LogCaptureFixture
) -> None:
    name = urlsplit(pg_dsn).path.lstrip("/")
    async with await Storage.open(pg_dsn) as storage:
        pacer = IdentifyPacer(tmp_path, INTERVAL, storage)
        # The database goes away: no new connection, and the pool's are cut.
        postgres.psql(f"ALTER DATABASE {name} ALLOW_CONNECTIONS false")
        postgres.psql(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
            f"WHERE datname = '{name}'"
        )
        with caplog.at_level(logging.WARNING, logger="krigbot.adapter.identify"):
            await pacer.wait_turn(0)
        assert "cannot take identify turns through the database" in caplog.text
        assert lock_files(tmp_path) == [tmp_path / ".krig-identify-0.lock"]

        postgres.psql(f"ALTER DATABASE {name} ALLOW_CONNECTIONS true")
        await pacer.wait_turn(1)
    assert last_turns(postgres, pg_dsn) == "1"  # bucket 0's turn was not the database's
    assert lock_files(tmp_path) == [tmp_path / ".krig-identify-0.lock"]


@pytest.mark.parametrize(
    "machines",
    [
        # A smaller bot (one bucket): two processes pacing only themselves (a turn every 0.75 s)
        # would both identify within one 0.5 s pause unless they started over 2.75 s apart.
        pytest.param(
            ("0-3", "4-7"),
            id="max_concurrency-1",
            marks=pytest.mark.standin(
                shard_count=8, max_concurrency=1, identify_interval=IDENTIFY_SECONDS
            ),
        ),
        # A large bot (16 buckets): every bucket has a shard on each machine, and all sixteen
        # buckets are asked for at once on both.
        pytest.param(
            ("0-15", "16-31"),
            id="max_concurrency-16",
            marks=pytest.mark.standin(
                shard_count=32, max_concurrency=16, identify_interval=IDENTIFY_SECONDS
            ),
        ),
    ],
)
async def test_processes_on_two_machines_started_together_identify_each_bucket_in_turn(
    standin: DiscordStandIn,
    tmp_path: Path,
    postgres: Cluster,
    pg_dsn: str,
    machines: tuple[str, str],
) -> None:
    processes = []
    for name, shards in zip(("machine-a", "machine-b"), machines, strict=True):
        folder = machine(tmp_path, name)
        (folder / "data").mkdir()
        database = ClusterDatabase("postgres", folder / "data" / "krig.db", postgres, pg_dsn)
        processes.append(ShardProcess(standin, folder, database, shards, "bot", {}))
    try:
        # Each waits for all its shards' READY: every shard identified.
        await asyncio.gather(*(process.start() for process in processes))
    finally:
        for process in processes:
            await process.stop()
    refused = [e.shard for e in standin.gateway_events.items if e.kind == "identify_refused"]
    assert refused == [], "an identify came before its bucket's turn"
    readies = [e.shard[0] for e in standin.gateway_events.items if e.kind == "ready"]
    assert sorted(readies) == list(range(standin.shard_count))
    for process in processes:
        assert "Traceback" not in process.log(), process.log()
        assert "cannot take" not in process.log(), process.log()
    assert lock_files(*(process.folder for process in processes)) == []
