"""Shards claimed with leases in PostgreSQL: spread evenly, handed over, taken when they run out.

Each process is a storage of its own on one real database. A lease that has run out is made so
by moving its time back in the database (no test waits for one).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from krigbot.config import shard_of
from krigbot.storage import Holding, RoundConflictError, Storage, StorageError
from tests.support.postgres import Cluster
from tests.support.stored_games import new_game, running_game

LEASE = 10.0
SHARDS = 4


@pytest.fixture
async def three(pg_dsn: str) -> AsyncIterator[tuple[Storage, Storage, Storage]]:
    """Return three storages on one database: three processes of the bot."""
    opened = await asyncio.gather(*(Storage.open(pg_dsn) for _ in range(3)))
    try:
        yield opened[0], opened[1], opened[2]
    finally:
        for storage in opened:
            await storage.close()


async def beat(storage: Storage, owner: str) -> Holding:
    """Beat once, and release at once what the beat says to give up (as a process does)."""
    holding = await storage.claims.beat(owner, SHARDS, LEASE)
    if holding.give_up:
        await storage.claims.release(owner, holding.give_up)
    return holding


async def settle(members: dict[str, Storage]) -> dict[str, set[int]]:
    """Beat each member in turn until no shard moves; return each one's shards."""
    held: dict[str, set[int]] = {}
    for _ in range(10):
        before = dict(held)
        for owner, storage in members.items():
            holding = await beat(storage, owner)
            held[owner] = set(holding.held) - set(holding.give_up)
        if held == before:
            return held
    raise AssertionError(f"the claims never settled: {held}")


def expire(postgres: Cluster, url: str, owner: str) -> None:
    """Make ``owner``'s leases and membership run out, as if it stopped beating long ago."""
    for table in ("shard_claims", "shard_members"):
        postgres.psql(
            f"UPDATE {table} SET expires_at = clock_timestamp() - INTERVAL '1 second' "
            f"WHERE owner = '{owner}'",
            url,
        )


async def test_three_processes_share_four_shards_two_one_one_and_a_joiner_takes_from_the_busiest(
    three: tuple[Storage, Storage, Storage],
) -> None:
    a, b, c = three
    assert await settle({"a": a}) == {"a": {0, 1, 2, 3}}
    assert await settle({"a": a, "b": b}) == {"a": {0, 1}, "b": {2, 3}}
    held = await settle({"a": a, "b": b, "c": c})
    assert sorted(len(shards) for shards in held.values()) == [1, 1, 2]
    assert set().union(*held.values()) == {0, 1, 2, 3}
    # The joiner's shard came from one of the two that held two; the other kept its pair.
    assert held["a"] == {0, 1} or held["b"] == {2, 3}
    assert (await a.claims.beat("a", SHARDS, LEASE)).members == 3


async def test_a_process_that_leaves_hands_its_shards_to_the_others_at_their_next_beat(
    three: tuple[Storage, Storage, Storage],
) -> None:
    a, b, c = three
    held = await settle({"a": a, "b": b, "c": c})
    await b.claims.leave("b")
    after = await settle({"a": a, "c": c})
    assert after["a"] | after["c"] == {0, 1, 2, 3}
    assert sorted(len(shards) for shards in after.values()) == [2, 2]
    # Nothing else moved.
    assert held["a"] <= after["a"]
    assert held["c"] <= after["c"]


async def test_a_release_or_a_leave_wakes_the_other_processes_at_once(
    three: tuple[Storage, Storage, Storage],
) -> None:
    a, b, _ = three
    await settle({"a": a, "b": b})
    heard = asyncio.Event()
    unwatch = await a.claims.watch(heard.set)
    await b.claims.release("b", (2,))
    await asyncio.wait_for(heard.wait(), timeout=30)
    heard.clear()
    await b.claims.leave("b")
    await asyncio.wait_for(heard.wait(), timeout=30)
    await unwatch()
    assert set((await a.claims.beat("a", SHARDS, LEASE)).held) == {0, 1, 2, 3}


