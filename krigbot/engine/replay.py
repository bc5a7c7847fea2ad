"""Rebuilding a game round by round from its seed, its rules and the moves players made.

A Krig game is fixed by its deal; only forfeits change its course. A Steal War game also
needs the choices, which it logs as it goes. Nothing per round has to be stored. Each kind of
game replays its own saves (``Variant.replay``, ``Variant.rebuild``); these find the kind.

>>> from krigbot.engine import Game, Rules
>>> game = Game.new(Rules.preset("standard"), seed=3)
>>> rounds = [game.play_round() for _ in range(5)]
>>> list(replay(game.to_dict()))[:5] == rounds
True
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

from .events import Round
from .variant import Rebuilt, saved_kind


def replay(saved: dict[str, Any]) -> Iterator[Round]:
    """Yield every round of a saved game (finished or not) again, from its seed."""
    return saved_kind(saved).replay(saved)


class Replaying:
    """One running game's rounds, replayed as far as its latest save and kept.

    A game watched live moves a round at a time, and replaying it from its seed at each round
    would cost as much as all its rounds so far, every round. Handed each later save of the same
    game, this plays only the rounds since the last: its kind keeps the game where it stopped
    (``Variant.rebuild``). A save it cannot follow (another game, a Krig game with a forfeit, a
    Steal War log that is not the one it followed) is replayed from its seed, as :func:`replay`
    does.
    """

    __slots__ = ("_kept", "_lock", "_start")

    def __init__(self) -> None:
        self._lock = threading.Lock()
        """Held by the one call at a time that plays the game on (calls may come from threads)."""
        self._start: tuple[Any, ...] | None = None
        """The kind, seed and rules of the game kept (None: none kept)."""
        self._kept: Rebuilt | None = None

    def rounds(self, saved: dict[str, Any]) -> tuple[Round, ...]:
        """Return every round of a save of the game, as ``tuple(replay(saved))``."""
        with self._lock:
            try:
                return self._rounds_of(saved)
            except BaseException:
                self._start = None  # what was kept may be half-way through a move: nothing kept
                raise

    def _rounds_of(self, saved: dict[str, Any]) -> tuple[Round, ...]:
        start = (saved.get("kind"), int(saved["seed"]), saved["rules"])
        kept = self._kept
        if kept is None or start != self._start or not kept.follow(saved):
            kept = self._kept = saved_kind(saved).rebuild(saved)
            self._start = start
        return tuple(kept.rounds)
