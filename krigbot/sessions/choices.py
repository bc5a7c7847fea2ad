"""Steal War moves (rules §10): battles, steals, plays, top cards and their time-outs."""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable, Iterator, Sequence
from dataclasses import KW_ONLY, dataclass
from datetime import datetime, timedelta
from typing import Any, TypeVar

from krigbot.engine import Round, Variant, load_game, variants_with_choices
from krigbot.engine.events import LookChoice, TopChoice
from krigbot.engine.policy import Move, choose, make
from krigbot.sessions.authority import authorize
from krigbot.sessions.deadlines import Deadline, Deadlines
from krigbot.sessions.registry import Registry
from krigbot.sessions.results import Choice, ChoiceResult, LostWrite, Refusal, krigbot_seat
from krigbot.sessions.timelimit import TimeLimits
from krigbot.storage import GameRow

RESUMED_VARIANTS = variants_with_choices()
"""Variants whose running games have timers of their own (Steal War's choices)."""


def _open_choice(game: Variant, seat: int) -> LookChoice | TopChoice | None:
    """Return the choice a seat has to make now, if any."""
    return next((choice for choice in game.pending() if choice.seat == seat), None)


def _saved_form(state: dict[str, Any]) -> dict[str, Any] | None:
    """Return a saved state as the engine writes it today; None if it cannot be read."""
    try:
        return load_game(state).to_dict()
    except Exception:
        # Reading the game again ends it and says why (Registry.read).
        return None


T = TypeVar("T")


@contextlib.contextmanager
def _raced_again() -> Iterator[None]:
    """Tell a player whose choice another process beat twice that it was not made."""
    try:
        yield
    except LostWrite:
        raise Refusal("steal.raced") from None


