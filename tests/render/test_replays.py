"""Rebuilding a game's rounds from its saved state: replays and the summary of a game."""

from __future__ import annotations

import doctest

import krigbot.render.replays
from krigbot.engine import Game, Rules
from krigbot.render.replays import rebuild


def test_docstring_examples_hold() -> None:
    assert doctest.testmod(krigbot.render.replays).failed == 0


def test_a_rebuilt_game_has_the_rounds_played_forfeits_included() -> None:
    game = Game.new(Rules.preset("standard", players=3), seed=11)
    played = [game.play_round() for _ in range(12)]
    game.forfeit(2)
    played += [game.play_round() for _ in range(8)]

    rebuilt = rebuild(game.to_dict())

    assert rebuilt.rounds == tuple(played)
    assert rebuilt.story.counts[-1] == game.counts


def test_the_biggest_war_and_the_next_war_are_found() -> None:
    game = Game.new(Rules.preset("standard"), seed=17)
    while game.outcome is None:
        game.play_round()

    rebuilt = rebuild(game.to_dict())

    wars = [played for played in rebuilt.rounds if played.is_war]
    big = rebuilt.biggest_war
    assert big is not None
    assert big.cards == max(played.taken for played in wars)
    first = next(played for played in wars if played.taken == big.cards)
    assert (big.round, big.steps, big.winner) == (first.number, len(first.war_steps), first.winner)
    assert rebuilt.next_war(0) == wars[0].number
    assert rebuilt.next_war(wars[-1].number) is None
