"""Steal War (rules §10): private looks, steals of one or several piles, the top-card choice."""

from __future__ import annotations

import json

import pytest

from krigbot.engine import ChoiceError, Outcome, Rules, load_game, parse_card, parse_cards
from krigbot.engine.events import LookChoice, TopChoice
from krigbot.engine.steal import StealGame

STJEL = Rules.preset("stjel")


def steal_deal(*piles: str, seed: int = 0) -> StealGame:
    """Return a Steal War game from piles written as codes, top card first."""
    rules = STJEL.replace(players=len(piles))
    return StealGame(rules, [parse_cards(pile.split()) for pile in piles], seed=seed)


def c(code: str) -> int:
    return parse_card(code)


def test_the_winner_s_cards_go_face_up_on_their_loot_with_the_winning_card_on_top() -> None:
    game = steal_deal("5S 9H KS", "9D 2C 3C")
    played = game.play_round()
    assert played.winner == 1
    assert game.loot[1] == [c("5S"), c("9D")]
    assert game.loot_top(1) == c("9D")
    assert game.pending() == (TopChoice(1, (c("5S"), c("9D"))),)


def test_a_matching_card_may_steal_the_opponent_s_loot_pile() -> None:
    game = steal_deal("5S 9H KS 4H", "9D 2C 3C 5C")
    game.play_round()
    assert game.begin_battle() is None
    assert game.pending() == (LookChoice(0, c("9H"), (1,)),)
    played = game.steal(0, [1])
    # The thief's card went on the pile, and the whole pile, order unchanged, onto their loot
    # (under the cards the king then won, which lie on top with the king uppermost).
    assert game.loot[0] == [c("5S"), c("9D"), c("9H"), c("2C"), c("KS")]
    assert game.loot[1] == []
    # Then they looked at their next card (the king) and, with nothing to steal, played it.
    assert played is not None
    assert [st.seat for st in played.steals] == [0]
    assert played.steals[0].cards == 3
    assert dict(played.battle) == {0: c("KS"), 1: c("2C")}
    assert played.winner == 0


def test_a_player_may_play_instead_of_stealing() -> None:
    game = steal_deal("5S 9H KS", "9D 2C 3C")
    game.play_round()
    game.begin_battle()
    played = game.play(0)
    assert played is not None
    assert played.steals == ()
    assert dict(played.battle) == {0: c("9H"), 1: c("2C")}
    assert game.loot_top(0) == c("9H")  # won with the nine; B's old pile lies under it now


def test_one_card_steals_every_pile_it_matches() -> None:
    game = steal_deal("7H AS 2H", "3C 4C", "5D 6D")
    game.loot[1] = [c("3S"), c("7S")]
    game.loot[2] = [c("4S"), c("7C")]
    game.begin_battle()
    assert game.pending() == (LookChoice(0, c("7H"), (1, 2)),)
    played = game.steal(0, [1, 2])
    assert game.loot[1] == []
    assert game.loot[2] == []
    assert played is not None
    assert played.steals[0].from_seats == (1, 2)
    assert played.steals[0].cards == 5
    # Both piles, in seat order and order unchanged, then the seven; the ace won on top.
    assert game.loot[0][:5] == [c("3S"), c("7S"), c("4S"), c("7C"), c("7H")]
    assert played.winner == 0


def test_the_winner_chooses_which_won_card_lies_on_top() -> None:
    game = steal_deal("5S 9H KS", "9D 2C 3C")
    game.play_round()
    game.put_on_top(1, c("5S"))
    assert game.loot[1] == [c("9D"), c("5S")]
    # With the five on top, A's nine can no longer steal.
    game.begin_battle()
    assert not [ch for ch in game.pending() if isinstance(ch, LookChoice) and ch.seat == 0]


def test_top_choice_refuses_other_cards_and_other_seats() -> None:
    game = steal_deal("5S 9H KS", "9D 2C 3C")
    game.play_round()
    with pytest.raises(ChoiceError):
        game.put_on_top(1, c("KS"))
    with pytest.raises(ChoiceError):
        game.put_on_top(0, c("5S"))


def test_steal_refuses_piles_that_do_not_match_and_seats_with_no_choice() -> None:
    game = steal_deal("5S 9H KS", "9D 2C 3C")
    game.play_round()
    game.begin_battle()
    with pytest.raises(ChoiceError):
        game.steal(1, [0])
    with pytest.raises(ChoiceError):
        game.steal(0, [])
    with pytest.raises(ChoiceError):
        game.play(1)


def test_defaults_steal_whenever_possible_then_play() -> None:
    game = steal_deal("5S 9H KS", "9D 2C 3C")
    game.play_round()
    played = game.play_round()  # defaults only, as autoplay and time-outs use
    assert [st.seat for st in played.steals] == [0]
    assert played.winner == 0


def test_a_war_is_three_down_and_the_face_up_card_may_steal_first() -> None:
    game = steal_deal("8S 2S 3S 4S JH QS", "8H 5D 6D 7D 9C 2D")
    game.loot[1] = [c("TC"), c("JD")]
    game.begin_battle()
    # The eights tie: three down each, then A looks at the jack, which matches B's loot.
    choices = game.pending()
    assert choices == (LookChoice(0, c("JH"), (1,)),)
    played = game.steal(0, [1])
    assert played is not None
    step = played.war_steps[0]
    assert step.face_down == ((c("2S"), c("3S"), c("4S")), (c("5D"), c("6D"), c("7D")))
    assert dict(zip(step.fighters, step.face_up, strict=True)) == {0: c("QS"), 1: c("9C")}
    assert played.winner == 0
    assert played.taken == 10


