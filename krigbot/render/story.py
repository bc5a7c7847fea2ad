"""A game's story: every seat's card count after each round, and where the wars were.

Rebuilt from the saved game with the engine's replay, so nothing per round is stored.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from krigbot.engine import Round, Rules
from krigbot.engine.replay import replay


@dataclass(frozen=True, slots=True)
class Story:
    """Card counts per round (``counts[0]`` is the deal) and the rounds that had a war."""

    counts: list[tuple[int, ...]]
    wars: list[int]

    @property
    def lead_changes(self) -> int:
        """Return how often the seat with strictly the most cards changed hands."""
        changes = 0
        leader: int | None = None
        for counts in self.counts:
            best = max(counts)
            top = [seat for seat, n in enumerate(counts) if n == best]
            if len(top) == 1 and top[0] != leader:
                if leader is not None:
                    changes += 1
                leader = top[0]
        return changes


def story_of(saved: dict[str, Any]) -> Story:
    """Return the story of a saved game, finished or not."""
    return story_from(Rules.from_dict(saved["rules"]), replay(saved))


def story_from(rules: Rules, rounds: Iterable[Round]) -> Story:
    """Return the story told by a game's rounds, from the first (a replay already made)."""
    in_play = rules.deck_size - rules.deck_size % rules.players
    counts: list[tuple[int, ...]] = [(in_play // rules.players,) * rules.players]
    wars: list[int] = []
    for played in rounds:
        counts.append(played.counts)
        if played.war_steps:
            wars.append(played.number)
    return Story(counts, wars)
