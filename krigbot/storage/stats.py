"""Read-only statistics over finished games: leaderboard, player stats, history."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from krigbot.storage.base import Store
from krigbot.storage.models import (
    GAME_COLUMNS,
    HISTORY_STATUSES,
    GameRow,
    GameStatus,
    HeadToHead,
    KrigbotRecord,
    LeaderboardRow,
    PartnerRecord,
    PlayerStats,
    check_statuses,
    decode_dict,
    encode_time,
    from_columns,
    game_from_row,
)

if TYPE_CHECKING:
    from collections.abc import Iterable
    from datetime import datetime

    from krigbot.storage.base import Row

# Every stored time is non-empty text, so '' as the lower bound means "since ever" and
# keeps one SQL text (one prepared statement) for both cases.
EVER: Final = ""


def counted(condition: str) -> str:
    """Return an aggregate counting the rows where ``condition`` holds (0 for none)."""
    return f"COUNT(*) FILTER (WHERE {condition})"


def tally(outcome: str) -> str:
    """Return the columns that count the games and their wins, draws and losses by ``outcome``."""
    wins, draws, losses = (counted(f"{outcome} = '{kind}'") for kind in ("win", "draw", "loss"))
    return f"COUNT(*) AS games, {wins} AS wins, {draws} AS draws, {losses} AS losses"


# PostgreSQL names a result column only alone in ORDER BY, not inside an expression.
_LEADERBOARD: Final = f"""
SELECT user_id, {tally("outcome")}
FROM results
WHERE guild_id = ? AND finished_at >= ?
GROUP BY user_id
ORDER BY wins DESC, {counted("outcome = 'win'")} * 1.0 / COUNT(*) DESC, games DESC, user_id ASC
LIMIT ?
"""

_PLAYER_TOTALS: Final = f"""
SELECT COUNT(*)                          AS games,
       {counted("outcome = 'win'")}  AS wins,
       {counted("outcome = 'draw'")} AS draws,
       {counted("outcome = 'loss'")} AS losses,
       COALESCE(SUM(wars_won), 0)         AS wars_won,
       COALESCE(MAX(biggest_pot), 0)      AS biggest_pot,
       COALESCE(MAX(rounds), 0)           AS longest_game
FROM results
WHERE guild_id = ? AND user_id = ? AND finished_at >= ?
"""

# The games shared with each other user, most first (ties to the lower user id). Opponents are
# everyone not on the player's team (everyone in free-for-all games); a game counts by who won
# it: the player, the opponent, or neither of them (a draw, or a third player's win). Counting
# the player's own losses instead would count a third player's wins against the opponent, and
# the two players' records would not mirror.
OPPONENTS: Final = """
SELECT other.user_id                                               AS user_id,
       COUNT(*)                                                    AS games,
       COUNT(*) FILTER (WHERE me.outcome = 'win' AND other.outcome <> 'win')  AS won,
       COUNT(*) FILTER (WHERE other.outcome = 'win' AND me.outcome <> 'win')  AS lost
FROM results AS me
JOIN results AS other ON other.game_id = me.game_id AND other.user_id <> me.user_id
WHERE me.guild_id = ? AND me.user_id = ? AND me.finished_at >= ?
  AND (me.team IS NULL OR other.team IS NULL OR me.team <> other.team)
GROUP BY other.user_id
ORDER BY games DESC, other.user_id ASC
LIMIT ?
"""

# Partners (same non-NULL team) share the team's result (rules §9): the player's own outcome.
_TOP_PARTNER: Final = f"""
SELECT other.user_id AS user_id, {tally("me.outcome")}
FROM results AS me
JOIN results AS other ON other.game_id = me.game_id AND other.user_id <> me.user_id
WHERE me.guild_id = ? AND me.user_id = ? AND me.finished_at >= ?
  AND me.team IS NOT NULL AND other.team = me.team
GROUP BY other.user_id
ORDER BY games DESC, other.user_id ASC
LIMIT 1
"""


# Games against Krigbot have rows only here, never in results: no query above can count them.
_AGAINST_KRIGBOT: Final = f"""
SELECT {tally("outcome")}
FROM krigbot_results
WHERE guild_id = ? AND user_id = ? AND finished_at >= ?
"""


# Krigbot's own games in a guild (those of its opponents' records against it), with its seat
# and the result, for its record from its own side.
_KRIGBOT_GAMES: Final = """
SELECT games.players AS players, games.result AS result
FROM games
WHERE games.id IN (
    SELECT game_id FROM krigbot_results WHERE guild_id = ? AND finished_at >= ?
)
"""


def head_to_head(row: Row) -> HeadToHead:
    """Build a HeadToHead from a row of ``OPPONENTS``."""
    games, won, lost = row["games"], row["won"], row["lost"]
    return HeadToHead(
        user_id=row["user_id"], games=games, won=won, lost=lost, neither=games - won - lost
    )


def _partner(row: Row | None) -> PartnerRecord | None:
    """Build a PartnerRecord from a partner row."""
    if row is None:
        return None
    return from_columns(PartnerRecord, row)


# Outside servers a game's records belong to its chat: its scope (guild_id) is its channel id.
_EVERYWHERE: Final = f"""
SELECT games.channel_id = results.guild_id AS in_chat, {tally("results.outcome")}
FROM results JOIN games ON games.id = results.game_id
WHERE results.user_id = ?
GROUP BY in_chat
"""


@dataclass(frozen=True, slots=True)
class Tally:
    """Games played and how they ended."""

    games: int = 0
    wins: int = 0
    draws: int = 0
    losses: int = 0


@dataclass(frozen=True, slots=True)
class Everywhere:
    """A player's record over every server and chat: in servers, and in group DMs and DMs."""

    servers: Tally
    chats: Tally


