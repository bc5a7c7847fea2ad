"""The worked examples of rules §12 (and the table counts of §4), replayed card by card."""

from __future__ import annotations

import pytest

from krigbot.engine import Game, Rules, parse_card
from tests.support.deals import codes, deal, pile, pile_codes

# -------------------------------------------------------------------------------- 000


def test_queen_of_clubs_takes_ten_of_diamonds() -> None:
    game = deal("standard", "QC 2S", "TD 3H")
    played = game.play_round()
    assert codes(card for _, card in played.battle) == ["QC", "TD"]
    assert not played.is_war
    assert played.winner == 0
    assert played.taken == 2
    assert played.counts == (3, 1)
    assert pile_codes(game, 0) == ["2S", "QC", "TD"]  # won cards go under the pile


@pytest.mark.parametrize("jack_seat", [0, 1])
def test_eights_go_to_war_and_the_jack_takes_all_six_cards(jack_seat: int) -> None:
    seat0 = "8S 2S JH 4S"
    seat1 = "8H 2H 7C 4H"
    if jack_seat == 1:
        seat0, seat1 = "8S 2S 7C 4S", "8H 2H JH 4H"
    game = deal("standard", seat0, seat1)
    played = game.play_round()
    assert codes(card for _, card in played.battle) == ["8S", "8H"]
    assert len(played.war_steps) == 1
    step = played.war_steps[0]
    assert step.fighters == (0, 1)
    assert [codes(down) for down in step.face_down] == [["2S"], ["2H"]]
    jack, seven = parse_card("JH"), parse_card("7C")
    assert step.face_up == ((jack, seven) if jack_seat == 0 else (seven, jack))
    assert played.winner == jack_seat
    assert played.taken == 6
    assert played.counts[jack_seat] == 1 + 6  # the card not played plus the six won
    assert played.counts[1 - jack_seat] == 1


def test_single_card_left_goes_face_down_and_loses_under_shortage_lose() -> None:
    game = deal("standard", "8S AD", "8H 2C 3C 9H")
    played = game.play_round()
    step = played.war_steps[0]
    assert step.short == (0,)
    assert step.knocked_out == (0,)
    assert codes(step.face_down[0]) == ["AD"]  # face down, so the ace decides nothing
    assert step.face_up[0] is None
    assert played.winner == 1
    assert played.taken == 3
    assert played.counts == (0, 6)
    assert game.outcome is not None
    assert game.outcome.reason == "war_shortage"
    assert game.outcome.winners == (1,)


# -------------------------------------------------------------------------------- 004

# The cards 004 names are fixed; the face-down cards it does not name are filled in from the
# rest of the deck (face-down values never count). Both original piles run out exactly when
# the three face-down cards of battle 7 are placed, as the text says.
YOU = (
    "KS "  # 1: K♠ beats 9♥
    "4D "  # 2: 4♦ loses to Kn♣
    "7C 9D 2S 6H QD "  # 3: war, D♦ beats 10♠
    "AH 2H 2C 3S 6C 3H 3C 4S 8H "  # 4: double war, 6♣ = 6♠, then 8♥ loses to Kn♦
    "4C "  # 5: 4♣ loses to 8♣
    "7S 4H 5S 5D AS "  # 6: war, E♠ beats 2♦
    "5C 6D 8S 8D"  # 7: war, the last three cards of the pile that was dealt
)
ADA = (
    "9H "  # 1
    "JC "  # 2
    "7H 3D KC TH TS "  # 3
    "AC 9S 9C TD 6S TC JS JH JD "  # 4
    "8C "  # 5
    "7D QS QH QC 2D "  # 6
    "5H KH KD AD"  # 7
)


def worked_game() -> Game:
    return Game.from_piles(Rules.preset("klassisk", pickup="table"), [pile(YOU), pile(ADA)])


def test_worked_game_deal_has_26_cards_each_from_one_deck() -> None:
    game = worked_game()
    assert game.counts == (26, 26)
    assert len(set(pile(YOU)) | set(pile(ADA))) == 52


def test_worked_game_first_two_battles_leave_26_each() -> None:
    game = worked_game()
    first, second = game.play_round(), game.play_round()
    assert codes(card for _, card in first.battle) == ["KS", "9H"]
    assert first.winner == 0
    assert codes(card for _, card in second.battle) == ["4D", "JC"]
    assert second.winner == 1
    assert game.counts == (26, 26)


