"""rules §1 `lowest_wins` (Peace): the lowest face-up card wins, in battles and war steps.

Beside examples, a small reference game of its own plays whole games from seeded deals for 2,
3 and 4 players and is held to the engine round by round, on the general path and the fast one.
What every house rule owes (off in every preset, refused by Steal War, the same game on both
paths) is in tests/engine/test_house_rules.py.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

import pytest

from krigbot.engine import Game, Rules, RulesError, fast
from tests.support.deals import codes, deal, pile_codes

PEACE = Rules.preset("standard", lowest_wins=True)


def test_the_lowest_card_takes_the_battle() -> None:
    game = deal(PEACE, "3C 5H", "KS 9D")
    played = game.play_round()
    assert (played.winner, played.taken, played.war_steps, played.won_by) == (
        0,
        2,
        (),
        "lowest_wins",
    )
    assert pile_codes(game, 0) == ["5H", "3C", "KS"]


def test_without_the_option_the_highest_card_takes_it() -> None:
    played = deal("standard", "3C 5H", "KS 9D").play_round()
    assert (played.winner, played.won_by) == (1, "highest")


def test_a_two_beats_everything_and_an_ace_loses_to_everything_but_a_joker() -> None:
    assert deal(PEACE, "2C", "3S").play_round().winner == 0
    assert deal(PEACE, "AC", "3S").play_round().winner == 1
    jokers = PEACE.replace(jokers=2)
    assert deal(jokers, "AC", "X1").play_round().winner == 0


def test_a_joker_still_ranks_highest_so_it_loses() -> None:
    rules = Rules.preset("jokere", players=3, lowest_wins=True)
    played = deal(rules, "X1 5H", "KS 6S", "AD 9D").play_round()
    assert played.winner == 1


def test_the_equal_lowest_go_to_war_and_the_others_stay_out() -> None:
    # 4 and 4 are lowest, the king is not: a war between seats 0 and 1, the 3 up takes it all.
    game = deal(PEACE.replace(players=3), "4C 8H 3H", "4D 5S QS", "KH 9D 7D")
    played = game.play_round()
    (step,) = played.war_steps
    assert step.fighters == (0, 1)
    assert codes(card for card in step.face_up if card is not None) == ["3H", "QS"]
    assert (played.winner, played.taken, played.won_by) == (0, 7, "lowest_wins")


def test_a_war_step_is_won_by_its_lowest_face_up_card_too() -> None:
    game = deal(PEACE, "8C 4H KH", "8D 5S 2S")
    played = game.play_round()
    (step,) = played.war_steps
    assert codes(step.compared) == ["KH", "2S"]
    assert (played.winner, played.taken) == (1, 6)


def test_razboi_counts_the_tied_rank_as_usual() -> None:
    # Two 3s tied: Război places 3 - 1 = 2 cards down, then one up.
    rules = Rules.preset("razboi", lowest_wins=True)
    game = deal(rules, "3C 4H 5H 9C 6C", "3D 5S 6S TC 7C")
    (step,) = game.play_round().war_steps
    assert [len(cards) for cards in step.face_down] == [2, 2]
    assert codes(step.compared) == ["9C", "TC"]


def test_a_short_fighter_still_loses_the_war() -> None:
    played = deal(PEACE, "7C 4H 2H", "7D").play_round()
    assert (played.winner, played.won_by) == (0, "shortage")


def test_it_is_refused_together_with_two_beats_ace_naming_both() -> None:
    with pytest.raises(RulesError, match=r"^two_beats_ace and lowest_wins cannot be played"):
        Rules.preset("standard", lowest_wins=True, two_beats_ace=True)
    with pytest.raises(RulesError, match=r"two_beats_ace and lowest_wins"):
        PEACE.replace(two_beats_ace=True)
    saved = {**PEACE.to_dict(), "two_beats_ace": True}
    with pytest.raises(RulesError, match=r"two_beats_ace and lowest_wins"):
        Rules.from_dict(saved)


# ----------------------------------------------------------------------------- the reference


def strength(card: int) -> int:
    """Peace: the lower the rank, the stronger; a joker (rank 15) is the weakest card."""
    return -(card >> 2)


def face_down_count(face_down: int | str, tied_card: int) -> int:
    """Cards each fighter lays down: fixed, or Război's count from the tied rank."""
    if isinstance(face_down, int):
        return face_down
    rank = tied_card >> 2
    return 10 if rank >= 14 else min(rank, 10) - 1


@dataclass
class ReferenceRound:
    winner: int | None
    taken: int
    wars: int
    why: str | None


