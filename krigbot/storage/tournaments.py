"""Tournaments: one row each, its state written whole, and the games its matches deal."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from functools import cache
from typing import TYPE_CHECKING, Final, Literal

from krigbot.storage.base import Store
from krigbot.storage.errors import ChannelBusyError, StorageError
from krigbot.storage.games import Deal, insert_running, on_shards
from krigbot.storage.models import (
    GAME_COLUMNS,
    GameRow,
    JSONDict,
    check_int64,
    decode_dict,
    decode_time,
    encode_json,
    encode_time,
    game_from_row,
)

if TYPE_CHECKING:
    from collections.abc import Sequence

    from krigbot.config import Shards
    from krigbot.storage.base import Dialect, Row

TournamentStatus = Literal["signup", "running", "finished", "cancelled"]
OPEN_STATUSES: Final = ("signup", "running")

_COLUMNS: Final = (
    "id, guild_id, channel_id, status, state, version, champion_id, created_at, updated_at, "
    "finished_at"
)

_INSERT: Final = f"""
INSERT INTO tournaments (guild_id, channel_id, status, state, version, created_at, updated_at)
VALUES (?, ?, 'signup', ?, 0, ?, ?)
ON CONFLICT (channel_id) WHERE status IN ('signup', 'running') DO NOTHING
RETURNING {_COLUMNS}
"""


# The version is the optimistic lock; the fence, as a game's writes have it: the lease epoch
# the writer holds the server's shard by (NULL with static shards) must still hold.
@cache
def _save(d: Dialect) -> str:
    return f"""
UPDATE tournaments
SET status = ?, state = ?, version = version + 1, champion_id = ?, updated_at = ?,
    finished_at = ?
WHERE id = ? AND version = ? AND {d.fenced()}
RETURNING {_COLUMNS}
"""


_VERSION: Final = "SELECT version FROM tournaments WHERE id = ?"

_OPEN_IN_CHANNEL: Final = f"""
SELECT {_COLUMNS} FROM tournaments WHERE channel_id = ? AND status IN ('signup', 'running')
"""

_OPEN_IN_GUILD: Final = f"""
SELECT {_COLUMNS} FROM tournaments
WHERE guild_id = ? AND status IN ('signup', 'running') ORDER BY id
"""

_CANCELLED_IN_GUILD: Final = f"""
SELECT {_COLUMNS} FROM tournaments
WHERE guild_id = ? AND status = 'cancelled' AND finished_at >= ? ORDER BY id
"""

_OPEN: Final = f"""
SELECT {_COLUMNS} FROM tournaments WHERE status IN ('signup', 'running'){{shards}} ORDER BY id
"""

_SET_EXTRA: Final = "UPDATE games SET extra = ? WHERE id = ?"

_INSERT_ENTRANT: Final = """
INSERT INTO tournament_players (tournament_id, guild_id, user_id) VALUES (?, ?, ?)
ON CONFLICT DO NOTHING
"""

_PLAYED: Final = """
SELECT COUNT(*) FROM tournament_players AS p JOIN tournaments AS t ON t.id = p.tournament_id
WHERE p.guild_id = ? AND p.user_id = ? AND t.status = 'finished'
"""

_WON: Final = """
SELECT COUNT(*) FROM tournaments WHERE guild_id = ? AND champion_id = ? AND status = 'finished'
"""


class TournamentConflictError(StorageError):
    """Another writer changed the tournament since it was read (or it is gone)."""


class TournamentLeaseLostError(TournamentConflictError):
    """The write named a lease of the server's shard that no longer holds (``KRIG_SHARDS=auto``):
    another process runs the server's tournaments now, and nothing was written."""


class TournamentBusyError(StorageError):
    """The channel has an open tournament already."""

    def __init__(self, channel_id: int) -> None:
        super().__init__(f"channel {channel_id} has an open tournament")
        self.channel_id = channel_id


@dataclass(frozen=True, slots=True)
class TournamentRow:
    """One tournament as stored; ``state`` is the session layer's, read and written whole."""

    id: int
    guild_id: int
    channel_id: int
    status: TournamentStatus
    state: JSONDict
    version: int
    champion_id: int | None
    created_at: datetime
    updated_at: datetime
    finished_at: datetime | None

    @property
    def is_open(self) -> bool:
        """Tell whether it is still signing up or playing."""
        return self.status in OPEN_STATUSES


@dataclass(frozen=True, slots=True)
class TournamentRecord:
    """A player's finished tournaments in a server: played in, and won."""

    played: int = 0
    won: int = 0


@dataclass(frozen=True, slots=True, kw_only=True)
class MatchDeal(Deal):
    """A tournament match's game, dealt at once: every player is in, nobody was challenged."""

    guild_id: int
    channel_id: int
    players: tuple[int, ...]
    best_of: int
    """1 for a single game; 3 or 5 makes it the first game of a best-of match."""


def _tournament(row: Row) -> TournamentRow:
    finished = row["finished_at"]
    state = row["state"]
    return TournamentRow(
        id=int(row["id"]),
        guild_id=int(row["guild_id"]),
        channel_id=int(row["channel_id"]),
        status=row["status"],
        state=decode_dict(state) if isinstance(state, str) else dict(state),
        version=int(row["version"]),
        champion_id=row["champion_id"],
        created_at=decode_time(row["created_at"]),
        updated_at=decode_time(row["updated_at"]),
        finished_at=None if finished is None else decode_time(finished),
    )