def test_worked_game_first_war_gives_31_to_21() -> None:
    game = worked_game()
    game.play_round()
    game.play_round()
    third = game.play_round()
    assert codes(card for _, card in third.battle) == ["7C", "7H"]
    (step,) = third.war_steps
    assert [codes(down) for down in step.face_down] == [["9D", "2S", "6H"], ["3D", "KC", "TH"]]
    assert codes(step.face_up) == ["QD", "TS"]
    assert third.winner == 0
    assert third.taken == 10  # including the king Ada put down without knowing it
    assert third.counts == (31, 21)


def test_worked_game_double_war_moves_18_cards_to_ada() -> None:
    game = worked_game()
    for _ in range(3):
        game.play_round()
    fourth = game.play_round()
    assert codes(card for _, card in fourth.battle) == ["AH", "AC"]
    assert len(fourth.war_steps) == 2
    first_step, second_step = fourth.war_steps
    assert codes(first_step.face_up) == ["6C", "6S"]
    assert codes(second_step.face_up) == ["8H", "JD"]
    assert fourth.winner == 1
    assert fourth.taken == 18
    assert fourth.counts == (22, 30)


def test_worked_game_battles_five_and_six_bring_it_back_to_26_each() -> None:
    game = worked_game()
    for _ in range(4):
        game.play_round()
    fifth = game.play_round()
    assert codes(card for _, card in fifth.battle) == ["4C", "8C"]
    assert fifth.winner == 1
    assert fifth.counts == (21, 31)
    sixth = game.play_round()
    assert codes(card for _, card in sixth.battle) == ["7S", "7D"]
    assert codes(sixth.war_steps[0].face_up) == ["AS", "2D"]
    assert sixth.winner == 0
    assert sixth.taken == 10
    assert sixth.counts == (26, 26)


def test_worked_game_seventh_battle_turns_the_first_cards_each_player_won() -> None:
    game = worked_game()
    for _ in range(6):
        game.play_round()
    seventh = game.play_round()
    assert codes(card for _, card in seventh.battle) == ["5C", "5H"]
    (step,) = seventh.war_steps
    # "the three cards you put down are the last three of the pile you got"
    assert codes(step.face_down[0]) == YOU.split()[-3:]
    assert codes(step.face_down[1]) == ADA.split()[-3:]
    # the fourth war card is the first card each of them won: K♠ (battle 1) and 4♦ (battle 2)
    assert codes(step.face_up) == ["KS", "4D"]
    assert seventh.winner == 0
    assert seventh.counts == (31, 21)


def test_worked_game_counts_after_each_of_the_first_seven_battles() -> None:
    game = worked_game()
    counts = [game.play_round().counts for _ in range(7)]
    assert counts == [(27, 25), (26, 26), (31, 21), (22, 30), (21, 31), (26, 26), (31, 21)]


# ------------------------------------------------------------------------ §4 table counts


def war_deal(face_down: int, steps: int) -> Game:
    """Two piles that tie at the battle and at every war step but the last, seat 0 winning."""
    filler = iter(["2", "3", "4", "5", "6", "7"] * 2)
    seat0, seat1 = ["8S"], ["8H"]
    for step in range(steps):
        for _ in range(face_down):
            rank = next(filler)
            seat0.append(rank + "S")
            seat1.append(rank + "H")
        if step < steps - 1:
            seat0.append("9S" if step == 0 else "TS")
            seat1.append("9H" if step == 0 else "TH")
        else:
            seat0.append("KS")
            seat1.append("QH")
    seat0.append("AC")  # one more card each, so nobody runs out
    seat1.append("AD")
    rules = Rules.preset("standard", face_down=face_down)
    return deal(rules, " ".join(seat0), " ".join(seat1))


@pytest.mark.parametrize(
    ("face_down", "steps", "on_table"),
    [(1, 1, 6), (1, 2, 10), (3, 1, 10), (3, 2, 18)],
)
def test_cards_on_the_table_after_war_steps(face_down: int, steps: int, on_table: int) -> None:
    game = war_deal(face_down, steps)
    played = game.play_round()
    assert len(played.war_steps) == steps
    assert all(len(down) == face_down for step in played.war_steps for down in step.face_down)
    assert played.winner == 0
    assert played.taken == on_table
    assert played.counts == (1 + on_table, 1)
