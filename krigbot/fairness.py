"""The fairness check of a finished game: the command line that plays the same game again.

Anyone can run the command and get the bot's result; the renderers show it as they get it.

>>> from krigbot.engine import Game, Rules
>>> game = Game.new(Rules.preset("klassisk", time_limit=5), seed=42)
>>> fairness_command(game, 42)
'python -m krigbot.sim play --seed 42 --variant klassisk'
"""

from __future__ import annotations

from krigbot.engine import Rules, Variant
from krigbot.sim import play_command


def fairness_command(game: Variant, seed: int) -> str | None:
    """Return the command line that plays this game from its seed to the same result, or None.

    The command line cannot know of a forfeit or of Steal War's choices, so for those games
    there is none: only the seed and the rules are given.
    """
    checked = _without_clock(game)
    if not game.replays_from_seed or checked is None:
        return None
    return play_command(checked, seed)


def _without_clock(game: Variant) -> Rules | None:
    """Return rules the command line plays the same game by, which has no clock (rules §7).

    A time limit that ended the game after N rounds counted the cards as a round limit of N
    would; one that did not end it changed nothing. None if no round was played in time.
    """
    rules, outcome = game.rules, game.outcome
    if rules.time_limit is None:
        return rules
    rules = rules.replace(time_limit=None)
    if outcome is None or outcome.reason != "time_limit":
        return rules
    return rules.replace(max_rounds=outcome.rounds) if outcome.rounds >= 1 else None
