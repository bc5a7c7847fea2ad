"""Which face-up cards win when they are compared: the one place that decides it (rules §1, §3, §4).

Every kind of game and both paths ask here: a battle's cards and a war step's face-up cards are
compared the same way. The highest value wins; equal highest are tied, and a tie goes to war
(rules §3). With ``two_beats_ace`` a 2 beats an ace and nothing else: when an ace is highest and a
2 is among the cards, the 2s take the aces' place (one 2 wins, several are tied). A joker is
higher than an ace, so with a joker highest the 2 does nothing. With ``lowest_wins`` (Peace) the
lowest value wins instead and equal lowest are tied; a joker still ranks highest, so it loses
to every card.

The functions take the game's :class:`~krigbot.engine.rules.Rules`: the games and the fast path
hand them on and never read a rule of comparison themselves.

>>> from krigbot.engine.cards import parse_card
>>> from krigbot.engine.rules import Rules
>>> cards = {0: parse_card("2S"), 1: parse_card("AH"), 2: parse_card("9C")}
>>> best_of(cards, (0, 1, 2), Rules())
(14, [1], 'highest')
>>> upset = Rules(two_beats_ace=True)
>>> best_of(cards, (0, 1, 2), upset)
(2, [0], 'two_beats_ace')
>>> winner_of_two(14, 2, upset), winner_of_two(9, 9, upset)
(1, -1)
>>> best_of(cards, (0, 1, 2), Rules(lowest_wins=True))
(2, [0], 'lowest_wins')
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Literal, TypeAlias

from .cards import ACE_VALUE, JOKER_VALUE, TWO_VALUE

if TYPE_CHECKING:
    from .rules import Rules

WonBy: TypeAlias = Literal["highest", "two_beats_ace", "lowest_wins", "teammates", "shortage"]
"""Why a seat took the table (``Round.won_by``): the highest face-up card; a 2 that took an ace's
place (rules §1); the lowest face-up card, in Peace (§1); the first in seat order of teammates
tied with no one else (§9); or the other fighters ran short in a war step and went out (§5)."""

PLAIN_ORDER: tuple[int, ...] = tuple(card >> 2 for card in range((JOKER_VALUE + 1) << 2))
"""Each card's strength when the highest value simply wins: its value (``card >> 2``). The fast
path's inline loop compares these with ``>``, which is this module's rule only for the rules
that :func:`order_of` gives it to."""
PEACE_ORDER: tuple[int, ...] = tuple(
    JOKER_VALUE - (card >> 2) for card in range((JOKER_VALUE + 1) << 2)
)
"""Each card's strength when the lowest value wins (``lowest_wins``): the lower the value, the
stronger; a joker, the highest value, is the weakest."""


def best_of(
    cards: Mapping[int, int], seats: Sequence[int], rules: Rules
) -> tuple[int, list[int], WonBy]:
    """Return what wins among the seats' face-up cards: the winning value, the seats holding it
    (one wins, several are tied and go to war), and why it wins (the highest, 2s that took
    the aces' place, or the lowest in Peace)."""
    values = [cards[seat] >> 2 for seat in seats]
    if rules.lowest_wins:
        top = min(values)
        why: WonBy = "lowest_wins"
    else:
        top = max(values)
        why = "highest"
    if rules.two_beats_ace and top == ACE_VALUE and TWO_VALUE in values:
        top, why = TWO_VALUE, "two_beats_ace"
    if values.count(top) == 1:  # the common case, counted and found in C
        return top, [seats[values.index(top)]], why
    return top, [seat for seat, value in zip(seats, values, strict=True) if value == top], why


def winner_of_two(a: int, b: int, rules: Rules) -> int:
    """Return which of two face-up values wins: 0 for ``a``, 1 for ``b``, -1 for a tie."""
    if a == b:
        return -1
    if rules.two_beats_ace and {a, b} == {ACE_VALUE, TWO_VALUE}:
        return 0 if a == TWO_VALUE else 1
    if rules.lowest_wins:
        return 0 if a < b else 1
    return 0 if a > b else 1


def order_of(rules: Rules) -> tuple[int, ...] | None:
    """Return each card's strength if comparing strengths with ``>`` decides every comparison,
    or None when no such order exists (a 2 beating an ace: 2 < 3 < ... < A < 2)."""
    if rules.two_beats_ace:
        return None
    return PEACE_ORDER if rules.lowest_wins else PLAIN_ORDER
