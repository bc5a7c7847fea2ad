"""What every kind of game shares: the deal, the shared state and its saving, and the pieces
of a round that the general path (``game``), the fast path (``fast``) and Steal War (``steal``)
all play by: how many cards go down, who runs out first, the pickup and the points.

Keeping them here, once, is what stops the fast path drifting from the rules.

>>> points_for(war_steps=2)
5
>>> winner_first({0: [8, 9], 1: [4, 5]}, winner=1)
[4, 5, 8, 9]
>>> fewest_holding([0, 1, 2], {0: 3, 1: 1, 2: 1}.__getitem__)
[1, 2]
"""

from __future__ import annotations

import random
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from functools import cache
from math import floor
from typing import Any, ClassVar, Protocol, Self

from .cards import ACE_VALUE, full_deck
from .compare import WonBy
from .errors import DealError, StateError
from .events import Outcome, Round, Steal, WarStep
from .rules import Rules

FORMAT_VERSION = 1

Table = list[list[tuple[int, int]]]
"""The cards on the table as layers of ``(seat, card)``, in the order they were placed."""


def shuffle(rng: random.Random, cards: list[int]) -> None:
    """Shuffle in place with the game's RNG (Fisher–Yates).

    Our own loop rather than ``random.shuffle`` so that the fast path can inline the two-card
    case (swap when ``rng.random() < 0.5``) and stay identical to this function. Card ``i`` is
    swapped with card ``floor(rand() * (i + 1))``; ``floor`` and precomputed ``i + 1`` give the
    same number as ``int(rand() * (i + 1))`` (the product is never negative) in half the time.
    """
    rand = rng.random
    for i, span in _spans(len(cards)):
        j = floor(rand() * span)
        cards[i], cards[j] = cards[j], cards[i]


@cache
def _spans(length: int) -> tuple[tuple[int, float], ...]:
    """Return ``(i, i + 1)`` for each position Fisher–Yates visits in a list of ``length``."""
    return tuple((i, float(i + 1)) for i in range(length - 1, 0, -1))


def deal(rules: Rules, seed: int) -> tuple[list[list[int]], int, random.Random]:
    """Shuffle with a new seeded RNG and deal one card at a time from seat 0 (rules §2).

    Return the piles (top card first), how many cards were set aside for lack of a whole round,
    and the RNG, which the game goes on using from where the deal left it.
    """
    cards = full_deck(decks=rules.decks, jokers=rules.jokers)
    rng = random.Random(seed)
    shuffle(rng, cards)
    n = rules.players
    per_seat = len(cards) // n
    return [cards[seat : per_seat * n : n] for seat in range(n)], len(cards) - per_seat * n, rng


def war_face_down(rules: Rules, tied_value: int) -> int:
    """Return how many cards each fighter places face down (rules §4, Război included)."""
    if rules.face_down != "rank":
        return rules.face_down
    if tied_value >= ACE_VALUE:  # ace and joker count 11
        return 10
    return min(tied_value, 10) - 1  # J, Q, K count 10


def points_for(war_steps: int) -> int:
    """Return the points a round won scores: 1, plus 2 for each war step in it (rules §7)."""
    return 1 + 2 * war_steps


def fewest_holding(lacking: Sequence[int], holding: Callable[[int], int]) -> list[int]:
    """Return the short fighters who run out first: the fewest holdings, equal together (§5).

    Cards go down in lockstep, so the one holding fewer runs out first.
    """
    counts = list(map(holding, lacking))
    fewest = min(counts)
    return [s for s, count in zip(lacking, counts, strict=True) if count == fewest]


def winner_first(by_seat: Mapping[int, list[int]], winner: int) -> list[int]:
    """Return the ``winner_first`` pickup (rules §6): the winner's cards, then each other seat's.

    ``by_seat`` holds each seat's cards in the order placed; the others follow in seat order.
    """
    order = list(by_seat.get(winner, ()))
    for seat in sorted(by_seat):
        if seat != winner:
            order.extend(by_seat[seat])
    return order


