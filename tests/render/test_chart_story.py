"""The story a chart is drawn from knows who won, however the game ended."""

from __future__ import annotations

from krigbot.engine import Game, Rules
from krigbot.render.story import story_of


def test_a_finished_game_tells_its_winner() -> None:
    game = Game.new(Rules.preset("standard"), seed=17)
    while game.outcome is None:
        game.play_round()
    story = story_of(game.to_dict())
    assert game.outcome is not None
    assert story.winners == game.outcome.winners
    assert story.winners


def test_a_game_still_going_has_no_winner_yet() -> None:
    game = Game.new(Rules.preset("standard"), seed=17)
    for _ in range(5):
        game.play_round()
    assert story_of(game.to_dict()).winners is None


def test_a_forfeit_names_the_player_left() -> None:
    game = Game.new(Rules.preset("standard"), seed=17)
    for _ in range(5):
        game.play_round()
    game.forfeit(0)
    assert story_of(game.to_dict()).winners == (1,)
