"""One interface for every kind of game, and the registry that finds a kind by name.

As python-chess's variants: every kind of game (Krig, Steal War) answers the same questions, so
whoever runs a game never asks which kind it holds. A plain game has no choices: its
``pending()`` is empty, ``in_battle`` is always false, and a choice made of it is refused.

>>> game = new_game(Rules.preset("standard"), 7)
>>> game.pending(), game.in_battle, game.has_choices
((), False, False)
>>> load_game(game.to_dict()).counts == game.counts
True
>>> find_variant("steal").name
'stjel'
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any, ClassVar, Protocol

from .core import GameState
from .errors import RulesError, StateError
from .events import BattleView, LookChoice, Outcome, Round, TopChoice
from .rules import Rules, declare_plays

Choice = LookChoice | TopChoice


class Rebuilt(Protocol):
    """A saved game replayed from its seed and kept, to play on to its later saves.

    A game watched live moves a round at a time; replaying it from its seed at each round would
    cost as much as all its rounds so far, every round. Each kind of game keeps what it needs
    to follow its own saves (a Krig game its deal, a Steal War game the moves it made again).
    """

    rounds: list[Round]
    """Every round replayed so far."""

    def follow(self, saved: dict[str, Any]) -> bool:
        """Play on to a later save of the same game; False if this one cannot be followed
        from here (it is not a later save of the game kept, or its course changed)."""


class Variant(GameState, Protocol):
    """What every kind of game offers: playing, choices, forfeits, counting and saving."""

    name: ClassVar[str]
    """The rules' ``variant`` (rules §10, §11): ``krig`` or ``stjel``."""
    aliases: ClassVar[tuple[str, ...]]
    """Other names :func:`find_variant` accepts."""
    has_choices: ClassVar[bool]
    """Whether players make choices during a round, each with a time-out of its own (§10)."""
    autoplayable: ClassVar[bool]
    """Whether a game may be played on its own, round by round, without anyone's choices."""
    has_loot: ClassVar[bool]
    """Whether won cards go to face-up loot piles instead of under the pile (§10)."""
    plays: ClassVar[frozenset[str]]
    """The rule options it plays (the variant and the players always). Any other option is
    refused for it, whatever the value, and holds the value of its preset (rules §10)."""

    @classmethod
    def new(cls, rules: Rules, seed: int) -> Variant:
        """Shuffle with the seeded RNG and deal (rules §2)."""

    @classmethod
    def from_piles(cls, rules: Rules, piles: Sequence[Sequence[int]], *, seed: int = 0) -> Variant:
        """Start from a given deal, top card first."""

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Variant:
        """Restore a game saved with ``to_dict``."""

    @classmethod
    def replay(cls, saved: dict[str, Any]) -> Iterator[Round]:
        """Yield every round of a save (finished or not) again, from its seed."""

    @classmethod
    def rebuild(cls, saved: dict[str, Any]) -> Rebuilt:
        """Replay a save and keep the game, to follow its later saves."""

    @property
    def players(self) -> int:
        """Return the number of seats."""

    @property
    def finished(self) -> bool:
        """Tell whether the game has ended."""

    @property
    def forfeited(self) -> list[int]:
        """Return the seats that gave up, in order."""

    @property
    def in_battle(self) -> bool:
        """Tell whether a round has begun and waits for choices before it resolves."""

    @property
    def moves_made(self) -> int:
        """Return how many moves the game has had: it grows with every move, a version."""

    @property
    def replays_from_seed(self) -> bool:
        """Tell whether the rules and the seed alone play this very game again."""

    def holding(self, seat: int) -> int:
        """Return how many cards a seat owns that are not on the table (rules §5)."""

    def can_forfeit(self, seat: int) -> bool:
        """Tell whether a seat may give up."""

    def forfeit(self, seat: int) -> Outcome | None:
        """Let a seat give up; return the outcome if that ends the game."""

    def end_by_counting(self) -> Outcome:
        """End the game now, between rounds, counted as at the round limit (rules §7)."""

    def play_round(self) -> Round:
        """Play one whole round, making any choice by its default."""

    def play_rounds(self, count: int) -> Round:
        """Play up to ``count`` rounds (fewer if the game ends) and return the last one."""

    def play_to_end(self) -> Outcome:
        """Play until the game ends, by the defaults, and return the outcome."""

    def pending(self) -> tuple[Choice, ...]:
        """Return the choices the game is waiting for (none in a plain game)."""

    def begin_battle(self) -> Round | None:
        """Start the next round; return it if it resolved with no choice to make."""

    def steal(self, seat: int, from_seats: Sequence[int]) -> Round | None:
        """Let a seat steal loot piles with the card it looks at."""

    def play(self, seat: int) -> Round | None:
        """Let a seat play the card it looks at instead of stealing."""

    def put_on_top(self, seat: int, card: int) -> None:
        """Let the winner of the last round choose the top card of their loot pile."""

    def apply_defaults(self) -> Round | None:
        """Make every pending choice by its default; return a round that resolved."""

    def look(self, seat: int) -> int | None:
        """Return the card a seat may look at before playing it, if the game has one."""

    def loot_top(self, seat: int) -> int | None:
        """Return the card on top of a seat's face-up loot pile, if any."""

    def loot_size(self, seat: int) -> int:
        """Return how many cards a seat's face-up loot pile holds."""

    def battle_view(self) -> BattleView:
        """Return the round under way, as everyone at the table may see it."""

    def copy(self) -> Variant:
        """Return an independent copy with the same future."""

    def to_dict(self) -> dict[str, Any]:
        """Return the whole game as a JSON-safe dict."""


VARIANTS: dict[str, type[Variant]] = {}
"""Every kind of game by its name; each registers itself when its module is imported."""


def register(kind: type[Variant]) -> None:
    """Add a kind of game to the registry, with the options it plays."""
    declare_plays(kind.name, kind.plays)
    VARIANTS[kind.name] = kind


def find_variant(name: str) -> type[Variant]:
    """Return the kind of game of a name or alias, or raise RulesError."""
    key = name.strip().lower()
    for kind in VARIANTS.values():
        if key == kind.name or key in kind.aliases:
            return kind
    raise RulesError(f"unknown variant {name!r} (choose from {', '.join(VARIANTS)})")


def variants_with_choices() -> tuple[str, ...]:
    """Return the names of the kinds whose running games wait for players' choices."""
    return tuple(name for name, kind in VARIANTS.items() if kind.has_choices)


def new_game(rules: Rules, seed: int, *, piles: Sequence[Sequence[int]] | None = None) -> Variant:
    """Deal a game of the kind the rules ask for, from a seed or from given piles."""
    kind = find_variant(rules.variant)
    if piles is None:
        return kind.new(rules, seed)
    return kind.from_piles(rules, piles, seed=seed)


def saved_kind(data: dict[str, Any]) -> type[Variant]:
    """Return the kind of game a save is of, or raise StateError."""
    name = data.get("kind")
    kind = VARIANTS.get(name) if isinstance(name, str) else None
    if kind is None:
        raise StateError(f"unknown saved game format {data.get('format')!r} of {name!r}")
    return kind


def load_game(data: dict[str, Any]) -> Variant:
    """Restore a saved game of any kind."""
    return saved_kind(data).from_dict(data)
