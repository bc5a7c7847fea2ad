"""The one deadline scheduler: due on the injected clock, one per game and kind, cancellable."""

from __future__ import annotations

import asyncio
from datetime import timedelta

import pytest

from krigbot.config import Shards
from krigbot.sessions import deadlines
from krigbot.sessions.deadlines import Deadline, Deadlines
from krigbot.storage import StorageError
from tests.support.players import Clock

WITHIN = 5.0
"""Seconds a due deadline may take to reach its handler before a test fails."""


@pytest.fixture(autouse=True)
def quick_ticks(monkeypatch: pytest.MonkeyPatch) -> None:
    """Let the scheduler look at the test's clock every few milliseconds."""
    monkeypatch.setattr(deadlines, "TICK_SECONDS", 0.01)


async def test_a_deadline_is_due_when_the_clock_says_so_not_before() -> None:
    clock = Clock()
    scheduler = Deadlines(clock)
    fired: asyncio.Queue[Deadline] = asyncio.Queue()
    scheduler.handle("challenge", fired.put)
    expiry = Deadline("challenge", 1, 10, clock.now + timedelta(minutes=5), message_id=99)
    try:
        scheduler.set(expiry)
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(fired.get(), 0.1)

        clock.advance(minutes=5)

        assert await asyncio.wait_for(fired.get(), WITHIN) == expiry
        assert scheduler.pending(1, "challenge") is None
    finally:
        await scheduler.close()


async def test_a_new_deadline_replaces_the_games_pending_one_of_the_same_kind() -> None:
    clock = Clock()
    scheduler = Deadlines(clock)
    fired: asyncio.Queue[Deadline] = asyncio.Queue()
    scheduler.handle("choice", fired.put)
    scheduler.handle("time_limit", fired.put)
    later = Deadline("choice", 1, 10, clock.now + timedelta(seconds=60))
    limit = Deadline("time_limit", 1, 10, clock.now + timedelta(minutes=10))
    try:
        scheduler.set(Deadline("choice", 1, 10, clock.now + timedelta(seconds=1)))
        scheduler.set(later)
        scheduler.set(limit)
        clock.advance(seconds=30)
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(fired.get(), 0.1)

        clock.advance(seconds=30)

        assert await asyncio.wait_for(fired.get(), WITHIN) == later
        assert scheduler.pending(1, "time_limit") == limit
    finally:
        await scheduler.close()


async def test_a_cancelled_game_has_no_deadline_left_to_fire() -> None:
    clock = Clock()
    scheduler = Deadlines(clock)
    fired: asyncio.Queue[Deadline] = asyncio.Queue()
    scheduler.handle("challenge", fired.put)
    scheduler.handle("time_limit", fired.put)
    kept = Deadline("challenge", 2, 20, clock.now + timedelta(minutes=1), message_id=5)
    try:
        scheduler.set(Deadline("challenge", 1, 10, clock.now + timedelta(minutes=1), 4))
        scheduler.set(Deadline("time_limit", 1, 10, clock.now + timedelta(minutes=1)))
        scheduler.set(kept)

        scheduler.cancel(1)
        clock.advance(minutes=1)

        assert await asyncio.wait_for(fired.get(), WITHIN) == kept
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(fired.get(), 0.1)
    finally:
        await scheduler.close()


async def test_a_failing_handler_is_logged_and_the_scheduler_goes_on(
    caplog: pytest.LogCaptureFixture,
) -> None:
    clock = Clock()
    scheduler = Deadlines(clock)
    fired: asyncio.Queue[Deadline] = asyncio.Queue()

    async def broken(_: Deadline) -> None:
        raise RuntimeError("a mistake of ours")

    scheduler.handle("choice", broken)
    scheduler.handle("time_limit", fired.put)
    try:
        scheduler.set(Deadline("choice", 1, 10, clock.now))
        after = Deadline("time_limit", 2, 10, clock.now + timedelta(seconds=1))
        scheduler.set(after)
        clock.advance(seconds=1)

        assert await asyncio.wait_for(fired.get(), WITHIN) == after
        assert "the choice deadline of game 1 failed" in caplog.text
    finally:
        await scheduler.close()


async def test_a_move_that_could_not_be_saved_is_tried_again_soon() -> None:
    clock = Clock()
    scheduler = Deadlines(clock)
    fired: asyncio.Queue[Deadline] = asyncio.Queue()
    scheduler.handle("time_limit", fired.put)
    due = Deadline("time_limit", 1, 10, clock.now)

    async def unsaved() -> int:
        raise StorageError("the database is locked")

    async def saved() -> int:
        return 7

    try:
        assert await scheduler.attempt(due, saved(), "end the game") == 7
        assert scheduler.pending(1, "time_limit") is None

        assert await scheduler.attempt(due, unsaved(), "end the game") is None
        again = due.moved(clock.now + deadlines.RETRY)
        assert scheduler.pending(1, "time_limit") == again

        clock.advance(seconds=deadlines.RETRY.total_seconds())

        assert await asyncio.wait_for(fired.get(), WITHIN) == again
    finally:
        await scheduler.close()


async def test_a_deadline_of_a_shard_given_up_is_left_to_the_process_that_runs_it_now() -> None:
    clock = Clock()
    scheduler = Deadlines(clock)
    fired: asyncio.Queue[Deadline] = asyncio.Queue()
    scheduler.handle("challenge", fired.put)
    shard_one, shard_zero = 1 << 22, 2 << 22  # of 2 shards: shard 1's server, shard 0's
    shards = Shards(2, (0, 1), auto=True)
    scheduler.owns = lambda server: shards.owns(server)
    given_up = Deadline("challenge", 1, 10, clock.now, server_id=shard_one)
    kept = Deadline("challenge", 2, 20, clock.now, server_id=shard_zero)
    try:
        shards = shards.holding((0,))  # shard 1 went to another process meanwhile
        scheduler.set(given_up)
        scheduler.set(kept)

        assert await asyncio.wait_for(fired.get(), WITHIN) == kept
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(fired.get(), 0.1)
        assert scheduler.pending(1, "challenge") is None  # dropped here: the other restored it
    finally:
        await scheduler.close()
