"""The time limit (rules §7 ``time_limit``): counted from the deal, ended by counting the cards."""

from __future__ import annotations

import logging
from datetime import UTC, datetime, timedelta
from typing import Any

from krigbot.engine import Rules, Variant
from krigbot.logs import about
from krigbot.sessions.deadlines import Deadline, Deadlines
from krigbot.sessions.registry import Registry
from krigbot.sessions.results import FlipResult, Refusal
from krigbot.storage import GameRow, StorageError

log = logging.getLogger(__name__)

TIME_UP_TOLD = timedelta(minutes=5)
"""How long after a time limit ended a game a late press is told so (not "no game here")."""
DEALT_AT = "dealt_at"
"""The key in a game's extra for the time of its deal, kept for games with a time limit."""


def dealt_extra(rules: Rules, now: datetime) -> dict[str, Any] | None:
    """Return what a game's extra keeps of its deal: its time, where a time limit counts it."""
    return None if rules.time_limit is None else {DEALT_AT: now.astimezone(UTC).isoformat()}


class TimeLimits:
    """Know each game's deadline, and end by counting the games whose time is up.

    Every game the registry deals has its time limit watched from then on.
    """

    def __init__(self, registry: Registry, deadlines: Deadlines) -> None:
        self.registry = registry
        self.deadlines = deadlines
        registry.on_deal.append(self.watch_time_limit)

    def deadline(self, row: GameRow) -> datetime | None:
        """Return when a game's time limit ends it (rules §7), or None if it has none.

        Counted from the deal, which is stored with the game, so a restart keeps it.
        """
        minutes = row.rules.get("time_limit")
        dealt = row.extra.get(DEALT_AT)
        if minutes is None or dealt is None:
            return None
        try:
            return datetime.fromisoformat(str(dealt)) + timedelta(minutes=int(minutes))
        except (TypeError, ValueError):
            log.warning(
                "game %s has a damaged deal time %r; no time limit", row.id, dealt, extra=about(row)
            )
            return None

    def time_left(self, row: GameRow) -> tuple[datetime, timedelta] | None:
        """Return a game's deadline and the time left until it, or None without a time limit."""
        deadline = self.deadline(row)
        return None if deadline is None else (deadline, deadline - self.registry.clock())

    def watch_time_limit(self, row: GameRow, at: datetime | None = None) -> None:
        """Set the deadline of a running game's time limit (by default, when it is up)."""
        at = self.deadline(row) if at is None else at
        if at is not None:
            self.deadlines.set(
                Deadline("time_limit", row.id, row.channel_id, at, server_id=row.server_id)
            )

    async def time_ran_out(
        self, guild_id: int, channel_id: int, user_id: int, game_id: int | None = None
    ) -> GameRow | None:
        """Return the player's game if its time limit ended it just before their press.

        ``game_id`` is the game a button was for; a command asks about the channel's last game.
        """
        try:
            if game_id is None:
                row = await self.registry.storage.games.last_finished(guild_id, channel_id)
            else:
                row = await self.registry.storage.games.get_game(game_id)
        except StorageError:
            return None  # the press is refused as it was anyway
        if row is None or row.status != "finished" or user_id not in row.players:
            return None
        if (row.result or {}).get("reason") != "time_limit" or row.finished_at is None:
            return None
        return row if self.registry.clock() - row.finished_at <= TIME_UP_TOLD else None

    def time_is_up(self, row: GameRow, game: Variant) -> bool:
        """Tell whether a running game's time limit is up by the clock."""
        deadline = self.deadline(row)
        return deadline is not None and game.outcome is None and self.registry.clock() >= deadline

    async def end_by_time(self, row: GameRow, game: Variant) -> FlipResult:
        """End a game by counting because its time is up, and commit it with its results."""
        try:
            game.end_by_counting()
            row = await self.registry.commit(row, game)
        except BaseException:
            self.registry.forget(row.channel_id)
            raise
        return FlipResult(row, game)

    async def end_in_time(self, channel_id: int, game_id: int) -> FlipResult | None:
        """End a game by counting once its time limit is up (the deadline's handler).

        Returns None if the game is no longer running. A result without an outcome means not
        yet: the time is not up by the clock, or a Steal War battle is still being played (its
        last move ends the game, rules §7: after the round being played). Another process
        holding the same deadline (a hand-off) may have ended it first: the game is read again,
        and None says it is over.
        """
        async with self.registry.lock(channel_id):
            return await self.registry.retrying(
                channel_id, lambda: self._end_in_time(channel_id, game_id)
            )

    async def _end_in_time(self, channel_id: int, game_id: int) -> FlipResult | None:
        """End a game at its time limit, under the channel's lock."""
        try:
            found = await self.registry.game_in(channel_id)
        except Refusal:
            return None  # unreadable: ended and told by the reading
        if found is None or found[0].id != game_id:
            return None
        row, game = found
        if game is None or game.finished:
            return None
        if not self.time_is_up(row, game) or game.in_battle:
            return FlipResult(row, game)
        return await self.end_by_time(row, game)
