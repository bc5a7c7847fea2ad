"""Playing a running game: flips, forfeits, a cancel, and rounds the bot plays by itself."""

from __future__ import annotations

import dataclasses
from typing import Literal

from krigbot.engine import EngineError, Variant
from krigbot.sessions.authority import Actor, authorize, may_cancel
from krigbot.sessions.deadlines import Deadlines
from krigbot.sessions.handsfree import Autoplay
from krigbot.sessions.registry import Registry
from krigbot.sessions.results import FlipResult, LostWrite, Refusal
from krigbot.sessions.timelimit import TimeLimits
from krigbot.storage import GameRow

MAX_FLIPS = 50

RaceAnswer = Literal["shown", "stale", "current"]
"""What a press beaten by another gets: nothing (the winner's answer shows the round), a
refusal (its button is old), or the table as it stands now (nothing here shows it)."""


def _play(row: GameRow, game: Variant, count: int) -> FlipResult:
    """Play up to ``count`` rounds (the game is running) and say what they held."""
    start, wars = game.round, game.war_rounds
    last = game.play_rounds(count)
    return FlipResult(row, game, last, game.round - start, game.war_rounds - wars)


@dataclasses.dataclass(eq=False)
class Play:
    """Play the rounds of a channel's game, for a player or for the game itself."""

    registry: Registry
    time_limits: TimeLimits
    deadlines: Deadlines

    async def flip(
        self,
        channel_id: int,
        user_id: int,
        count: int = 1,
        *,
        game_id: int | None = None,
        expected_round: int | None = None,
        table_message_id: int | None = None,
    ) -> FlipResult:
        """Play up to ``count`` rounds for a player; commit them before returning.

        A button passes the game and the round it showed: a press that is no longer for the
        round on the table raises ``Refusal("flip.raced")`` and plays nothing. It also passes
        its message, which will show the new round: recorded here, before any other flip.
        """
        if not 1 <= count <= MAX_FLIPS:
            raise Refusal("err.count_range")
        async with self.registry.lock(channel_id):
            return await self.registry.retrying(
                channel_id,
                lambda: self._flip(
                    channel_id, user_id, count, game_id, expected_round, table_message_id
                ),
            )

    async def _flip(
        self,
        channel_id: int,
        user_id: int,
        count: int,
        game_id: int | None,
        expected_round: int | None,
        table_message_id: int | None,
    ) -> FlipResult:
        """Play a player's rounds, under the channel's lock."""
        seated = authorize(await self.registry.game_in(channel_id), user_id, game_id=game_id)
        row, game = seated.row, seated.game
        self.registry.check_round(row, expected_round)
        seated.still_in()
        if self.time_limits.time_is_up(row, game):
            # The timer has not ended it yet: no round after the time is up (rules §7).
            return await self.time_limits.end_by_time(row, game)
        saved = game.copy()
        try:
            result = _play(row, game, count)
            row = await self.registry.commit(row, game)
            if table_message_id is not None and game.outcome is None:
                row = await self.registry.set_table(row, table_message_id)
        except BaseException as exc:
            if isinstance(exc, Refusal) and exc.key == "err.storage":
                # The database is out of reach: hold the game as saved, so /krig status still
                # shows it and the first press once the database is back plays from there.
                self.registry.hold(row, saved)
            else:
                # The engine object ran ahead of what was saved: forget it, reload next time.
                self.registry.forget(channel_id)
            raise
        return dataclasses.replace(result, row=row)

    async def lost_race(
        self,
        game_id: int,
        pressed: int | None,
        *,
        round_shown: int | None = None,
        answering: int | None = None,
    ) -> RaceAnswer:
        """Decide what a Flip press gets that another press beat (``flip.raced``).

        ``pressed`` is its message; ``round_shown`` the round its button was for (None for a
        Steal War battle, whose table is always its newest message); ``answering`` the round
        a table reply of this process shows, or is on its way to show.
        """
        row = await self.registry.storage.games.get_game(game_id)
        if row is not None:
            self.registry.catch_up(
                row
            )  # what is shown next is read from the database, not a stale copy
        newest = row is not None and row.table_message_id == pressed
        if round_shown is None:
            # Two presses on the newest table: the other one played; its answer shows it.
            return "shown" if newest else "stale"
        if row is None or round_shown >= row.round:
            return "stale"
        if answering == row.round:
            return "shown" if newest else "stale"
        if newest or round_shown == row.round - 1:
            # Nothing of this process shows the round played last (it was played just
            # before a restart, its answer lost): show it, with a working button.
            return "current"
        return "stale"

    async def may_forfeit(
        self, channel_id: int, user_id: int, game_id: int | None = None
    ) -> GameRow:
        """Refuse a forfeit this player may not make now; return their game."""
        return self._forfeiting(await self.registry.game_in(channel_id), user_id, game_id)[0]

    @staticmethod
    def _forfeiting(
        found: tuple[GameRow, Variant | None] | None, user_id: int, game_id: int | None
    ) -> tuple[GameRow, Variant, int]:
        seated = authorize(found, user_id, game_id=game_id)
        # rules §9: a team member who is out may still give up for the team.
        if not seated.game.can_forfeit(seated.seat):
            raise Refusal("err.out_of_game")
        if seated.game.in_battle:
            # rules §10 has no rule for leaving in the middle of a battle's choices.
            raise Refusal("steal.forfeit_in_battle")
        return seated.row, seated.game, seated.seat

    async def forfeit(
        self, channel_id: int, user_id: int, game_id: int | None = None
    ) -> FlipResult:
        """Let a player give up; commit the game's new state."""
        async with self.registry.lock(channel_id):
            return await self.registry.retrying(
                channel_id, lambda: self._forfeit(channel_id, user_id, game_id)
            )

    async def _forfeit(self, channel_id: int, user_id: int, game_id: int | None) -> FlipResult:
        """Let a player give up, under the channel's lock."""
        row, game, seat = self._forfeiting(
            await self.registry.game_in(channel_id), user_id, game_id
        )
        if self.time_limits.time_is_up(row, game):
            # The time ran out first (rules §7 lists it before a forfeit): count the cards.
            return await self.time_limits.end_by_time(row, game)
        try:
            game.forfeit(seat)
            row = await self.registry.commit(row, game)
        except EngineError as exc:
            self.registry.forget(channel_id)
            raise Refusal("err.bad_option", reason=str(exc)) from None
        except BaseException:
            self.registry.forget(channel_id)
            raise
        return FlipResult(row, game)

    async def cancel(
        self, channel_id: int, user_id: int, *, moderator: bool, in_server: bool = True
    ) -> GameRow:
        """End the channel's game with no result (a moderator, or the challenger early)."""
        async with self.registry.lock(channel_id):
            row = await self.registry.storage.games.active_game(channel_id)
            if row is None:
                raise Refusal("err.no_game")
            may_cancel(row, Actor(user_id, moderator, in_server))
            if not await self._end_cancelled(channel_id, row):
                raise Refusal("err.no_game")
            return row

    async def call_off(self, channel_id: int, game_id: int) -> GameRow | None:
        """End a game that can no longer be played (its channel is gone) with no result, as a
        cancel ends it; None if it is not the channel's game any more."""
        async with self.registry.lock(channel_id):
            row = await self.registry.storage.games.active_game(channel_id)
            if row is None or row.id != game_id:
                return None
            return row if await self._end_cancelled(channel_id, row) else None

    async def _end_cancelled(self, channel_id: int, row: GameRow) -> bool:
        """End the channel's game with no result, under its lock; False if it ended meanwhile."""
        self.registry.forget(channel_id)
        if not await self.registry.storage.games.end_game(
            row.id, "cancelled", self.registry.clock(), fence=self.registry.fence(row)
        ):
            return False
        self.deadlines.cancel(row.id)
        if row.status == "running":
            self.registry.count_abandoned(row)
        self.registry.live.committed(row.id, row.round)  # its live page ends too
        return True

    async def play_on(
        self,
        channel_id: int,
        game_id: int,
        *,
        expected_round: int | None = None,
        count: int = 1,
        to_end: bool = False,
        autoplay: int | None = None,
    ) -> FlipResult:
        """Play rounds for the game itself (autoplay, finish now); commit them before returning.

        No player is asked: the caller checked who may. ``expected_round`` refuses with
        ``flip.raced`` if a round was played meanwhile (by hand). Steal War choices are made by
        default (rules §10). ``to_end`` plays the rest at once and returns no rounds. An
        autoplay's step names its message (``autoplay``): it refuses as :class:`LostWrite` if
        the game's autoplay no longer runs there, paused or stopped by another process.
        """
        async with self.registry.lock(channel_id):
            return await self.registry.retrying(
                channel_id,
                lambda: self._play_on(channel_id, game_id, expected_round, count, to_end, autoplay),
            )

    async def _play_on(
        self,
        channel_id: int,
        game_id: int,
        expected_round: int | None,
        count: int,
        to_end: bool,
        autoplay: int | None,
    ) -> FlipResult:
        """Play rounds for the game itself, under the channel's lock."""
        found = await self.registry.game_in(channel_id)
        if found is None or found[0].id != game_id:
            raise Refusal("err.game_over")
        row, game = found
        if game is None:
            raise Refusal("err.not_running")
        self.registry.check_round(row, expected_round)
        if autoplay is not None:
            state = Autoplay.of(row.extra)
            if state is None or state.state != "running" or state.message != autoplay:
                # Read again after a lost write: the press that paused it went elsewhere.
                raise LostWrite
        late = self.time_limits.time_is_up(row, game)
        if late and not game.in_battle:
            return await self.time_limits.end_by_time(row, game)
        try:
            if late:
                # A Steal War battle under way when the time ran out: play it out by the
                # defaults, then count (rules §7: after the round being played).
                result = _play(row, game, 1)
                if game.outcome is None:
                    game.end_by_counting()
            elif not to_end:
                result = _play(row, game, count)
            else:
                result = FlipResult(row, game)
                game.play_to_end()
            row = await self.registry.commit(row, game, autoplay=autoplay)
        except BaseException:
            self.registry.forget(channel_id)
            raise
        return dataclasses.replace(result, row=row)