class ReferencePeace:
    """Peace as the rules describe it, for any number of seats: `winner_first` pickup, a short
    fighter loses, only the tied fight. Nothing of the engine's is used but the cards' values."""

    def __init__(self, piles: list[list[int]], face_down: int | str) -> None:
        self.piles = [deque(pile) for pile in piles]
        self.face_down = face_down
        self.playing = [bool(pile) for pile in piles]

    def play(self) -> ReferenceRound:
        seats = [s for s, playing in enumerate(self.playing) if playing]
        laid: dict[int, list[int]] = {s: [self.piles[s].popleft()] for s in seats}
        fighters = seats
        wars = 0
        winner: int | None = None
        why: str | None = None
        while True:
            best = max(strength(laid[s][-1]) for s in fighters)
            tied = [s for s in fighters if strength(laid[s][-1]) == best]
            if len(tied) == 1:
                winner, why = tied[0], "lowest_wins"
                break
            f = face_down_count(self.face_down, laid[tied[0]][-1])
            wars += 1
            # Short fighters lay down what they have and are out, the fewest first.
            while len(tied) > 1:
                short = [s for s in tied if len(self.piles[s]) < f + 1]
                if not short:
                    break
                fewest = min(len(self.piles[s]) for s in short)
                for s in short:
                    if len(self.piles[s]) == fewest:
                        laid[s].extend(self.piles[s])
                        self.piles[s].clear()
                tied = [s for s in tied if self.piles[s]]
            if len(tied) == 1:
                winner, why = tied[0], "shortage"
                break
            if not tied:
                break  # the last fighters went out together: the table is set aside
            for s in tied:
                for _ in range(f + 1):
                    laid[s].append(self.piles[s].popleft())
            fighters = tied
        taken = sum(len(cards) for cards in laid.values())
        if winner is not None:
            pile = self.piles[winner]
            pile.extend(laid[winner])
            for s in seats:
                if s != winner:
                    pile.extend(laid[s])
        self.playing = [bool(pile) for pile in self.piles]
        return ReferenceRound(winner, taken if winner is not None else 0, wars, why)


def reference_rules(players: int, face_down: int | str, jokers: int = 0) -> Rules:
    return Rules.preset(
        "standard",
        players=players,
        face_down=face_down,
        lowest_wins=True,
        pickup="winner_first",
        jokers=jokers,
        max_rounds=3000,
    )


CASES = [
    pytest.param(players, face_down, jokers, seed, id=f"{players}p-fd{face_down}-j{jokers}-{seed}")
    for players in (2, 3, 4)
    for face_down in (1, 3, "rank")
    for jokers in (0, 2)
    for seed in range(3)
]


@pytest.mark.parametrize(("players", "face_down", "jokers", "seed"), CASES)
def test_whole_games_agree_with_the_reference_round_by_round(
    players: int, face_down: int | str, jokers: int, seed: int
) -> None:
    rules = reference_rules(players, face_down, jokers)
    game = Game.new(rules, seed)
    reference = ReferencePeace([list(pile) for pile in game.piles], face_down)
    rounds = 0
    while not game.finished:
        played = game.play_round()
        expected = reference.play()
        rounds += 1
        assert (played.winner, played.taken, len(played.war_steps)) == (
            expected.winner,
            expected.taken,
            expected.wars,
        ), f"round {rounds}"
        assert played.won_by == expected.why, f"round {rounds}"
        assert [list(pile) for pile in game.piles] == [list(p) for p in reference.piles]
    assert game.outcome is not None
    if game.outcome.reason != "round_limit":
        assert sum(reference.playing) <= 1


TWO_PLAYER_CASES = [
    (face_down, jokers, seed)
    for face_down in (1, 3, "rank")
    for jokers in (0, 2)
    for seed in range(4)
]


@pytest.mark.parametrize(("face_down", "jokers", "seed"), TWO_PLAYER_CASES)
def test_two_player_games_on_the_fast_path_agree_with_the_reference_round_by_round(
    face_down: int | str, jokers: int, seed: int
) -> None:
    rules = reference_rules(2, face_down, jokers)
    assert fast.plays_inline(rules)
    game = Game.new(rules, seed)
    reference = ReferencePeace([list(pile) for pile in game.piles], face_down)
    while not game.finished:
        fast.advance(game, game.round + 1)
        reference.play()
        assert [list(pile) for pile in game.piles] == [list(p) for p in reference.piles]
    assert game.outcome is not None
    if game.outcome.reason != "round_limit":
        assert sum(reference.playing) <= 1
