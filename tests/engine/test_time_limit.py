"""The time limit (rules §7 ``time_limit``): the option, and ending a game by counting."""

from __future__ import annotations

import pytest

from krigbot.engine import ChoiceError, GameOverError, Rules, RulesError, load_game, parse_cards
from krigbot.engine.events import TopChoice
from krigbot.engine.game import Game
from krigbot.engine.replay import replay
from krigbot.engine.rules import MAX_TIME_LIMIT, MIN_TIME_LIMIT
from krigbot.engine.steal import StealGame
from tests.support.deals import deal


def test_time_limit_is_off_by_default_and_any_preset_takes_it() -> None:
    assert Rules.preset("standard").time_limit is None
    for name in ("standard", "klassisk", "poeng", "lag", "stjel"):
        assert Rules.preset(name, time_limit=30).time_limit == 30


@pytest.mark.parametrize("minutes", [0, -5, MAX_TIME_LIMIT + 1, True, 2.5, "10"])
def test_a_time_limit_outside_whole_minutes_from_one_to_a_day_is_refused(minutes: object) -> None:
    with pytest.raises(RulesError, match="time_limit must be a whole number of minutes"):
        Rules.preset("standard", time_limit=minutes)


def test_the_bounds_themselves_are_allowed() -> None:
    assert Rules.preset("standard", time_limit=MIN_TIME_LIMIT).time_limit == 1
    assert Rules.preset("standard", time_limit=MAX_TIME_LIMIT).time_limit == 24 * 60


def test_saved_rules_keep_the_time_limit_and_old_ones_load_without_it() -> None:
    rules = Rules.preset("klassisk", time_limit=45)
    assert Rules.from_dict(rules.to_dict()) == rules
    old = Rules.preset("klassisk").to_dict()
    del old["time_limit"]  # saved before the option existed
    assert Rules.from_dict(old).time_limit is None


def test_the_player_holding_the_most_cards_wins_when_the_cards_are_counted() -> None:
    game = deal(Rules.preset("standard", time_limit=5), "KS 2D 3H", "QC 4S 5H")
    game.play_round()  # the king takes the queen: 4 cards against 2
    outcome = game.end_by_counting()
    assert (outcome.reason, outcome.rounds, outcome.winners) == ("time_limit", 1, (0,))
    assert game.finished
    assert game.outcome == outcome


def test_equal_most_cards_is_a_draw_among_those_holding_them() -> None:
    tied = deal("standard", "KS 2D", "QC 4S")
    assert tied.end_by_counting().drawn == (0, 1)
    assert tied.outcome is not None
    assert tied.outcome.is_draw
    three = deal("standard", "KS 2D 7C", "AC 4S", "3C 5H 6D")
    three.play_round()  # the ace takes three cards: 2, 4 and 2 cards; seats 0 and 2 lose
    assert three.counts == (2, 4, 2)
    assert three.end_by_counting().winners == (1,)


def test_a_points_game_counts_points_first_then_cards() -> None:
    rules = Rules.preset("poeng", time_limit=10)
    game = deal(rules, "5S 2D 3C AH AD AC KH KD", "5H 6S TD")
    played = [game.play_round() for _ in range(3)]
    # Seat 1 won a war (3 points), seat 0 two plain rounds (2 points) and holds more cards.
    assert [r.winner for r in played] == [1, 0, 0]
    assert (game.points, game.counts) == ([2, 3], (7, 4))
    later = game.copy()
    assert game.end_by_counting().winners == (1,)
    later.play_round()  # 3 points each: now the cards decide
    assert (later.points, later.counts) == ([3, 3], (8, 3))
    assert later.end_by_counting().winners == (0,)
    assert deal(rules, "KS", "QC").end_by_counting().drawn == (0, 1)


def test_teams_count_as_teams_and_both_members_share_the_result() -> None:
    rules = Rules.preset("lag", time_limit=20)
    # Seats 0 and 2 hold 3 + 1 cards, seats 1 and 3 hold 1 + 2: team one has more.
    game = deal(rules, "KS 2D 3D", "4S", "5S", "6S 7S")
    assert game.end_by_counting().winners == (0, 2)
    even = deal(rules, "KS 2D", "4S", "5S", "6S 7S")
    assert even.end_by_counting().drawn == (0, 1, 2, 3)


def test_a_finished_game_cannot_be_counted_again() -> None:
    game = deal("standard", "KS", "QC")
    game.play_round()
    assert game.outcome is not None
    assert game.outcome.reason == "all_cards"
    with pytest.raises(GameOverError):
        game.end_by_counting()


def test_a_game_ended_by_counting_is_saved_and_replayed_with_its_rounds() -> None:
    game = Game.new(Rules.preset("standard", time_limit=15), seed=5)
    rounds = [game.play_round() for _ in range(7)]
    game.end_by_counting()
    saved = game.to_dict()
    restored = load_game(saved)
    assert restored.outcome == game.outcome
    assert restored.rules.time_limit == 15
    assert list(replay(saved)) == rounds


# ------------------------------------------------------------------------------ Steal War


def steal_deal(*piles: str) -> StealGame:
    rules = Rules.preset("stjel", players=len(piles), time_limit=5)
    return StealGame(rules, [parse_cards(pile.split()) for pile in piles], seed=0)


def test_steal_war_counts_loot_and_pile_and_drops_a_top_card_still_to_choose() -> None:
    game = steal_deal("KS 9H 3C", "9D 2C")
    game.play_round()  # the king wins; its owner may choose the top of their loot
    assert isinstance(game.pending()[0], TopChoice)
    outcome = game.end_by_counting()
    assert (outcome.reason, outcome.winners) == ("time_limit", (0,))
    assert game.pending() == ()
    assert game.counts == (4, 1)


def test_steal_war_is_not_counted_in_the_middle_of_a_battle() -> None:
    game = steal_deal("5S 9H KS 4H", "9D 2C 3C 5C")
    game.play_round()
    game.apply_defaults()  # the top card
    assert game.begin_battle() is None  # the 9 may steal: a choice is open
    with pytest.raises(ChoiceError, match="finish the battle"):
        game.end_by_counting()
    game.play(0)
    assert game.end_by_counting().reason == "time_limit"


def test_steal_war_counted_replays_the_same_rounds_and_records_the_count() -> None:
    game = StealGame.new(Rules.preset("stjel", time_limit=30), seed=11)
    rounds = [game.play_round() for _ in range(6)]
    game.end_by_counting()
    saved = game.to_dict()
    assert saved["actions"][-1] == ["count"]
    assert list(replay(saved)) == rounds
    assert load_game(saved).outcome == game.outcome
