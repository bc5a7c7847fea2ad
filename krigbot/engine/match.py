"""A game's place in a best-of match (rules §11: 002's "best av 3 eller 5"), as plain values.

Each match game carries its place in the match in ``extra["match"]``: the match id (its first
game's id), ``best_of``, the game's number and the score before it, so a table can show the
score without reading anything. A draw counts for nobody, so a match ends with a winner, the
first to win a majority of ``best_of``, unless its players stop playing: a game whose time limit
ran out before its first round ends the match undecided (:func:`unplayed`), as dealing again
would only run the time out again, game after game.

>>> match = MatchInfo(id=7, best_of=3, game=2, score=(1, 0))
>>> match.target, match.after(winners=(1,)), match.decided((2, 0))
(2, (1, 1), (0,))
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .events import Outcome

log = logging.getLogger(__name__)

BEST_OF = (3, 5)


@dataclass(frozen=True, slots=True)
class MatchInfo:
    """A game's place in its match: which match, how long, which game, the score before it."""

    id: int
    best_of: int
    game: int
    score: tuple[int, ...]
    """Games won per seat before this game."""

    @property
    def target(self) -> int:
        """Return how many games win the match (a majority of ``best_of``)."""
        return self.best_of // 2 + 1

    def after(self, winners: Sequence[int]) -> tuple[int, ...]:
        """Return the score once this game's winning seats (none for a draw) are counted."""
        return tuple(won + (seat in winners) for seat, won in enumerate(self.score))

    def decided(self, score: Sequence[int]) -> tuple[int, ...]:
        """Return the seats that have won the match with this score (teammates together)."""
        return tuple(seat for seat, won in enumerate(score) if won >= self.target)

    def goes_on(self, outcome: Outcome) -> bool:
        """Tell whether another game follows this one: nobody has won yet, and it was played."""
        return not self.decided(self.after(outcome.winners)) and not unplayed(outcome)

    def to_extra(self) -> dict[str, Any]:
        """Return the JSON kept in the game's ``extra["match"]``."""
        return {
            "id": self.id,
            "best_of": self.best_of,
            "game": self.game,
            "score": list(self.score),
        }

    @classmethod
    def of(cls, extra: Mapping[str, Any]) -> MatchInfo | None:
        """Return the match a game's ``extra`` says it belongs to, or None."""
        data = extra.get("match")
        if not isinstance(data, Mapping):
            return None
        try:
            return cls(
                int(data["id"]),
                int(data["best_of"]),
                int(data["game"]),
                tuple(int(won) for won in data["score"]),
            )
        except (KeyError, TypeError, ValueError):
            log.warning("ignoring a damaged match entry: %r", data)
            return None


def unplayed(outcome: Outcome) -> bool:
    """Tell whether a game ended with no round played: its time limit ran out untouched.

    >>> unplayed(Outcome("time_limit", rounds=0)), unplayed(Outcome("time_limit", rounds=1))
    (True, False)
    """
    return outcome.reason == "time_limit" and outcome.rounds == 0


def first_game(game_id: int, best_of: int, players: int) -> MatchInfo:
    """Return the match a challenge with ``best_of`` starts: its id is the first game's."""
    return MatchInfo(game_id, best_of, 1, (0,) * players)