@dataclass(eq=False)
class Choices:
    """Make the moves of Steal War games, by the players or, when time is up, by default."""

    registry: Registry
    time_limits: TimeLimits
    deadlines: Deadlines
    _: KW_ONLY
    choice_ttl: timedelta = timedelta(seconds=60)
    """How long a player has for a choice before it is made by default (rules §10)."""

    def choice_deadline(self, row: GameRow) -> datetime:
        """Return when the open Steal War choices of a game are made by default (rules §10)."""
        # Every move is committed, and a commit stamps last_activity_at: the choices open now
        # have been open since then, and the stamp survives a restart.
        return row.last_activity_at + self.choice_ttl

    def watch_choices(self, row: GameRow, game: Variant, at: datetime | None = None) -> None:
        """Set the time-out of a game's open choices (by default, when they are due); or drop it."""
        if game.finished or not game.pending():
            self.deadlines.cancel(row.id, "choice")
            return
        at = self.choice_deadline(row) if at is None else at
        self.deadlines.set(Deadline("choice", row.id, row.channel_id, at, server_id=row.server_id))

    async def begin_battle(
        self,
        channel_id: int,
        user_id: int,
        *,
        game_id: int | None = None,
        expected_round: int | None = None,
        table_message_id: int | None = None,
    ) -> ChoiceResult:
        """Start a Steal War battle for a player (what a flip is in Steal War).

        Refused while a battle's choices or the last winner's top card are still open, so
        nobody is hurried past a choice that is theirs to make.
        """
        async with self.registry.lock(channel_id):
            return await self.registry.retrying(
                channel_id,
                lambda: self._begin_battle(
                    channel_id, user_id, game_id, expected_round, table_message_id
                ),
            )

    async def _begin_battle(
        self,
        channel_id: int,
        user_id: int,
        game_id: int | None,
        expected_round: int | None,
        table_message_id: int | None,
    ) -> ChoiceResult:
        """Start a battle for a player, under the channel's lock."""
        row, game, _ = await self._steal_turn(channel_id, user_id, game_id)
        self.registry.check_round(row, expected_round)
        if not game.in_battle and self.time_limits.time_is_up(row, game):
            # No new battle once the time is up: _steal_commit counts the cards instead.
            return await self._steal_commit(row, game, lambda: None)
        pending = game.pending()
        bot = krigbot_seat(row, self.registry.krigbot_id)
        if pending and all(choice.seat == bot for choice in pending):
            # Krigbot's own choice, left open by a stop: it makes it now; no battle yet.
            return await self._steal_commit(
                row, game, lambda: None, table_message_id=table_message_id
            )
        if pending and isinstance(pending[0], TopChoice):
            raise Refusal("steal.top_pending", name=row.names[pending[0].seat])
        if pending:
            raise Refusal("steal.in_battle")
        return await self._steal_commit(
            row, game, game.begin_battle, table_message_id=table_message_id
        )

    async def steal_seat(
        self, channel_id: int, user_id: int, game_id: int
    ) -> tuple[GameRow, Variant, int]:
        """Return a player's Steal War game and seat, to show them their own card."""
        return await self._made_once(
            channel_id, lambda: self._steal_turn(channel_id, user_id, game_id)
        )

    async def choose(
        self,
        channel_id: int,
        user_id: int,
        game_id: int,
        choice: Choice,
        *,
        seat: int,
        card: int,
        targets: Sequence[int] = (),
        expected_round: int | None = None,
    ) -> ChoiceResult:
        """Make a player's Steal War choice: steal ``targets`` or play ``card``, or put it on top.

        A button states the choice it offered; one that is no longer open is refused.
        """

        async def attempt() -> ChoiceResult:
            row, game, mine = await self._steal_turn(channel_id, user_id, game_id)
            if mine != seat:
                raise Refusal("steal.not_yours", name=row.names[seat])
            if expected_round is not None and expected_round != row.round:
                raise Refusal("steal.stale")
            open_now = _open_choice(game, seat)
            if choice == "top":
                if not isinstance(open_now, TopChoice) or card not in open_now.cards:
                    raise Refusal("steal.stale")
                return await self._steal_commit(row, game, lambda: game.put_on_top(seat, card))
            if not isinstance(open_now, LookChoice) or open_now.card != card:
                raise Refusal("steal.stale")
            if choice == "play":
                return await self._steal_commit(row, game, lambda: game.play(seat))
            if not targets or not set(targets) <= set(open_now.can_steal):
                raise Refusal("steal.stale")
            return await self._steal_commit(row, game, lambda: game.steal(seat, targets))

        return await self._made_once(channel_id, attempt)

    async def _made_once(self, channel_id: int, attempt: Callable[[], Awaitable[T]]) -> T:
        """Run a player's move under the channel's lock, once more if another process won it."""
        async with self.registry.lock(channel_id):
            with _raced_again():
                return await self.registry.retrying(channel_id, attempt)

    async def time_out(self, channel_id: int, game_id: int) -> ChoiceResult | None:
        """Make the open choices of a game by default once their time is up (rules §10).

        Only the choices open at the deadline are made: a choice they lead to (the next card
        after a steal, a war's face-up card, the winner's top card) gets its own time. Returns
        None when the game has no open choice; ``timed_out`` is empty when it is not yet time.
        """
        async with self.registry.lock(channel_id):
            return await self.registry.retrying(
                channel_id, lambda: self._time_out(channel_id, game_id)
            )

    async def _time_out(self, channel_id: int, game_id: int) -> ChoiceResult | None:
        """Make the open choices by default, under the channel's lock."""
        found = await self.registry.game_in(channel_id)
        if found is None:
            return None
        row, game = found
        if row.id != game_id or game is None or not game.has_choices or game.finished:
            return None
        await self._vouch(row, game)
        due = game.pending()
        if not due:
            return None
        if self.registry.clock() < self.choice_deadline(row):
            return ChoiceResult(row, game)
        # Krigbot's own choice is open only if the bot stopped before making it: it makes it
        # now, right after the players' defaults, by its own policy.
        bot = krigbot_seat(row, self.registry.krigbot_id)
        due = tuple(choice for choice in due if choice.seat != bot)

        def defaults() -> Round | None:
            for choice in due:
                if isinstance(choice, TopChoice):
                    return game.apply_defaults()
                # An earlier default may have taken a pile this card matched.
                still = _open_choice(game, choice.seat)
                if isinstance(still, LookChoice) and still.card == choice.card:
                    played = game.steal(choice.seat, still.can_steal)
                    if played is not None:
                        return played
            return None

        return await self._steal_commit(row, game, defaults, timed_out=due)

    async def _steal_turn(
        self, channel_id: int, user_id: int, game_id: int | None
    ) -> tuple[GameRow, Variant, int]:
        """Return the channel's Steal War game and the player's seat, or refuse."""
        seated = authorize(await self.registry.game_in(channel_id), user_id, game_id=game_id)
        if not seated.game.has_choices:
            raise Refusal("err.stale_button")
        seated.still_in()
        await self._vouch(seated.row, seated.game)
        return seated.row, seated.game, seated.seat

    async def _vouch(self, row: GameRow, game: Variant) -> None:
        """Refuse (LostWrite) a copy in memory that another process's move has left behind.

        A battle's moves do not change its round, so the storage's round check cannot tell a
        choice made on a stale copy (it would undo another process's choice): the saved state
        is compared instead, before the copy is shown or moved. Choices come at the pace of
        people, so the read costs little.
        """
        stored = await self.registry.storage.games.get_game(row.id)
        if stored is None or stored.status != "running" or stored.state is None:
            raise LostWrite
        mine = game.to_dict()
        # Read through the engine when the texts differ: a game saved by an older version
        # of the bot is the same game in today's form.
        if stored.state != mine and _saved_form(stored.state) != mine:
            raise LostWrite

    async def _steal_commit(
        self,
        row: GameRow,
        game: Variant,
        move: Callable[[], Round | None],
        *,
        table_message_id: int | None = None,
        timed_out: tuple[LookChoice | TopChoice, ...] = (),
    ) -> ChoiceResult:
        """Make a checked move and commit it, then Krigbot's; on any failure forget the game.

        When the move leaves a choice open for Krigbot itself, Krigbot makes it at once by its
        policy, each choice committed on its own as a player's is.
        """
        try:
            played = move()
            row = await self._commit_move(row, game)
            if table_message_id is not None and game.outcome is None:
                row = await self.registry.set_table(row, table_message_id)
        except BaseException:
            # The engine object ran ahead of what was saved: forget it, reload next time.
            self.registry.forget(row.channel_id)
            raise
        bot = krigbot_seat(row, self.registry.krigbot_id)
        made: list[Move] = []
        while bot is not None and game.outcome is None:
            chosen = choose(game, bot)
            if chosen is None:
                break
            try:
                decided = make(game, chosen)
                row = await self._commit_move(row, game)
            except LostWrite:
                # The move asked for is saved; another process moved the game on after it (a
                # hand-off), and it makes Krigbot's choice there. Tell what is saved now.
                self.registry.forget(row.channel_id)
                return await self._as_saved(row, played, timed_out, made)
            except BaseException:
                self.registry.forget(row.channel_id)
                raise
            made.append(chosen)
            played = played if decided is None else decided
        return ChoiceResult(row, game, played, timed_out, krigbot_moves=tuple(made))

    async def _as_saved(
        self,
        row: GameRow,
        played: Round | None,
        timed_out: tuple[LookChoice | TopChoice, ...],
        made: list[Move],
    ) -> ChoiceResult:
        """Return a committed move's result with the game as saved after it, read again."""
        found = await self.registry.game_in(row.channel_id)
        if found is None or found[0].id != row.id or found[1] is None:
            # Over meanwhile: what this move did is still what it did.
            raise Refusal("err.game_over")
        return ChoiceResult(found[0], found[1], played, timed_out, krigbot_moves=tuple(made))

    async def _commit_move(self, row: GameRow, game: Variant) -> GameRow:
        """Commit a move just made, ending the game by counting if its time is up."""
        if not game.in_battle and self.time_limits.time_is_up(row, game):
            # rules §7: the game ends after the round being played, here the battle.
            game.end_by_counting()
        return await self.registry.commit(row, game)
