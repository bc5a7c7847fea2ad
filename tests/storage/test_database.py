"""Opening, migrating, configuring, closing, and error reporting."""

from __future__ import annotations

import asyncio
import signal
import sqlite3
import sys
from asyncio.subprocess import PIPE
from pathlib import Path

import pytest

from krigbot.storage import (
    DatabaseLockedError,
    MigrationError,
    NotADatabaseError,
    SchemaTooNewError,
    Storage,
    StorageClosedError,
    StorageError,
)
from krigbot.storage import migrations as migrations_module
from krigbot.storage.errors import DatabaseReadOnlyError, DiskFullError, translate_error
from krigbot.storage.migrations import Migration, load_migrations, split_statements
from tests.support.stored_games import T0, at, new_game, pr, record_game, running_game

LATEST = len(load_migrations("sqlite"))
REPO = Path(__file__).resolve().parents[2]


def user_version(path: Path) -> int:
    """Read PRAGMA user_version with plain sqlite3."""
    with sqlite3.connect(path) as db:
        return int(db.execute("PRAGMA user_version").fetchone()[0])


def schema(path: Path) -> list[tuple[str, str]]:
    """List the schema objects of a database file."""
    with sqlite3.connect(path) as db:
        return db.execute("SELECT type, name FROM sqlite_schema ORDER BY name").fetchall()


@pytest.mark.parametrize("dialect", ["sqlite", "postgres"])
def test_migration_files_are_numbered_from_one(dialect: str) -> None:
    versions = [m.version for m in load_migrations(dialect)]
    assert versions == list(range(1, len(versions) + 1))
    assert versions, "the initial migration must be found as package data"


def test_each_dialect_has_the_same_migrations() -> None:
    sqlite, postgres = load_migrations("sqlite"), load_migrations("postgres")
    assert [m.name for m in sqlite] == [m.name for m in postgres]


async def test_open_creates_folder_schema_and_wal(tmp_path: Path) -> None:
    path = tmp_path / "nested" / "deeper" / "krig.db"
    storage = await Storage.open(path)
    await storage.close()
    assert path.is_file()
    assert user_version(path) == LATEST
    names = {name for _, name in schema(path)}
    assert {"games", "results", "guild_settings", "games_one_active_per_channel"} <= names
    with sqlite3.connect(path) as db:
        assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


async def test_reopen_is_idempotent(tmp_path: Path) -> None:
    path = tmp_path / "krig.db"
    storage = await Storage.open(path)
    game = await new_game(storage)
    await storage.close()
    before = schema(path)
    storage = await Storage.open(str(path))  # str and Path both accepted
    try:
        assert await storage.games.get_game(game.id) == game
        assert await storage.games.game_count() == 1
    finally:
        await storage.close()
    assert schema(path) == before
    assert user_version(path) == LATEST


