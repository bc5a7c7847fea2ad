"""Rounds of many games saved at once: fewer trips to the database, the same outcome for each."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

import pytest

from krigbot.storage import DiskFullError, RoundConflictError, Storage, base
from tests.support.stored_games import at, running_game

if TYPE_CHECKING:
    from krigbot.storage import GameRow


async def games(storage: Storage, count: int, first_channel: int = 1000) -> list[GameRow]:
    """Start ``count`` games, one per channel."""
    return [await running_game(storage, channel_id=first_channel + i) for i in range(count)]


def statements_counted(storage: Storage) -> list[int]:
    """Record, from now on, how many writes each committed statement or transaction carried."""
    carried: list[int] = []
    storage.database.on_write = lambda _seconds, writes: carried.append(writes)
    return carried


async def refuse_rounds_with(storage: Storage, word: str) -> None:
    """Make the database refuse to save a state holding ``word`` (as a full disk would)."""
    if storage.database.dialect.name == "sqlite":
        trigger = (
            f"CREATE TRIGGER refuse BEFORE UPDATE ON games WHEN NEW.state LIKE '%{word}%' "
            "BEGIN SELECT RAISE(ABORT, 'database or disk is full'); END"
        )
    else:
        trigger = (
            "CREATE FUNCTION refuse() RETURNS trigger LANGUAGE plpgsql AS "
            "$$ BEGIN RAISE EXCEPTION 'could not extend file' USING ERRCODE = 'disk_full'; END $$;"
            "CREATE TRIGGER refuse BEFORE UPDATE ON games FOR EACH ROW "
            f"WHEN (NEW.state::text LIKE '%{word}%') EXECUTE FUNCTION refuse()"
        )
    await storage.database.write(trigger, ())


async def test_rounds_of_many_games_at_once_all_land_in_few_statements(storage: Storage) -> None:
    rows = await games(storage, 150)
    statements = statements_counted(storage)
    saved = await asyncio.gather(
        *(
            storage.games.save_round(
                row.id, expected_round=0, state={"game": row.id}, round=1, now=at(row.id)
            )
            for row in rows
        )
    )
    assert saved == [True] * 150
    for row in rows:
        stored = await storage.games.get_game(row.id)
        assert stored is not None
        assert (stored.round, stored.state, stored.last_activity_at) == (
            1,
            {"game": row.id},
            at(row.id),
        )
    # They went together, as few statements as the limit of rows per statement allows.
    assert statements == [base.BATCH_LIMIT, base.BATCH_LIMIT, 150 - 2 * base.BATCH_LIMIT]


async def test_a_stale_round_among_many_fails_alone(storage: Storage) -> None:
    rows = await games(storage, 10)
    stale = rows[4]
    before = await storage.games.get_game(stale.id)
    saved = await asyncio.gather(
        *(
            storage.games.save_round(
                row.id,
                expected_round=7 if row is stale else 0,
                state={"n": 1},
                round=1,
                now=at(1),
            )
            for row in rows
        ),
        return_exceptions=True,
    )
    assert [outcome is True for outcome in saved] == [row is not stale for row in rows]
    assert isinstance(saved[4], RoundConflictError)
    assert (saved[4].expected_round, saved[4].round) == (7, 0)
    assert await storage.games.get_game(stale.id) == before


async def test_two_rounds_of_one_game_waiting_together_go_in_order(storage: Storage) -> None:
    (row,) = await games(storage, 1)
    others = await games(storage, 3, first_channel=2000)
    first, *rest, second = await asyncio.gather(
        storage.games.save_round(row.id, expected_round=0, state={"n": 1}, round=1, now=at(1)),
        *(
            storage.games.save_round(o.id, expected_round=0, state={"n": 1}, round=1, now=at(1))
            for o in others
        ),
        storage.games.save_round(row.id, expected_round=1, state={"n": 2}, round=2, now=at(2)),
    )
    assert [first, *rest, second] == [True] * 5
    stored = await storage.games.get_game(row.id)
    assert stored is not None
    assert (stored.round, stored.state) == (2, {"n": 2})


async def test_a_failing_statement_fails_each_of_its_writes_and_writes_none(
    storage: Storage,
) -> None:
    rows = await games(storage, 12)
    # The database refuses one of the rows (as a full disk would refuse them all).
    await refuse_rounds_with(storage, "boom")
    before = {row.id: await storage.games.get_game(row.id) for row in rows}
    outcomes = await asyncio.gather(
        *(
            storage.games.save_round(
                row.id,
                expected_round=0,
                state={"n": "boom" if row is rows[5] else 1},
                round=1,
                now=at(1),
            )
            for row in rows
        ),
        return_exceptions=True,
    )
    # They went as one statement, which failed as a whole: every caller hears, none landed.
    assert all(isinstance(outcome, DiskFullError) for outcome in outcomes)
    for row in rows:
        assert await storage.games.get_game(row.id) == before[row.id]
    # The storage goes on: the same rounds, without the bad one, are saved.
    assert await storage.games.save_round(
        rows[1].id, expected_round=0, state={}, round=1, now=at(2)
    )


async def test_table_messages_of_many_games_at_once_all_land(storage: Storage) -> None:
    rows = await games(storage, 40)
    changed = await asyncio.gather(
        *(storage.games.set_table_message(row.id, 5000 + row.id, now=at(3)) for row in rows),
        storage.games.set_table_message(999_999, 1),
    )
    assert changed == [True] * 40 + [False]
    for row in rows:
        stored = await storage.games.get_game(row.id)
        assert stored is not None
        assert (stored.table_message_id, stored.updated_at) == (5000 + row.id, at(3))


async def test_a_write_whose_caller_gave_up_still_lands(
    storage: Storage, monkeypatch: pytest.MonkeyPatch
) -> None:
    rows = await games(storage, 3)
    # Hold the statement until the third caller has given up.
    sending, release = asyncio.Event(), asyncio.Event()
    write_batch = storage.database._write_batch

    async def held(kind: base.Coalesced, batch: list[tuple[object, ...]]) -> set[int]:
        sending.set()
        await release.wait()
        return await write_batch(kind, batch)

    monkeypatch.setattr(storage.database, "_write_batch", held)
    writes = [
        asyncio.create_task(
            storage.games.save_round(row.id, expected_round=0, state={"n": 1}, round=1, now=at(1))
        )
        for row in rows
    ]
    await sending.wait()  # all three are on their way, as one statement
    writes[2].cancel()
    release.set()
    assert await asyncio.gather(*writes[:2]) == [True, True]
    with pytest.raises(asyncio.CancelledError):
        await writes[2]
    stored = await storage.games.get_game(rows[2].id)
    assert stored is not None
    assert stored.round == 1


async def test_with_an_old_sqlite_every_write_goes_alone(
    storage: Storage, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(storage.database, "batches", False)
    rows = await games(storage, 20)
    statements = statements_counted(storage)
    saved = await asyncio.gather(
        *(
            storage.games.save_round(row.id, expected_round=0, state={}, round=1, now=at(1))
            for row in rows
        )
    )
    assert saved == [True] * 20
    assert statements == [1] * 20
