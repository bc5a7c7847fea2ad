"""Checkpoints off the write path: the log reaches the database file, never inside a write."""

from __future__ import annotations

import logging
import sqlite3
from types import SimpleNamespace
from typing import TYPE_CHECKING

import pytest

from krigbot.storage import Storage, checkpoints
from krigbot.storage.sqlite import SqliteDatabase
from tests.support.stored_games import at, running_game

if TYPE_CHECKING:
    from collections.abc import AsyncIterator
    from pathlib import Path


@pytest.fixture
async def storage(tmp_path: Path) -> AsyncIterator[Storage]:
    # An hour between checkpoints: in these tests they run only when asked.
    opened = await Storage.open(tmp_path / "krig.db", checkpoint_every=3600)
    yield opened
    await opened.close()


def rounds_in_the_file(path: str) -> dict[int, int]:
    """Read each game's round from the database file alone, ignoring its write-ahead log."""
    with sqlite3.connect(f"file:{path}?immutable=1", uri=True) as db:
        return dict(db.execute("SELECT id, round FROM games").fetchall())


async def autocheckpoint(storage: Storage) -> int:
    """Return the pages after which the bot's own connection would checkpoint (0: never)."""
    rows = await storage.database.fetchall("PRAGMA wal_autocheckpoint")
    return int(rows[0][0])


async def test_writes_leave_the_log_alone_and_the_checkpoint_moves_it_into_the_file(
    storage: Storage,
) -> None:
    assert await autocheckpoint(storage) == 0
    game = await running_game(storage)
    await storage.checkpoint()  # the tables and the new game are in the file
    assert rounds_in_the_file(storage.path)[game.id] == 0
    for played in range(1, 1101):  # a page of log or more each
        assert await storage.games.save_round(
            game.id, expected_round=played - 1, state={"n": "x" * 3000}, round=played, now=at(1)
        )
    # Past the 1,000 pages after which a write would have checkpointed: all still in the log.
    assert rounds_in_the_file(storage.path)[game.id] == 0

    checkpointed = await storage.checkpoint()

    assert checkpointed is not None
    in_log, copied = checkpointed
    assert in_log > checkpoints.DEFAULT_PAGES
    assert copied == in_log
    assert rounds_in_the_file(storage.path)[game.id] == 1100


async def test_a_failing_checkpoint_gives_the_checkpoints_back_to_the_writes(
    storage: Storage, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    assert isinstance(storage.database, SqliteDatabase)
    checkpointer = storage.database._checkpointer
    assert checkpointer is not None
    assert checkpointer._db is not None

    async def failing(sql: str, params: object = ()) -> list[sqlite3.Row]:
        raise sqlite3.OperationalError("disk I/O error")

    monkeypatch.setattr(checkpointer._db, "execute_fetchall", failing)

    with caplog.at_level(logging.WARNING, logger="krigbot.storage.checkpoints"):
        assert await storage.checkpoint() is None

    assert "checkpoint by themselves again" in caplog.text
    assert await autocheckpoint(storage) == checkpoints.DEFAULT_PAGES
    assert await storage.checkpoint() is None  # for good
    game = await running_game(storage)  # and the storage goes on
    assert await storage.games.save_round(game.id, expected_round=0, state={}, round=1, now=at(1))


async def test_without_a_checkpoint_connection_the_writes_checkpoint(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    async def refused(*args: object, **kwargs: object) -> None:
        raise sqlite3.OperationalError("unable to open database file")

    monkeypatch.setattr(checkpoints, "aiosqlite", SimpleNamespace(connect=refused))
    with caplog.at_level(logging.WARNING, logger="krigbot.storage.checkpoints"):
        storage = await Storage.open(tmp_path / "krig.db")
    try:
        assert "checkpoints stay with the writes" in caplog.text
        assert await autocheckpoint(storage) == checkpoints.DEFAULT_PAGES
        assert await storage.checkpoint() is None
    finally:
        await storage.close()


async def test_closing_leaves_everything_in_the_database_file(tmp_path: Path) -> None:
    storage = await Storage.open(tmp_path / "krig.db", checkpoint_every=3600)
    game = await running_game(storage)
    assert await storage.games.save_round(game.id, expected_round=0, state={}, round=1, now=at(1))
    await storage.close()
    assert not (tmp_path / "krig.db-wal").exists()
    assert rounds_in_the_file(str(tmp_path / "krig.db"))[game.id] == 1
