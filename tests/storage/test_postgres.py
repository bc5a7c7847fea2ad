"""PostgreSQL itself: migrating from two processes at once, writers in two processes, and
listening across a lost connection."""

from __future__ import annotations

import asyncio
import logging

import pytest

from krigbot.storage import CannotOpenDatabaseError, RoundConflictError, SchemaTooNewError, Storage
from krigbot.storage import postgres as postgres_backend
from krigbot.storage.migrations import load_migrations
from krigbot.storage.postgres import VERSION_TABLE, PostgresDatabase, positional, redacted
from tests.support.postgres import Cluster, cluster_running
from tests.support.stored_games import at, results_for, running_game
from tests.support.tcp_proxy import CuttableProxy

LATEST = len(load_migrations("postgres"))


def tables(postgres: Cluster, url: str) -> list[str]:
    """Return the tables of a database, by name."""
    listed = postgres.psql(
        "SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename", url
    )
    return listed.split()


async def test_two_storages_opening_a_new_database_at_once_migrate_it_once(
    postgres: Cluster,
) -> None:
    for _ in range(3):
        url = postgres.create_database()
        first, second = await asyncio.gather(Storage.open(url), Storage.open(url))
        try:
            # Without the lock the second would fail on a table the first just created.
            game = await running_game(first)
            assert await second.games.get_game(game.id) == game
        finally:
            await first.close()
            await second.close()
        assert tables(postgres, url) == [
            "games",
            "guild_settings",
            "identify_turns",
            VERSION_TABLE,
            "krigbot_results",
            "match_results",
            "matches",
            "results",
            "shard_claims",
            "shard_members",
            "tournament_players",
            "tournaments",
        ]
        assert postgres.psql(f"SELECT version FROM {VERSION_TABLE}", url) == str(LATEST)


async def test_a_newer_schema_is_refused(postgres: Cluster, pg_dsn: str) -> None:
    postgres.psql(f"UPDATE {VERSION_TABLE} SET version = {LATEST + 1}", pg_dsn)
    with pytest.raises(SchemaTooNewError, match=f"version {LATEST + 1}"):
        await Storage.open(pg_dsn)


async def test_a_round_saved_by_another_process_refuses_the_stale_one(pg_dsn: str) -> None:
    async with await Storage.open(pg_dsn) as here, await Storage.open(pg_dsn) as there:
        game = await running_game(here)
        await there.games.save_round(game.id, expected_round=0, state={"by": 2}, round=1, now=at(1))
        with pytest.raises(RoundConflictError) as moved:
            await here.games.save_round(
                game.id, expected_round=0, state={"by": 1}, round=1, now=at(1)
            )
        assert (moved.value.expected_round, moved.value.round, moved.value.status) == (
            0,
            1,
            "running",
        )
        stored = await here.games.get_game(game.id)
        assert stored is not None
        assert (stored.round, stored.state) == (1, {"by": 2})


async def test_two_processes_racing_to_save_one_round_save_it_once(pg_dsn: str) -> None:
    async with await Storage.open(pg_dsn) as here, await Storage.open(pg_dsn) as there:
        game = await running_game(here)
        for current in range(5):
            outcomes = await asyncio.gather(
                *(
                    writer.games.save_round(
                        game.id,
                        expected_round=current,
                        state={"by": who},
                        round=current + 1,
                        now=at(current),
                    )
                    for who, writer in enumerate([here, there, here, there])
                ),
                return_exceptions=True,
            )
            assert outcomes.count(True) == 1
            lost = [outcome for outcome in outcomes if outcome is not True]
            assert all(isinstance(outcome, RoundConflictError) for outcome in lost)
            stored = await there.games.get_game(game.id)
            assert stored is not None
            assert (stored.round, stored.state) == (current + 1, {"by": outcomes.index(True)})


async def test_two_processes_finishing_one_game_record_its_results_once(pg_dsn: str) -> None:
    async with await Storage.open(pg_dsn) as here, await Storage.open(pg_dsn) as there:
        game = await running_game(here, players=(10, 20))
        finish = {
            "expected_round": 0,
            "state": {},
            "round": 1,
            "result": {"reason": "cards", "winners": [0]},
            "results": results_for(game.players, winner=10),
            "now": at(1),
        }
        outcomes = await asyncio.gather(
            here.games.finish_game(game.id, **finish),  # type: ignore[arg-type]
            there.games.finish_game(game.id, **finish),  # type: ignore[arg-type]
            return_exceptions=True,
        )
        assert sorted(map(type, outcomes), key=str) == sorted([bool, RoundConflictError], key=str)
        assert (await here.stats.player_stats(1, 10)).games == 1