class TournamentStore(Store):
    """Create tournaments, write their state, find the open ones, deal their matches' games."""

    async def create(
        self, *, guild_id: int, channel_id: int, state: JSONDict, now: datetime
    ) -> TournamentRow:
        """Store a new tournament signing up; refuse a channel with an open one."""
        stamp = encode_time(now)
        rows = await self._database.fetchall(
            _INSERT, (guild_id, channel_id, encode_json(state), stamp, stamp)
        )
        if not rows:
            raise TournamentBusyError(channel_id)
        return _tournament(rows[0])

    async def get(self, tournament_id: int) -> TournamentRow | None:
        """Return a tournament by id, or None."""
        row = await self._database.fetchone(
            f"SELECT {_COLUMNS} FROM tournaments WHERE id = ?", (tournament_id,)
        )
        return None if row is None else _tournament(row)

    async def open_in(self, channel_id: int) -> TournamentRow | None:
        """Return the channel's open tournament, or None."""
        row = await self._database.fetchone(_OPEN_IN_CHANNEL, (channel_id,))
        return None if row is None else _tournament(row)

    async def open_in_guild(self, guild_id: int) -> list[TournamentRow]:
        """Return a server's open tournaments, oldest first."""
        return [
            _tournament(row) for row in await self._database.fetchall(_OPEN_IN_GUILD, (guild_id,))
        ]

    async def cancelled_in_guild(self, guild_id: int, since: datetime) -> list[TournamentRow]:
        """Return a server's tournaments cancelled since ``since``, oldest first."""
        rows = await self._database.fetchall(_CANCELLED_IN_GUILD, (guild_id, encode_time(since)))
        return [_tournament(row) for row in rows]

    async def open_tournaments(self, shards: Shards | None = None) -> list[TournamentRow]:
        """Return every open tournament of ``shards``' servers (all by default), oldest first."""
        condition, params = on_shards(shards)
        sql = _OPEN.format(shards=condition)
        return [_tournament(row) for row in await self._database.fetchall(sql, params)]

    async def save(
        self,
        row: TournamentRow,
        *,
        status: TournamentStatus,
        state: JSONDict,
        now: datetime,
        champion_id: int | None = None,
        entrants: Sequence[int] = (),
        fence: int | None = None,
    ) -> TournamentRow:
        """Write a tournament's new state over the version ``row`` read; return it as stored.

        ``entrants``: the players it starts with, recorded in the same transaction. ``fence``:
        the epoch of the lease the server's shard is held by (``KRIG_SHARDS=auto``; None with
        static shards). Raises TournamentConflictError if another writer wrote since, and
        TournamentLeaseLostError if that lease no longer holds.
        """
        stamp = encode_time(now)
        finished = stamp if status in ("finished", "cancelled") else None
        async with self._database.transaction() as db:
            found = await db.fetch(
                _save(self._database.dialect),
                (
                    status,
                    encode_json(state),
                    champion_id,
                    stamp,
                    finished,
                    row.id,
                    row.version,
                    fence,
                ),
            )
            if not found:
                stored = await db.fetch(_VERSION, (row.id,))
                if stored and int(stored[0][0]) == row.version:
                    raise TournamentLeaseLostError(
                        f"tournament {row.id}: the lease of its server's shard no longer holds"
                    )
                raise TournamentConflictError(f"tournament {row.id} was changed by another writer")
            if entrants:
                await db.run_many(
                    _INSERT_ENTRANT, [(row.id, row.guild_id, user) for user in entrants]
                )
        return _tournament(found[0])

    async def record(self, guild_id: int, user_id: int) -> TournamentRecord:
        """Return how many of a server's finished tournaments a player played in, and won."""
        played = await self._database.fetchone(_PLAYED, (guild_id, user_id))
        won = await self._database.fetchone(_WON, (guild_id, user_id))
        return TournamentRecord(
            played=0 if played is None else int(played[0]), won=0 if won is None else int(won[0])
        )

    async def deal(self, deal: MatchDeal, *, now: datetime) -> GameRow:
        """Store a match's game running in its thread; a best-of match is its first game.

        Raises ChannelBusyError if a game holds the thread already.
        """
        check_int64("seed", deal.seed)
        stamp = encode_time(now)
        async with self._database.transaction() as db:
            game_id = await insert_running(db, deal, deal, deal.players[0], stamp)
            if game_id is None:
                raise ChannelBusyError(deal.channel_id, 0)
            if deal.best_of > 1:
                # A match's id is its first game's, known only now.
                extra = {
                    **deal.extra,
                    "match": {
                        "id": game_id,
                        "best_of": deal.best_of,
                        "game": 1,
                        "score": [0] * len(deal.players),
                    },
                }
                await db.run(_SET_EXTRA, (encode_json(extra), game_id))
            rows = await db.fetch(f"SELECT {GAME_COLUMNS} FROM games WHERE id = ?", (game_id,))
        return game_from_row(rows[0])

    async def champions(self, guild_id: int, user_ids: Sequence[int]) -> dict[int, int]:
        """Return how many finished tournaments each of some players won in a server."""
        if not user_ids:
            return {}
        marks = ", ".join("?" * len(user_ids))
        rows = await self._database.fetchall(
            f"SELECT champion_id, COUNT(*) AS won FROM tournaments "
            f"WHERE guild_id = ? AND status = 'finished' AND champion_id IN ({marks}) "
            f"GROUP BY champion_id",
            (guild_id, *user_ids),
        )
        return {int(row["champion_id"]): int(row["won"]) for row in rows}
