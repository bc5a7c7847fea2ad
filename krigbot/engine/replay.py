"""Rebuilding a game round by round from its seed, its rules and the moves players made.

A Krig game is fixed by its deal; only forfeits change its course. A Steal War game also
needs the choices, which it logs as it goes. Nothing per round has to be stored.

>>> game = Game.new(Rules.preset("standard"), seed=3)
>>> rounds = [game.play_round() for _ in range(5)]
>>> list(replay(game.to_dict()))[:5] == rounds
True
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from typing import Any

from .events import Round
from .game import Game
from .rules import Rules
from .steal import StealGame, replay_steal, steal_move


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


class Replaying:
    """One running game's rounds, replayed as far as its latest save and kept.

    A game watched live moves a round at a time, and replaying it from its seed at each round
    would cost as much as all its rounds so far, every round. Handed each later save of the same
    game, this plays only the rounds since the last: the game it replayed is kept where it
    stopped. A save it cannot continue (another game, a Krig game with a forfeit, a Steal War
    log that is not the one it followed) is replayed from its seed, as :func:`replay` does.
    """

    __slots__ = ("_actions", "_game", "_lock", "_rounds", "_start")

    def __init__(self) -> None:
        self._lock = threading.Lock()
        """Held by the one call at a time that plays the game on (calls may come from threads)."""
        self._start: tuple[Any, ...] | None = None
        """The kind, seed and rules of the game kept (None: none kept)."""
        self._game: Game | StealGame | None = None
        self._actions: list[Sequence[Any]] = []
        """The Steal War moves made again so far."""
        self._rounds: list[Round] = []

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
        if saved.get("kind") == "stjel":
            actions: Sequence[Sequence[Any]] = saved["actions"]
            done = len(self._actions)
            if start != self._start or actions[:done] != self._actions:
                self._restart(start, StealGame.new(Rules.from_dict(saved["rules"]), start[1]))
                done = 0
            game = self._game
            assert isinstance(game, StealGame)
            for action in actions[done:]:
                played = steal_move(game, action)
                self._actions.append(action)
                if played is not None:
                    self._rounds.append(played)
            return tuple(self._rounds)
        last = int(saved["round"])
        if saved["forfeits"]:
            self._start = None  # a forfeit changes the game's course: replayed whole
            return tuple(replay(saved))
        if start != self._start or last < len(self._rounds):
            self._restart(start, Game.new(Rules.from_dict(saved["rules"]), start[1]))
        game = self._game
        assert isinstance(game, Game)
        while game.outcome is None and game.round < last:
            self._rounds.append(game.play_round())
        return tuple(self._rounds)

    def _restart(self, start: tuple[Any, ...], game: Game | StealGame) -> None:
        self._start = start
        self._game = game
        self._actions = []
        self._rounds = []
