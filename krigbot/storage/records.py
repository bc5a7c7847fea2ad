"""Read-only records for a player's page: names, variants, head-to-head, biggest pots."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from functools import cache
from typing import TYPE_CHECKING, Final

from krigbot.storage.base import Store
from krigbot.storage.models import (
    HISTORY_STATUSES,
    HeadToHead,
    Outcome,
    decode_time,
    from_columns,
)
from krigbot.storage.stats import EVER, OPPONENTS, head_to_head, tally

if TYPE_CHECKING:
    from collections.abc import Iterable

    from krigbot.storage.base import Dialect

_ENDED: Final = ", ".join(f"'{status}'" for status in HISTORY_STATUSES)

# The display name a user had in each ended game of the guild, newest game first; the first
# name seen per user is the one they played under most recently.


@cache
def _names(d: Dialect) -> str:
    return f"""
SELECT player.value AS user_id, name.value AS name
FROM games, {d.json_elements("games.players", "player")}, {d.json_elements("games.names", "name")}
WHERE games.guild_id = ? AND games.status IN ({_ENDED}) AND name.key = player.key
  AND CAST(player.value AS BIGINT) IN ({{marks}})
ORDER BY games.id DESC
"""


_PLAYERS: Final = "SELECT DISTINCT user_id FROM results WHERE guild_id = ? ORDER BY user_id"

_VARIANTS: Final = f"""
SELECT games.variant AS variant, {tally("results.outcome")}
FROM results JOIN games ON games.id = results.game_id
WHERE results.guild_id = ? AND results.user_id = ?
GROUP BY games.variant
ORDER BY games DESC, variant ASC
"""

# Every opponent (not on the player's team; everyone in free-for-all games) with the player's
# own outcomes against them; most shared games first, ties to the lower user id.
NO_WAR_POT: Final = 4
"""The most cards a round without a war moves: one per player. A bigger pot was a war's."""

_BIGGEST_POTS: Final = f"""
SELECT game_id, biggest_pot, rounds, outcome, finished_at
FROM results
WHERE guild_id = ? AND user_id = ? AND biggest_pot > {NO_WAR_POT}
ORDER BY biggest_pot DESC, game_id DESC
LIMIT ?
"""


@dataclass(frozen=True, slots=True)
class VariantRecord:
    """A player's outcomes in one variant."""

    variant: str
    games: int
    wins: int
    draws: int
    losses: int


@dataclass(frozen=True, slots=True)
class PotRecord:
    """The biggest pot a player won in one finished game."""

    game_id: int
    biggest_pot: int
    rounds: int
    outcome: Outcome
    finished_at: datetime


class RecordStore(Store):
    """Per-player records within one guild, for pages that show more than an embed can."""

    async def display_names(self, guild_id: int, user_ids: Iterable[int]) -> dict[int, str]:
        """Return the name each user last played under in the guild's ended games."""
        wanted = sorted(set(user_ids))
        if not wanted:
            return {}
        sql = _names(self._database.dialect).format(marks=", ".join("?" * len(wanted)))
        names: dict[int, str] = {}
        for row in await self._database.fetchall(sql, (guild_id, *wanted)):
            names.setdefault(int(row["user_id"]), str(row["name"]))
        return names

    async def guild_players(self, guild_id: int) -> list[int]:
        """Return every user with a finished game in the guild."""
        return [int(row["user_id"]) for row in await self._database.fetchall(_PLAYERS, (guild_id,))]

    async def variant_records(self, guild_id: int, user_id: int) -> list[VariantRecord]:
        """Return a player's outcomes per variant, the most played first."""
        rows = await self._database.fetchall(_VARIANTS, (guild_id, user_id))
        return [from_columns(VariantRecord, row) for row in rows]

    async def head_to_head(
        self, guild_id: int, user_id: int, *, limit: int = 10
    ) -> list[HeadToHead]:
        """Return the games against each opponent by who won them, the most met first."""
        rows = await self._database.fetchall(OPPONENTS, (guild_id, user_id, EVER, limit))
        return [head_to_head(row) for row in rows]

    async def biggest_pots(self, guild_id: int, user_id: int, *, limit: int = 5) -> list[PotRecord]:
        """Return the games in which the player won their biggest wars' pots, the biggest first."""
        rows = await self._database.fetchall(_BIGGEST_POTS, (guild_id, user_id, limit))
        return [
            PotRecord(
                row["game_id"],
                row["biggest_pot"],
                row["rounds"],
                row["outcome"],
                decode_time(row["finished_at"]),
            )
            for row in rows
        ]