async def test_pending_migrations_apply_on_an_older_database(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "krig.db"
    await (await Storage.open(path)).close()
    real = load_migrations("sqlite")
    extra = Migration(LATEST + 1, "9999_test.sql", "CREATE TABLE later (x INTEGER);")
    monkeypatch.setattr(migrations_module, "load_migrations", lambda _dialect: (*real, extra))
    await (await Storage.open(path)).close()
    assert user_version(path) == LATEST + 1
    assert ("table", "later") in schema(path)


async def test_migrations_are_all_or_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = load_migrations("sqlite")
    broken = Migration(LATEST + 1, "9999_broken.sql", "CREATE TABLE ok (x);\nNOT SQL AT ALL;")
    monkeypatch.setattr(migrations_module, "load_migrations", lambda _dialect: (*real, broken))
    path = tmp_path / "krig.db"
    with pytest.raises(MigrationError, match=r"9999_broken\.sql"):
        await Storage.open(path)
    # Nothing of the batch survived: not 0001's tables, not the first statement of 9999.
    assert user_version(path) == 0
    assert schema(path) == []


def test_split_statements_respects_strings_comments_and_triggers() -> None:
    script = """
    -- a comment; with a semicolon
    CREATE TABLE t (x TEXT DEFAULT 'a;b');
    /* block; comment */
    CREATE TRIGGER tr AFTER INSERT ON t BEGIN
        UPDATE t SET x = 'c;d';
        DELETE FROM t WHERE x = ';';
    END;
    INSERT INTO t VALUES ('e'); -- trailing comment
    """
    statements = split_statements(script)
    assert len(statements) == 3
    assert statements[1].startswith("/* block; comment */\n    CREATE TRIGGER")
    assert statements[1].endswith("END;")
    # A missing final semicolon is tolerated; an unterminated string is not.
    assert split_statements("CREATE TABLE t (x)") == ["CREATE TABLE t (x);"]
    with pytest.raises(MigrationError, match="Unterminated"):
        split_statements("CREATE TABLE t (x DEFAULT 'oops);")


async def test_schema_too_new_is_refused_and_left_alone(tmp_path: Path) -> None:
    path = tmp_path / "krig.db"
    with sqlite3.connect(path) as db:
        db.execute(f"PRAGMA user_version = {LATEST + 5}")
    with pytest.raises(SchemaTooNewError) as caught:
        await Storage.open(path)
    assert isinstance(caught.value, StorageError)
    assert (caught.value.found, caught.value.supported) == (LATEST + 5, LATEST)
    assert str(path) in str(caught.value)
    assert user_version(path) == LATEST + 5
    assert schema(path) == []


async def test_not_a_database_is_refused_and_left_alone(tmp_path: Path) -> None:
    path = tmp_path / "notes.db"
    content = b"These are my notes, not a database.\n" * 200
    path.write_bytes(content)
    with pytest.raises(NotADatabaseError, match="not a SQLite database") as caught:
        await Storage.open(path)
    assert str(path) in str(caught.value)
    assert path.read_bytes() == content


async def test_memory_database_works() -> None:
    storage = await Storage.open(":memory:")
    try:
        game = await new_game(storage)
        assert await storage.games.get_game(game.id) == game
    finally:
        await storage.close()


async def test_data_survives_close_and_reopen(tmp_path: Path) -> None:
    path = tmp_path / "krig.db"
    storage = await Storage.open(path)
    running = await running_game(storage, channel_id=1)
    assert await storage.games.save_round(
        running.id, expected_round=0, state={"hands": [[9], [8]]}, round=1, now=at(1)
    )
    finished = await record_game(storage, [pr(10, "win"), pr(20, "loss")], channel_id=2, now=at(2))
    await storage.settings.set_setting(1, "locale", "da")
    await storage.close()

    storage = await Storage.open(path)
    try:
        restored = await storage.games.get_game(running.id)
        assert restored is not None
        assert (restored.status, restored.round, restored.state) == (
            "running",
            1,
            {"hands": [[9], [8]]},
        )
        assert await storage.games.get_game(finished.id) == finished
        assert [g.id for g in await storage.games.running_games()] == [running.id]
        board = await storage.stats.leaderboard(1)
        assert [(r.user_id, r.wins) for r in board] == [(10, 1), (20, 0)]
        assert await storage.settings.get_setting(1, "locale") == "da"
    finally:
        await storage.close()


async def test_closed_storage_refuses_use_and_close_is_repeatable() -> None:
    storage = await Storage.open(":memory:")
    await storage.close()
    await storage.close()
    with pytest.raises(StorageClosedError):
        await storage.games.get_game(1)


async def test_async_context_manager_closes(tmp_path: Path) -> None:
    async with await Storage.open(tmp_path / "krig.db") as storage:
        await new_game(storage)
    with pytest.raises(StorageClosedError):
        await storage.games.game_count()


async def test_locked_database_is_reported_and_recovers(tmp_path: Path) -> None:
    path = tmp_path / "krig.db"
    storage = await Storage.open(path, busy_timeout_ms=50)
    try:
        game = await running_game(storage)
        other = sqlite3.connect(path, isolation_level=None)
        other.execute("BEGIN IMMEDIATE")  # another process holds the write lock
        try:
            with pytest.raises(DatabaseLockedError, match="locked"):
                await storage.games.save_round(game.id, expected_round=0, state={}, round=1, now=T0)
            with pytest.raises(DatabaseLockedError):
                await new_game(storage, channel_id=999)
        finally:
            other.execute("ROLLBACK")
            other.close()
        # No transaction was left open on our connection by the failures.
        assert await storage.games.save_round(game.id, expected_round=0, state={}, round=1, now=T0)
        assert await new_game(storage, channel_id=999)
    finally:
        await storage.close()


def test_translate_error_on_real_sqlite_errors(tmp_path: Path) -> None:
    path = tmp_path / "plain.db"
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE t (x BLOB)")

    readonly = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    with pytest.raises(sqlite3.OperationalError) as caught:
        readonly.execute("INSERT INTO t VALUES (1)")
    readonly.close()
    error = translate_error(caught.value, str(path))
    assert isinstance(error, DatabaseReadOnlyError)
    assert str(path) in str(error)

    full = sqlite3.connect(path)
    pages = full.execute("PRAGMA page_count").fetchone()[0]
    full.execute(f"PRAGMA max_page_count = {pages}")
    with pytest.raises(sqlite3.OperationalError) as caught:
        full.execute("INSERT INTO t VALUES (zeroblob(100000))")
    full.close()
    assert isinstance(translate_error(caught.value, str(path)), DiskFullError)

    garbage = tmp_path / "garbage.db"
    garbage.write_bytes(b"x" * 4096)
    with pytest.raises(sqlite3.DatabaseError) as caught_db:
        sqlite3.connect(garbage).execute("SELECT * FROM sqlite_schema")
    assert isinstance(translate_error(caught_db.value, str(garbage)), NotADatabaseError)

    other = sqlite3.OperationalError("no such table: nope")
    generic = translate_error(other, "x.db")
    assert type(generic) is StorageError


_KILLED_WRITER = """
import asyncio, os, signal, sys
from datetime import UTC, datetime
from krigbot.storage import Storage

async def main() -> None:
    storage = await Storage.open(sys.argv[1])
    now = datetime.now(UTC)
    game = await storage.games.create_game(
        guild_id=1, channel_id=1, challenger_id=10, players=[10, 20], names=["a", "b"],
        variant="classic", rules={}, seed=1, now=now,
    )
    await storage.games.start_game(game.id, state={"round": 0}, now=now)
    for r in range(50):
        assert await storage.games.save_round(
            game.id, expected_round=r, state={"round": r + 1}, round=r + 1, now=now
        )
    print(game.id, flush=True)
    os.kill(os.getpid(), signal.SIGKILL)  # no close(), no checkpoint, no cleanup

asyncio.run(main())
"""


async def test_acknowledged_rounds_survive_sigkill(tmp_path: Path) -> None:
    path = tmp_path / "krig.db"
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-c", _KILLED_WRITER, str(path), cwd=REPO, stdout=PIPE, stderr=PIPE
    )
    stdout, stderr = await process.communicate()
    assert process.returncode == -signal.SIGKILL, stderr.decode()
    game_id = int(stdout)
    assert (tmp_path / "krig.db-wal").exists()  # the rounds live only in the WAL so far
    storage = await Storage.open(path)
    try:
        game = await storage.games.get_game(game_id)
        assert game is not None
        assert (game.round, game.state) == (50, {"round": 50})
    finally:
        await storage.close()


async def test_a_new_database_another_process_is_writing_opens_once_it_is_done(
    tmp_path: Path,
) -> None:
    # Two bot processes started together on a new database both ask for WAL mode, which needs
    # the file to itself. SQLite answered the one that lost "database is locked" at once,
    # without its busy timeout (waiting there could deadlock), and that process did not start.
    path = tmp_path / "data" / "krig.db"
    path.parent.mkdir()
    other = sqlite3.connect(path, isolation_level=None)
    try:
        other.execute("BEGIN IMMEDIATE")  # the other process, still writing the new file
        other.execute("CREATE TABLE elsewhere (x)")
        asyncio.get_running_loop().call_later(0.5, other.execute, "COMMIT")
        storage = await Storage.open(path)
    finally:
        other.close()
    try:
        assert await storage.games.game_count() == 0
    finally:
        await storage.close()
