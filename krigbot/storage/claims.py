"""Shards claimed with leases in PostgreSQL (``KRIG_SHARDS=auto``): who holds which, until when.

Every process of the bot beats every few seconds (:meth:`ClaimStore.beat`): in one transaction
under one advisory lock it renews its membership and its leases, counts the live processes and
works out its fair part of the shards. It claims free shards (never held, released, or whose
lease ran out) up to that part, and is told which of its own to give up when it holds more,
which it releases (:meth:`ClaimStore.release`) only once it has stopped serving them. The
database's clock decides every expiry: the machines' clocks play no part.

A claim's ``epoch`` comes from a sequence, so it names one holding of one shard: every write of
a game names the epoch of its shard's lease, and the database refuses it once that lease is no
longer the shard's or has run out (``krig_lease_holds``, migration 0007).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Final

from krigbot.storage.base import Store
from krigbot.storage.errors import StorageError

CLAIMS_LOCK: Final = 0x6B726967_636C6169  # "krigclai": one advisory lock key for every beat
CHANGED: Final = "krig_claims"
"""The notification a process sends when it joins, gives shards up or leaves: the others beat
at once instead of at their next renewal, so shards change hands in milliseconds."""
_NOTIFY: Final = f"SELECT pg_notify('{CHANGED}', '')"

_JOIN: Final = """
INSERT INTO shard_members (owner, expires_at)
VALUES (?, clock_timestamp() + make_interval(secs => ?))
ON CONFLICT (owner) DO UPDATE SET expires_at = EXCLUDED.expires_at
"""

_RENEW: Final = """
UPDATE shard_claims SET expires_at = clock_timestamp() + make_interval(secs => ?)
WHERE owner = ? AND expires_at > clock_timestamp()
RETURNING shard, epoch
"""

_MEMBERS: Final = "SELECT owner FROM shard_members WHERE expires_at > clock_timestamp()"

_LIVE_CLAIMS: Final = """
SELECT shard, owner, CAST(EXTRACT(EPOCH FROM expires_at - clock_timestamp()) AS FLOAT8)
FROM shard_claims WHERE expires_at > clock_timestamp()
"""

_CLAIM: Final = """
INSERT INTO shard_claims (shard, owner, epoch, expires_at)
VALUES (?, ?, nextval('shard_claim_epochs'), clock_timestamp() + make_interval(secs => ?))
ON CONFLICT (shard) DO UPDATE
SET owner = EXCLUDED.owner, epoch = EXCLUDED.epoch, expires_at = EXCLUDED.expires_at
WHERE shard_claims.expires_at <= clock_timestamp()
RETURNING shard, epoch
"""

_RELEASE: Final = "DELETE FROM shard_claims WHERE owner = ? AND shard = ANY(CAST(? AS INTEGER[]))"

_LEAVE: Final = "DELETE FROM shard_members WHERE owner = ?"

_LIVE_MEMBERS: Final = (
    "SELECT COUNT(*) FROM shard_members WHERE expires_at > clock_timestamp() AND owner <> ?"
)


@dataclass(frozen=True, slots=True)
class Holding:
    """What one beat found: the shards held (with their epochs), those to give up, the peers."""

    held: dict[int, int]
    """Shard -> the epoch of its lease, for every shard this process holds after the beat."""
    give_up: tuple[int, ...]
    """Shards held beyond the fair part: stop serving them, then :meth:`ClaimStore.release`."""
    members: int
    """How many processes share the shards, this one included."""
    soonest: float | None = None
    """Seconds until the first of the other processes' leases runs out, if it is not renewed
    (None: they hold none): a process that died loses its shards then, not at a later beat."""


def fair_parts(holdings: dict[str, int], count: int) -> dict[str, int]:
    """Return how many of ``count`` shards each member should hold: as even as it can be.

    The busiest keep the larger parts, so a balanced cluster moves no shard, and a process that
    joins takes its part from the busiest.

    >>> fair_parts({"a": 4, "b": 0}, 4)
    {'a': 2, 'b': 2}
    >>> fair_parts({"a": 2, "b": 2, "c": 0}, 4)
    {'a': 2, 'b': 1, 'c': 1}
    """
    if not holdings:
        return {}
    each, more = divmod(count, len(holdings))
    ordered = sorted(holdings, key=lambda owner: (-holdings[owner], owner))
    return {owner: each + (1 if rank < more else 0) for rank, owner in enumerate(ordered)}


class ClaimStore(Store):
    """The claims of ``KRIG_SHARDS=auto`` (PostgreSQL only: SQLite has nothing to share)."""

    def _check(self) -> None:
        if self._database.dialect.name != "postgres":
            raise StorageError("shards are claimed only in PostgreSQL (KRIG_SHARDS=auto)")

    async def beat(self, owner: str, count: int, lease: float) -> Holding:
        """Renew ``owner``'s membership and leases, claim its fair part of ``count`` shards."""
        self._check()
        async with self._database.transaction() as db:
            # One beat at a time in the whole cluster: each sees the others' claims as they
            # stand, so two processes never both count a free shard as theirs to take.
            await db.run("SELECT pg_advisory_xact_lock(?)", (CLAIMS_LOCK,))
            await db.run(_JOIN, (owner, lease))
            held = {int(row[0]): int(row[1]) for row in await db.fetch(_RENEW, (lease, owner))}
            holdings = {str(row[0]): 0 for row in await db.fetch(_MEMBERS)}
            taken: set[int] = set()
            soonest: float | None = None
            for row in await db.fetch(_LIVE_CLAIMS):
                taken.add(int(row[0]))
                holdings[str(row[1])] = holdings.get(str(row[1]), 0) + 1
                if str(row[1]) != owner:
                    left = float(row[2])
                    soonest = left if soonest is None else min(soonest, left)
            holdings[owner] = len(held)
            part = fair_parts(holdings, count)[owner]
            give_up: tuple[int, ...] = ()
            if len(held) > part:
                give_up = tuple(sorted(held)[part:])
            else:
                for shard in [s for s in range(count) if s not in taken][: part - len(held)]:
                    for row in await db.fetch(_CLAIM, (shard, owner, lease)):
                        held[int(row[0])] = int(row[1])
            return Holding(held, give_up, len(holdings), soonest)

    async def release(self, owner: str, shards: tuple[int, ...]) -> None:
        """Give up ``owner``'s leases of ``shards`` (it no longer serves them): free at once."""
        self._check()
        async with self._database.transaction() as db:
            await db.run(_RELEASE, (owner, list(shards)))
            await db.fetch(_NOTIFY)  # sent at the commit

    async def leave(self, owner: str) -> None:
        """Give up every lease of ``owner`` and its membership (it is stopping)."""
        self._check()
        async with self._database.transaction() as db:
            await db.run("DELETE FROM shard_claims WHERE owner = ?", (owner,))
            await db.run(_LEAVE, (owner,))
            await db.fetch(_NOTIFY)

    async def announce(self) -> None:
        """Tell the other processes that the claims changed (a process joined): they beat now."""
        self._check()
        await self._database.fetchall(_NOTIFY)

    async def watch(self, changed: Callable[[], None]) -> Callable[[], Awaitable[None]]:
        """Call ``changed`` whenever a process announces a change of the claims; return what
        stops it."""
        self._check()
        return await self._database.listen(CHANGED, changed)

    async def peers(self, owner: str) -> int:
        """Return how many other processes share the shards now."""
        self._check()
        row = await self._database.fetchone(_LIVE_MEMBERS, (owner,))
        return 0 if row is None else int(row[0])
