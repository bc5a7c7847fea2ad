"""``KRIG_SHARDS=auto``: this process's leases of shards, renewed by a heartbeat.

Every ``RENEW_SECONDS`` the process beats (``storage.claims.beat``): it renews its leases for
``LEASE_SECONDS`` and takes its fair part of the shards; the bot starts the shards it gained
and stops those it lost or gives up (``Change``). A process that cannot renew in time (the
database out of reach or slow, the process held up) stops serving every shard
``GUARD_SECONDS`` before its leases can run out for the others, counted on its own monotonic
clock from the moment it sent its last renewal, which is before the database stamped it. A
process that was paused past that moment cannot stop itself, so the database refuses its
writes instead: each names its shard's lease epoch (``Registry.fence``).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import secrets
import socket
import time
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import Final

from krigbot.config import span_text
from krigbot.storage import Holding, Storage, StorageError

log = logging.getLogger(__name__)

LEASE_SECONDS: Final = 10.0
"""How long a renewed lease lasts: a dead process's shards wait this long, at most, to be taken."""
RENEW_SECONDS: Final = 3.0
"""How often a process renews its leases: three tries before a lease is given up."""
GUARD_SECONDS: Final = 2.0
"""How long before its leases could run out a process that could not renew stops serving."""
RETRY_SECONDS: Final = 1.0
"""How soon a renewal that failed is tried again."""
EXPIRY_MARGIN_SECONDS: Final = 0.05
"""How long after another process's lease should have run out the next beat looks."""
LEAVE_SECONDS: Final = 2.0
"""The longest a stopping process waits to hand its shards over; else they run out."""


def _forget(beat: asyncio.Future[Holding]) -> None:
    """Take the outcome of a renewal given up on, so its error is not reported as lost."""
    if not beat.cancelled():
        beat.exception()


@dataclass(frozen=True, slots=True)
class Change:
    """What a beat changed: every shard held now (and its lease's epoch), to start, to stop."""

    held: dict[int, int]
    gained: frozenset[int]
    lost: frozenset[int]


def listed(shards: Iterable[int]) -> str:
    """Return shard ids as KRIG_SHARDS writes them (``0-1,3``), or "none"."""
    ids = tuple(sorted(shards))
    return span_text(ids) if ids else "none"


def owner_name() -> str:
    """Return a name for this process in the claims: its machine, its pid, and a random part."""
    return f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(4)}"


