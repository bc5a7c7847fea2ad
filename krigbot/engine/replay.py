"""Rebuilding a game round by round from its seed, its rules and the moves players made.

A Krig game is fixed by its deal; only forfeits change its course. A Steal War game also
needs the choices, which it logs as it goes. Nothing per round has to be stored.

>>> game = Game.new(Rules.preset("standard"), seed=3)
>>> rounds = [game.play_round() for _ in range(5)]
>>> list(replay(game.to_dict()))[:5] == rounds
True
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from .events import Round
from .game import Game
from .rules import Rules
from .steal import replay_steal


def replay(saved: dict[str, Any]) -> Iterator[Round]:
    """Yield every round of a saved game (finished or not) again, from its seed."""
    rules = Rules.from_dict(saved["rules"])
    seed = int(saved["seed"])
    if saved.get("kind") == "stjel":
        yield from replay_steal(rules, seed, saved["actions"])
        return
    game = Game.new(rules, seed)
    forfeits = sorted(((int(rnd), int(seat)) for seat, rnd in saved["forfeits"]), reverse=True)
    last = int(saved["round"])
    # rules §9 now ends a team game at its forfeit; one saved earlier may have gone on after it
    # (the partner played on), and is replayed as it was played.
    alone = rules.teams and bool(forfeits) and (len(forfeits) > 1 or forfeits[0][0] < last)
    while game.outcome is None and game.round < last:
        while forfeits and forfeits[-1][0] == game.round:
            game.forfeit(forfeits.pop()[1], alone=alone)
        if game.outcome is not None:
            return
        yield game.play_round()