class StatsStore(Store):
    """Aggregate the results table, always within one guild."""

    async def leaderboard(
        self, guild_id: int, *, since: datetime | None = None, limit: int = 10
    ) -> list[LeaderboardRow]:
        """Rank a guild's players by wins, then win rate, then games, then user id."""
        lower = EVER if since is None else encode_time(since)
        rows = await self._database.fetchall(_LEADERBOARD, (guild_id, lower, limit))
        return [
            from_columns(LeaderboardRow, row, win_rate=row["wins"] / row["games"]) for row in rows
        ]

    async def player_stats(
        self, guild_id: int, user_id: int, *, since: datetime | None = None
    ) -> PlayerStats:
        """Sum up one player's finished games in a guild (zeros if none), Krigbot's apart."""
        lower = EVER if since is None else encode_time(since)
        params = (guild_id, user_id, lower)
        # One snapshot for the four queries: a game finished meanwhile (by another process,
        # or on another connection of the pool) counts in all of them or in none.
        async with self._database.snapshot() as db:
            (totals,) = await db.fetch(_PLAYER_TOTALS, params)
            opponents = await db.fetch(OPPONENTS, (*params, 1))
            partners = await db.fetch(_TOP_PARTNER, params)
            (versus,) = await db.fetch(_AGAINST_KRIGBOT, params)
        return from_columns(
            PlayerStats,
            totals,
            top_opponent=head_to_head(opponents[0]) if opponents else None,
            top_partner=_partner(partners[0] if partners else None),
            against_krigbot=from_columns(KrigbotRecord, versus) if versus["games"] else None,
        )

    async def krigbot_record(
        self, guild_id: int, krigbot_id: int, *, since: datetime | None = None
    ) -> KrigbotRecord | None:
        """Sum up Krigbot's own games against players in a guild (None if it played none).

        Its players' results against it are kept apart from everyone else's, and Krigbot has
        none of its own: its outcome in each game is read from the game's winners and draws.
        """
        lower = EVER if since is None else encode_time(since)
        wins = draws = losses = 0
        for row in await self._database.fetchall(_KRIGBOT_GAMES, (guild_id, lower)):
            players = [int(user) for user in json.loads(row["players"])]
            result = decode_dict(row["result"]) if row["result"] is not None else {}
            if krigbot_id not in players:
                continue
            seat = players.index(krigbot_id)
            if seat in result.get("winners", ()):
                wins += 1
            elif seat in result.get("drawn", ()):
                draws += 1
            else:
                losses += 1
        games = wins + draws + losses
        return KrigbotRecord(games, wins, draws, losses) if games else None

    async def record_everywhere(self, user_id: int) -> Everywhere:
        """Sum up one player's finished games everywhere, in servers and in chats apart."""
        found = {
            bool(row["in_chat"]): Tally(row["games"], row["wins"], row["draws"], row["losses"])
            for row in await self._database.fetchall(_EVERYWHERE, (user_id,))
        }
        return Everywhere(servers=found.get(False, Tally()), chats=found.get(True, Tally()))

    async def recent_games(
        self,
        guild_id: int,
        *,
        user_id: int | None = None,
        limit: int = 10,
        offset: int = 0,
        statuses: Iterable[GameStatus] = HISTORY_STATUSES,
    ) -> list[GameRow]:
        """Return a guild's ended games, newest first, optionally only those of one user."""
        wanted = check_statuses(statuses)
        marks = ", ".join("?" * len(wanted))
        sql = f"SELECT {GAME_COLUMNS} FROM games WHERE guild_id = ? AND status IN ({marks})"
        params: list[object] = [guild_id, *wanted]
        if user_id is not None:
            sql += f" AND {self._database.dialect.json_list_has('games.players')}"
            params.append(user_id)
        sql += " ORDER BY finished_at DESC, id DESC LIMIT ? OFFSET ?"
        params += [limit, offset]
        return [game_from_row(row) for row in await self._database.fetchall(sql, params)]
