"""Tournament pairings: knockout byes, Swiss without rematches, round robin, standings, seeds."""

from __future__ import annotations

import random
from itertools import combinations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from krigbot.engine.tournament import (
    DRAW,
    WIN,
    Bracket,
    Format,
    Pairing,
    TournamentError,
    advancing,
    champion,
    next_round,
    record,
    standings,
    start,
    total_rounds,
)


def play_out(bracket: Bracket, results: random.Random, *, draws: bool = True) -> Bracket:
    """Play every round, each match won by a random player (or drawn), and return the bracket."""
    while not bracket.finished:
        bracket = next_round(bracket)
        for number, pairing in enumerate(bracket.current):
            if pairing.done:
                continue
            choices: list[int | None] = list(pairing.players)
            if draws:
                choices.append(None)
            bracket = record(bracket, number, results.choice(choices))
    return bracket


def players_of(count: int) -> list[int]:
    return list(range(1000, 1000 + count))


@settings(max_examples=150, deadline=None)
@given(count=st.integers(2, 64), seed=st.integers(0, 2**63 - 1), play=st.integers(0, 2**32))
def test_swiss_never_pairs_two_players_twice(count: int, seed: int, play: int) -> None:
    bracket = play_out(start("swiss", players_of(count), seed), random.Random(play))

    met = [frozenset(pairing.players) for matches in bracket.rounds for pairing in matches]
    assert len(met) == len(set(met))  # a repeated bye is a repeated one-player "pair"
    assert len(bracket.rounds) == (count - 1).bit_length()
    for matches in bracket.rounds:
        seated = [player for pairing in matches for player in pairing.players]
        assert sorted(seated) == sorted(bracket.players)
        assert sum(pairing.b is None for pairing in matches) == count % 2


@settings(max_examples=150, deadline=None)
@given(count=st.integers(2, 64), seed=st.integers(0, 2**63 - 1), play=st.integers(0, 2**32))
def test_knockout_byes_fill_a_power_of_two_in_round_one_only(
    count: int, seed: int, play: int
) -> None:
    bracket = play_out(start("knockout", players_of(count), seed), random.Random(play))

    size = 1 << (count - 1).bit_length()
    first, *later = bracket.rounds
    assert sum(pairing.b is None for pairing in first) == size - count
    assert all(pairing.b is not None for matches in later for pairing in matches)
    assert [len(matches) for matches in bracket.rounds] == [
        size >> number for number in range(1, len(bracket.rounds) + 1)
    ]
    # The byes go to the best seeds.
    byes = {pairing.a for pairing in first if pairing.b is None}
    assert byes == set(bracket.players[: size - count])
    # Whoever is champion won (or went through) every round they played.
    winner = champion(bracket)
    assert winner is not None
    for matches in bracket.rounds:
        (theirs,) = [pairing for pairing in matches if winner in pairing.players]
        assert advancing(bracket, theirs) == winner


@settings(max_examples=100, deadline=None)
@given(count=st.integers(2, 10), seed=st.integers(0, 2**63 - 1), play=st.integers(0, 2**32))
def test_round_robin_plays_every_pair_once(count: int, seed: int, play: int) -> None:
    bracket = play_out(start("round_robin", players_of(count), seed), random.Random(play))

    games = [pairing.players for matches in bracket.rounds for pairing in matches if pairing.b]
    assert sorted(tuple(sorted(pair)) for pair in games) == sorted(
        tuple(sorted(pair)) for pair in combinations(bracket.players, 2)
    )
    assert len(bracket.rounds) == total_rounds("round_robin", count)
    for matches in bracket.rounds:
        seated = [player for pairing in matches for player in pairing.players]
        assert sorted(seated) == sorted(bracket.players)


@pytest.mark.parametrize("format", ["knockout", "swiss", "round_robin"])
def test_the_same_seed_and_results_give_the_same_tournament(format: Format) -> None:
    players = players_of(9)

    once = play_out(start(format, players, 77), random.Random(5))
    again = play_out(start(format, players, 77), random.Random(5))
    other = start(format, players, 78)

    assert once == again
    assert Bracket.from_dict(once.to_dict()) == once
    assert other.players != once.players


def test_knockout_places_the_first_two_seeds_in_opposite_halves() -> None:
    bracket = next_round(start("knockout", players_of(8), 3))

    first_half = {player for pairing in bracket.current[:2] for player in pairing.players}
    assert bracket.players[0] in first_half
    assert bracket.players[1] not in first_half


def test_a_drawn_knockout_match_sends_the_better_seed_through() -> None:
    bracket = next_round(start("knockout", players_of(2), 9))

    bracket = record(bracket, 0, None)

    assert champion(bracket) == bracket.players[0]


def test_swiss_standings_break_ties_by_buchholz_then_head_to_head() -> None:
    a, b, c, d = 1, 2, 3, 4
    bracket = Bracket(
        "swiss",
        0,
        (a, b, c, d),
        (
            (Pairing(a, b, True, a), Pairing(c, d, True, c)),
            (Pairing(a, c, True, c), Pairing(b, d, True, b)),
        ),
    )

    table = standings(bracket)

    # c won both; a and b one each; d none.
    assert table[0].player == c
    assert (table[0].points, table[0].wins) == (2 * WIN, 2)
    # a met c (4 points) and b (2): Buchholz 6; b met a (2) and d (0): Buchholz 2.
    assert [s.player for s in table][1:3] == [a, b]
    assert (table[1].buchholz, table[2].buchholz) == (6, 2)


def test_equal_buchholz_is_broken_by_the_match_between_the_tied() -> None:
    a, b = 1, 2
    bracket = Bracket("round_robin", 0, (a, b), ((Pairing(a, b, True, b),),))
    assert [s.player for s in standings(bracket)] == [b, a]

    drawn = Bracket("round_robin", 0, (a, b), ((Pairing(a, b, True, None),),))
    table = standings(drawn)
    assert [s.player for s in table] == [a, b]  # then by seed
    assert [s.points for s in table] == [DRAW, DRAW]


def test_a_swiss_bye_is_a_win_and_goes_to_the_lowest_ranked() -> None:
    bracket = next_round(start("swiss", players_of(3), 4))
    bracket = record(bracket, 0, bracket.current[0].b)

    bracket = next_round(bracket)

    bye = next(pairing for pairing in bracket.current if pairing.b is None)
    loser = bracket.rounds[0][0].a
    assert bye.a == loser
    assert {s.player: s.points for s in standings(bracket)}[loser] == WIN


def test_a_round_can_not_be_paired_before_the_last_is_over() -> None:
    bracket = next_round(start("knockout", players_of(4), 1))

    with pytest.raises(TournamentError):
        next_round(bracket)
    with pytest.raises(TournamentError):
        record(bracket, 0, 99)


def test_sizes_outside_a_format_are_refused() -> None:
    with pytest.raises(TournamentError):
        start("round_robin", players_of(11), 1)
    with pytest.raises(TournamentError):
        start("knockout", players_of(1), 1)
    with pytest.raises(TournamentError):
        start("swiss", [1, 1], 1)
