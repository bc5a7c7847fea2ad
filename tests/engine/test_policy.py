"""Krigbot's Steal War policy: legal, deterministic, blind to hidden cards, and stronger."""

from __future__ import annotations

import random
from collections.abc import Iterator

import pytest

from krigbot.engine import Game, Rules, StealGame
from krigbot.engine.cards import card_value, parse_card, parse_cards
from krigbot.engine.events import LookChoice, TopChoice
from krigbot.engine.policy import Move, choose, make, play_against_default, unseen

TWO = Rules.preset("stjel")


def positions(rules: Rules, seeds: range, seat: int) -> Iterator[tuple[StealGame, Move]]:
    """Yield every position of whole games in which Krigbot (``seat``) has a choice to make."""
    for seed in seeds:
        game = StealGame.new(rules, seed)
        while game.outcome is None:
            move = choose(game, seat)
            if move is not None:
                yield game, move
                make(game, move)
            elif not game.pending():
                game.begin_battle()
            elif isinstance(first := game.pending()[0], LookChoice):
                game.steal(first.seat, first.can_steal)
            else:
                game.apply_defaults()


@pytest.mark.parametrize("players", [2, 3, 4])
def test_every_move_is_one_the_game_offers_that_seat(players: int) -> None:
    rules = Rules.preset("stjel", players=players)
    kinds = set()
    for game, move in positions(rules, range(40), seat=players - 1):
        (choice,) = [c for c in game.pending() if c.seat == move.seat]
        if isinstance(choice, TopChoice):
            assert move.kind == "top"
            assert move.card in choice.cards
        else:
            assert move.kind == "steal"
            assert move.card == choice.card
            assert move.targets == choice.can_steal  # every matching pile
        kinds.add(move.kind)
    assert kinds == {"top", "steal"}


def test_the_same_position_gives_the_same_move() -> None:
    for game, move in positions(TWO, range(10), seat=1):
        assert choose(game.copy(), 1) == move
        assert choose(StealGame.from_dict(game.to_dict()), 1) == move


def test_the_move_does_not_depend_on_cards_nobody_has_seen() -> None:
    checked = 0
    shuffler = random.Random(5)
    for game, move in positions(TWO, range(20), seat=0):
        if move.kind != "top":
            continue
        # Deal the face-down playing piles anew, each keeping its size: what Krigbot cannot
        # see changes, what it can (loot piles, pile sizes) does not.
        hidden = [card for pile in game.piles for card in pile]
        shuffler.shuffle(hidden)
        other = game.copy()
        for pile in other.piles:
            size = len(pile)
            pile.clear()
            pile.extend(hidden[:size])
            del hidden[:size]
        assert choose(other, 0) == move
        checked += 1
    assert checked > 50


def test_the_top_card_is_the_won_rank_with_the_fewest_unseen_copies() -> None:
    game = StealGame.from_piles(TWO, [parse_cards(["KS", "2H"]), parse_cards(["QD", "2C"])])
    game.loot[1] = parse_cards(["QH", "QC", "3D"])
    game.begin_battle()  # the king takes the queen

    move = choose(game, 0)

    assert unseen(game)[card_value(parse_card("QD"))] == 1
    assert unseen(game)[card_value(parse_card("KS"))] == 3
    assert move == Move(0, "top", parse_card("QD"))
    make(game, move)
    assert game.loot_top(0) == parse_card("QD")
    assert game.pending() == ()


def test_a_tie_keeps_the_default_winning_card_on_top() -> None:
    game = StealGame.from_piles(TWO, [parse_cards(["KS", "2H"]), parse_cards(["QD", "2C"])])
    game.loot[1] = parse_cards(["QH", "KH", "3D"])  # one king and one queen seen: a tie
    game.begin_battle()

    assert choose(game, 0) == Move(0, "top", parse_card("KS"))


def test_a_seat_without_a_choice_and_a_game_without_choices_get_no_move() -> None:
    game = StealGame.from_piles(TWO, [parse_cards(["KS", "2H"]), parse_cards(["QD", "2C"])])
    game.begin_battle()

    assert choose(game, 1) is None  # the top card is seat 0's to choose
    assert choose(Game.new(Rules.preset("standard"), 7), 0) is None


def wins(seat_games: range, *, krigbot: bool) -> int:
    """Return the games Krigbot's seat wins, each deal played once from either seat."""
    return sum(
        seat in play_against_default(TWO, seed, seat, krigbot=krigbot).winners
        for seed in seat_games
        for seat in (0, 1)
    )


def test_the_policy_wins_more_than_its_share_of_fixed_deals_and_the_default_exactly_half() -> None:
    deals = range(300)

    assert wins(deals, krigbot=True) > 0.6 * 600
    assert wins(deals, krigbot=False) == 300  # either seat of one deal: the seat alone is fair