async def test_challenges_from_two_processes_in_one_channel_make_one_game(pg_dsn: str) -> None:
    async with await Storage.open(pg_dsn) as here, await Storage.open(pg_dsn) as there:
        made = await asyncio.gather(
            *(running_game(writer, channel_id=77) for writer in (here, there, here, there)),
            return_exceptions=True,
        )
        games = [outcome for outcome in made if not isinstance(outcome, BaseException)]
        assert len(games) == 1
        assert await there.games.active_game(77) == await here.games.active_game(77)


async def test_an_unreachable_or_missing_database_is_reported_clearly(
    postgres: Cluster, tmp_path: object
) -> None:
    with pytest.raises(CannotOpenDatabaseError, match="does not exist"):
        await Storage.open(postgres.dsn("no_such_database"))
    with pytest.raises(CannotOpenDatabaseError, match="Cannot reach"):
        await Storage.open(f"postgresql://postgres@/krig?host={tmp_path}")


async def listeners(database: PostgresDatabase) -> list[int]:
    """Return the server processes of the database's connections that listen."""
    rows = await database.fetchall(
        "SELECT pid FROM pg_stat_activity "
        "WHERE datname = current_database() AND query LIKE 'LISTEN %' ORDER BY pid"
    )
    return [int(row[0]) for row in rows]


async def test_a_listener_whose_connection_is_cut_listens_again_and_is_told_to_look_once(
    pg_dsn: str, caplog: pytest.LogCaptureFixture
) -> None:
    database = await PostgresDatabase.connect(pg_dsn)
    heard = asyncio.Event()
    calls = 0

    def on_heard() -> None:
        nonlocal calls
        calls += 1
        heard.set()

    stop = await database.listen("krig_test", on_heard)
    try:
        [cut] = await listeners(database)
        with caplog.at_level(logging.INFO, logger="krigbot.storage.postgres"):
            # Waits until the server process has exited, as a restart of PostgreSQL would.
            await database.fetchall("SELECT pg_terminate_backend(?, 30000)", (cut,))
            # What was sent while it was away is lost: it is told once to look again.
            await asyncio.wait_for(heard.wait(), timeout=60)
        assert calls == 1
        lost = [
            record
            for record in caplog.records
            if record.name == "krigbot.storage.postgres" and record.levelno >= logging.WARNING
        ]
        assert len(lost) == 1
        assert "krig_test" in lost[0].getMessage()
        # One connection listens again, and the cut one is gone.
        [again] = await listeners(database)
        assert again != cut
        heard.clear()
        await database.fetchall("SELECT pg_notify('krig_test', '')")
        await asyncio.wait_for(heard.wait(), timeout=60)
        assert calls == 2
    finally:
        await stop()
        await database.close()


class Warned(logging.Handler):
    """Sets its event at the first warning it is given."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.event = asyncio.Event()
        self.message = ""

    def emit(self, record: logging.LogRecord) -> None:
        if not self.event.is_set():
            self.message = record.getMessage()
        self.event.set()


class Said(logging.Handler):
    """Sets its event when a record's message holds ``text``, whatever its level."""

    def __init__(self, text: str) -> None:
        super().__init__(logging.DEBUG)
        self.text = text
        self.event = asyncio.Event()

    def emit(self, record: logging.LogRecord) -> None:
        if record.getMessage().startswith(self.text):
            self.event.set()


async def test_a_listener_closed_while_its_database_refuses_it_stops_at_once(
    postgres: Cluster, pg_dsn: str
) -> None:
    database = await PostgresDatabase.connect(pg_dsn)
    heard = asyncio.Event()
    await database.listen("krig_test", heard.set)
    [cut] = await listeners(database)
    [name] = await database.fetchall("SELECT current_database()")
    warned = Warned()
    logging.getLogger("krigbot.storage.postgres").addHandler(warned)
    try:
        # New connections are refused from here on; the pool keeps the ones it has.
        postgres.psql(f"ALTER DATABASE {name[0]} ALLOW_CONNECTIONS false")
        await database.fetchall("SELECT pg_terminate_backend(?, 30000)", (cut,))
        await asyncio.wait_for(warned.event.wait(), timeout=60)
        await asyncio.wait_for(database.close(), timeout=60)
    finally:
        logging.getLogger("krigbot.storage.postgres").removeHandler(warned)
        postgres.psql(f"ALTER DATABASE {name[0]} ALLOW_CONNECTIONS true")
    assert not [task for task in asyncio.all_tasks() if task.get_name() == "listen krig_test"]
    assert not heard.is_set()