class GameState(Protocol):
    """The state every kind of game shares: the rules and the seed, the seats in play, the
    counters, the forfeits, the outcome and the cards each seat holds.

    Declared once for :class:`BaseGame`, which holds it (each kind counts its cards its own
    way), and for the protocols that read it (:class:`~krigbot.engine.variant.Variant` and the
    fast path's).
    """

    # Without it every game would carry a ``__dict__`` beside its slots.
    __slots__ = ()

    rules: Rules
    seed: int | None
    round: int
    in_game: list[bool]
    tricks: list[int]
    points: list[int]
    wars_won: list[int]
    biggest_pot: list[int]
    war_rounds: int
    war_steps: int
    set_aside: int
    eliminated: list[int]
    forfeits: list[tuple[int, int]]
    """``(seat, round)`` of every forfeit: with the seed, enough to replay the game."""
    outcome: Outcome | None

    @property
    def counts(self) -> tuple[int, ...]:
        """Return the cards each seat holds."""


class BaseGame(GameState):
    """Hold the :class:`GameState` and the piles: deal, count rounds and save.

    A base of :class:`Game` and :class:`~krigbot.engine.steal.StealGame`.
    """

    __slots__ = (
        "biggest_pot",
        "eliminated",
        "forfeits",
        "in_game",
        "outcome",
        "piles",
        "points",
        "round",
        "rules",
        "seed",
        "set_aside",
        "tricks",
        "war_rounds",
        "war_steps",
        "wars_won",
    )

    name: ClassVar[str]
    """The variant this kind of game plays (``Rules.variant``)."""
    piles: list[deque[int]]
    """Each seat's playing pile, top card first."""

    def __init__(
        self,
        rules: Rules,
        piles: Sequence[Sequence[int]],
        *,
        seed: int | None,
        rng: random.Random | None = None,
    ) -> None:
        """Seat the players on their piles, top card first, before the first round."""
        if rules.variant != self.name:
            raise DealError(f"{type(self).__name__} plays {self.name}, not {rules.variant}")
        n = rules.players
        if len(piles) != n:
            raise DealError(f"{n} players need {n} piles, not {len(piles)}")
        self.rules = rules
        self.seed = seed
        self.round = 0
        self.in_game = [True] * n
        self.tricks = [0] * n
        self.points = [0] * n
        self.wars_won = [0] * n
        self.biggest_pot = [0] * n
        self.war_rounds = 0
        self.war_steps = 0
        self.set_aside = 0
        self.eliminated = []
        self.forfeits = []
        # Annotated again: mypy would type the attribute by this bare None, not by GameState.
        self.outcome: Outcome | None = None
        self.piles = [deque(pile) for pile in piles]
        self._set_up(rng)

    def _set_up(self, rng: random.Random | None) -> None:
        """Set up what this kind of game keeps besides the piles and the counters.

        ``rng``, the one a deal leaves (``new`` passes it on), is for the kinds that draw from
        it later: each keeps it as it needs, the base does not.
        """

    @classmethod
    def new(cls, rules: Rules, seed: int) -> Self:
        """Shuffle with the seeded RNG and deal one card at a time from seat 0 (rules §2)."""
        piles, set_aside, rng = deal(rules, seed)
        game = cls(rules, piles, seed=seed, rng=rng)
        game.set_aside = set_aside
        return game

    @property
    def players(self) -> int:
        """Return the number of seats."""
        return self.rules.players

    @property
    def finished(self) -> bool:
        """Tell whether the game has ended."""
        return self.outcome is not None

    def can_forfeit(self, seat: int) -> bool:
        """Tell whether a seat may give up: it still plays, or its team does (rules §9)."""
        if self.outcome is not None or not 0 <= seat < self.players:
            return False
        return self.in_game[seat] or (self.rules.teams and self.in_game[(seat + 2) % 4])

    @property
    def forfeited(self) -> list[int]:
        """Return the seats that gave up, in order."""
        return [seat for seat, _ in self.forfeits]

    def credit(self, winner: int | None, taken: int, war_steps: int) -> None:
        """Count a round collected: ``taken`` cards to the winner, or set aside if nobody won.

        Every path that plays a round counts it here: tricks, points (rules §7), wars won and
        the biggest pot; a round with war steps is a war round.
        """
        if war_steps:
            self.war_rounds += 1
            self.war_steps += war_steps
        if winner is None:
            self.set_aside += taken
            return
        self.tricks[winner] += 1
        if self.rules.points:
            self.points[winner] += points_for(war_steps)
        if war_steps:
            self.wars_won[winner] += 1
        if taken > self.biggest_pot[winner]:
            self.biggest_pot[winner] = taken

    def _round(
        self,
        battle: tuple[tuple[int, int], ...],
        war_steps: tuple[WarStep, ...],
        winner: int | None,
        taken: int,
        set_aside: int,
        eliminated: tuple[int, ...],
        *,
        team_no_war: bool = False,
        steals: tuple[Steal, ...] = (),
        won_by: WonBy | None = None,
    ) -> Round:
        """Return the round just resolved, with the standing it leaves."""
        # In the fields' order: by keyword, building it cost some 6% of a ``play_round``.
        return Round(
            self.round,
            battle,
            war_steps,
            winner,
            taken,
            set_aside,
            eliminated,
            self.counts,
            tuple(self.tricks),
            tuple(self.points),
            self.outcome,
            team_no_war,
            steals,
            won_by,
        )

    def _base_to_dict(self, kind: str) -> dict[str, Any]:
        return {
            "format": FORMAT_VERSION,
            "kind": kind,
            "rules": self.rules.to_dict(),
            "seed": self.seed,
            "round": self.round,
            "in_game": self.in_game[:],
            "tricks": self.tricks[:],
            "points": self.points[:],
            "wars_won": self.wars_won[:],
            "biggest_pot": self.biggest_pot[:],
            "war_rounds": self.war_rounds,
            "war_steps": self.war_steps,
            "set_aside": self.set_aside,
            "eliminated": self.eliminated[:],
            "forfeits": [list(f) for f in self.forfeits],
            "outcome": None if self.outcome is None else outcome_to_dict(self.outcome),
        }

    def _base_from_dict(self, data: dict[str, Any]) -> None:
        """Restore the shared state (raises KeyError, TypeError or ValueError on damaged data)."""
        self.round = int(data["round"])
        self.in_game = list(map(bool, data["in_game"]))
        self.tricks = list(map(int, data["tricks"]))
        self.points = list(map(int, data["points"]))
        self.wars_won = list(map(int, data["wars_won"]))
        self.biggest_pot = list(map(int, data["biggest_pot"]))
        self.war_rounds = int(data["war_rounds"])
        self.war_steps = int(data["war_steps"])
        self.set_aside = int(data["set_aside"])
        self.eliminated = list(map(int, data["eliminated"]))
        self.forfeits = [(int(seat), int(rnd)) for seat, rnd in data["forfeits"]]
        self.outcome = None if data["outcome"] is None else outcome_from_dict(data["outcome"])


