"""Value objects a game returns: what happened in a round and how a game ended."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, NamedTuple, TypeAlias

from .compare import WonBy

EndReason: TypeAlias = Literal[
    "all_cards", "war_shortage", "round_limit", "time_limit", "target", "eternal", "forfeit"
]
END_REASONS: tuple[EndReason, ...] = (
    "all_cards",
    "war_shortage",
    "round_limit",
    "time_limit",
    "target",
    "eternal",
    "forfeit",
)


@dataclass(frozen=True, slots=True)
class Outcome:
    """How a game ended: who won, who shared a draw, and why (rules §7).

    Seats in neither ``winners`` nor ``drawn`` lost. In a team game a result is the team's
    (rules §9): both members of a team are in ``winners``, both in ``drawn``, or neither.
    """

    reason: EndReason
    rounds: int
    winners: tuple[int, ...] = ()
    drawn: tuple[int, ...] = ()
    cycle: int | None = None
    """For ``eternal``: the number of rounds after which the position repeats."""

    @property
    def is_draw(self) -> bool:
        """Tell whether nobody won."""
        return not self.winners

    @property
    def winner(self) -> int | None:
        """Return the single winning seat, or None for a draw or a team win."""
        return self.winners[0] if len(self.winners) == 1 else None


@dataclass(frozen=True, slots=True)
class WarStep:
    """One war step: who fought, the cards each placed face down, and the face-up cards."""

    fighters: tuple[int, ...]
    face_down: tuple[tuple[int, ...], ...]
    """Per fighter (same order as ``fighters``), the cards placed face down."""
    face_up: tuple[int | None, ...]
    """Per fighter, the card turned up in this step; None when they kept their standing card."""
    compared: tuple[int, ...]
    """Per fighter, the card whose value was compared (the new face-up or the standing card)."""
    short: tuple[int, ...] = ()
    """Fighters who held fewer than the step needs (rules §5)."""
    knocked_out: tuple[int, ...] = ()
    """Seats knocked out of the game for lack of cards before or in this step (rules §5)."""
    supplied: tuple[tuple[int, int, int], ...] = ()
    """Team cooperation (rules §9): ``(from_seat, to_seat, cards)`` given before the step."""


@dataclass(frozen=True, slots=True)
class Steal:
    """Steal War (rules §10): a seat's card took the loot piles of ``from_seats``."""

    seat: int
    card: int
    from_seats: tuple[int, ...]
    cards: int
    """How many cards moved onto the thief's loot pile, their own card included."""


@dataclass(frozen=True, slots=True)
class LookChoice:
    """Steal War: a seat looks at ``card`` and may steal the piles in ``can_steal``, or play."""

    seat: int
    card: int
    can_steal: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class TopChoice:
    """Steal War: the winner of a battle picks which won card lies on top of their loot."""

    seat: int
    cards: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class BattleView:
    """Steal War: the battle under way as the table sees it (nothing hidden is in it)."""

    battle: tuple[tuple[int, int], ...]
    """``(seat, card)`` of the battle cards played so far."""
    steals: tuple[Steal, ...]
    war_steps: tuple[WarStep, ...]
    """Steps so far; the last one's face-up cards are filled in once all are played."""
    standing: tuple[tuple[int, int], ...]
    """``(seat, card)`` of the face-up cards played in the current phase."""
    waiting: tuple[int, ...]
    """Seats that still have to turn their face-up card in the current phase."""

    @property
    def in_war(self) -> bool:
        """Tell whether the battle has come to a war."""
        return bool(self.war_steps)


class Round(NamedTuple):
    """Everything that happened in one round, enough to render it without the game.

    A named tuple rather than a frozen dataclass, as immutable but built in a third of the time:
    a frozen dataclass sets each of its 13 fields through ``object.__setattr__``, which cost a
    fifth of a round played through ``Game.play_round``.
    """

    number: int
    battle: tuple[tuple[int, int], ...]
    """``(seat, card)`` for every player who turned a card, in seat order."""
    war_steps: tuple[WarStep, ...]
    winner: int | None
    """The seat that took the table; None when the table was set aside."""
    taken: int
    """How many cards the winner took (the whole table)."""
    set_aside: int
    """Cards set aside because the last fighters were knocked out together."""
    eliminated: tuple[int, ...]
    """Seats that left the game in this round, in the order they went out."""
    counts: tuple[int, ...]
    """Cards each seat holds after the round."""
    tricks: tuple[int, ...]
    points: tuple[int, ...]
    outcome: Outcome | None
    team_no_war: bool = False
    """A tie between teammates only: no war, the first of them in seat order took the table."""
    steals: tuple[Steal, ...] = ()
    """Steal War: the steals made during this round, in the order they happened."""
    won_by: WonBy | None = None
    """Why the winner took the table, as the comparison decided it (``compare.WonBy``): a 2 that
    took an ace is ``two_beats_ace``. None when the table was set aside. Renderers read it here
    rather than work the rules out again from the cards."""

    @property
    def is_war(self) -> bool:
        """Tell whether a war started in this round."""
        return bool(self.war_steps)