async def test_a_dead_process_s_shards_are_taken_with_new_epochs_and_its_writes_refused(
    three: tuple[Storage, Storage, Storage], postgres: Cluster, pg_dsn: str
) -> None:
    a, b, _ = three
    await settle({"a": a, "b": b})
    old = (await b.claims.beat("b", SHARDS, LEASE)).held
    game = await running_game(b)
    await b.games.save_round(
        game.id, expected_round=0, state={"n": 1}, round=1, now=game.created_at, fence=old[2]
    )

    expire(postgres, pg_dsn, "b")
    # Its lease ran out: even before anyone takes the shard, its writes are refused.
    with pytest.raises(RoundConflictError):
        await b.games.save_round(
            game.id, expected_round=1, state={"n": 2}, round=2, now=game.created_at, fence=old[2]
        )
    taken = (await a.claims.beat("a", SHARDS, LEASE)).held
    assert set(taken) == {0, 1, 2, 3}
    assert not set(old.values()) & set(taken.values())
    # Back from its pause, the old owner renews nothing and still writes nothing.
    assert (await b.claims.beat("b", SHARDS, LEASE)).held == {}
    with pytest.raises(RoundConflictError):
        await b.games.finish_game(
            game.id,
            expected_round=1,
            state={"n": 2},
            round=2,
            result={"winner": 0},
            results=[],
            now=game.created_at,
            fence=old[2],
        )
    await a.games.save_round(
        game.id, expected_round=1, state={"n": 2}, round=2, now=game.created_at, fence=taken[2]
    )
    assert (await a.games.get_game(game.id)).round == 2  # type: ignore[union-attr]


async def test_many_writes_together_each_keep_their_own_fence(
    three: tuple[Storage, Storage, Storage], postgres: Cluster, pg_dsn: str
) -> None:
    a, b, _ = three
    await settle({"a": a, "b": b})
    epochs = (await a.claims.beat("a", SHARDS, LEASE)).held
    stale = max(epochs.values()) + 1_000  # an epoch no lease has
    games = [await running_game(a, channel_id=channel) for channel in range(10, 16)]
    saves = [
        a.games.save_round(
            game.id,
            expected_round=0,
            state={"n": 1},
            round=1,
            now=game.created_at,
            fence=stale if n % 2 else min(epochs.values()),
        )
        for n, game in enumerate(games)
    ]
    outcomes = await asyncio.gather(*saves, return_exceptions=True)
    assert [isinstance(outcome, RoundConflictError) for outcome in outcomes] == [
        n % 2 == 1 for n in range(len(games))
    ]


async def test_sqlite_keeps_no_claims(tmp_path: Path) -> None:
    async with await Storage.open(tmp_path / "krig.db") as storage:
        with pytest.raises(StorageError, match="PostgreSQL"):
            await storage.claims.beat("a", SHARDS, LEASE)
        game = await running_game(storage)
        await storage.games.save_round(
            game.id, expected_round=0, state={"n": 1}, round=1, now=game.created_at
        )


async def test_every_write_of_a_game_is_fenced_not_only_its_rounds(
    three: tuple[Storage, Storage, Storage], postgres: Cluster, pg_dsn: str
) -> None:
    a, b, _ = three
    await settle({"a": a, "b": b})
    epochs = (await b.claims.beat("b", SHARDS, LEASE)).held
    fence = min(epochs.values())
    challenge = await new_game(b, channel_id=30)
    running = await running_game(b, channel_id=31)
    expire(postgres, pg_dsn, "b")

    assert (
        await b.games.start_game(challenge.id, state={}, now=challenge.created_at, fence=fence)
        is None
    )
    assert not await b.games.end_game(running.id, "cancelled", running.created_at, fence=fence)
    assert await b.games.update_extra(running.id, {"autoplay": None}, fence=fence) is None
    stored = await a.games.get_game(running.id)
    assert stored is not None
    assert stored.status == "running"
    taken = (await a.claims.beat("a", SHARDS, LEASE)).held
    ours = taken[shard_of(running.server_id, SHARDS)]
    assert await a.games.end_game(running.id, "cancelled", running.created_at, fence=ours)
