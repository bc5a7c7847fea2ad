"""Best-of matches: advancing a match to its next game, its result, and match records."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Final

from krigbot.storage.base import Store
from krigbot.storage.errors import ChannelBusyError
from krigbot.storage.games import Deal, insert_running
from krigbot.storage.models import (
    GAME_COLUMNS,
    GameRow,
    check_int64,
    encode_json,
    encode_time,
    game_from_row,
)
from krigbot.storage.stats import EVER, counted

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence
    from datetime import datetime

    from krigbot.storage.base import Connection, Dialect

_GAMES_COUNTED: Final = "SELECT games FROM matches WHERE id = ?"

# Only the first write of a match inserts; later ones move it on. The WHERE keeps a replayed
# advance (start-up recovery racing a live one) from moving it back.
_UPSERT_MATCH: Final = """
INSERT INTO matches (
    id, guild_id, channel_id, best_of, players, score, games, game_id, updated_at, finished_at
) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (id) DO UPDATE SET
    score = excluded.score, games = excluded.games, game_id = excluded.game_id,
    updated_at = excluded.updated_at, finished_at = excluded.finished_at
WHERE matches.games < excluded.games
"""

_INSERT_RESULT: Final = """
INSERT INTO match_results (match_id, guild_id, user_id, outcome, games_won, finished_at)
VALUES (?, ?, ?, ?, ?, ?)
"""


# INDEXED BY: without statistics SQLite would scan every finished game by status; the partial
# index holds match games only, the few this start-up check is about.
@cache
def _unadvanced(d: Dialect) -> str:
    match_id = d.json_int("g.extra", "match", "id")
    return f"""
SELECT {GAME_COLUMNS} FROM games AS g {d.indexed_by("games_match")}
WHERE {match_id} IS NOT NULL AND g.status = 'finished'
  AND NOT EXISTS (
      SELECT 1 FROM matches AS m
      WHERE m.id = {match_id} AND m.games >= {d.json_int("g.extra", "match", "game")})
ORDER BY g.id
"""


_RECORDS: Final = f"""
SELECT user_id, COUNT(*) AS matches, {counted("outcome = 'win'")} AS wins
FROM match_results
WHERE guild_id = ? AND finished_at >= ? AND user_id IN ({{marks}})
GROUP BY user_id
"""


@dataclass(frozen=True, slots=True)
class MatchRecord:
    """A player's best-of matches in a guild: how many were played to the end, how many won."""

    matches: int = 0
    wins: int = 0


@dataclass(frozen=True, slots=True)
class MatchStep:
    """One finished game of a match, as the match counts it."""

    match_id: int
    guild_id: int
    channel_id: int
    best_of: int
    players: tuple[int, ...]
    score: tuple[int, ...]
    """Games won per seat, this game included."""
    games: int
    """Games of the match finished so far, this one included."""


@dataclass(frozen=True, slots=True, kw_only=True)
class NextGame(Deal):
    """The next deal of a match, as it is stored (running from the start: all have agreed)."""

    challenger_id: int


class MatchStore(Store):
    """Move matches on from game to game, record their winners, and count match wins."""

    async def advance_match(
        self, step: MatchStep, next_game: NextGame, *, now: datetime
    ) -> GameRow | None:
        """Count a finished game and deal the match's next one, in one transaction.

        Returns the new running game, or None if this game was already counted. Raises
        ChannelBusyError if another game holds the channel.
        """
        check_int64("seed", next_game.seed)
        stamp = encode_time(now)
        async with self._database.transaction() as db:
            if await _counted(db, step):
                return None
            game_id = await insert_running(db, step, next_game, next_game.challenger_id, stamp)
            if game_id is None:
                # Another process advancing the same match got there first (PostgreSQL let
                # this insert wait for it), or another game holds the channel.
                if await _counted(db, step):
                    return None
                raise ChannelBusyError(step.channel_id, 0)
            await db.run(_UPSERT_MATCH, _match_params(step, game_id, stamp, finished=None))
            rows = await db.fetch(f"SELECT {GAME_COLUMNS} FROM games WHERE id = ?", (game_id,))
        return game_from_row(rows[0])

    async def finish_match(
        self, step: MatchStep, winners: Iterable[int], *, game_id: int, now: datetime
    ) -> bool:
        """Record the match's winners (user ids) and everyone's games won; False if counted.

        A match without winners (its players stopped playing) is recorded as over, and counts
        in nobody's match record.
        """
        won = set(winners)
        stamp = encode_time(now)
        async with self._database.transaction() as db:
            if await _counted(db, step):
                return False
            changed = await db.run(
                _UPSERT_MATCH, _match_params(step, game_id, stamp, finished=stamp)
            )
            if changed == 0:
                return False  # counted meanwhile by another process (PostgreSQL waited for it)
            if not won:
                return True
            await db.run_many(
                _INSERT_RESULT,
                [
                    (
                        step.match_id,
                        step.guild_id,
                        user_id,
                        "win" if user_id in won else "loss",
                        step.score[seat],
                        stamp,
                    )
                    for seat, user_id in enumerate(step.players)
                ],
            )
        return True

    async def unadvanced_match_games(self) -> list[GameRow]:
        """Return finished match games that their match has not counted yet, oldest first."""
        return [
            game_from_row(row)
            for row in await self._database.fetchall(_unadvanced(self._database.dialect))
        ]

    async def match_records(
        self, guild_id: int, user_ids: Sequence[int], *, since: datetime | None = None
    ) -> dict[int, MatchRecord]:
        """Return the match records of some players in a guild (players with none left out)."""
        if not user_ids:
            return {}
        lower = EVER if since is None else encode_time(since)
        sql = _RECORDS.format(marks=", ".join("?" * len(user_ids)))
        rows = await self._database.fetchall(sql, (guild_id, lower, *user_ids))
        return {row["user_id"]: MatchRecord(row["matches"], row["wins"]) for row in rows}


async def _counted(db: Connection, step: MatchStep) -> bool:
    rows = await db.fetch(_GAMES_COUNTED, (step.match_id,))
    return bool(rows) and int(rows[0]["games"]) >= step.games


def _match_params(
    step: MatchStep, game_id: int, stamp: str, *, finished: str | None
) -> tuple[object, ...]:
    return (
        step.match_id,
        step.guild_id,
        step.channel_id,
        step.best_of,
        encode_json(step.players),
        encode_json(step.score),
        step.games,
        game_id,
        stamp,
        finished,
    )
