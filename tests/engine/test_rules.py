"""Every option and preset of docs/rules.md, each shown on a small hand-built deal."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from krigbot.engine import (
    PRESETS,
    CardError,
    DealError,
    FixedOptionError,
    Game,
    GameOverError,
    Outcome,
    PlayerError,
    Rules,
    RulesError,
    StateError,
    StealGame,
    full_deck,
    parse_card,
    parse_option,
    run_to_end,
)
from krigbot.engine.game import shuffle
from tests.support.deals import codes, deal, pile, pile_codes, play, play_out, watch


def battle_codes(game_round: Any) -> list[str]:
    return codes(card for _, card in game_round.battle)


def up_codes(step: Any) -> list[str | None]:
    return [None if card is None else codes([card])[0] for card in step.face_up]


def three(**options: Any) -> Rules:
    return Rules.preset("standard", players=3, **options)


def four(**options: Any) -> Rules:
    return Rules.preset("standard", players=4, **options)


# ------------------------------------------------------------------------ §1 cards


def test_ace_beats_king_and_suits_never_matter() -> None:
    game = deal("standard", "KS AC 5C", "AH KD 5H")
    first = game.play_round()
    assert first.winner == 1
    second = game.play_round()
    assert second.winner == 0
    third = game.play_round()  # 5♣ against 5♥: a war, whatever the suits
    assert third.is_war


def test_joker_beats_an_ace() -> None:
    game = deal("jokere", "X1 2S", "AS 3H")
    played = game.play_round()
    assert played.winner == 0
    assert not played.is_war


def test_two_jokers_tie_and_start_a_war() -> None:
    game = deal("jokere", "X1 2S KS 4S", "X2 2H QH 4H")
    played = game.play_round()
    assert battle_codes(played) == ["X1", "X2"]
    assert played.is_war
    assert played.winner == 0
    assert played.taken == 6


def test_jokere_deals_54_cards() -> None:
    game = Game.new(Rules.preset("jokere"), seed=3)
    assert game.counts == (27, 27)
    dealt = sorted(card for p in game.piles for card in p)
    assert parse_card("X1") in dealt
    assert parse_card("X2") in dealt
    assert len(dealt) == 54


def test_dobbel_deals_104_cards_two_of_each() -> None:
    game = Game.new(Rules.preset("dobbel"), seed=3)
    assert game.counts == (52, 52)
    dealt = [card for p in game.piles for card in p]
    assert all(dealt.count(card) == 2 for card in set(dealt))
    assert len(set(dealt)) == 52


def test_two_copies_of_one_card_tie_with_two_decks() -> None:
    game = deal("dobbel", "AS 2S KS 5S", "AS 2H QH 5H")
    played = game.play_round()
    assert played.is_war
    assert played.winner == 0


# ------------------------------------------------------------------------ §2 the deal


@pytest.mark.parametrize(("players", "each", "aside"), [(2, 26, 0), (3, 17, 1), (4, 13, 0)])
def test_deal_gives_equal_piles_and_sets_the_rest_aside(
    players: int, each: int, aside: int
) -> None:
    game = Game.new(Rules.preset("standard", players=players), seed=11)
    assert game.counts == (each,) * players
    assert game.set_aside == aside
    dealt = [card for p in game.piles for card in p]
    assert len(set(dealt)) == each * players


def test_deal_is_one_card_at_a_time_round_robin_from_seat_zero() -> None:
    # The shuffle does not depend on the number of players, so dealing the same deck to two
    # and to four seats shows the round-robin: seats 0 and 2 of four share seat 0's cards of
    # two, alternately, starting with seat 0.
    two = Game.new(Rules.preset("standard", players=2), seed=5)
    four_seats = Game.new(Rules.preset("standard", players=4), seed=5)
    assert list(four_seats.piles[0]) == list(two.piles[0])[0::2]
    assert list(four_seats.piles[2]) == list(two.piles[0])[1::2]
    assert list(four_seats.piles[1]) == list(two.piles[1])[0::2]
    assert list(four_seats.piles[3]) == list(two.piles[1])[1::2]


@pytest.mark.parametrize("players", [2, 3, 4])
def test_deal_follows_the_seeded_shuffle_first_card_to_seat_zero(players: int) -> None:
    deck = full_deck()
    shuffle(random.Random(77), deck)
    game = Game.new(Rules.preset("standard", players=players), seed=77)
    each = 52 // players
    for seat in range(players):
        # the first card a seat receives is the top of its pile
        assert list(game.piles[seat]) == deck[seat : each * players : players]


def test_three_player_deal_sets_the_last_card_aside() -> None:
    two = Game.new(Rules.preset("standard", players=2), seed=5)
    three_seats = Game.new(Rules.preset("standard", players=3), seed=5)
    last_card = two.piles[1][-1]  # the 52nd card dealt
    assert all(last_card not in p for p in three_seats.piles)
    assert list(three_seats.piles[0])[:3] == [two.piles[0][0], two.piles[1][1], two.piles[0][3]]


def test_the_shuffle_is_the_textbook_fisher_yates_so_old_seeds_replay_the_same() -> None:
    # Saved games and replays rebuild deals and pickups from seeds: the shuffle may get faster,
    # never different.
    def textbook(rng: random.Random, cards: list[int]) -> None:
        for i in range(len(cards) - 1, 0, -1):
            j = int(rng.random() * (i + 1))
            cards[i], cards[j] = cards[j], cards[i]

    for length in (2, 3, 10, 52, 54, 104, 108):
        for seed in range(20):
            ours, theirs = list(range(length)), list(range(length))
            shuffle(random.Random(seed), ours)
            textbook(random.Random(seed), theirs)
            assert ours == theirs, (length, seed)
    assert codes(Game.new(Rules.preset("standard"), 1).piles[0])[:6] == [
        "KC", "8C", "5C", "6C", "AS", "4H",
    ]  # fmt: skip


def test_same_seed_gives_same_deal_and_another_seed_another() -> None:
    rules = Rules.preset("standard")
    assert Game.new(rules, 42).piles == Game.new(rules, 42).piles
    assert Game.new(rules, 42).piles != Game.new(rules, 43).piles


# ------------------------------------------------------------------------ §3 a round


def test_round_with_three_players_highest_takes_every_card() -> None:
    game = deal(three(pickup="winner_first"), "5S 2S", "9H 3H", "7D 4D")
    played = game.play_round()
    assert played.winner == 1
    assert played.taken == 3
    assert played.counts == (1, 4, 1)
    assert pile_codes(game, 1) == ["3H", "9H", "5S", "7D"]


def test_war_counts_as_one_round() -> None:
    game = deal("standard", "8S 2S 8C 3S KS 4S", "8H 2H 8D 3H QH 4H")
    played = game.play_round()
    assert played.number == 1
    assert len(played.war_steps) == 2
    assert game.round == 1
    assert game.play_round().number == 2


# ------------------------------------------------------------------------ §4 face down


@pytest.mark.parametrize("face_down", [1, 3, 5])
def test_war_places_face_down_cards_then_one_face_up(face_down: int) -> None:
    low = ["2", "3", "4", "5", "6"][:face_down]
    seat0 = ["8S", *(rank + "S" for rank in low), "KS", "AS"]
    seat1 = ["8H", *(rank + "H" for rank in low), "QH", "AH"]
    game = deal(Rules.preset("standard", face_down=face_down), " ".join(seat0), " ".join(seat1))
    played = game.play_round()
    (step,) = played.war_steps
    assert [codes(down) for down in step.face_down] == [seat0[1:-2], seat1[1:-2]]
    assert up_codes(step) == ["KS", "QH"]
    assert played.winner == 0
    assert played.taken == 2 * (face_down + 2)


@pytest.mark.parametrize(
    ("preset", "face_down"), [("standard", 1), ("klassisk", 3), ("fem", 5), ("razboi", "rank")]
)
def test_presets_set_face_down(preset: str, face_down: int | str) -> None:
    assert Rules.preset(preset).face_down == face_down


def test_face_down_cards_are_never_compared() -> None:
    game = deal("standard", "8S AS 2S 4S", "8H 2H 3H 4H")
    played = game.play_round()
    assert played.winner == 1  # the ace was face down; 2 against 3 decides


def razboi_deal(rank: str, jokers: bool = False) -> tuple[Game, int]:
    """Both turn ``rank`` (or a joker each); seat 0 wins the war with its first face-up card."""
    down = {"2": 1, "8": 7, "T": 9, "J": 9, "Q": 9, "K": 9, "A": 10, "X": 10}[rank]
    fillers = [r for r in "23456789TJQKA" if r != rank][:down]
    battle = ["X1", "X2"] if rank == "X" else [rank + "S", rank + "H"]
    seat0 = [battle[0], *(r + "S" for r in fillers), "AD" if rank != "A" else "KD", "3D"]
    seat1 = [battle[1], *(r + "H" for r in fillers), "2C", "3C"]
    rules = Rules.preset("razboi", jokers=2 if jokers else 0)
    return deal(rules, " ".join(seat0), " ".join(seat1)), down


@pytest.mark.parametrize(
    "rank",
    [
        pytest.param("2", id="twos-1-down"),
        pytest.param("8", id="eights-7-down"),
        pytest.param("T", id="tens-9-down"),
        pytest.param("J", id="jacks-9-down"),
        pytest.param("Q", id="queens-9-down"),
        pytest.param("K", id="kings-9-down"),
        pytest.param("A", id="aces-10-down"),
        pytest.param("X", id="jokers-10-down"),
    ],
)
def test_razboi_face_down_count_is_the_tied_rank_less_one(rank: str) -> None:
    game, down = razboi_deal(rank, jokers=rank == "X")
    played = game.play_round()
    (step,) = played.war_steps
    assert [len(cards) for cards in step.face_down] == [down, down]
    assert step.face_up[0] is not None
    assert codes([step.face_up[0]])[0] in ("AD", "KD")
    assert played.winner == 0
    assert played.taken == 2 * (down + 2)


def test_razboi_repeated_war_uses_the_latest_tied_rank() -> None:
    # Threes tie (2 down), then the face-up fives tie (4 down), then K against Q.
    seat0 = "3S 2S 4S 5S 6S 7S 8S 9S KS AS"
    seat1 = "3H 2H 4H 5H 6H 7H 8H 9H QH AH"
    game = deal("razboi", seat0, seat1)
    played = game.play_round()
    first, second = played.war_steps
    assert [codes(down) for down in first.face_down] == [["2S", "4S"], ["2H", "4H"]]
    assert up_codes(first) == ["5S", "5H"]
    assert [len(down) for down in second.face_down] == [4, 4]
    assert up_codes(second) == ["KS", "QH"]
    assert played.winner == 0


def test_razboi_repeated_war_can_need_fewer_cards_than_the_first() -> None:
    # Kings tie (9 down), then the face-up twos tie (1 down), then A against 3.
    fill = ["3", "4", "5", "6", "7", "8", "9", "T", "J"]
    seat0 = " ".join(["KS", *(r + "S" for r in fill), "2S", "QS", "AS", "4D"])
    seat1 = " ".join(["KH", *(r + "H" for r in fill), "2H", "QH", "3C", "4C"])
    game = deal("razboi", seat0, seat1)
    played = game.play_round()
    first, second = played.war_steps
    assert [len(down) for down in first.face_down] == [9, 9]
    assert [len(down) for down in second.face_down] == [1, 1]
    assert up_codes(second) == ["AS", "3C"]
    assert played.winner == 0
    assert played.counts == (1 + 2 + 2 * 10 + 2 * 2, 1)


def test_razboi_kings_with_too_few_cards_is_a_shortage() -> None:
    game = deal("razboi", "KS 2S 3S 4S 5S 6S", "KH 2H 3H 4H 5H 6H 7H 8H 9H TH JH")
    played = game.play_round()
    assert played.war_steps[0].short == (0,)
    assert played.winner == 1
    assert game.outcome is not None
    assert game.outcome.reason == "war_shortage"


# ------------------------------------------------------------------------ §5 shortage lose

FD3_LOSE = Rules.preset("standard", face_down=3)


def test_war_with_too_few_cards_loses_under_shortage_lose() -> None:
    game = deal(FD3_LOSE, "8S 2S 3S", "8H 2H 3H 4H 5H")
    played = game.play_round()
    (step,) = played.war_steps
    assert step.short == (0,)
    assert step.knocked_out == (0,)
    assert codes(step.face_down[0]) == ["2S", "3S"]
    assert played.winner == 1
    assert played.eliminated == (0,)
    assert game.outcome is not None
    assert (game.outcome.reason, game.outcome.winners) == ("war_shortage", (1,))
    assert game.counts == (0, 8)


def test_war_with_no_card_left_loses_under_shortage_lose() -> None:
    game = deal("standard", "8S", "8H 2H 3H")
    played = game.play_round()
    assert played.war_steps[0].short == (0,)
    assert played.winner == 1
    assert game.outcome is not None
    assert game.outcome.winners == (1,)


@pytest.mark.parametrize("preset", ["standard", "klassisk"])
def test_exactly_enough_cards_for_the_war_is_not_short(preset: str) -> None:
    rules = Rules.preset(preset, face_down=3)
    game = deal(rules, "8S 2S 3S 4S KS", "8H 2H 3H 4H QH 5H")
    played = game.play_round()
    (step,) = played.war_steps
    assert step.short == ()
    assert played.winner == 0
    assert played.counts == (10, 1)
    assert game.outcome is None


def test_both_short_the_one_holding_fewer_loses() -> None:
    game = deal(FD3_LOSE, "8S 2S 3S 4S", "8H 2H 3H")
    played = game.play_round()
    (step,) = played.war_steps
    assert step.short == (0, 1)
    assert step.knocked_out == (1,)
    assert played.winner == 0
    assert game.outcome is not None
    assert (game.outcome.reason, game.outcome.winners) == ("war_shortage", (0,))
    assert game.counts == (7, 0)


def test_both_short_with_equal_holdings_is_a_draw() -> None:
    game = deal(FD3_LOSE, "8S 2S 3S", "8H 2H 3H")
    played = game.play_round()
    assert played.war_steps[0].knocked_out == (0, 1)
    assert played.winner is None
    assert played.set_aside == 6  # the table is set aside
    assert game.outcome is not None
    assert game.outcome.reason == "war_shortage"
    assert game.outcome.is_draw
    assert game.outcome.drawn == (0, 1)


def test_shortage_in_a_repeated_war_step_loses() -> None:
    game = deal("standard", "8S 2S 9S", "8H 2H 9H 3H 4H")
    played = game.play_round()
    assert len(played.war_steps) == 2
    assert played.war_steps[1].short == (0,)
    assert played.winner == 1
    assert played.taken == 6
    assert game.outcome is not None
    assert game.outcome.winners == (1,)


# ------------------------------------------------------------------------ §5 last_card


def test_short_fighter_turns_the_last_card_up_under_last_card() -> None:
    game = deal("klassisk", "8S 2S KS", "8H 2H 3H 4H QH 5H")
    played = game.play_round()
    (step,) = played.war_steps
    assert step.short == (0,)
    assert [codes(down) for down in step.face_down] == [["2S"], ["2H", "3H", "4H"]]
    assert up_codes(step) == ["KS", "QH"]
    assert played.winner == 0  # the last card won: still in the game
    assert game.outcome is None
    assert played.counts == (8, 1)


def test_fighter_with_no_cards_keeps_the_standing_card_and_can_win() -> None:
    game = deal("klassisk", "8S", "8H 2H 3H 4H 7H 5H")
    played = game.play_round()
    (step,) = played.war_steps
    assert step.face_down[0] == ()
    assert step.face_up == (None, parse_card("7H"))
    assert codes(step.compared) == ["8S", "7H"]
    assert played.winner == 0
    assert played.counts == (6, 1)
    assert game.outcome is None


def test_losing_the_last_card_loses_the_game() -> None:
    game = deal("klassisk", "8S", "8H 2H 3H 4H 9H 5H")
    played = game.play_round()
    assert codes(played.war_steps[0].compared) == ["8S", "9H"]
    assert played.winner == 1
    assert played.eliminated == (0,)
    assert game.outcome is not None
    assert (game.outcome.reason, game.outcome.winners) == ("war_shortage", (1,))


def test_turned_up_last_card_that_loses_loses_the_game() -> None:
    game = deal("klassisk", "8S 2S 3S", "8H 2H 3H 4H 9H 5H")
    played = game.play_round()
    assert up_codes(played.war_steps[0]) == ["3S", "9H"]
    assert game.outcome is not None
    assert game.outcome.winners == (1,)


def test_all_fighters_out_of_cards_with_tied_standing_cards_is_a_draw() -> None:
    # Seat 0 keeps its 8; seat 1 turns its last card, another 8; then nobody has a card.
    game = deal("klassisk", "8S", "8H 8D")
    played = game.play_round()
    assert len(played.war_steps) == 2
    assert codes(played.war_steps[0].compared) == ["8S", "8D"]
    assert played.war_steps[1].face_up == (None, None)
    assert played.winner is None
    assert game.outcome is not None
    assert game.outcome.reason == "war_shortage"
    assert game.outcome.drawn == (0, 1)
    assert game.outcome.winners == ()


def test_short_fighter_who_wins_every_card_ends_the_game_with_all_cards() -> None:
    # Seat 0 is short and turns its last card, a king; seat 1 could complete the war, loses,
    # and has nothing left: seat 0 holds every card. Nobody lost for lack of cards (§5).
    game = deal("klassisk", "8S 2S KS", "8H 2H 3H 4H QH")
    played = game.play_round()
    assert played.war_steps[0].short == (0,)
    assert played.winner == 0
    assert played.counts == (8, 0)
    assert game.outcome is not None
    assert (game.outcome.reason, game.outcome.winners) == ("all_cards", (0,))


KLASSISK3 = Rules.preset("klassisk", players=3, pickup="winner_first")


def test_last_card_three_players_fighters_out_with_tied_cards_the_last_holding_cards_wins() -> None:
    # rules §5: seats 0 and 1 tie with their last cards: they are out together, the table is set
    # aside, and seat 2, the one player left, wins (as under `lose`).
    game = deal(KLASSISK3, "8S", "8H", "5C 6C")
    played = game.play_round()
    (step,) = played.war_steps
    assert step.knocked_out == (0, 1)
    assert played.winner is None
    assert played.set_aside == 3
    assert played.eliminated == (0, 1)
    assert game.counts == (0, 0, 1)
    assert game.outcome is not None
    assert (game.outcome.reason, game.outcome.winners) == ("war_shortage", (2,))


def test_last_card_four_players_fighters_out_together_and_the_others_play_on() -> None:
    game = deal(Rules.preset("klassisk", players=4), "8S", "8H", "5C 6C", "4D 7D")
    played = game.play_round()
    assert played.war_steps[0].knocked_out == (0, 1)
    assert played.set_aside == 4
    assert game.outcome is None
    assert game.in_game == [False, False, True, True]
    play_out(game)
    assert game.outcome is not None
    assert game.outcome.winners == (3,)


def test_last_card_everyone_out_with_tied_cards_is_a_draw_among_them() -> None:
    game = deal(KLASSISK3, "8S", "8H", "8C")
    played = game.play_round()
    assert played.war_steps[0].knocked_out == (0, 1, 2)
    assert game.outcome is not None
    assert (game.outcome.reason, game.outcome.drawn) == ("war_shortage", (0, 1, 2))


def test_last_card_fighters_out_together_draw_and_the_beaten_player_loses() -> None:
    # Seat 2 lost its last card in the battle, to the two 8s that then tied out: the two
    # fighters, knocked out last, share the draw.
    game = deal(KLASSISK3, "8S", "8H", "5C")
    game.play_round()
    assert game.outcome is not None
    assert (game.outcome.reason, game.outcome.drawn) == ("war_shortage", (0, 1))


def test_standing_card_tie_goes_on_while_the_other_fighter_has_cards() -> None:
    # Seat 0 has nothing left and keeps its 8 through two steps; seat 1 ties with another 8,
    # then loses with a 7.
    game = deal("klassisk", "8S", "8H 2H 3H 4H 8D 5H 6H 9H 7H 2C")
    played = game.play_round()
    assert len(played.war_steps) == 2
    assert all(step.face_up[0] is None for step in played.war_steps)
    assert codes(played.war_steps[1].compared) == ["8S", "7H"]
    assert played.winner == 0
    assert played.counts == (10, 1)


# ------------------------------------------------------------------------ §6 pickup


def test_winner_first_pickup_puts_the_winners_cards_first() -> None:
    game = deal("standard", "8S 2S 3S 4S", "8H 2H KH 4H")
    played = game.play_round()
    assert played.winner == 1
    assert pile_codes(game, 1) == ["4H", "8H", "2H", "KH", "8S", "2S", "3S"]


def test_winner_first_pickup_in_a_two_step_war() -> None:
    game = deal("standard", "8S 2S 9S 3S KS 4S", "8H 2H 9H 3H QH")
    played = game.play_round()
    assert played.winner == 0
    assert pile_codes(game, 0) == ["4S", "8S", "2S", "9S", "3S", "KS", "8H", "2H", "9H", "3H", "QH"]


def test_winner_first_pickup_with_three_players_takes_others_in_seat_order() -> None:
    rules = three(pickup="winner_first")
    game = deal(rules, "8S 2S 3S 4S", "5H 6H", "8D 2D KD 4D")
    played = game.play_round()
    assert played.winner == 2
    assert pile_codes(game, 2) == ["4D", "8D", "2D", "KD", "8S", "2S", "3S", "5H"]


def test_table_pickup_takes_layer_by_layer_in_seat_order() -> None:
    rules = three(pickup="table", face_down=3)
    game = deal(rules, "8S 2S 3S 4S 5S 6S", "7H 6H", "8D 2D 3D 4D KD 6D")
    played = game.play_round()
    assert played.winner == 2
    assert pile_codes(game, 2) == [
        "6D",
        "8S", "7H", "8D",  # the battle
        "2S", "2D",  # face-down layers, seat order (seat 1 is not fighting)
        "3S", "3D",
        "4S", "4D",
        "5S", "KD",  # the face-up layer
    ]  # fmt: skip


def test_table_pickup_in_a_two_step_war() -> None:
    game = deal(Rules.preset("standard", pickup="table"), "8S 2S 9S 3S 4S 5S", "8H 2H 9H 3H KH")
    played = game.play_round()
    assert played.winner == 1
    assert pile_codes(game, 1) == ["8S", "8H", "2S", "2H", "9S", "9H", "3S", "3H", "4S", "KH"]


def test_shuffled_pickup_is_a_permutation_reproducible_with_the_seed() -> None:
    rules = Rules.preset("standard", pickup="shuffled")
    seat0, seat1 = "8S 2S 9S 3S 4S 5S", "8H 2H 9H 3H KH"
    orders = set()
    for seed in range(8):
        game = deal(rules, seat0, seat1, seed=seed)
        game.play_round()
        again = deal(rules, seat0, seat1, seed=seed)
        again.play_round()
        assert pile_codes(game, 1) == pile_codes(again, 1)
        won = pile_codes(game, 1)
        assert sorted(won) == sorted(["8S", "8H", "2S", "2H", "9S", "9H", "3S", "3H", "4S", "KH"])
        orders.add(tuple(won))
    assert len(orders) > 1  # the seed decides the order


def test_three_players_default_to_shuffled_pickup_unless_chosen() -> None:
    assert Rules.preset("standard", players=3).pickup == "shuffled"
    assert Rules.preset("standard", players=3, pickup="table").pickup == "table"
    assert Rules.preset("standard", players=4).pickup == "winner_first"
    assert Rules.preset("standard").pickup == "winner_first"


# ------------------------------------------------------------------------ §6 shuffle_won

SHUFFLE_WON = Rules.preset("standard", shuffle_won=True)


def test_shuffle_won_keeps_won_cards_in_a_separate_pile() -> None:
    game = deal(SHUFFLE_WON, "KS 2S 3S", "QH 4H 5H")
    played = game.play_round()
    assert played.winner == 0
    assert pile_codes(game, 0) == ["2S", "3S"]
    assert codes(game.won[0]) == ["KS", "QH"]
    assert played.counts == (4, 2)


def test_shuffle_won_turns_the_shuffled_won_pile_when_the_pile_runs_out() -> None:
    seat0, seat1 = "KS QS JS TS", "2H 3H 4H 5H 6H 7H"
    orders = set()
    for seed in range(10):
        game = deal(SHUFFLE_WON, seat0, seat1, seed=seed)
        play(game, 4)
        assert game.counts == (8, 2)
        assert len(game.piles[0]) == 0
        won = codes(game.won[0])
        fifth = game.play_round()
        turned = codes([fifth.battle[0][1]])[0]
        assert turned in won
        assert sorted([turned, *pile_codes(game, 0)]) == sorted(won)
        orders.add((turned, *pile_codes(game, 0)))
        again = deal(SHUFFLE_WON, seat0, seat1, seed=seed)
        play(again, 5)
        assert again.piles == game.piles
    assert len(orders) > 1


def test_shuffle_won_turns_the_won_pile_in_the_middle_of_a_war() -> None:
    game = deal(SHUFFLE_WON, "KS 8S", "QH 8H 2H KH 4H")
    game.play_round()
    assert game.counts == (3, 4)
    played = game.play_round()  # 8 against 8; seat 0 has no pile left, only won cards
    (step,) = played.war_steps
    assert step.short == ()
    assert sorted(codes([*step.face_down[0], step.face_up[0]])) == ["KS", "QH"]
    assert played.taken == 6


def test_shuffle_won_counts_the_won_pile_against_shortage() -> None:
    game = deal(
        Rules.preset("standard", shuffle_won=True, face_down=3), "AS 8S", "2H 8H 2C 3C 4C 5C"
    )
    game.play_round()  # seat 0: pile [8S], won [AS 2H]
    played = game.play_round()
    (step,) = played.war_steps
    assert step.short == (0,)  # holds 2, needs 4
    assert game.outcome is not None
    assert game.outcome.winners == (1,)


# ------------------------------------------------------------------------ §7 round limit


def test_round_limit_most_cards_wins() -> None:
    game = deal(Rules.preset("standard", max_rounds=2), "KS QS 2S", "2H 3H 4H")
    play_out(game)
    assert game.outcome is not None
    assert game.outcome.reason == "round_limit"
    assert game.outcome.rounds == 2
    assert game.outcome.winners == (0,)
    assert game.counts == (5, 1)


def test_round_limit_with_equal_cards_is_a_draw() -> None:
    game = deal(Rules.preset("standard", max_rounds=2), "KS 2S", "2H KH")
    play_out(game)
    assert game.counts == (2, 2)
    assert game.outcome is not None
    assert (game.outcome.reason, game.outcome.drawn) == ("round_limit", (0, 1))
    assert game.outcome.is_draw


def test_round_limit_with_three_players_draws_between_the_tied_leaders() -> None:
    rules = three(pickup="winner_first", max_rounds=2)
    game = deal(rules, "KS 2S 3S", "2H KH 3H", "4D 5D 6D")
    play_out(game)
    assert game.counts == (4, 4, 1)
    assert game.outcome is not None
    assert game.outcome.drawn == (0, 1)
    assert game.outcome.winners == ()


def test_game_that_ends_before_the_round_limit_ends_normally() -> None:
    game = deal(Rules.preset("standard", max_rounds=50), "KS", "2H")
    play_out(game)
    assert game.outcome is not None
    assert (game.outcome.reason, game.outcome.rounds) == ("all_cards", 1)


# ------------------------------------------------------------------------ §7 target


def test_first_to_target_tricks_wins_at_once() -> None:
    rules = Rules.preset("standard", target_tricks=3)
    game = deal(rules, "AS 2S AD AC 2D", "KH AH KD KC 3H")
    rounds = play_out(game)
    assert [r.winner for r in rounds] == [0, 1, 0, 0]
    assert game.outcome is not None
    assert (game.outcome.reason, game.outcome.rounds, game.outcome.winners) == ("target", 4, (0,))


def test_a_war_won_is_one_trick() -> None:
    rules = Rules.preset("standard", target_tricks=2)
    game = deal(rules, "8S 2S KS AS 4S", "8H 2H QH 3H 5H")
    war = game.play_round()
    assert len(war.war_steps) == 1
    assert war.tricks == (1, 0)
    assert game.outcome is None
    game.play_round()
    assert game.outcome is not None
    assert (game.outcome.reason, game.outcome.rounds, game.outcome.winners) == ("target", 2, (0,))


def test_hurtig_is_first_to_ten() -> None:
    rules = Rules.preset("hurtig")
    assert rules.target_tricks == 10
    game = Game.new(rules, seed=1)
    play_out(game)
    assert game.outcome is not None
    assert game.outcome.reason == "target"
    assert max(game.tricks) == 10
    assert game.tricks[game.outcome.winners[0]] == 10


@pytest.mark.parametrize(("preset", "rounds"), [("best3", 3), ("best5", 5)])
def test_best_of_rounds_is_won_by_the_first_to_win_most_of_them(preset: str, rounds: int) -> None:
    # rules §11 (002's "best av 3 eller 5 runder"): seat 1 wins every other round, seat 0
    # wins the last and with it the majority.
    game = deal(Rules.preset(preset), "AS 2S AD 2D AC", "KH 3H KD 3D KC")
    rounds_played = play_out(game)
    assert game.outcome is not None
    assert game.outcome.reason == "target"
    assert len(rounds_played) == rounds
    assert game.outcome.winners == (0,)
    assert game.tricks[0] == rounds // 2 + 1


# ------------------------------------------------------------------------ §7 points

POINTS = Rules.preset("poeng", max_rounds=3)


def test_points_one_per_round_and_two_per_war_step() -> None:
    game = deal(POINTS, "8S 2S 9S 3S KS 4S 2C", "8H 2H 9H 3H QH AH 3C")
    played = game.play_round()
    assert len(played.war_steps) == 2
    assert played.points == (1 + 2 * 2, 0)
    plain = game.play_round()
    assert plain.points == (5, 1)


def test_poeng_preset_plays_fifty_rounds_with_points() -> None:
    rules = Rules.preset("poeng")
    assert (rules.points, rules.max_rounds) == (True, 50)


def test_points_at_the_limit_most_points_wins_even_with_fewer_cards() -> None:
    # Seat 1 wins two plain rounds (2 points); seat 0 wins one war (3 points) but holds fewer.
    game = deal(POINTS, "2S 8S 3S KS 2D 3D", "AH 8H 2H QH 4H 5H AD AC KC")
    rounds = play_out(game)
    assert [r.winner for r in rounds] == [1, 0, 1]
    assert game.points == [3, 2]
    assert game.counts[0] < game.counts[1]
    assert game.outcome is not None
    assert (game.outcome.reason, game.outcome.winners) == ("round_limit", (0,))


def test_points_at_the_limit_equal_points_most_cards_wins() -> None:
    rules = Rules.preset("poeng", max_rounds=2)
    game = deal(rules, "AS 2S 3S", "2H AH 4H 5H")
    play_out(game)
    assert game.points == [1, 1]
    assert game.counts == (3, 4)
    assert game.outcome is not None
    assert (game.outcome.reason, game.outcome.winners) == ("round_limit", (1,))


def test_points_at_the_limit_equal_points_and_cards_is_a_draw() -> None:
    rules = Rules.preset("poeng", max_rounds=2)
    game = deal(rules, "AS 2S", "2H AH")
    play_out(game)
    assert game.points == [1, 1]
    assert game.counts == (2, 2)
    assert game.outcome is not None
    assert (game.outcome.reason, game.outcome.drawn) == ("round_limit", (0, 1))


def test_points_game_still_ends_early_when_one_player_has_every_card() -> None:
    game = deal(Rules.preset("poeng"), "AS KS", "2H 3H")
    play_out(game)
    assert game.outcome is not None
    assert (game.outcome.reason, game.outcome.rounds, game.outcome.winners) == (
        "all_cards",
        2,
        (0,),
    )


def test_points_game_still_ends_early_on_a_war_shortage() -> None:
    game = deal(Rules.preset("poeng"), "8S", "8H 2H 3H")
    play_out(game)
    assert game.outcome is not None
    assert (game.outcome.reason, game.outcome.winners) == ("war_shortage", (1,))


# ------------------------------------------------------------------------ §4 war_players


def test_war_players_tied_only_the_tied_players_fight() -> None:
    rules = three(pickup="winner_first", war_players="tied")
    game = deal(rules, "KS 2S 3S 4S", "KH 2H 5H 4H", "5D 3D AD 6D")
    played = game.play_round()
    (step,) = played.war_steps
    assert step.fighters == (0, 1)
    assert up_codes(step) == ["3S", "5H"]
    assert played.winner == 1
    assert played.taken == 7
    assert played.counts == (1, 8, 3)


def test_war_players_all_every_player_fights_and_an_untied_player_can_win() -> None:
    rules = three(pickup="winner_first", war_players="all")
    game = deal(rules, "KS 2S 3S 4S", "KH 2H 5H 4H", "5D 3D AD 6D")
    played = game.play_round()
    (step,) = played.war_steps
    assert step.fighters == (0, 1, 2)
    assert up_codes(step) == ["3S", "5H", "AD"]
    assert played.winner == 2
    assert played.taken == 9
    assert played.counts == (1, 1, 10)


def test_war_players_all_a_repeated_step_is_fought_by_those_tied_in_it() -> None:
    # rules §4 leaves open who fights a repeated step under `all`; the engine lets only those
    # tied for the highest face-up card go on.
    rules = three(pickup="winner_first", war_players="all")
    game = deal(rules, "KS 2S 9S 3S 2C 6S", "KH 2H 9H 4H AH 6H", "5D 3D 4D 7D 8D 6D")
    played = game.play_round()
    first, second = played.war_steps
    assert first.fighters == (0, 1, 2)
    assert second.fighters == (0, 1)
    assert played.winner == 1


def test_war_players_all_puts_a_short_untied_player_out_under_lose() -> None:
    rules = three(pickup="winner_first", war_players="all")
    game = deal(rules, "KS 2S 3S 4S", "KH 2H 5H 4H", "5D")
    played = game.play_round()
    (step,) = played.war_steps
    assert step.knocked_out == (2,)
    assert played.eliminated == (2,)
    assert played.winner == 1


# ------------------------------------------------------------------------ §8 more players


def test_three_players_a_player_with_no_cards_after_a_round_is_out() -> None:
    rules = three(pickup="winner_first")
    game = deal(rules, "AS KS QS", "KH 4H", "2D")
    first = game.play_round()
    assert first.eliminated == (2,)
    assert game.outcome is None
    assert not game.in_game[2]
    second = game.play_round()
    assert [seat for seat, _ in second.battle] == [0, 1]
    assert game.outcome is not None
    assert (game.outcome.reason, game.outcome.rounds) == ("all_cards", 2)
    assert game.outcome.winners == (0,)
    assert second.counts == (6, 0, 0)


def test_four_players_last_player_holding_cards_wins() -> None:
    game = deal(four(), "AS KS", "2H 3H", "4D 5D", "6C 7C")
    play_out(game)
    assert game.outcome is not None
    assert (game.outcome.reason, game.outcome.winners) == ("all_cards", (0,))
    assert game.counts == (8, 0, 0, 0)
    assert game.eliminated == [1, 2, 3]


def test_several_short_fighters_go_out_fewest_first() -> None:
    # Seats 0, 1, 2 tie; seat 0 holds nothing, seat 1 one card, seat 2 three: with one card
    # down each, seat 0 goes out first, then seat 1 is still short; seat 2 takes the table.
    game = deal(four(), "8S", "8H 2H", "8D 2D 3D 4D", "5C 6C")
    played = game.play_round()
    (step,) = played.war_steps
    assert step.short == (0, 1)
    assert step.knocked_out == (0, 1)
    assert played.eliminated == (0, 1)
    assert played.winner == 2
    assert played.taken == 5
    assert game.outcome is None  # seats 2 and 3 play on


def test_short_fighters_go_out_until_the_rest_can_complete_the_step() -> None:
    game = deal(four(), "8S", "8H 2H 9H 6H", "8D 2D 7D 4D", "5C 6C")
    played = game.play_round()
    (step,) = played.war_steps
    assert step.knocked_out == (0,)
    assert step.fighters == (0, 1, 2)
    assert up_codes(step) == [None, "9H", "7D"]
    assert played.winner == 1
    assert played.counts == (0, 1 + 8, 1, 1)


def test_short_fighters_with_equal_holdings_go_out_together() -> None:
    game = deal(four(), "8S 2S", "8H 2H", "8D 2D 3D 4D", "5C 6C")
    played = game.play_round()
    assert played.war_steps[0].knocked_out == (0, 1)
    assert played.winner == 2
    assert played.taken == 6


def test_last_fighters_out_together_set_the_table_aside_and_the_last_player_wins() -> None:
    game = deal(three(pickup="winner_first"), "8S 2S", "8H 2H", "5C 6C")
    played = game.play_round()
    assert played.war_steps[0].knocked_out == (0, 1)
    assert played.winner is None
    assert played.set_aside == 5  # both fighters' cards and seat 2's battle card
    assert game.set_aside == 5
    assert game.outcome is not None
    assert (game.outcome.reason, game.outcome.winners) == ("war_shortage", (2,))
    assert game.counts == (0, 0, 1)


def test_last_fighters_out_together_with_two_players_left_play_on() -> None:
    game = deal(four(), "8S 2S", "8H 2H", "5D 7D", "5C 6C")
    played = game.play_round()
    assert played.winner is None
    assert played.set_aside == 6
    assert game.outcome is None
    assert game.in_game == [False, False, True, True]


def test_everyone_out_together_is_a_draw_among_them() -> None:
    game = deal(three(pickup="winner_first"), "8S 2S", "8H 2H", "8C 6C")
    played = game.play_round()
    assert played.war_steps[0].knocked_out == (0, 1, 2)
    assert game.outcome is not None
    assert game.outcome.reason == "war_shortage"
    assert game.outcome.drawn == (0, 1, 2)
    assert game.outcome.winners == ()


# ------------------------------------------------------------------------ §8 wide_war


def test_klassisk_plays_wide_war_and_no_other_preset_does() -> None:
    assert Rules.preset("klassisk").wide_war is True
    assert [name for name in PRESETS if Rules.preset(name).wide_war] == ["klassisk"]


def test_wide_war_three_tied_fight_a_first_step_of_one_down_one_up() -> None:
    game = deal(KLASSISK3, "8S 2S KS", "8H 2H QH", "8D 2D JD")
    played = game.play_round()
    (step,) = played.war_steps
    assert step.fighters == (0, 1, 2)
    assert [codes(down) for down in step.face_down] == [["2S"], ["2H"], ["2D"]]
    assert up_codes(step) == ["KS", "QH", "JD"]
    assert step.short == ()
    assert (played.winner, played.taken) == (0, 9)


def test_wide_war_a_tie_after_the_wide_step_goes_on_with_face_down() -> None:
    game = deal(KLASSISK3, "8S 2S KS 3S 4S 5S AS", "8H 2H KH 3H 4H 5H 9H 6H", "8D 2D JD 6D")
    played = game.play_round()
    first, second = played.war_steps
    assert up_codes(first) == ["KS", "KH", "JD"]
    assert second.fighters == (0, 1)
    assert [codes(down) for down in second.face_down] == [["3S", "4S", "5S"], ["3H", "4H", "5H"]]
    assert up_codes(second) == ["AS", "9H"]
    assert (played.winner, played.taken) == (0, 3 + 6 + 8)


def test_wide_war_two_tied_of_three_fight_the_usual_war() -> None:
    game = deal(KLASSISK3, "8S 2S 3S 4S KS", "8H 2H 3H 4H QH", "5D 6D")
    played = game.play_round()
    (step,) = played.war_steps
    assert [len(down) for down in step.face_down] == [3, 3]


def test_wide_war_does_nothing_with_two_players() -> None:
    game = deal("klassisk", "8S 2S 3S 4S KS", "8H 2H 3H 4H QH")
    played = game.play_round()
    assert [len(down) for down in played.war_steps[0].face_down] == [3, 3]


def test_wide_war_shortage_counts_one_card_down() -> None:
    # With 3 down both seat 1 and seat 2 would be short; the wide step needs only 2 cards.
    rules = three(pickup="winner_first", face_down=3, wide_war=True)
    game = deal(rules, "8S", "8H 2H KH", "8D 2D QD")
    played = game.play_round()
    (step,) = played.war_steps
    assert step.short == (0,)
    assert step.knocked_out == (0,)
    assert up_codes(step) == [None, "KH", "QD"]
    assert played.winner == 1


def test_wide_war_with_teams_three_tied_fight_one_down_one_up() -> None:
    rules = Rules.preset("lag", face_down=3, wide_war=True)
    game = deal(rules, "KS 2S AS", "KH 2H QH", "KD 3D 4D", "7C 5C")
    played = game.play_round()
    (step,) = played.war_steps
    assert step.fighters == (0, 1, 2)
    assert [len(down) for down in step.face_down] == [1, 1, 1]
    assert played.winner == 0


# ------------------------------------------------------------------------ §7 reasons


def test_last_player_out_who_was_not_short_ends_with_all_cards() -> None:
    # Seat 0 is short and knocked out; seat 1 completes the step, loses and has nothing left:
    # the last player put out was not short, so seat 2 wins with every card (rules §7).
    game = deal(three(pickup="winner_first"), "8S", "8H 2H 3H", "8D 2D KD")
    played = game.play_round()
    assert played.war_steps[0].knocked_out == (0,)
    assert played.eliminated == (0, 1)
    assert game.outcome is not None
    assert (game.outcome.reason, game.outcome.winners) == ("all_cards", (2,))


def test_last_player_out_who_was_short_ends_with_war_shortage() -> None:
    # Under last_card seat 1 is short, turns its last card up and loses it; seat 2 lost its
    # last card in the battle. Both go out together, one of them short.
    game = deal(KLASSISK3, "8S 2S 3S 4S KS", "8H 2H", "5C")
    played = game.play_round()
    assert played.war_steps[0].short == (1,)
    assert played.eliminated == (1, 2)
    assert game.outcome is not None
    assert (game.outcome.reason, game.outcome.winners) == ("war_shortage", (0,))


def test_team_put_out_by_a_short_member_ends_with_war_shortage() -> None:
    # Seat 3 is short (seat 1 has no card to supply) and goes out in the war; seat 1 lost its
    # last card in the battle: team 1 is out, and it was short.
    game = deal("lag", "KS 2S 3S", "2H", "5D 4D", "KC")
    played = game.play_round()
    assert played.war_steps[0].knocked_out == (3,)
    assert game.outcome is not None
    assert (game.outcome.reason, game.outcome.winners) == ("war_shortage", (0, 2))


def test_target_comes_before_the_round_limit_in_the_same_round() -> None:
    # rules §7: round 1 reaches both the round limit and seat 0's first trick; the target is
    # first in the list, so seat 0 wins by its trick, though the cards are 2 each.
    rules = Rules.preset("standard", max_rounds=1, target_tricks=1)
    game = deal(rules, "AS", "2H 3H 4H")
    game.play_round()
    assert game.counts == (2, 2)
    assert game.outcome is not None
    assert (game.outcome.reason, game.outcome.winners) == ("target", (0,))
    fast = deal(rules, "AS", "2H 3H 4H")
    assert run_to_end(fast) == game.outcome


BEST3_ON_THE_LIMIT = ("KS 2D KH", "QS AD QH 3C 4C 5C 6C")
"""Seat 0 wins rounds 1 and 3, seat 1 round 2 and holds more cards after round 3 (4 to 6)."""


def test_best3_reaching_its_target_on_the_last_round_of_the_limit_is_won_by_the_rounds() -> None:
    # rules §7: the round that reaches target_tricks on the round limit's last round ends
    # `target`: the player who won the rounds wins, not the one holding more cards.
    rules = Rules.preset("best3", max_rounds=3)
    slow = deal(rules, *BEST3_ON_THE_LIMIT)
    played = play(slow, 3)
    assert [r.winner for r in played] == [0, 1, 0]
    assert slow.counts == (4, 6)
    assert slow.outcome == Outcome("target", 3, winners=(0,))
    assert played[-1].outcome == slow.outcome
    fast = deal(rules, *BEST3_ON_THE_LIMIT)
    assert run_to_end(fast) == slow.outcome  # the inline two-player path
    batched = deal(rules, *BEST3_ON_THE_LIMIT)
    assert batched.play_rounds(3).outcome == slow.outcome


def test_best3_with_a_limit_of_three_rounds_always_ends_by_its_target() -> None:
    # Three rounds between two players give one of them two: none is counted by cards.
    rules = Rules.preset("best3", max_rounds=3)
    reasons = {run_to_end(Game.new(rules, seed)).reason for seed in range(300)}
    assert "round_limit" not in reasons
    assert "target" in reasons


# ------------------------------------------------------------------------ §9 teams


def test_lag_preset_is_four_players_in_two_teams() -> None:
    rules = Rules.preset("lag")
    assert (rules.teams, rules.players) == (True, 4)
    game = Game.new(rules, seed=2)
    assert game.counts == (13, 13, 13, 13)
    assert game.team_of(0) == game.team_of(2) == 0
    assert game.team_of(1) == game.team_of(3) == 1


def test_teammates_tied_for_highest_do_not_go_to_war() -> None:
    game = deal("lag", "KS 2S", "5H 3H", "KD 4D", "7C 5C")
    played = game.play_round()
    assert not played.is_war
    assert played.team_no_war
    assert played.winner == 0  # the first of them in seat order
    assert played.taken == 4


def test_teammates_tied_later_in_seat_order_still_first_takes() -> None:
    game = deal("lag", "5S 2S", "KH 3H", "7D 4D", "KC 5C")
    played = game.play_round()
    assert played.team_no_war
    assert played.winner == 1


def test_opponents_tied_for_highest_go_to_war() -> None:
    game = deal("lag", "KS 2S 3S", "KH 2H AH", "5D 4D 6D", "7C 5C 6C")
    played = game.play_round()
    (step,) = played.war_steps
    assert step.fighters == (0, 1)
    assert played.winner == 1
    assert not played.team_no_war


def test_teammates_tied_in_a_war_step_the_first_takes_the_table() -> None:
    # Seats 0, 1 and 2 tie; in the war seats 0 and 2 (teammates) tie for the highest.
    game = deal("lag", "KS 2S AS 4S", "KH 2H 5H 4H", "KD 3D AD 6D", "7C 5C 6C 8C")
    played = game.play_round()
    (step,) = played.war_steps
    assert step.fighters == (0, 1, 2)
    assert up_codes(step) == ["AS", "5H", "AD"]
    assert len(played.war_steps) == 1
    assert played.winner == 0


def test_teammate_supplies_the_missing_war_cards() -> None:
    game = deal("lag", "KS", "KH 2H 3H", "5D 4D 6D 7D", "7C 5C")
    played = game.play_round()
    (step,) = played.war_steps
    assert step.supplied == ((2, 0, 2),)
    assert step.short == ()
    assert [codes(down) for down in step.face_down] == [["4D"], ["2H"]]
    assert up_codes(step) == ["6D", "3H"]
    assert played.winner == 0
    assert played.counts == (8, 0, 1, 1)
    assert played.eliminated == (1,)
    assert game.outcome is None  # seat 3 still plays for team 1


def test_teammate_without_enough_cards_supplies_nothing_and_shortage_applies() -> None:
    game = deal("lag", "KS", "KH 2H 3H", "5D 4D", "7C 5C")
    played = game.play_round()
    (step,) = played.war_steps
    assert step.supplied == ()
    assert step.short == (0,)
    assert step.knocked_out == (0,)
    assert played.winner == 1
    assert game.outcome is None  # seat 2 still plays for team 0


def test_team_loses_when_both_members_are_out() -> None:
    game = deal("lag", "AS KS", "2H", "AD KD", "3C")
    played = game.play_round()
    assert played.eliminated == (1, 3)
    assert game.outcome is not None
    assert (game.outcome.reason, game.outcome.winners) == ("all_cards", (0, 2))


def test_team_plays_on_with_one_member_out() -> None:
    game = deal("lag", "AS KS", "2H", "3D QD", "4C 5C 6C")
    played = game.play_round()
    assert played.eliminated == (1,)
    assert game.outcome is None
    rounds = play_out(game)
    assert game.outcome is not None
    assert game.outcome.winners == (0, 2)
    assert rounds[-1].counts[1] == rounds[-1].counts[3] == 0


def test_teams_at_the_round_limit_count_the_team_cards() -> None:
    rules = Rules.preset("lag", max_rounds=1)
    game = deal(rules, "2S 3S", "AH 3H", "2D 4D 5D", "3C 4C")
    play_out(game)
    assert game.counts == (1, 5, 2, 1)  # team 0: 3 cards, team 1: 6
    assert game.outcome is not None
    assert (game.outcome.reason, game.outcome.winners) == ("round_limit", (1, 3))


def test_team_draw_that_repeats_forever_is_shared_by_both_members_of_each_team() -> None:
    # rules §9: the result is the team's. Seed 5 repeats forever with one member of each team
    # out; all four share the draw.
    rules = Rules.preset("lag", pickup="table")
    game = Game.new(rules, 5)
    play_out(game)
    assert game.outcome is not None
    assert game.outcome.reason == "eternal"
    assert game.in_game == [False, True, True, False]
    assert game.outcome.drawn == (0, 1, 2, 3)
    fast = Game.new(rules, 5)
    assert run_to_end(fast) == game.outcome


def test_team_draw_when_the_last_fighters_go_out_together_is_shared_by_both_teams() -> None:
    # Round 1: seats 2 and 3 tie with their last cards (their partners have too few to
    # supply) and go out together. Round 2: seats 0 and 1 do the same: nobody is left.
    game = deal("lag", "2S 8S", "2H 8H", "KD", "KC")
    game.play_round()
    assert game.in_game == [True, True, False, False]
    played = game.play_round()
    assert played.war_steps[0].knocked_out == (0, 1)
    assert game.outcome is not None
    assert (game.outcome.reason, game.outcome.drawn) == ("war_shortage", (0, 1, 2, 3))


# ------------------------------------------------------------------------ §7 forfeit


def test_forfeit_with_two_players_the_other_wins() -> None:
    game = deal("standard", "AS 2S 3S", "KH 4H 5H")
    game.play_round()
    outcome = game.forfeit(0)
    assert outcome is not None
    assert (outcome.reason, outcome.rounds, outcome.winners) == ("forfeit", 1, (1,))
    assert game.outcome == outcome
    with pytest.raises(GameOverError):
        game.play_round()
    with pytest.raises(GameOverError):
        game.forfeit(1)


def test_forfeit_with_three_players_the_game_goes_on_without_them() -> None:
    game = deal(three(pickup="winner_first"), "AS 2S 3S", "KH 4H 5H", "QD 6D 7D")
    game.play_round()
    assert game.forfeit(1) is None
    assert game.outcome is None
    assert game.counts == (5, 0, 2)
    assert game.set_aside == 2  # the forfeited cards leave play
    played = game.play_round()
    assert [seat for seat, _ in played.battle] == [0, 2]
    with pytest.raises(PlayerError):
        game.forfeit(1)
    outcome = game.forfeit(2)
    assert outcome is not None
    assert (outcome.reason, outcome.winners) == ("forfeit", (0,))


@pytest.mark.parametrize("seat", [0, 1, 2, 3])
def test_forfeit_in_a_team_game_gives_up_for_the_team(seat: int) -> None:
    # rules §9: the other team wins at once, and no card leaves play.
    game = deal("lag", "AS 2S", "KH 3H", "QD 4D", "JC 5C")
    game.play_round()
    outcome = game.forfeit(seat)
    assert outcome is not None
    others = (1, 3) if seat % 2 == 0 else (0, 2)
    assert (outcome.reason, outcome.rounds, outcome.winners) == ("forfeit", 1, others)
    assert game.forfeited == [seat]
    assert game.set_aside == 0
    assert sum(game.counts) == 8


def test_forfeit_by_a_team_member_already_out_gives_up_for_the_team() -> None:
    game = deal("lag", "AS KS", "2H", "3D QD", "4C 5C 6C")
    game.play_round()
    assert game.in_game == [True, False, True, True]
    assert game.can_forfeit(1)
    outcome = game.forfeit(1)
    assert outcome is not None
    assert outcome.winners == (0, 2)


@pytest.mark.parametrize("seat", [-1, 2, 5])
def test_forfeit_by_a_seat_not_in_the_game_is_refused(seat: int) -> None:
    game = deal("standard", "AS", "KH")
    with pytest.raises(PlayerError):
        game.forfeit(seat)


def test_playing_after_the_end_is_refused() -> None:
    game = deal("standard", "AS", "KH")
    game.play_round()
    assert game.finished
    with pytest.raises(GameOverError):
        game.play_round()
    assert run_to_end(game) == game.outcome


# ------------------------------------------------------------------------ §7 eternal


def test_eternal_deal_with_winner_first_is_a_draw_at_the_first_repeated_position() -> None:
    game = deal("standard", "2C 4H 6H 3D", "5S 6S 5D 3S")
    rounds, repeat = watch(game)
    assert repeat == (9, 8)  # the position after 9 rounds is the one after round 1
    assert game.outcome is not None
    assert game.outcome.reason == "eternal"
    assert (game.outcome.rounds, game.outcome.cycle) == repeat
    assert game.outcome.drawn == (0, 1)
    assert game.outcome.is_draw
    assert any(r.is_war for r in rounds)


def test_eternal_deal_with_table_pickup_by_hand() -> None:
    # 2♣ 3♣ against 3♥ 2♠, pickup table. After round 2 seat 0 holds 3♣ 2♠ and seat 1 2♣ 3♥;
    # rounds 3 to 6 bring exactly that back, so round 7 would repeat: 6 rounds, cycle 4.
    game = deal(Rules.preset("standard", pickup="table"), "2C 3C", "3H 2S")
    play(game, 2)
    assert (pile_codes(game, 0), pile_codes(game, 1)) == (["3C", "2S"], ["2C", "3H"])
    play(game, 3)
    assert game.outcome is None
    game.play_round()
    assert (pile_codes(game, 0), pile_codes(game, 1)) == (["3C", "2S"], ["2C", "3H"])
    assert game.outcome is not None
    assert (game.outcome.reason, game.outcome.rounds, game.outcome.cycle) == ("eternal", 6, 4)


def test_eternal_is_not_declared_with_a_round_limit_or_randomness() -> None:
    for rules in (
        Rules.preset("standard", max_rounds=40),
        Rules.preset("standard", pickup="shuffled"),
        Rules.preset("standard", shuffle_won=True),
        Rules.preset("standard", target_tricks=15),
    ):
        game = deal(rules, "2C 4H 6H 3D", "5S 6S 5D 3S", seed=1)
        play_out(game, 100_000)
        assert game.outcome is not None
        assert game.outcome.reason != "eternal", rules


def forfeited_three_player_game(seed: int) -> Game:
    """A 3-player winner_first deal that repeats forever, where seat 1 forfeits in round 2."""
    game = Game.new(three(pickup="winner_first"), seed=seed)
    game.play_round()
    game.forfeit(1)
    return game


def test_forfeit_in_an_eternal_three_player_game_forgets_the_old_repetition() -> None:
    # Seed 2 would repeat forever from round 1052. After seat 1 forfeits, the two left never
    # repeat a position and seat 2 ends up with every card in round 1958 (rules §7).
    game = forfeited_three_player_game(2)
    _, repeat = watch(game)
    assert repeat is None
    assert game.outcome is not None
    assert (game.outcome.reason, game.outcome.rounds) == ("all_cards", 1958)
    assert game.outcome.winners == (2,)


def test_forfeit_in_an_eternal_three_player_game_finds_the_new_repetition() -> None:
    # Seed 1 would repeat from round 758 (cycle 312); after the forfeit the first repeated
    # position comes after round 6219, 5918 rounds after it was first seen.
    game = forfeited_three_player_game(1)
    _, repeat = watch(game)
    assert repeat == (6219, 5918)
    assert game.outcome is not None
    assert (game.outcome.reason, game.outcome.rounds, game.outcome.cycle) == ("eternal", *repeat)


@pytest.mark.parametrize(
    ("seed", "reason", "rounds"), [(1, "eternal", 6219), (2, "all_cards", 1958)]
)
def test_run_to_end_after_a_forfeit_finds_the_new_end(seed: int, reason: str, rounds: int) -> None:
    game = forfeited_three_player_game(seed)
    outcome = run_to_end(game)
    assert (outcome.reason, outcome.rounds) == (reason, rounds)


# ------------------------------------------------------------------------ rules validation


def test_teams_need_four_players() -> None:
    with pytest.raises(RulesError):
        Rules.preset("lag", players=3)
    with pytest.raises(RulesError):
        Rules.preset("standard", teams=True)


def test_points_without_a_round_limit_get_fifty_rounds() -> None:
    assert Rules.preset("standard", points=True).max_rounds == 50
    assert Rules.preset("poeng", max_rounds=20).max_rounds == 20
    with pytest.raises(RulesError):
        Rules(points=True)
    with pytest.raises(RulesError):
        Rules.preset("poeng").replace(max_rounds=None)


@pytest.mark.parametrize(
    "options",
    [
        {"face_down": 2},
        {"face_down": 0},
        {"face_down": "rang"},
        {"shortage": "borrow"},
        {"pickup": "random"},
        {"war_players": "some"},
        {"jokers": 1},
        {"jokers": 3},
        {"decks": 0},
        {"decks": 3},
        {"max_rounds": 0},
        {"max_rounds": -5},
        {"max_rounds": True},
        {"max_rounds": 2.5},
        {"max_rounds": 1_000_001},
        {"target_tricks": 0},
        {"players": 1},
        {"players": 5},
        {"variant": "poker"},
        {"colour": "red"},
    ],
    ids=lambda options: "-".join(f"{k}={v}" for k, v in options.items()),
)
def test_bad_option_values_are_refused(options: dict[str, Any]) -> None:
    with pytest.raises(RulesError):
        Rules.preset("standard", **options)


# The house rules are refused the same way: tests/engine/test_house_rules.py.
STEAL_REFUSES = [
    ("face_down", 1),
    ("face_down", "rank"),
    ("face_down", 3),  # the value it plays by: refused all the same
    ("shortage", "last_card"),
    ("shortage", "lose"),
    ("pickup", "table"),
    ("pickup", "shuffled"),
    ("pickup", "winner_first"),
    ("war_players", "all"),
    ("war_players", "tied"),
    ("wide_war", True),
    ("wide_war", False),
    ("shuffle_won", False),
    ("points", True),
    ("teams", False),
]


@pytest.mark.parametrize(("option", "value"), STEAL_REFUSES)
def test_steal_war_refuses_every_option_it_does_not_play_whatever_the_value(
    option: str, value: Any
) -> None:
    # rules §10: nothing shown as a rule may be silently ignored, so an option Steal War does
    # not play is refused even when the value asked for is the one it is played by.
    with pytest.raises(FixedOptionError, match=f"^{option} cannot be set") as caught:
        Rules.preset("stjel", **{option: value})
    assert (caught.value.option, caught.value.variant) == (option, "stjel")
    with pytest.raises(FixedOptionError):
        Rules.preset("stjel").replace(**{option: value})
    with pytest.raises(FixedOptionError):
        Rules.preset("standard", variant="stjel", jokers=2, **{option: value})


def test_steal_war_takes_the_options_it_plays() -> None:
    rules = Rules.preset(
        "stjel", players=3, jokers=0, decks=2, max_rounds=40, target_tricks=9, time_limit=5
    )
    assert (rules.jokers, rules.decks, rules.max_rounds, rules.target_tricks) == (0, 2, 40, 9)
    assert rules.pickup == "winner_first"  # no shuffled default for three: loot piles instead
    assert (rules.face_down, rules.shortage) == (3, "lose")
    assert StealGame.plays == {"jokers", "decks", "max_rounds", "time_limit", "target_tricks"}


def test_a_variant_set_apart_takes_the_values_its_preset_fixes() -> None:
    rules = Rules.preset("standard", variant="stjel", jokers=2)
    assert (rules.face_down, rules.shortage, rules.wide_war) == (3, "lose", False)
    assert Rules.preset("klassisk").replace(variant="stjel").face_down == 3
    with pytest.raises(FixedOptionError, match=r"^face_down"):
        Rules(variant="stjel", jokers=2)  # built whole, a fixed option must hold its value


@pytest.mark.parametrize("name", list(PRESETS))
def test_the_settings_of_any_rules_give_the_same_rules_again(name: str) -> None:
    # What a rematch asks for: the options the game set, and nothing its variant refuses.
    for players in (2, 3, 4) if name != "lag" else (4,):
        rules = Rules.preset(name, players=players, max_rounds=77)
        assert Rules.preset(rules.preset_name, players=players, **rules.settings()) == rules


def test_steal_war_saved_with_options_it_never_played_by_still_loads() -> None:
    saved = Rules.preset("stjel", players=3).to_dict()
    del saved["wide_war"]  # saved before the option existed
    saved.update(shortage="last_card", pickup="shuffled", war_players="all")
    rules = Rules.from_dict(saved)
    assert rules == Rules.preset("stjel", players=3)


def test_wide_war_is_an_option_of_the_command_line() -> None:
    assert parse_option("wide_war", "true") is True
    assert parse_option("wide_war", "off") is False
    with pytest.raises(RulesError, match="wide_war"):
        parse_option("wide_war", "wide")
    assert Rules.preset("standard", wide_war=True).to_dict()["wide_war"] is True


def test_rules_saved_before_wide_war_existed_load_without_it() -> None:
    saved = Rules.preset("klassisk").to_dict()
    del saved["wide_war"]
    assert Rules.from_dict(saved) == Rules.preset("klassisk", wide_war=False)


def test_unknown_preset_is_refused_and_aliases_are_known() -> None:
    with pytest.raises(RulesError):
        Rules.preset("blackjack")
    assert Rules.preset("Război").preset_name == "razboi"
    assert Rules.preset("classic").preset_name == "klassisk"


def test_replace_refuses_unknown_options() -> None:
    with pytest.raises(RulesError):
        Rules.preset("standard").replace(speed=3)


@pytest.mark.parametrize(
    ("name", "options"),
    [
        ("standard", {"face_down": 1, "shortage": "lose"}),
        ("klassisk", {"face_down": 3, "shortage": "last_card", "wide_war": True}),
        ("fem", {"face_down": 5, "shortage": "lose"}),
        ("razboi", {"face_down": "rank", "shortage": "lose"}),
        ("jokere", {"face_down": 1, "jokers": 2}),
        ("hurtig", {"face_down": 1, "target_tricks": 10}),
        ("best3", {"face_down": 1, "shortage": "lose", "target_tricks": 2}),
        ("best5", {"face_down": 1, "shortage": "lose", "target_tricks": 3}),
        ("poeng", {"face_down": 1, "points": True, "max_rounds": 50}),
        ("dobbel", {"face_down": 1, "decks": 2}),
        ("lag", {"face_down": 1, "teams": True, "players": 4}),
    ],
)
def test_presets_have_the_settings_of_the_table(name: str, options: dict[str, Any]) -> None:
    rules = Rules.preset(name)
    for key, value in options.items():
        assert getattr(rules, key) == value
    assert rules.shuffle_won is False
    assert rules.war_players == "tied"
    assert rules.pickup == "winner_first"


def test_a_preset_is_only_a_starting_point() -> None:
    rules = Rules.preset("klassisk", face_down=1, pickup="table", max_rounds=30)
    assert (rules.face_down, rules.shortage, rules.pickup) == (1, "last_card", "table")
    assert rules.max_rounds == 30


# ------------------------------------------------------------------------ deal validation


def test_unknown_card_code_is_refused() -> None:
    with pytest.raises(CardError):
        pile("QD 1S")
    with pytest.raises(CardError):
        pile("X3")


def test_card_twice_in_one_deck_is_refused() -> None:
    with pytest.raises(DealError):
        deal("standard", "QD 2S", "QD 3H")
    deal("dobbel", "QD 2S", "QD 3H")  # two decks hold two
    with pytest.raises(DealError):
        deal("dobbel", "QD QD", "QD 3H")


def test_joker_without_jokers_in_the_rules_is_refused() -> None:
    with pytest.raises(DealError):
        deal("standard", "X1 2S", "3H 4H")


@pytest.mark.parametrize("piles", [["2S"], ["2S", "3S", "4S", "5S", "6S"]])
def test_deal_needs_two_to_four_piles(piles: list[str]) -> None:
    with pytest.raises(DealError):
        deal("standard", *piles)


def test_deal_with_an_empty_pile_is_refused() -> None:
    with pytest.raises(DealError):
        Game.from_piles(Rules.preset("standard"), [pile("2S 3S"), []])


def test_deal_sets_the_number_of_players_from_the_piles() -> None:
    game = deal("standard", "2S", "3S", "4S")
    assert game.players == 3
    assert game.rules.players == 3


def test_card_errors_and_deal_errors_are_value_errors() -> None:
    with pytest.raises(ValueError, match="1S"):
        pile("1S")


def test_damaged_saved_game_is_refused() -> None:
    saved = deal("standard", "2S 3S", "4H 5H").to_dict()
    with pytest.raises(StateError):
        Game.from_dict({**saved, "format": 99})
    with pytest.raises(StateError):
        Game.from_dict({**saved, "piles": [["ZZ"], ["4H"]]})
    broken = json.loads(json.dumps(saved))
    del broken["tricks"]
    with pytest.raises(StateError):
        Game.from_dict(broken)
