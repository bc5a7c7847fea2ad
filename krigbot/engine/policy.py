"""Krigbot's own choices in Steal War (rules §10): stronger than the default, and fair.

Krigbot knows only what a player at the table knows: its own next card when it looks, and the
cards that lay face up. Every card in a loot pile was seen when it got there (won in a battle,
or stolen with the card put on the pile), so the loot piles are known; the playing piles are not.

- **A look**: steal every pile the card matches, as the default does. A steal only gains: the
  thief's card goes onto the stolen pile and comes back with it.
- **The top of its loot pile**: the default puts the winning card on top. Krigbot puts the won
  card of the rank with the fewest copies it has not seen (in no loot pile, so perhaps in a
  playing pile), which an opponent is least likely to turn up and steal the pile with. Ties go
  to the default's card, then to the lowest card.

Measured against the default over 10,000 games (``python -m bench.policy``, docs/playing.md),
Krigbot wins about two games in three.

>>> from krigbot.engine.cards import card_code, parse_cards
>>> from krigbot.engine.rules import Rules
>>> game = StealGame.from_piles(
...     Rules.preset("stjel"), [parse_cards(["KS", "2H"]), parse_cards(["QD", "2C"])]
... )
>>> game.loot[1] = parse_cards(["QH", "QC", "3D"])  # two queens lie on the other loot pile
>>> game.begin_battle().winner  # the king takes the queen
0
>>> move = choose(game, 0)  # one queen is unseen, three kings are
>>> move.kind, card_code(move.card)
('top', 'QD')
>>> make(game, move) is None, game.loot_top(0) == move.card
(True, True)
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Literal

from .cards import card_value, full_deck
from .events import LookChoice, Outcome, Round, TopChoice
from .rules import Rules
from .steal import StealGame
from .variant import Variant

MoveKind = Literal["steal", "top"]


@dataclass(frozen=True, slots=True)
class Move:
    """One choice for a seat: steal the piles of ``targets`` with ``card``, or put it on top."""

    seat: int
    kind: MoveKind
    card: int
    targets: tuple[int, ...] = ()


def unseen(game: StealGame) -> Counter[int]:
    """Return by value how many cards of the game lie in no loot pile (unseen, or on the table)."""
    left = Counter(
        card_value(card) for card in full_deck(decks=game.rules.decks, jokers=game.rules.jokers)
    )
    for pile in game.loot:
        left.subtract(card_value(card) for card in pile)
    return left


def safest_top(game: StealGame, choice: TopChoice) -> int:
    """Return the won card that an opponent is least likely to match: its rank is least unseen."""
    left = unseen(game)
    default = game.loot_top(choice.seat)
    return min(choice.cards, key=lambda card: (left[card_value(card)], card != default, card))


def choose(game: Variant, seat: int) -> Move | None:
    """Return Krigbot's move for the choice a seat has to make now, or None if it has none."""
    choice = next((c for c in game.pending() if c.seat == seat), None)
    if isinstance(choice, LookChoice):
        return Move(seat, "steal", choice.card, choice.can_steal)
    if isinstance(choice, TopChoice) and isinstance(game, StealGame):
        return Move(seat, "top", safest_top(game, choice))
    return None


def make(game: Variant, move: Move) -> Round | None:
    """Make a move in the game; return the round it decided, if any."""
    if move.kind == "top":
        game.put_on_top(move.seat, move.card)
        return None
    return game.steal(move.seat, move.targets)


def play_against_default(rules: Rules, seed: int, seat: int, *, krigbot: bool = True) -> Outcome:
    """Play a deal to its end: Krigbot in ``seat`` (or, with ``krigbot`` false, the default).

    Every other seat makes its choices by the default of §10, one at a time, as a time-out
    would: a steal may open a new choice for Krigbot, which it makes before the next default.
    """
    game = StealGame.new(rules, seed)
    while game.outcome is None:
        move = choose(game, seat) if krigbot else None
        if move is not None:
            make(game, move)
            continue
        pending = game.pending()
        if not pending:
            game.begin_battle()
        elif isinstance(pending[0], LookChoice):
            game.steal(pending[0].seat, pending[0].can_steal)
        else:
            game.apply_defaults()
    return game.outcome


__all__ = ["Move", "MoveKind", "choose", "make", "play_against_default", "safest_top", "unseen"]