def rng_to_json(rng: random.Random) -> list[Any]:
    """Return the RNG's state as JSON-safe data."""
    version, words, gauss = rng.getstate()
    return [version, list(words), gauss]


def rng_from_json(data: list[Any]) -> random.Random:
    """Return an RNG in a state saved with :func:`rng_to_json`."""
    version, words, gauss = data
    return rng_in_state((version, tuple(words), gauss))


def rng_in_state(state: tuple[Any, ...]) -> random.Random:
    """Return an RNG in the given state (``getstate()``'s value).

    ``random.Random()`` would first seed itself from the OS, which costs four times the
    ``setstate`` that replaces that seed at once.
    """
    rng = random.Random.__new__(random.Random)
    rng.setstate(state)
    return rng


def check_saved(data: dict[str, Any], kind: str) -> None:
    """Refuse a saved game of another kind or format version."""
    if data.get("format") != FORMAT_VERSION or data.get("kind") != kind:
        raise StateError(f"unknown saved game format {data.get('format')!r} of {kind!r}")


def outcome_to_dict(outcome: Outcome) -> dict[str, Any]:
    """Return an outcome as a JSON-safe dict."""
    return {
        "reason": outcome.reason,
        "rounds": outcome.rounds,
        "winners": list(outcome.winners),
        "drawn": list(outcome.drawn),
        "cycle": outcome.cycle,
    }


def outcome_from_dict(data: dict[str, Any]) -> Outcome:
    """Rebuild an outcome saved with :func:`outcome_to_dict`."""
    return Outcome(
        reason=data["reason"],
        rounds=int(data["rounds"]),
        winners=tuple(data["winners"]),
        drawn=tuple(data["drawn"]),
        cycle=data["cycle"],
    )
