"""Best-of matches: the score after a game, who has won, and what a game's extra says."""

from __future__ import annotations

import doctest

import krigbot.sessions.matches
from krigbot.sessions.matches import MatchInfo, first_game


def test_docstring_examples_hold() -> None:
    assert doctest.testmod(krigbot.sessions.matches).failed == 0


def test_a_draw_counts_for_nobody_and_the_match_goes_on() -> None:
    match = MatchInfo(id=4, best_of=3, game=3, score=(1, 1))

    score = match.after(())

    assert score == (1, 1)
    assert match.decided(score) == ()


def test_best_of_five_is_won_with_three_games() -> None:
    match = first_game(9, 5, 2)

    assert match.target == 3
    assert match.decided((2, 2)) == ()
    assert match.decided((3, 1)) == (0,)


def test_teammates_win_the_match_together() -> None:
    match = MatchInfo(id=1, best_of=3, game=2, score=(1, 0, 1, 0))

    assert match.decided(match.after((0, 2))) == (0, 2)


def test_a_game_extra_round_trips_and_damage_means_no_match() -> None:
    match = MatchInfo(id=2, best_of=5, game=4, score=(2, 1))

    assert MatchInfo.of({"match": match.to_extra()}) == match
    assert MatchInfo.of({}) is None
    assert MatchInfo.of({"match": {"id": 2, "best_of": 5}}) is None
    assert MatchInfo.of({"match": "best of 3"}) is None
