"""Team war through the stand-in: a seed for a team game."""

from __future__ import annotations

from krigbot.engine import Game, Rules


def team_seed(rules: Rules, winners: tuple[int, ...]) -> tuple[int, Game]:
    """Return the first seed whose game ``winners`` win, and that game played to its end."""
    for seed in range(500):
        game = Game.new(rules, seed)
        while game.outcome is None:
            game.play_round()
        if game.outcome.winners == winners:
            return seed, game
    raise AssertionError("no seed found")
