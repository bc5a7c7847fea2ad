"""A game's rounds rebuilt from its saved state, for replays and for the summary of a game.

Nothing per round is stored: the engine replays a game from its seed, its rules and its
forfeits (or Steal War's move log), so the rounds shown are the rounds that were played.

>>> from krigbot.engine import Game, Rules, run_to_end
>>> game = Game.new(Rules.preset("standard"), seed=3)
>>> outcome = run_to_end(game)
>>> rebuilt = rebuild(game.to_dict())
>>> len(rebuilt.rounds) == outcome.rounds, rebuilt.story.counts[-1] == game.counts
(True, True)
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any

from krigbot.engine import Round, Rules
from krigbot.engine.replay import Replaying, replay
from krigbot.render.story import Story, story_from


@dataclass(frozen=True, slots=True)
class BiggestWar:
    """The war that moved the most cards: its round, its war steps, the cards and who took them."""

    round: int
    steps: int
    cards: int
    winner: int | None


@dataclass(frozen=True)
class GameRounds:
    """Every round of a game, in order, and the story they tell (counts and wars)."""

    rounds: tuple[Round, ...]
    story: Story

    @cached_property
    def biggest_war(self) -> BiggestWar | None:
        """Return the war that moved the most cards (the first of equals), if there was one."""
        wars = [played for played in self.rounds if played.is_war]
        if not wars:
            return None
        big = max(wars, key=lambda played: (played.taken + played.set_aside, -played.number))
        return BiggestWar(big.number, len(big.war_steps), big.taken + big.set_aside, big.winner)

    def next_war(self, after: int) -> int | None:
        """Return the first round with a war after round ``after``, or None."""
        return next((number for number in self.story.wars if number > after), None)


def rebuild(saved: dict[str, Any], replaying: Replaying | None = None) -> GameRounds:
    """Replay a saved game (finished or not) from its seed and return its rounds.

    With ``replaying`` (which was handed the game's earlier saves), only the rounds since the
    last save it was handed are played."""
    rounds = tuple(replay(saved)) if replaying is None else replaying.rounds(saved)
    return GameRounds(rounds, story_from(Rules.from_dict(saved["rules"]), rounds))
