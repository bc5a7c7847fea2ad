"""A process's leases of its shards: what it does when it cannot renew them in time.

The claims are a stand-in here (the real ones are tested against PostgreSQL in
``tests/storage/test_claims.py`` and with real processes in ``tests/test_leases.py``): a
database that answers the first renewal, then never again.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from krigbot.adapter import leases
from krigbot.adapter.leases import Change, ShardLeases
from krigbot.storage import Holding

WITHIN = 30.0
"""Seconds a test waits for what must follow."""


class StuckClaims:
    """Claims whose first beat hands out shards 0 and 1; the later ones hang until ``back``."""

    def __init__(self) -> None:
        self.beats = 0
        self.back = asyncio.Event()

    async def beat(self, owner: str, count: int, lease: float) -> Holding:
        self.beats += 1
        if self.beats > 1:
            await self.back.wait()  # the database does not answer until then
        return Holding({0: 1, 1: 2}, (), 1)

    async def release(self, owner: str, shards: tuple[int, ...]) -> None:
        """Nothing to release here."""

    async def watch(self, changed: Any) -> Any:
        async def stop() -> None:
            """Nothing to stop."""

        return stop

    async def announce(self) -> None:
        """Nobody to tell."""

    async def leave(self, owner: str) -> None:
        """Nothing to leave."""


class Storage:
    """Only the claims of a storage."""

    def __init__(self) -> None:
        self.claims = StuckClaims()


@pytest.fixture(autouse=True)
def short_leases(monkeypatch: pytest.MonkeyPatch) -> None:
    """Leases of a second, renewed every 0.2 s, given up 0.3 s before they run out."""
    monkeypatch.setattr(leases, "LEASE_SECONDS", 1.0)
    monkeypatch.setattr(leases, "RENEW_SECONDS", 0.2)
    monkeypatch.setattr(leases, "GUARD_SECONDS", 0.3)
    monkeypatch.setattr(leases, "RETRY_SECONDS", 0.1)


async def test_a_process_that_cannot_renew_stops_serving_every_shard_by_itself() -> None:
    changes: asyncio.Queue[Change] = asyncio.Queue()
    held = ShardLeases(Storage(), 2, changes.put)  # type: ignore[arg-type]
    assert await held.first() == {0: 1, 1: 2}
    held.start()
    try:
        change = await asyncio.wait_for(changes.get(), WITHIN)
        assert change.lost == {0, 1}
        assert change.held == {}
        assert held.held == {}
    finally:
        await held.stop()


async def test_a_failure_to_start_or_stop_shards_does_not_end_the_renewals() -> None:
    calls: asyncio.Queue[Change] = asyncio.Queue()

    async def failing(change: Change) -> None:
        await calls.put(change)
        raise RuntimeError("discord.py failed")

    storage = Storage()
    held = ShardLeases(storage, 2, failing)  # type: ignore[arg-type]
    await held.first()
    held.start()
    try:
        assert (await asyncio.wait_for(calls.get(), WITHIN)).lost == {0, 1}
        storage.claims.back.set()  # the database answers again: the shards are taken again
        assert (await asyncio.wait_for(calls.get(), WITHIN)).gained == {0, 1}
    finally:
        await held.stop()


class DeafClaims(StuckClaims):
    """Claims whose hanging beats do not end when cancelled: a query on a connection to a
    database that drops every packet, whose rollback waits for the network too."""

    async def beat(self, owner: str, count: int, lease: float) -> Holding:
        self.beats += 1
        while self.beats > 1 and not self.back.is_set():
            try:
                await self.back.wait()
            except asyncio.CancelledError:
                continue
        return Holding({0: 1, 1: 2}, (), 1)


async def test_a_renewal_that_ignores_its_cancellation_does_not_hold_the_guard_up() -> None:
    changes: asyncio.Queue[Change] = asyncio.Queue()
    storage = Storage()
    storage.claims = claims = DeafClaims()
    held = ShardLeases(storage, 2, changes.put)  # type: ignore[arg-type]
    await held.first()
    held.start()
    try:
        change = await asyncio.wait_for(changes.get(), WITHIN)
        assert change.lost == {0, 1}
        assert held.held == {}
    finally:
        claims.back.set()  # the renewals given up on end too
        await held.stop()