class ShardLeases:
    """Hold this process's part of the shards by leases in PostgreSQL, and follow its changes."""

    def __init__(
        self,
        storage: Storage,
        count: int,
        apply: Callable[[Change], Awaitable[None]],
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        """``apply`` starts and stops the shards of each change (before any shard is released)."""
        self.storage = storage
        self.count = count
        self.owner = owner_name()
        self.held: dict[int, int] = {}
        """Shard -> epoch of the leases this process serves by."""
        self.members = 1
        """How many processes shared the shards at the last beat, this one included."""
        self._apply = apply
        self._clock = clock
        self._guard_at = 0.0
        """When, on the monotonic clock, the held shards must stop being served."""
        self._task: asyncio.Task[None] | None = None
        self._changing = asyncio.Lock()
        self._changed = asyncio.Event()
        """Set when another process announced a change of the claims: beat now."""
        self._unwatch: Callable[[], Awaitable[None]] | None = None
        self._abandoned: set[asyncio.Future[Holding]] = set()
        """Renewals given up on, still ending (held so the loop does not drop them)."""

    async def first(self) -> dict[int, int]:
        """Beat once at start, before connecting; return the shards claimed (not yet started)."""
        sent = self._clock()
        holding = await self.storage.claims.beat(self.owner, self.count, LEASE_SECONDS)
        self._guard_at = sent + LEASE_SECONDS - GUARD_SECONDS
        self.members = holding.members
        if holding.give_up:
            await self.storage.claims.release(self.owner, holding.give_up)
        self.held = {s: e for s, e in holding.held.items() if s not in holding.give_up}
        if self._unwatch is None:
            self._unwatch = await self.storage.claims.watch(self._changed.set)
        if not self.held:
            await self.storage.claims.announce()  # the busiest give their extra shards up now
        log.info(
            "claimed shards %s of %d (%d %s)",
            listed(self.held),
            self.count,
            self.members,
            "process" if self.members == 1 else "processes",
        )
        return dict(self.held)

    def start(self) -> None:
        """Renew and rebalance in the background from now on."""
        if self._task is None:
            self._task = asyncio.create_task(self._run(), name="krig-leases")

    async def _run(self) -> None:
        next_beat = self._clock() + RENEW_SECONDS
        while True:
            wake = min(next_beat, self._guard_at) if self.held else next_beat
            # The next renewal is due then, or sooner if another process changed the claims.
            changed = asyncio.ensure_future(self._changed.wait())
            try:
                await asyncio.wait({changed}, timeout=max(0.0, wake - self._clock()))
            finally:
                changed.cancel()
            self._changed.clear()
            sent = self._clock()
            if self.held and sent >= self._guard_at:
                await self._lapse("its leases were not renewed in time")
            limit = RENEW_SECONDS
            if self.held:
                limit = min(limit, self._guard_at - sent)
            try:
                holding = await self._beat(max(limit, 0.01))
            except (StorageError, TimeoutError) as exc:
                log.warning(
                    "could not renew the shards' leases (%s); trying again", str(exc) or "late"
                )
                next_beat = self._clock() + RETRY_SECONDS
                continue
            self._guard_at = sent + LEASE_SECONDS - GUARD_SECONDS
            self.members = holding.members
            await self._follow(holding.held, holding.give_up)
            if holding.give_up:
                try:
                    await self.storage.claims.release(self.owner, holding.give_up)
                except StorageError as exc:
                    log.warning("could not release shards %s (%s)", listed(holding.give_up), exc)
            next_beat = sent + RENEW_SECONDS
            if holding.soonest is not None and holding.soonest < RENEW_SECONDS:
                # Another process has not renewed for a while: if it is dead, its shards are
                # free the moment its lease runs out, so look then rather than at the next beat.
                next_beat = min(next_beat, self._clock() + holding.soonest + EXPIRY_MARGIN_SECONDS)

    async def _beat(self, limit: float) -> Holding:
        """Renew within ``limit`` seconds, or raise TimeoutError at once.

        The renewal is cancelled then but not waited for: a connection to a database that
        drops every packet can hold a cancelled query (and its rollback) for minutes, and the
        guard must not wait for it.
        """
        beat = asyncio.ensure_future(
            self.storage.claims.beat(self.owner, self.count, LEASE_SECONDS)
        )
        done, _ = await asyncio.wait({beat}, timeout=limit)
        if not done:
            beat.cancel()
            self._abandoned.add(beat)
            beat.add_done_callback(_forget)
            beat.add_done_callback(self._abandoned.discard)
            raise TimeoutError
        return beat.result()

    async def _lapse(self, why: str) -> None:
        """Stop serving every shard: its leases may run out before this process renews them."""
        log.warning("stopped serving shards %s: %s", listed(self.held), why)
        await self._follow({}, ())

    async def _apply_safely(self, change: Change) -> None:
        """Start and stop the shards of a change; a mistake there must not end the renewals,
        or the process would go on serving shards whose leases run out."""
        try:
            await self._apply(change)
        except Exception:
            log.exception(
                "could not start shards %s or stop shards %s",
                listed(change.gained),
                listed(change.lost),
            )

    async def _follow(self, held: dict[int, int], give_up: tuple[int, ...]) -> None:
        """Serve exactly ``held`` less ``give_up``: stop the others, start the new ones."""
        async with self._changing:
            keep = {shard: epoch for shard, epoch in held.items() if shard not in give_up}
            # A shard held by another lease than before was lost and taken again meanwhile.
            moved = {s for s in keep.keys() & self.held.keys() if keep[s] != self.held[s]}
            gained = frozenset(keep.keys() - self.held.keys() | moved)
            lost = frozenset(self.held.keys() - keep.keys() | moved)
            if not gained and not lost:
                self.held = keep
                return
            self.held = keep
            log.info(
                "holding shards %s of %d (%d %s)%s%s",
                listed(keep),
                self.count,
                self.members,
                "process" if self.members == 1 else "processes",
                f"; taking {listed(gained)}" if gained else "",
                f"; leaving {listed(lost)}" if lost else "",
            )
            await self._apply_safely(Change(dict(keep), gained, lost))

    async def stop(self) -> None:
        """Stop renewing and rebalancing (the process is stopping: it starts no shard now)."""
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
            self._task = None

    async def leave(self) -> None:
        """Hand every shard over at once: the process serves none of them any more."""
        await self.stop()
        unwatch, self._unwatch = self._unwatch, None
        if unwatch is not None:
            with contextlib.suppress(StorageError, OSError):
                await unwatch()
        try:
            async with asyncio.timeout(LEAVE_SECONDS):
                await self.storage.claims.leave(self.owner)
        except (StorageError, TimeoutError) as exc:
            log.warning("could not hand the shards over (%s); their leases run out", exc)
            return
        if self.held:
            log.info("handed shards %s over", listed(self.held))
        self.held = {}
