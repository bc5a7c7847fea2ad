"""Small helpers to build deals and watch games in the engine tests."""

from __future__ import annotations

import json
import random
from typing import Any

from krigbot.engine import Game, Round, Rules, format_cards, full_deck, parse_cards

Position = tuple[tuple[int, ...], ...]


def pile(codes: str) -> list[int]:
    """Return a pile from space-separated card codes, top card first: ``pile("QC 2H")``."""
    return parse_cards(codes.split())


def deal(rules: Rules | str, *piles: str, seed: int = 0) -> Game:
    """Start a game from piles written as space-separated codes, top card first."""
    if isinstance(rules, str):
        rules = Rules.preset(rules)
    return Game.from_piles(rules, [pile(p) for p in piles], seed=seed)


def codes(cards: Any) -> list[str]:
    """Return the codes of cards (any iterable of ints), for readable assertions."""
    return format_cards(cards)


def pile_codes(game: Game, seat: int) -> list[str]:
    """Return a seat's playing pile as codes, top card first."""
    return format_cards(game.piles[seat])


def play(game: Game, rounds: int) -> list[Round]:
    """Play ``rounds`` rounds (fewer if the game ends) and return them."""
    played: list[Round] = []
    while len(played) < rounds and not game.finished:
        played.append(game.play_round())
    return played


def play_out(game: Game, limit: int = 1_000_000) -> list[Round]:
    """Play the game to its end with ``play_round`` and return every round."""
    played = play(game, limit)
    assert game.finished, f"game not over after {limit} rounds"
    return played


def position(game: Game) -> Position:
    """Return what decides a deterministic game's future: every pile and won pile, in order."""
    return tuple(tuple(p) for p in game.piles) + tuple(tuple(w) for w in game.won)


def watch(game: Game, limit: int = 200_000) -> tuple[list[Round], tuple[int, int] | None]:
    """Play a game out with ``play_round``, recording the position at the start of every round.

    The brute force of rules §7: return the rounds played and ``(round, cycle)`` for the first
    round after which the position equals one at the start of an earlier round (``round`` is the
    number of rounds played by then, ``cycle`` how many rounds earlier it was seen), or None if
    no position repeated before the game ended.
    """
    seen: dict[Position, int] = {position(game): game.round}
    played: list[Round] = []
    repeat: tuple[int, int] | None = None
    while not game.finished:
        assert len(played) < limit, f"game not over after {limit} rounds"
        played.append(game.play_round())
        here = position(game)
        if here in seen and repeat is None:
            repeat = (game.round, game.round - seen[here])
        seen.setdefault(here, game.round)
    return played, repeat


def roundtrip(game: Game) -> Game:
    """Save a game to JSON text and restore it, as the storage layer does."""
    return Game.from_dict(json.loads(json.dumps(game.to_dict())))


def random_piles(rng: random.Random, players: int, per_pile: int, ranks: str) -> list[list[int]]:
    """Deal ``per_pile`` cards to each seat from the given ranks (all four suits), shuffled.

    Few ranks make ties, wars and shortages frequent, which is what the comparison tests want.
    """
    cards = [c for c in full_deck() if "23456789TJQKA"[(c >> 2) - 2] in ranks]
    rng.shuffle(cards)
    needed = players * per_pile
    assert needed <= len(cards), "not enough cards of those ranks"
    return [cards[seat:needed:players] for seat in range(players)]


def comparable(game: Game) -> dict[str, Any]:
    """Return the saved game, for comparing two games field by field."""
    return game.to_dict()
