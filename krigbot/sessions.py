"""Running games: one per channel, each change committed before anyone is told of it.

The service knows the engine and the storage, never Discord. Expected refusals are raised as
:class:`Refusal` with a catalog key, and the Discord layer turns them into translated,
ephemeral answers. Flips in one channel are serialised by a lock; channels run in parallel.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import secrets
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, Literal

from .engine import (
    EngineError,
    FixedOptionError,
    Game,
    Outcome,
    Round,
    Rules,
    RulesError,
    run_to_end,
)
from .engine.events import LookChoice, TopChoice
from .engine.game import outcome_to_dict
from .engine.steal import StealGame, load_game, new_game
from .logs import about, context
from .monitoring import Metrics
from .storage import ChannelBusyError, GameRow, PlayerResult, Storage, StorageError
from .storage import Outcome as PlayerOutcome

log = logging.getLogger(__name__)

AnyGame = Game | StealGame
MAX_FLIPS = 50
RESUMED_VARIANTS = ("stjel",)
"""Variants whose running games have timers of their own (Steal War's choices)."""
DEALT_AT = "dealt_at"
"""The key in a game's extra for the time of its deal, kept for games with a time limit."""
RESUMED_EXTRA = ("autoplay", DEALT_AT)
"""Keys in a game's extra that mean it has a timer of its own (autoplay, a time limit)."""
ENDING = "ending"
"""Key in a finished game's extra while the message that shows its end is not yet out."""
SHOW_ENDINGS_FOR = timedelta(days=7)
"""How long after it a restarted bot still shows the end of a game that was never shown."""


class Refusal(Exception):
    """An expected refusal, shown to the user as one translated line."""

    def __init__(self, key: str, **fields: Any) -> None:
        super().__init__(key)
        self.key = key
        self.fields = fields


@dataclass(frozen=True, slots=True)
class Player:
    """Someone named in a challenge."""

    user_id: int
    name: str
    bot: bool = False


@dataclass(frozen=True, slots=True)
class ChallengeResult:
    """A new challenge, and the idle game it replaced, if any."""

    row: GameRow
    replaced: GameRow | None = None


@dataclass(frozen=True, slots=True)
class AcceptResult:
    """The challenge after an accept; ``game`` is set when everyone has accepted."""

    row: GameRow
    game: AnyGame | None = None


@dataclass(frozen=True, slots=True)
class FlipResult:
    """What one flip played, and the game after it."""

    row: GameRow
    game: AnyGame
    last: Round | None = None
    """The last round played, in full (None if no round was played)."""
    played: int = 0
    """How many rounds were played."""
    wars: int = 0
    """How many of them began a war."""
    outcome: Outcome | None = None
    """How the game ended, if this change ended it (taken when it was made: the engine game
    is the channel's and moves on with the next change)."""

    def __post_init__(self) -> None:
        if self.outcome is None:
            object.__setattr__(self, "outcome", self.game.outcome)


Choice = Literal["steal", "play", "top"]


@dataclass(frozen=True, slots=True)
class ChoiceResult:
    """A Steal War game after a move: the battle the move decided, and the choices timed out."""

    row: GameRow
    game: StealGame
    played: Round | None = None
    timed_out: tuple[LookChoice | TopChoice, ...] = ()
    """The choices the time-out made by default (RULES §10), as they stood."""
    outcome: Outcome | None = None
    """How the game ended, if this move ended it (taken when it was made)."""

    def __post_init__(self) -> None:
        if self.outcome is None:
            object.__setattr__(self, "outcome", self.game.outcome)


def utcnow() -> datetime:
    """Return the current time, timezone-aware."""
    return datetime.now(UTC)


def player_results(row: GameRow, game: AnyGame) -> list[PlayerResult]:
    """Return each player's result of a finished game for the leaderboard.

    In a team game the result is the team's (RULES §9): both members win if either is among the
    winners, else both draw if either is among the drawn, else both lose. Taken from the team
    rather than seat by seat, so it holds however the engine lists the members of a team.
    """
    outcome = game.outcome
    assert outcome is not None
    teams = game.rules.teams
    results = []
    for seat, user_id in enumerate(row.players):
        # Seats 0 and 2 against 1 and 3 (RULES §9).
        seats = (seat % 2, seat % 2 + 2) if teams else (seat,)
        result: PlayerOutcome
        if any(s in outcome.winners for s in seats):
            result = "win"
        elif any(s in outcome.drawn for s in seats):
            result = "draw"
        else:
            result = "loss"
        results.append(
            PlayerResult(
                user_id=user_id,
                seat=seat,
                outcome=result,
                rounds=outcome.rounds,
                wars_won=game.wars_won[seat],
                biggest_pot=game.biggest_pot[seat],
                team=seat % 2 if teams else None,
            )
        )
    return results


@dataclass(slots=True)
class _Running:
    row: GameRow
    game: AnyGame


def _open_choice(game: StealGame, seat: int) -> LookChoice | TopChoice | None:
    """Return the choice a seat has to make now, if any."""
    return next((choice for choice in game.pending() if choice.seat == seat), None)


def _readable(row: GameRow) -> bool:
    """Tell whether a game's saved state can be read."""
    try:
        load_game(row.state or {})
    except Exception:
        return False
    return True


def _lean(row: GameRow) -> GameRow:
    """Return the row without its saved state, which the engine game in memory replaces."""
    return dataclasses.replace(row, state=None)


class GameService:
    """Start, find, play and end the games of every channel."""

    def __init__(
        self,
        storage: Storage,
        *,
        idle_after: timedelta = timedelta(hours=24),
        challenge_ttl: timedelta = timedelta(minutes=5),
        choice_ttl: timedelta = timedelta(seconds=60),
        clock: Callable[[], datetime] = utcnow,
        metrics: Metrics | None = None,
    ) -> None:
        self.storage = storage
        self.idle_after = idle_after
        self.challenge_ttl = challenge_ttl
        self.choice_ttl = choice_ttl
        self.clock = clock
        self._locks: dict[int, asyncio.Lock] = {}
        self._running: dict[int, _Running] = {}
        """Running games by channel: the stored row and the engine game behind it.

        Every change to a running game goes through this service under the channel's lock and
        updates the entry after it is committed, so a flip reads nothing from the database.
        Cached rows drop the saved state (the engine game is the state) to keep memory small.
        """
        self.metrics = metrics
        self.on_finish: list[Callable[[GameRow, AnyGame], Awaitable[None]]] = []
        """Called with a game just finished, under its channel's lock (a match deals the next)."""
        self.on_deal: list[Callable[[GameRow], None]] = []
        """Called with a game just dealt (a challenge accepted, a match's next game)."""

    def _count_abandoned(self, row: GameRow) -> None:
        if self.metrics is not None:
            self.metrics.games_abandoned.labels(row.variant).inc()

    def running_count(self) -> int:
        """Return how many running games this service holds."""
        return len(self._running)

    def lock(self, channel_id: int) -> asyncio.Lock:
        """Return the lock that serialises changes to the game of a channel."""
        lock = self._locks.get(channel_id)
        if lock is None:
            lock = self._locks[channel_id] = asyncio.Lock()
        return lock

    # ------------------------------------------------------------------ challenges

    async def challenge(
        self,
        *,
        guild_id: int,
        channel_id: int,
        challenger: Player,
        opponents: Sequence[Player],
        variant: str,
        options: dict[str, Any],
        extra: dict[str, Any] | None = None,
    ) -> ChallengeResult:
        """Create a challenge in a channel, refusing what cannot be played.

        ``extra`` is stored with the game in the same write (the language of its messages).
        """
        seen: set[int] = {challenger.user_id}
        for opponent in opponents:
            if opponent.user_id == challenger.user_id:
                raise Refusal("err.self")
            if opponent.bot:
                raise Refusal("err.bot")
            if opponent.user_id in seen:
                raise Refusal("err.duplicate", name=opponent.name)
            seen.add(opponent.user_id)
        players = [challenger, *opponents]
        rules = self._rules(variant, len(players), options)
        async with self.lock(channel_id):
            replaced = await self._clear_stale(channel_id)
            now = self.clock()
            try:
                row = await self.storage.create_game(
                    guild_id=guild_id,
                    channel_id=channel_id,
                    challenger_id=challenger.user_id,
                    players=[p.user_id for p in players],
                    names=[p.name for p in players],
                    variant=rules.preset_name,
                    rules=rules.to_dict(),
                    seed=secrets.randbits(63),
                    now=now,
                    extra=extra,
                )
            except ChannelBusyError as exc:
                existing = await self.storage.get_game(exc.game_id)
                raise Refusal("err.busy", game=existing) from None
        return ChallengeResult(row, replaced)

    @staticmethod
    def _rules(variant: str, players: int, options: dict[str, Any]) -> Rules:
        base = Rules.preset(variant)
        if base.teams and players != 4:
            raise Refusal("err.players", variant=variant, n=4)
        try:
            return Rules.preset(variant, players=players, **options)
        except FixedOptionError as exc:
            raise Refusal(f"err.fixed.{exc.option}", variant=exc.variant) from None
        except RulesError as exc:
            raise Refusal("err.bad_option", reason=str(exc)) from None

    async def _clear_stale(self, channel_id: int) -> GameRow | None:
        """End a channel's expired challenge or idle game; refuse if a live one is there."""
        row = await self.storage.active_game(channel_id)
        if row is None:
            return None
        now = self.clock()
        if row.status == "challenge" and now - row.created_at >= self.challenge_ttl:
            await self.storage.end_game(row.id, "expired", now)
            return None
        if row.status == "running" and now - row.last_activity_at >= self.idle_after:
            await self.storage.end_game(row.id, "abandoned", now)
            self._running.pop(channel_id, None)
            self._count_abandoned(row)
            return row
        raise Refusal("err.busy", game=row)

    async def _open_challenge(self, game_id: int) -> GameRow:
        row = await self.storage.get_game(game_id)
        if row is not None and row.status == "cancelled":
            raise Refusal("err.challenge_withdrawn")
        if row is None or row.status != "challenge":
            raise Refusal("err.challenge_over")
        if self.clock() - row.created_at >= self.challenge_ttl:
            await self.storage.end_game(row.id, "expired", self.clock())
            raise Refusal("err.challenge_over")
        return row

    async def accept(
        self,
        game_id: int,
        user_id: int,
        *,
        table_message_id: int | None = None,
        channel_id: int | None = None,
    ) -> AcceptResult:
        """Record an accept; deal the cards when everyone has accepted.

        ``table_message_id`` is the message that will show the dealt table (the challenge's own).
        ``channel_id`` is where the button was pressed: a challenge is answered in its channel.
        """
        row = await self.storage.get_game(game_id)
        if row is None:
            raise Refusal("err.challenge_over")
        if channel_id is not None and row.channel_id != channel_id:
            raise Refusal("err.elsewhere")
        async with self.lock(row.channel_id):
            row = await self._open_challenge(game_id)
            if user_id not in row.players or user_id == row.challenger_id:
                raise Refusal("err.not_challenged")
            everyone = set(row.accepted) == set(row.players)
            if user_id in row.accepted and not everyone:
                raise Refusal("challenge.already_accepted")
            # Everyone has accepted already only if dealing failed after the last accept was
            # saved (the database refused the write): then this press deals.
            updated = row if everyone else await self.storage.accept(game_id, user_id, self.clock())
            if updated is None:
                raise Refusal("err.challenge_over")
            if set(updated.accepted) != set(updated.players):
                return AcceptResult(updated)
            game = new_game(Rules.from_dict(updated.rules), seed=updated.seed)
            now = self.clock()
            started = await self.storage.start_game(
                game_id, state=game.to_dict(), now=now, extra=dealt_extra(game.rules, now)
            )
            if started is None:
                raise Refusal("err.challenge_over")
            self._dealt(started)
            if table_message_id is not None:
                started = await self._set_table(started, table_message_id)
            self._running[started.channel_id] = _Running(_lean(started), game)
            if self.metrics is not None:
                self.metrics.games_started.labels(started.variant).inc()
            return AcceptResult(started, game)

    async def decline(
        self, game_id: int, user_id: int, *, channel_id: int | None = None
    ) -> GameRow:
        """Let a challenged player turn the challenge down (in its channel)."""
        row = await self.storage.get_game(game_id)
        if row is None:
            raise Refusal("err.challenge_over")
        if channel_id is not None and row.channel_id != channel_id:
            raise Refusal("err.elsewhere")
        async with self.lock(row.channel_id):
            row = await self._open_challenge(game_id)
            if user_id not in row.players or user_id == row.challenger_id:
                raise Refusal("err.not_challenged")
            if not await self.storage.end_game(game_id, "declined", self.clock()):
                raise Refusal("err.challenge_over")
            return row

    async def expire(self, game_id: int) -> GameRow | None:
        """End a challenge whose time ran out; return it unless it was answered or withdrawn.

        A challenge already ended as expired (by a press or a new challenge that came after its
        time) is returned too: its message still shows the buttons and must say it expired.
        """
        row = await self.storage.get_game(game_id)
        if row is None or row.status not in ("challenge", "expired"):
            return None
        if row.status == "expired":
            return row
        async with self.lock(row.channel_id):
            ok = await self.storage.end_game(
                game_id, "expired", self.clock(), expected_statuses=("challenge",)
            )
        return row if ok else None

    # --------------------------------------------------------------------- playing

    async def game_in(self, channel_id: int) -> tuple[GameRow, AnyGame | None] | None:
        """Return the channel's active game row and, once dealt, its engine game."""
        running = self._running.get(channel_id)
        if running is not None:
            return running.row, running.game
        row = await self.storage.active_game(channel_id)
        if row is None:
            return None
        if row.status != "running":
            return row, None
        game = await self._read(row)
        if game is None:
            raise Refusal("err.unreadable")
        self._running[channel_id] = _Running(_lean(row), game)
        return row, game

    async def _read(self, row: GameRow) -> AnyGame | None:
        """Rebuild a game from its saved state; end it without a result if that cannot be read."""
        try:
            if row.state is None:
                raise EngineError("no saved state")
            return load_game(row.state)
        except Exception:
            # Whatever is wrong with one saved game, it must not block its channel (or, at
            # start-up, the whole bot): end it, so a new game can be started there.
            log.exception(
                "game %s in channel %s cannot be read", row.id, row.channel_id, extra=about(row)
            )
            await self.storage.end_game(
                row.id, "abandoned", self.clock(), result={"error": "unreadable"}
            )
            self._count_abandoned(row)
            return None

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
        async with self.lock(channel_id):
            found = await self.game_in(channel_id)
            if found is None:
                raise Refusal("err.game_over" if game_id is not None else "err.no_game")
            row, game = found
            if game_id is not None and row.id != game_id:
                raise Refusal("err.game_over")
            if user_id not in row.players:
                raise Refusal("err.not_player")
            if game is None:
                raise Refusal("err.not_running")
            if expected_round is not None and expected_round != row.round:
                raise Refusal("flip.raced")
            seat = row.players.index(user_id)
            if not game.in_game[seat]:
                raise Refusal("err.out_of_game")
            if self._time_is_up(row, game):
                # The timer has not ended it yet: no round after the time is up (RULES §7).
                return await self._end_by_time(row, game)
            try:
                result = _play(row, game, count)
                row = await self._commit(row, game)
                if table_message_id is not None and game.outcome is None:
                    row = await self._set_table(row, table_message_id)
            except BaseException:
                # The engine object ran ahead of what was saved: forget it, reload next time.
                self._running.pop(channel_id, None)
                raise
            return dataclasses.replace(result, row=row)

    async def _set_table(self, row: GameRow, message_id: int) -> GameRow:
        try:
            await self.storage.set_table_message(row.id, message_id)
        except StorageError as exc:
            # The change it shows is committed; failing now would tell the players that nothing
            # changed. Only the link to the newest message is lost (its button still plays).
            log.warning(
                "could not remember the table message of game %s: %s", row.id, exc, extra=about(row)
            )
            return row
        row = dataclasses.replace(row, table_message_id=message_id)
        running = self._running.get(row.channel_id)
        if running is not None and running.row.id == row.id:
            running.row = row
        return row

    async def show_table(
        self, channel_id: int, game_id: int, round_shown: int, message_id: int
    ) -> None:
        """Remember a new message showing the table, unless it already shows an old round.

        Replies to flips racing each other reach Discord in any order; the newest table is the
        one showing the current round, whichever of them arrived last.
        """
        async with self.lock(channel_id):
            running = self._running.get(channel_id)
            if (
                running is not None
                and running.row.id == game_id
                and running.row.round == round_shown
            ):
                await self._set_table(running.row, message_id)

    async def _commit(self, row: GameRow, game: AnyGame) -> GameRow:
        """Save the game's new state in one transaction; refuse if another writer won."""
        now = self.clock()
        state = game.to_dict()
        try:
            if game.outcome is not None:
                # Marked in the write that ends it, cleared once its message is out: a bot
                # stopped in between shows the end when it starts again (unshown_endings).
                ok = await self.storage.finish_game(
                    row.id,
                    expected_round=row.round,
                    state=state,
                    round=game.round,
                    result=outcome_to_dict(game.outcome),
                    results=player_results(row, game),
                    now=now,
                    extra={ENDING: "unshown"},
                )
            else:
                ok = await self.storage.save_round(
                    row.id, expected_round=row.round, state=state, round=game.round, now=now
                )
        except StorageError as exc:
            # Expected in bad weather (locked, read-only, full): one line that says which.
            log.error("could not save game %s: %s", row.id, exc, extra=about(row))
            raise Refusal("err.storage") from None
        if not ok:
            raise Refusal("flip.raced")
        if self.metrics is not None:
            self.metrics.rounds.inc(game.round - row.round)
            if game.outcome is not None:
                self.metrics.games_finished.labels(row.variant, game.outcome.reason).inc()
        # What the database now holds, without reading it back.
        updated = dataclasses.replace(
            row, round=game.round, state=None, updated_at=now, last_activity_at=now
        )
        if game.outcome is not None:
            updated = dataclasses.replace(
                updated,
                status="finished",
                result=outcome_to_dict(game.outcome),
                finished_at=now,
                state=state,
                extra={**row.extra, ENDING: "unshown"},
            )
            self._running.pop(row.channel_id, None)
            for hook in self.on_finish:
                try:
                    await hook(updated, game)
                except Exception:
                    # The game is committed; what follows it (a match's next deal) is redone at
                    # start-up, so a failure here must not turn the finished game into an error.
                    log.exception("after game %s finished", row.id, extra=about(row))
        else:
            self._running[row.channel_id] = _Running(updated, game)
        return updated

    async def forfeit(
        self, channel_id: int, user_id: int, game_id: int | None = None
    ) -> FlipResult:
        """Let a player give up; commit the game's new state."""
        async with self.lock(channel_id):
            found = await self.game_in(channel_id)
            if found is None or (game_id is not None and found[0].id != game_id):
                raise Refusal("err.no_game" if game_id is None else "err.game_over")
            row, game = found
            if user_id not in row.players:
                raise Refusal("err.not_player")
            if game is None:
                raise Refusal("err.not_running")
            seat = row.players.index(user_id)
            # RULES §9: a team member who is out may still give up for the team.
            if not game.can_forfeit(seat):
                raise Refusal("err.out_of_game")
            if isinstance(game, StealGame) and game.in_battle:
                # RULES §10 has no rule for leaving in the middle of a battle's choices.
                raise Refusal("steal.forfeit_in_battle")
            if self._time_is_up(row, game):
                # The time ran out first (RULES §7 lists it before a forfeit): count the cards.
                return await self._end_by_time(row, game)
            try:
                game.forfeit(seat)
                row = await self._commit(row, game)
            except EngineError as exc:
                self._running.pop(channel_id, None)
                raise Refusal("err.bad_option", reason=str(exc)) from None
            except BaseException:
                self._running.pop(channel_id, None)
                raise
            return FlipResult(row, game)

    async def cancel(self, channel_id: int, user_id: int, *, moderator: bool) -> GameRow:
        """End the channel's game with no result (a moderator, or the challenger early)."""
        async with self.lock(channel_id):
            row = await self.storage.active_game(channel_id)
            if row is None:
                raise Refusal("err.no_game")
            early = row.status == "challenge" and user_id == row.challenger_id
            if not (moderator or early):
                raise Refusal("err.cancel_denied")
            self._running.pop(channel_id, None)
            if not await self.storage.end_game(row.id, "cancelled", self.clock()):
                raise Refusal("err.no_game")
            if row.status == "running":
                self._count_abandoned(row)
            return row

    # --------------------------------------------------------------- hands-free play

    async def play_on(
        self,
        channel_id: int,
        game_id: int,
        *,
        expected_round: int | None = None,
        count: int = 1,
        to_end: bool = False,
    ) -> FlipResult:
        """Play rounds for the game itself (autoplay, finish now); commit them before returning.

        No player is asked: the caller checked who may. ``expected_round`` refuses with
        ``flip.raced`` if a round was played meanwhile (by hand). Steal War choices are made by
        default (RULES §10). ``to_end`` plays the rest at once and returns no rounds.
        """
        async with self.lock(channel_id):
            found = await self.game_in(channel_id)
            if found is None or found[0].id != game_id:
                raise Refusal("err.game_over")
            row, game = found
            if game is None:
                raise Refusal("err.not_running")
            if expected_round is not None and expected_round != row.round:
                raise Refusal("flip.raced")
            late = self._time_is_up(row, game)
            if late and not (isinstance(game, StealGame) and game.in_battle):
                return await self._end_by_time(row, game)
            try:
                if late:
                    # A Steal War battle under way when the time ran out: play it out by the
                    # defaults, then count (RULES §7: after the round being played).
                    result = _play(row, game, 1)
                    if game.outcome is None:
                        game.end_by_counting()
                elif not to_end:
                    result = _play(row, game, count)
                else:
                    result = FlipResult(row, game)
                    if isinstance(game, Game):
                        run_to_end(game)
                    else:
                        game.play_to_end()
                row = await self._commit(row, game)
            except BaseException:
                self._running.pop(channel_id, None)
                raise
            return dataclasses.replace(result, row=row)

    async def change_extra(
        self, channel_id: int, game_id: int, change: Callable[[dict[str, Any]], dict[str, Any]]
    ) -> dict[str, Any]:
        """Change a game's ``extra`` under its channel's lock and return it as stored.

        ``change`` gets a copy of the current extra and returns the keys to set (it may raise a
        Refusal); the running game's cached row follows, so readers of the cache agree.
        """
        async with self.lock(channel_id):
            running = self._running.get(channel_id)
            if running is not None and running.row.id == game_id:
                current: GameRow | None = running.row
            else:
                current = await self.storage.get_game(game_id)
            if current is None:
                raise Refusal("err.game_over")
            merged = await self.storage.update_extra(
                game_id, change(dict(current.extra)), now=self.clock()
            )
            if merged is None:
                raise Refusal("err.game_over")
            if running is not None and running.row.id == game_id:
                running.row = dataclasses.replace(running.row, extra=merged)
            return merged

    async def ending_shown(self, game_id: int) -> None:
        """Record that the message showing a game's end is out (see :data:`ENDING`)."""
        try:
            await self.storage.update_extra(game_id, {ENDING: None}, now=self.clock())
        except StorageError as exc:
            # A restart shows the end once more: a repeat, never a loss.
            log.warning(
                "could not record that the end of game %s was shown: %s",
                game_id,
                exc,
                extra=context(game_id=game_id),
            )

    async def unshown_endings(self) -> list[tuple[GameRow, AnyGame]]:
        """Return the games that finished without their end being shown, and their end."""
        since = self.clock() - SHOW_ENDINGS_FOR
        found: list[tuple[GameRow, AnyGame]] = []
        for row in await self.storage.finished_unshown(ENDING, since=since):
            try:
                game = load_game(row.state or {})
            except Exception:
                log.exception("the end of game %s cannot be read", row.id, extra=about(row))
                await self.ending_shown(row.id)
                continue
            if game.outcome is not None:
                found.append((row, game))
        return found

    def adopt(self, row: GameRow, game: AnyGame) -> None:
        """Hold a game dealt outside a challenge (a match's next game) as its channel's game."""
        self._running[row.channel_id] = _Running(_lean(row), game)
        self._dealt(row)

    def _dealt(self, row: GameRow) -> None:
        for hook in self.on_deal:
            try:
                hook(row)
            except Exception:
                # The deal is committed; a watcher's mistake must not undo it for the players.
                log.exception("after game %s was dealt", row.id, extra=about(row))

    # ------------------------------------------------------------------ time limit

    def deadline(self, row: GameRow) -> datetime | None:
        """Return when a game's time limit ends it (RULES §7), or None if it has none.

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
        return None if deadline is None else (deadline, deadline - self.clock())

    def _time_is_up(self, row: GameRow, game: AnyGame) -> bool:
        deadline = self.deadline(row)
        return deadline is not None and game.outcome is None and self.clock() >= deadline

    async def _end_by_time(self, row: GameRow, game: AnyGame) -> FlipResult:
        """End a game by counting because its time is up, and commit it with its results."""
        try:
            game.end_by_counting()
            row = await self._commit(row, game)
        except BaseException:
            self._running.pop(row.channel_id, None)
            raise
        return FlipResult(row, game)

    async def end_in_time(self, channel_id: int, game_id: int) -> FlipResult | None:
        """End a game by counting once its time limit is up (the bot's deadline timer).

        Returns None if the game is no longer running. A result without an outcome means not
        yet: the time is not up by the clock, or a Steal War battle is still being played (its
        last move ends the game, RULES §7: after the round being played).
        """
        async with self.lock(channel_id):
            try:
                found = await self.game_in(channel_id)
            except Refusal:
                return None  # unreadable: ended and told by the reading
            if found is None or found[0].id != game_id:
                return None
            row, game = found
            if game is None or game.finished:
                return None
            if not self._time_is_up(row, game) or (isinstance(game, StealGame) and game.in_battle):
                return FlipResult(row, game)
            return await self._end_by_time(row, game)

    # ------------------------------------------------------------------- Steal War

    def choice_deadline(self, row: GameRow) -> datetime:
        """Return when the open Steal War choices of a game are made by default (RULES §10)."""
        # Every move is committed, and a commit stamps last_activity_at: the choices open now
        # have been open since then, and the stamp survives a restart.
        return row.last_activity_at + self.choice_ttl

    def running(self) -> list[tuple[GameRow, AnyGame]]:
        """Return the running games in memory, with their rows."""
        return [(entry.row, entry.game) for entry in self._running.values()]

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
        async with self.lock(channel_id):
            row, game, _ = await self._steal_turn(channel_id, user_id, game_id)
            if expected_round is not None and expected_round != row.round:
                raise Refusal("flip.raced")
            if not game.in_battle and self._time_is_up(row, game):
                # No new battle once the time is up: _steal_commit counts the cards instead.
                return await self._steal_commit(row, game, lambda: None)
            pending = game.pending()
            if pending and isinstance(pending[0], TopChoice):
                raise Refusal("steal.top_pending", name=row.names[pending[0].seat])
            if pending:
                raise Refusal("steal.in_battle")
            return await self._steal_commit(
                row, game, game.begin_battle, table_message_id=table_message_id
            )

    async def steal_seat(
        self, channel_id: int, user_id: int, game_id: int
    ) -> tuple[GameRow, StealGame, int]:
        """Return a player's Steal War game and seat, to show them their own card."""
        async with self.lock(channel_id):
            return await self._steal_turn(channel_id, user_id, game_id)

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
        async with self.lock(channel_id):
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

    async def time_out(self, channel_id: int, game_id: int) -> ChoiceResult | None:
        """Make the open choices of a game by default once their time is up (RULES §10).

        Only the choices open at the deadline are made: a choice they lead to (the next card
        after a steal, a war's face-up card, the winner's top card) gets its own time. Returns
        None when the game has no open choice; ``timed_out`` is empty when it is not yet time.
        """
        async with self.lock(channel_id):
            found = await self.game_in(channel_id)
            if found is None:
                return None
            row, game = found
            if row.id != game_id or not isinstance(game, StealGame) or game.finished:
                return None
            due = game.pending()
            if not due:
                return None
            if self.clock() < self.choice_deadline(row):
                return ChoiceResult(row, game)

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
    ) -> tuple[GameRow, StealGame, int]:
        """Return the channel's Steal War game and the player's seat, or refuse."""
        found = await self.game_in(channel_id)
        if found is None or (game_id is not None and found[0].id != game_id):
            raise Refusal("err.no_game" if game_id is None else "err.game_over")
        row, game = found
        if user_id not in row.players:
            raise Refusal("err.not_player")
        if game is None:
            raise Refusal("err.not_running")
        if not isinstance(game, StealGame):
            raise Refusal("err.stale_button")
        seat = row.players.index(user_id)
        if not game.in_game[seat]:
            raise Refusal("err.out_of_game")
        return row, game, seat

    async def _steal_commit(
        self,
        row: GameRow,
        game: StealGame,
        move: Callable[[], Round | None],
        *,
        table_message_id: int | None = None,
        timed_out: tuple[LookChoice | TopChoice, ...] = (),
    ) -> ChoiceResult:
        """Make a checked move and commit it; on any failure forget the game in memory."""
        try:
            played = move()
            if not game.in_battle and self._time_is_up(row, game):
                # RULES §7: the game ends after the round being played, here the battle.
                game.end_by_counting()
            row = await self._commit(row, game)
            if table_message_id is not None and game.outcome is None:
                row = await self._set_table(row, table_message_id)
        except BaseException:
            # The engine object ran ahead of what was saved: forget it, reload next time.
            self._running.pop(row.channel_id, None)
            raise
        return ChoiceResult(row, game, played, timed_out)

    # ------------------------------------------------------------------- start-up

    async def restore(self) -> tuple[list[GameRow], list[GameRow]]:
        """Load the games with timers to restart; return (open challenges, unreadable ended).

        Those are open challenges (their expiry), Steal War games (the time-outs of their
        choices) and games under autoplay. Every other running game is read when it is first
        used, so a restart is ready at once however many games are running (reading 10,000
        saved states takes seconds); :meth:`find_unreadable` checks them in the background.
        """
        challenges: list[GameRow] = []
        broken: list[GameRow] = []
        resumed = await self.storage.games_to_resume(
            variants=RESUMED_VARIANTS, extra_keys=RESUMED_EXTRA
        )
        for row in resumed:
            if row.status == "challenge":
                challenges.append(row)
                continue
            game = await self._read(row)
            if game is None:
                broken.append(row)
            else:
                self._running[row.channel_id] = _Running(_lean(row), game)
        return challenges, broken

    async def find_unreadable(self, *, page: int = 200) -> list[GameRow]:
        """Check every running game's saved state; end and return those that cannot be read.

        For the background after a restart: it lets the event loop run between games, skips
        games in memory (they were read), and reads a game again under its channel's lock
        before ending it, so a game played meanwhile is never touched.
        """
        broken: list[GameRow] = []
        after = 0
        while rows := await self.storage.active_games_after(after, page):
            after = rows[-1].id
            for row in rows:
                await asyncio.sleep(0)  # interactions first: this is a background chore
                if row.status != "running" or row.channel_id in self._running:
                    continue
                if _readable(row):
                    continue
                async with self.lock(row.channel_id):
                    fresh = await self.storage.get_game(row.id)
                    if row.channel_id in self._running or fresh is None:
                        continue
                    if fresh.status == "running" and not _readable(fresh):
                        await self._read(fresh)  # ends it, and logs why
                        broken.append(fresh)
        return broken


def dealt_extra(rules: Rules, now: datetime) -> dict[str, Any] | None:
    """Return what a game's extra keeps of its deal: its time, where a time limit counts it."""
    return None if rules.time_limit is None else {DEALT_AT: now.astimezone(UTC).isoformat()}


def _play(row: GameRow, game: AnyGame, count: int) -> FlipResult:
    """Play up to ``count`` rounds (the game is running) and say what they held."""
    start, wars = game.round, game.war_rounds
    if isinstance(game, Game):
        last = game.play_rounds(count)
    else:
        last = game.play_round()
        while game.round - start < count and game.outcome is None:
            last = game.play_round()
    return FlipResult(row, game, last, game.round - start, game.war_rounds - wars)