@pytest.mark.parametrize("kind", ["signals", "notes"])
async def test_a_listener_whose_connection_goes_silent_notices_and_listens_again(
    postgres: Cluster,
    pg_dsn: str,
    kind: str,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    # A link that drops every packet and closes nothing (a NAT that forgot the connection):
    # the listener asks its connection something now and then, and a question left unanswered
    # counts as the connection lost.
    monkeypatch.setattr(postgres_backend, "LISTEN_PING_SECONDS", 0.5)
    monkeypatch.setattr(postgres_backend, "LISTEN_ANSWER_SECONDS", 0.5)
    monkeypatch.setattr(postgres_backend, "CONNECT_SECONDS", 1.0)
    direct = await PostgresDatabase.connect(pg_dsn)
    warned = Warned()
    again = Said("listening for krig_test on")  # once it listens again (a debug line)
    for handler in (warned, again):
        logging.getLogger("krigbot.storage.postgres").addHandler(handler)
    caplog.set_level(logging.DEBUG, logger="krigbot.storage.postgres")
    async with CuttableProxy.to_postgres(postgres.socket_dir) as proxy:
        database = await PostgresDatabase.connect(proxy.url(pg_dsn))
        heard: list[str] = []
        told = asyncio.Event()

        def on_note(note: str) -> None:
            heard.append(note)
            told.set()

        def on_signal() -> None:
            heard.append("")
            told.set()

        if kind == "notes":
            stop = await database.listen_notes("krig_test", on_note)
        else:
            stop = await database.listen("krig_test", on_signal)
        try:
            proxy.stall()
            await asyncio.wait_for(warned.event.wait(), timeout=60)
            assert "krig_test" in warned.message
            proxy.restore()
            await asyncio.wait_for(again.event.wait(), timeout=60)
            if kind == "signals":
                # What was sent while it was away is lost: it is told once to look again.
                await asyncio.wait_for(told.wait(), timeout=60)
                assert heard == [""]
                told.clear()
            await direct.fetchall("SELECT pg_notify('krig_test', 'after')")
            await asyncio.wait_for(told.wait(), timeout=60)
            assert heard[-1] == ("after" if kind == "notes" else "")
        finally:
            for handler in (warned, again):
                logging.getLogger("krigbot.storage.postgres").removeHandler(handler)
            await stop()
            await database.close()
            await direct.close()


@pytest.mark.slow
async def test_a_listener_hears_again_after_postgresql_restarts() -> None:
    with cluster_running() as cluster:
        database = await PostgresDatabase.connect(cluster.create_database())
        heard = asyncio.Event()
        stop = await database.listen("krig_test", heard.set)
        warned = Warned()
        logging.getLogger("krigbot.storage.postgres").addHandler(warned)
        try:
            await asyncio.to_thread(cluster.halt)
            await asyncio.wait_for(warned.event.wait(), timeout=60)
            await asyncio.to_thread(cluster.resume)
            await asyncio.wait_for(heard.wait(), timeout=60)
            heard.clear()
            await database.fetchall("SELECT pg_notify('krig_test', '')")
            await asyncio.wait_for(heard.wait(), timeout=60)
        finally:
            logging.getLogger("krigbot.storage.postgres").removeHandler(warned)
            await stop()
            await database.close()


def test_placeholders_become_numbered_outside_string_literals() -> None:
    assert positional("SELECT '?', ? WHERE a = ? AND b = 'it''s?'") == (
        "SELECT '?', $1 WHERE a = $2 AND b = 'it''s?'"
    )


def test_a_password_never_reaches_a_message() -> None:
    assert redacted("postgresql://krig:s3cret@db.example:5432/krig") == (
        "postgresql://krig:***@db.example:5432/krig"
    )
    assert redacted("postgresql://krig@/krig?host=/run/postgresql") == (
        "postgresql://krig@/krig?host=/run/postgresql"
    )
