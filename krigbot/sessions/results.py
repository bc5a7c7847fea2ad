"""What the session layer answers: refusals, the people in a challenge, the results of moves."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal, TypedDict

from krigbot.engine import Outcome, Round, Variant
from krigbot.engine.events import LookChoice, TopChoice
from krigbot.engine.policy import Move
from krigbot.storage import GameRow, PlayerResult
from krigbot.storage import Outcome as PlayerOutcome

Choice = Literal["steal", "play", "top"]


class ChoiceOptions(TypedDict, total=False):
    """The optional parts of a Steal War choice, beside its seat and card.

    A press passes on those its button carries; ``Choices.choose`` gives the defaults.
    """

    targets: Sequence[int]
    """The seats whose loot top a steal takes."""
    expected_round: int | None
    """The round a top-card button was offered at: in any other round it is refused as stale."""


class Refusal(Exception):
    """An expected refusal, shown to the user as one translated line."""

    def __init__(self, key: str, **fields: Any) -> None:
        super().__init__(key)
        self.key = key
        self.fields = fields


class LostWrite(Refusal):
    """Another process of the bot moved the game past the copy in memory.

    Raised where the storage's answer for a stale round (``RoundConflictError`` from
    ``save_round`` and ``finish_game``) is read, in ``Registry.commit``, and for a press or a
    move that a copy in memory cannot vouch for (``Registry.check_round``, a Steal War move).
    ``Registry.retrying`` reads the game again and tries once more; a press that the game read
    again shows is out of date refuses with this too, so a timer or autoplay can tell a loss to
    another process from a hand's press. It reaches a player as ``flip.raced``.
    """

    def __init__(self) -> None:
        super().__init__("flip.raced")


class ChallengeExpired(Refusal):
    """A press on a challenge whose time ran out: its message may never have said so.

    Where nothing but an interaction reaches the chat (after a restart, or once the token of
    the challenge's own command ran out) its expiry could not be shown; the press that finds
    it can show it. It reaches a player as ``err.challenge_over`` elsewhere.
    """

    def __init__(self, row: GameRow) -> None:
        super().__init__("err.challenge_over")
        self.row = row


@dataclass(frozen=True, slots=True)
class Player:
    """Someone named in a challenge."""

    user_id: int
    name: str
    bot: bool = False
    """A bot account: refused, unless it is Krigbot itself."""


@dataclass(frozen=True, slots=True)
class ChallengeResult:
    """A new challenge, and the idle game it replaced, if any."""

    row: GameRow
    replaced: GameRow | None = None
    krigbot: int | None = None
    """The seat of Krigbot itself, which has accepted already, if it plays."""
    game: Variant | None = None
    """The dealt game when Krigbot was the only one challenged: it starts at once."""


@dataclass(frozen=True, slots=True)
class AcceptResult:
    """The challenge after an accept; ``game`` is set when everyone has accepted."""

    row: GameRow
    game: Variant | None = None


@dataclass(frozen=True, slots=True)
class FlipResult:
    """What one flip played, and the game after it."""

    row: GameRow
    game: Variant
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


@dataclass(frozen=True, slots=True)
class ChoiceResult:
    """A Steal War game after a move: the battle the move decided, and the choices timed out."""

    row: GameRow
    game: Variant
    played: Round | None = None
    timed_out: tuple[LookChoice | TopChoice, ...] = ()
    """The choices the time-out made by default (rules §10), as they stood."""
    krigbot_moves: tuple[Move, ...] = ()
    """The choices Krigbot itself made at once after the move, in order."""
    outcome: Outcome | None = None
    """How the game ended, if this move ended it (taken when it was made)."""

    def __post_init__(self) -> None:
        if self.outcome is None:
            object.__setattr__(self, "outcome", self.game.outcome)


def utcnow() -> datetime:
    """Return the current time, timezone-aware."""
    return datetime.now(UTC)


def krigbot_seat(row: GameRow, krigbot_id: int | None) -> int | None:
    """Return the seat Krigbot itself plays in a game, if it plays."""
    if krigbot_id is None or krigbot_id not in row.players:
        return None
    return row.players.index(krigbot_id)


def player_results(
    row: GameRow, game: Variant, *, krigbot_id: int | None = None
) -> list[PlayerResult]:
    """Return each player's result of a finished game for the leaderboard.

    In a team game the result is the team's (rules §9): both members win if either is among the
    winners, else both draw if either is among the drawn, else both lose. Taken from the team
    rather than seat by seat, so it holds however the engine lists the members of a team.
    In a game against Krigbot (``krigbot_id`` plays) Krigbot has no result, and every other
    player's is ``against_krigbot``: it never reaches the leaderboard. Krigbot's partner in a
    team game played against the other team, not against Krigbot: theirs is an ordinary result.
    """
    outcome = game.outcome
    assert outcome is not None
    teams = game.rules.teams
    bot_seat = krigbot_seat(row, krigbot_id)
    results = []
    for seat, user_id in enumerate(row.players):
        if seat == bot_seat:
            continue
        # Seats 0 and 2 against 1 and 3 (rules §9).
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
                against_krigbot=bot_seat is not None and not (teams and seat % 2 == bot_seat % 2),
            )
        )
    return results
