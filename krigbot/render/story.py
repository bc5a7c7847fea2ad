"""A game's story: every seat's card count after each round, and where the wars were.

Rebuilt from the saved game with the engine's replay, so nothing per round is stored.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Any

from krigbot.engine import Round, Rules
from krigbot.engine.core import outcome_from_dict
from krigbot.engine.replay import replay


@dataclass(frozen=True, slots=True)
class Story:
    """Card counts per round (``counts[0]`` is the deal), the rounds that had a war, who won."""

    counts: list[tuple[int, ...]]
    wars: list[int]
    winners: tuple[int, ...] | None = None
    """The seats that won, () for a draw; None while the game goes on."""
    teams: bool = False
    """Whether the seats played in two teams (rules §9)."""

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
    """Return the story of a saved game, finished or not (a forfeit too: its outcome is saved)."""
    story = story_from(Rules.from_dict(saved["rules"]), replay(saved))
    if saved.get("outcome") is None:
        return story
    return replace(story, winners=outcome_from_dict(saved["outcome"]).winners)


def story_from(rules: Rules, rounds: Iterable[Round]) -> Story:
    """Return the story told by a game's rounds, from the first (a replay already made)."""
    in_play = rules.deck_size - rules.deck_size % rules.players
    counts: list[tuple[int, ...]] = [(in_play // rules.players,) * rules.players]
    wars: list[int] = []
    winners: tuple[int, ...] | None = None
    for played in rounds:
        counts.append(played.counts)
        if played.war_steps:
            wars.append(played.number)
        if played.outcome is not None:
            winners = played.outcome.winners
    return Story(counts, wars, winners, rules.teams)