def test_running_out_in_a_war_loses() -> None:
    game = steal_deal("8S 2S", "8H 5D 6D 7D 9C 2D")
    played = game.play_round()
    assert game.outcome is not None
    assert game.outcome.reason == "war_shortage"
    assert game.outcome.winners == (1,)
    assert played.war_steps[0].knocked_out == (0,)


def test_an_empty_pile_is_refilled_from_the_shuffled_loot() -> None:
    game = steal_deal("KS", "2C 3C", seed=11)
    game.play_round()  # A wins: A's playing pile is empty, the loot becomes the pile at once
    assert len(game.piles[0]) == 2
    assert game.loot[0] == []
    assert sorted(game.piles[0]) == sorted([c("KS"), c("2C")])


def test_cards_are_conserved_and_the_game_ends() -> None:
    for seed in range(30):
        game = StealGame.new(STJEL.replace(players=2 + seed % 3), seed)
        total = STJEL.deck_size
        rounds = 0
        while game.outcome is None and rounds < 3000:
            game.play_round()
            rounds += 1
            assert sum(game.counts) + game.set_aside == total
        assert game.outcome is not None


def test_save_and_restore_keeps_a_pending_choice_and_the_future() -> None:
    game = steal_deal("5S 9H KS 4S 6S", "9D 2C 3C TD JD", seed=5)
    game.play_round()
    game.begin_battle()
    saved = json.loads(json.dumps(game.to_dict()))
    restored = load_game(saved)
    assert isinstance(restored, StealGame)
    assert restored.pending() == game.pending()
    first = game.steal(0, [1])
    second = restored.steal(0, [1])
    assert first == second
    while game.outcome is None:
        assert game.play_round() == restored.play_round()
    assert restored.outcome == game.outcome


def test_last_player_out_who_was_not_short_ends_with_all_cards() -> None:
    # rules §7: A is short and knocked out; B completes the war, loses it and has nothing
    # left. The last player put out was not short, so C wins with every card.
    game = steal_deal("8S", "8H 2H 3H 4H 5H", "8D 2D 3D 4D KD")
    played = game.play_round()
    assert played.war_steps[0].knocked_out == (0,)
    assert played.eliminated == (0, 1)
    assert game.outcome is not None
    assert (game.outcome.reason, game.outcome.winners) == ("all_cards", (2,))


def test_last_fighters_out_together_share_the_draw_and_the_beaten_player_loses() -> None:
    game = steal_deal("8S 2S", "8H 2H", "5C")
    played = game.play_round()
    assert played.war_steps[0].knocked_out == (0, 1)
    assert game.outcome is not None
    assert (game.outcome.reason, game.outcome.drawn) == ("war_shortage", (0, 1))


def test_a_game_saved_with_options_steal_war_never_played_by_loads_and_plays_on() -> None:
    # Before rules §10 fixed them, a challenge could set a shortage or a pickup that Steal
    # War showed but ignored (and three players got a shuffled pickup): such games still load.
    game = StealGame.new(Rules.preset("stjel", players=3), seed=8)
    for _ in range(5):
        game.play_round()
    saved = json.loads(json.dumps(game.to_dict()))
    del saved["rules"]["wide_war"]
    saved["rules"].update(shortage="last_card", pickup="shuffled", war_players="all")
    restored = load_game(saved)
    assert isinstance(restored, StealGame)
    assert restored.rules == game.rules
    while game.outcome is None:
        assert restored.play_round() == game.play_round()
    assert restored.outcome == game.outcome


def test_target_comes_before_the_round_limit_in_the_same_battle() -> None:
    # rules §7: battle 1 reaches the round limit and A's first trick; A wins by the trick.
    rules = Rules.preset("stjel", max_rounds=1, target_tricks=1)
    game = StealGame(rules, [parse_cards(["AS"]), parse_cards(["2H", "3H", "4H"])], seed=0)
    game.play_round()
    assert game.counts == (2, 2)
    assert game.outcome is not None
    assert (game.outcome.reason, game.outcome.winners) == ("target", (0,))


def test_steal_war_reaching_its_target_on_the_last_round_of_the_limit_is_won_by_the_rounds() -> (
    None
):
    rules = Rules.preset("stjel", max_rounds=3, target_tricks=2)
    piles = [
        parse_cards(["KS", "2D", "KH"]),
        parse_cards(["QS", "AD", "QH", "3C", "4C", "5C", "6C"]),
    ]
    game = StealGame(rules, piles, seed=0)
    played = [game.play_round() for _ in range(3)]
    assert [r.steals for r in played] == [(), (), ()]
    assert [r.winner for r in played] == [0, 1, 0]
    assert game.counts == (4, 6)
    assert game.outcome == Outcome("target", 3, winners=(0,))


def test_a_steal_war_battle_records_why_it_was_won() -> None:
    game = StealGame(STJEL, [parse_cards(["KS", "4D"]), parse_cards(["QS", "5D"])], seed=0)
    assert game.play_round().won_by == "highest"
    short = StealGame(STJEL, [parse_cards(["KS", "4D"]), parse_cards(["KH"])], seed=0)
    assert (short.play_round().won_by, short.outcome is not None) == ("shortage", True)
