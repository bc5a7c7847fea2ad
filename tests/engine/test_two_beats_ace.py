"""rules §1 `two_beats_ace`: a 2 beats an ace and nothing else, in battles and war steps.

What every house rule owes (off in every preset, refused by Steal War, the same game on the fast
path) is in tests/engine/test_house_rules.py.
"""

from __future__ import annotations

import pytest

from krigbot.engine import Rules
from tests.support.deals import codes, deal, pile_codes

TWO_TAKES_ACE = Rules.preset("standard", two_beats_ace=True)


def test_a_two_takes_an_ace() -> None:
    game = deal(TWO_TAKES_ACE, "2C 5H", "AS 9D")
    played = game.play_round()
    assert (played.winner, played.taken, played.war_steps) == (0, 2, ())
    assert pile_codes(game, 0) == ["5H", "2C", "AS"]


def test_without_the_option_the_ace_takes_the_two() -> None:
    played = deal("standard", "2C 5H", "AS 9D").play_round()
    assert played.winner == 1


def test_a_two_beats_nothing_but_the_ace() -> None:
    assert deal(TWO_TAKES_ACE, "2C 5H", "KS 9D").play_round().winner == 1
    assert deal(TWO_TAKES_ACE, "2C 5H", "3S 9D").play_round().winner == 1


def test_one_two_against_several_aces_wins_alone() -> None:
    played = deal(TWO_TAKES_ACE.replace(players=3), "AC 5H", "2D 6S", "AS 9D").play_round()
    assert (played.winner, played.war_steps, played.taken) == (1, (), 3)


def test_two_twos_against_an_ace_start_a_war_between_the_twos() -> None:
    # rules §1: several 2s are tied, a war among them; the ace's owner is not in it.
    game = deal(TWO_TAKES_ACE.replace(players=3), "2C 4H KH", "2D 5S 3S", "AS 9D 7D")
    played = game.play_round()
    (step,) = played.war_steps
    assert step.fighters == (0, 1)
    assert codes(card for card in step.face_up if card is not None) == ["KH", "3S"]
    assert (played.winner, played.taken) == (0, 7)


def test_with_a_joker_highest_the_two_does_nothing() -> None:
    rules = Rules.preset("jokere", players=3, two_beats_ace=True)
    played = deal(rules, "2C 5H", "AS 6S", "X1 9D").play_round()
    assert played.winner == 2


def test_a_two_takes_an_ace_in_a_war_step_too() -> None:
    game = deal(TWO_TAKES_ACE, "8C 4H 2H", "8D 5S AS")
    played = game.play_round()
    (step,) = played.war_steps
    assert codes(step.compared) == ["2H", "AS"]
    assert (played.winner, played.taken) == (0, 6)


def test_face_down_rank_counts_a_two_as_two() -> None:
    # Two 2s tied against an ace: Război places 2 - 1 = 1 card down, then one up.
    rules = Rules.preset("razboi", players=3, two_beats_ace=True)
    game = deal(rules, "2C 4H KH 5C", "2D 5S 3S 6C", "AS 9D 7D 8C")
    (step,) = game.play_round().war_steps
    assert [len(cards) for cards in step.face_down] == [1, 1]
    assert codes(card for card in step.face_up if card is not None) == ["KH", "3S"]


@pytest.mark.parametrize(
    ("rules", "piles", "winner", "why"),
    [
        (TWO_TAKES_ACE, ("2C 5H", "AS 9D"), 0, "two_beats_ace"),
        (Rules.preset("standard"), ("2C 5H", "AS 9D"), 1, "highest"),
        # A joker is highest: the 2 does nothing.
        (TWO_TAKES_ACE.replace(jokers=2), ("2C 5H", "X1 9D"), 1, "highest"),
        # Two 2s tie and go to war; the war's face-up cards decide it, no upset.
        (TWO_TAKES_ACE.replace(players=3), ("2C 4H KH", "2D 5S 3S", "AS 9D 7D"), 0, "highest"),
        # A war whose face-up cards are a 2 and an ace: the upset decides the war.
        (TWO_TAKES_ACE, ("7C 4H 2H", "7D 5S AS"), 0, "two_beats_ace"),
        # The other fighter has no card for the war step: the 7's owner takes it by shortage.
        (Rules.preset("standard"), ("7C 4H 2H", "7D"), 0, "shortage"),
        (Rules.preset("lag"), ("9C", "5D", "9H", "4S"), 0, "teammates"),
    ],
)
def test_a_round_records_why_it_was_won(
    rules: Rules, piles: tuple[str, ...], winner: int, why: str
) -> None:
    played = deal(rules, *piles).play_round()
    assert (played.winner, played.won_by) == (winner, why)


def test_a_round_whose_table_is_set_aside_records_no_reason() -> None:
    played = deal("standard", "7C", "7D").play_round()
    assert (played.winner, played.won_by) == (None, None)
