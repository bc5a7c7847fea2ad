"""Cards as small integers and their text notation (rules §1).

A card is ``value * 4 + suit``: comparing ``card >> 2`` compares values and ignores suits, and
two copies of one card (``decks: 2``) are the same integer, as they are at the table.

>>> parse_card("QD") >> 2
12
>>> card_code(parse_card("TS"))
'TS'
>>> [card_code(c) for c in full_deck(jokers=2)[-3:]]
['AC', 'X1', 'X2']
"""

from __future__ import annotations

from collections.abc import Iterable

from .errors import CardError

RANKS = "23456789TJQKA"
SUITS = "SHDC"
JOKER_VALUE = 15
ACE_VALUE = 14
TWO_VALUE = 2

_CODE_TO_CARD: dict[str, int] = {
    rank + suit: (value << 2) | suit_index
    for value, rank in enumerate(RANKS, start=2)
    for suit_index, suit in enumerate(SUITS)
}
_CODE_TO_CARD["X1"] = JOKER_VALUE << 2
_CODE_TO_CARD["X2"] = (JOKER_VALUE << 2) | 1
_CARD_TO_CODE: dict[int, str] = {card: code for code, card in _CODE_TO_CARD.items()}
_PLAIN_DECK = tuple(card for code, card in _CODE_TO_CARD.items() if not code.startswith("X"))


def parse_card(code: str) -> int:
    """Return the card for a code such as ``"QD"`` or ``"X1"`` (case-insensitive)."""
    card = _CODE_TO_CARD.get(code.strip().upper())
    if card is None:
        raise CardError(f"unknown card code {code!r} (expected e.g. QD, TS, 7H or X1)")
    return card


def card_code(card: int) -> str:
    """Return the notation of a card, e.g. ``"QD"``."""
    try:
        return _CARD_TO_CODE[card]
    except KeyError:
        raise CardError(f"not a card: {card!r}") from None


def card_value(card: int) -> int:
    """Return the value that decides battles: 2–10, J 11, Q 12, K 13, A 14, joker 15."""
    return card >> 2


def is_joker(card: int) -> bool:
    """Tell whether the card is a joker."""
    return card >> 2 == JOKER_VALUE


def full_deck(*, decks: int = 1, jokers: int = 0) -> list[int]:
    """Return the cards of the game in a fixed order, before shuffling."""
    cards = list(_PLAIN_DECK) * decks
    cards.extend(_CODE_TO_CARD[f"X{i + 1}"] for i in range(jokers))
    return cards


def parse_cards(codes: Iterable[str]) -> list[int]:
    """Parse a sequence of card codes."""
    try:
        # Saved games hold exact upper-case codes: look them up directly, fall back otherwise.
        return [_CODE_TO_CARD[code] for code in codes]
    except (KeyError, TypeError):
        return [parse_card(code) for code in codes]


def format_cards(cards: Iterable[int]) -> list[str]:
    """Return the notation of each card."""
    try:
        return [_CARD_TO_CODE[card] for card in cards]
    except KeyError:
        return [card_code(card) for card in cards]
