"""The fast path (krigbot.engine.fast) against play_round, for every option; and `eternal`.

``run_to_end`` plays two-player battles and wars inline, so these sweeps are the guard that the
inline path stays the same game as ``play_round`` repeated: same outcome, and the same saved game
at the end. :data:`SWEEP` names values for every field of ``Rules`` (a test fails when a field
has none), and every value of every option is played both ways.
"""

from __future__ import annotations

import dataclasses
import itertools
import random
from collections.abc import Callable, Iterator
from functools import partial
from typing import Any

import pytest

from krigbot.engine import Game, Rules, fast, find_repetition, run_to_end
from tests.support.deals import comparable, deal, play, random_piles, watch

SWEEP: dict[str, list[Any]] = {
    "players": [2, 3, 4],
    "face_down": [1, 3, 5, "rank"],
    "shortage": ["lose", "last_card"],
    "pickup": ["winner_first", "table", "shuffled"],
    "shuffle_won": [False, True],
    "jokers": [0, 2],
    "decks": [1, 2],
    "max_rounds": [None, 150],
    "time_limit": [None, 5],
    "target_tricks": [None, 12],
    "points": [False, True],
    "war_players": ["tied", "all"],
    "wide_war": [False, True],
    "two_beats_ace": [False, True],
    "lowest_wins": [False, True],
    "teams": [False, True],
    "variant": ["krig"],  # Steal War is a game of its own choices, with no fast path
    "preset_name": ["standard", "klassisk"],
}
"""Values of every option of ``Rules`` to play both ways: a new option needs its own here."""
COMPANIONS: dict[tuple[str, Any], dict[str, Any]] = {
    ("points", True): {"max_rounds": 60},
    ("teams", True): {"players": 4},
}
"""What a value needs beside it to be valid rules."""
FACE_DOWN: list[int | str] = SWEEP["face_down"]
SHORTAGE: list[str] = SWEEP["shortage"]
PICKUP: list[str] = SWEEP["pickup"]
DECKS: dict[str, dict[str, int]] = {
    "deck": {},
    "jokers": {"jokers": 2},
    "two_decks": {"decks": 2},
}
ENDS: dict[str, dict[str, Any]] = {
    "no_limit": {},
    "max_rounds": {"max_rounds": 150},
    "target": {"target_tricks": 12},
    "points": {"points": True, "max_rounds": 60},
    # Two players reach 5 tricks by round 9 at the latest, often in it: both ends at once.
    "limit_and_target": {"max_rounds": 9, "target_tricks": 5},
}
# Few ranks: wars, repeated wars and running short come often, and the games are short.
SMALL_RANKS = ["89TJ", "2345", "A"]

Factory = Callable[[], Game]


def deals_for(rules: Rules, index: int) -> Iterator[tuple[str, Factory]]:
    """A full shuffled deal and a few small deals of few ranks, different for each case."""
    seed = 1000 + index
    yield f"new({seed})", partial(Game.new, rules, seed)
    rng = random.Random(index)
    players = rules.players
    for ranks in SMALL_RANKS:
        per_pile = rng.randint(1, min(13, 4 * len(ranks) // players))
        piles = random_piles(rng, players, per_pile, ranks)
        if rules.decks == 2:
            piles = [p + p[: per_pile // 2] for p in piles]  # the second deck's copies
        make = partial(Game.from_piles, rules, piles, seed=rng.randrange(1 << 30))
        yield f"piles({ranks},{per_pile})", make


def assert_same_game(make: Factory, label: str, mid_game: int) -> None:
    slow = make()
    every = play(slow, 1_000_000)
    assert slow.outcome is not None

    # In batches (/flip count:N): the same game, and each batch's last round in full.
    for batch in (2, 7, 50):
        batched = make()
        while not batched.finished:
            before = batched.round
            last = batched.play_rounds(batch)
            assert batched.round == min(before + batch, len(every)), label
            assert last == every[batched.round - 1], label
        assert comparable(batched) == comparable(slow), label

    fast = make()
    assert run_to_end(fast) == slow.outcome, label
    assert comparable(fast) == comparable(slow), label

    # From the middle of the game: detection already done, counters already running.
    fast = make()
    play(fast, mid_game)
    assert run_to_end(fast) == slow.outcome, label
    assert comparable(fast) == comparable(slow), label


def test_every_option_of_the_rules_has_values_to_sweep() -> None:
    assert set(SWEEP) == {field.name for field in dataclasses.fields(Rules)}


def single_option_cases() -> Iterator[Any]:
    for index, (name, value) in enumerate(
        (name, value) for name, values in SWEEP.items() for value in values
    ):
        yield pytest.param(index, name, value, id=f"{name}={value}")


@pytest.mark.parametrize(("index", "name", "value"), list(single_option_cases()))
def test_every_value_of_every_option_is_the_same_game_both_ways(
    index: int, name: str, value: Any
) -> None:
    options = {name: value, **COMPANIONS.get((name, value), {})}
    rules = dataclasses.replace(Rules.preset("standard"), **options)
    # A full deal for 3–4 players may take very long to repeat: give it a round limit.
    full = rules if rules.players == 2 or rules.max_rounds else rules.replace(max_rounds=400)
    for label, make in deals_for(rules, index):
        if label.startswith("new"):
            make = partial(Game.new, full, 1000 + index)
        assert_same_game(make, label, mid_game=1 + index % 11)


@pytest.fixture
def fast_options() -> Iterator[dict[str, Any]]:
    """The fast path's declared options, to change for one test and restore after it."""
    saved = dict(fast.FAST_OPTIONS)
    fast.plays_inline.cache_clear()
    yield fast.FAST_OPTIONS
    fast.FAST_OPTIONS.clear()
    fast.FAST_OPTIONS.update(saved)
    fast.plays_inline.cache_clear()


def test_the_fast_path_declares_only_options_the_rules_have() -> None:
    assert set(fast.FAST_OPTIONS) <= {field.name for field in dataclasses.fields(Rules)}


def test_an_option_the_fast_path_does_not_declare_is_played_by_the_general_path(
    fast_options: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    rules = Rules.preset("klassisk")
    assert fast.plays_inline(rules)
    del fast_options["jokers"]
    fast.plays_inline.cache_clear()
    assert not fast.plays_inline(rules)
    calls: list[int] = []
    unrecorded = Game.play_unrecorded

    def counted(game: Game) -> object:
        calls.append(1)
        return unrecorded(game)

    monkeypatch.setattr(Game, "play_unrecorded", counted)
    slow = Game.new(rules, 4)
    play(slow, 1_000_000)
    calls.clear()
    fast_game = Game.new(rules, 4)
    assert run_to_end(fast_game) == slow.outcome
    assert comparable(fast_game) == comparable(slow)
    assert len(calls) == slow.round


def test_a_value_the_fast_path_does_not_declare_is_played_by_the_general_path(
    fast_options: dict[str, Any],
) -> None:
    fast_options["face_down"] = frozenset({1, 5, "rank"})
    fast.plays_inline.cache_clear()
    assert fast.plays_inline(Rules.preset("standard"))
    assert not fast.plays_inline(Rules.preset("klassisk"))


def two_player_cases() -> Iterator[Any]:
    for index, (face_down, shortage, pickup, deck, end) in enumerate(
        itertools.product(FACE_DOWN, SHORTAGE, PICKUP, DECKS, ENDS)
    ):
        yield pytest.param(
            index, face_down, shortage, pickup, deck, end,
            id=f"fd{face_down}-{shortage}-{pickup}-{deck}-{end}",
        )  # fmt: skip


@pytest.mark.parametrize(
    ("index", "face_down", "shortage", "pickup", "deck", "end"), list(two_player_cases())
)
def test_fast_path_two_players_is_the_same_game(
    index: int, face_down: int | str, shortage: str, pickup: str, deck: str, end: str
) -> None:
    rules = Rules.preset(
        "standard",
        face_down=face_down,
        shortage=shortage,
        pickup=pickup,
        wide_war=index % 2 == 1,  # nothing with two players, as the fast path assumes
        **DECKS[deck],
        **ENDS[end],
    )
    for label, make in deals_for(rules, index):
        assert_same_game(make, label, mid_game=1 + index % 17)


def general_cases() -> Iterator[Any]:
    seats = {"2p": (2, False), "3p": (3, False), "4p": (4, False), "teams": (4, True)}
    combos = itertools.product(
        seats, [False, True], ["tied", "all"], SHORTAGE, PICKUP, [False, True]
    )
    for index, (seat_name, shuffle_won, war_players, shortage, pickup, wide) in enumerate(combos):
        players, teams = seats[seat_name]
        if players == 2 and not shuffle_won:
            continue  # the two-player sweep above
        yield pytest.param(
            index, players, teams, shuffle_won, war_players, shortage, pickup, wide,
            id=f"{seat_name}-{'shuffle_won' if shuffle_won else 'under'}-{war_players}"
            f"-{shortage}-{pickup}{'-wide_war' if wide else ''}",
        )  # fmt: skip


@pytest.mark.parametrize(
    ("index", "players", "teams", "shuffle_won", "war_players", "shortage", "pickup", "wide"),
    list(general_cases()),
)
def test_fast_path_more_players_teams_and_shuffle_won_is_the_same_game(
    index: int,
    players: int,
    teams: bool,
    shuffle_won: bool,
    war_players: str,
    shortage: str,
    pickup: str,
    wide: bool,
) -> None:
    face_down = FACE_DOWN[index % len(FACE_DOWN)]
    end = list(ENDS)[index // 2 % len(ENDS)]  # wide_war alternates: every end with and without
    options: dict[str, Any] = {
        "face_down": face_down,
        "shortage": shortage,
        "pickup": pickup,
        "shuffle_won": shuffle_won,
        "war_players": war_players,
        "wide_war": wide,
        **ENDS[end],
    }
    rules = Rules.preset("lag" if teams else "standard", players=players, **options)
    # A full deal for 3–4 players may take very long to repeat (small deals do not), so the
    # full deal gets a round limit when it has none.
    full = rules if players == 2 or rules.max_rounds else rules.replace(max_rounds=400)
    seed = 1000 + index
    for label, make in deals_for(rules, index):
        if label.startswith("new"):
            make = partial(Game.new, full, seed)
        assert_same_game(make, label, mid_game=1 + index % 13)


# ------------------------------------------------------------------- a difference that was fixed


def test_fast_path_puts_both_players_out_when_last_cards_tie() -> None:
    slow = deal("klassisk", "4C 4S", "4H 4D")
    slow.play_round()
    assert slow.outcome is not None
    assert (slow.outcome.reason, slow.outcome.drawn) == ("war_shortage", (0, 1))
    assert slow.in_game == [False, False]
    fast = deal("klassisk", "4C 4S", "4H 4D")
    assert run_to_end(fast) == slow.outcome
    assert fast.in_game == [False, False]
    assert fast.to_dict() == slow.to_dict()


# ------------------------------------------------------------------------ eternal

# Deals found to repeat forever, each after more rounds than its cycle (the first repeated
# position is not the deal itself).
ETERNAL_DEALS: list[tuple[str, dict[str, Any], int]] = [
    ("standard", {"pickup": "table"}, 5),
    ("klassisk", {"pickup": "table"}, 2),
    ("klassisk", {"pickup": "table"}, 27),
    ("razboi", {"pickup": "table"}, 84),
    ("fem", {"pickup": "table"}, 65),
    ("jokere", {"pickup": "table"}, 9),
    ("dobbel", {"pickup": "table"}, 31),
    ("standard", {"players": 3, "pickup": "winner_first"}, 1),
    ("standard", {"players": 3, "pickup": "winner_first", "war_players": "all"}, 2),
    ("standard", {"players": 4, "pickup": "table"}, 12),
    ("standard", {"players": 4, "pickup": "table", "war_players": "all"}, 2),
    ("lag", {"pickup": "table"}, 5),
]


@pytest.mark.parametrize(
    ("preset", "options", "seed"),
    ETERNAL_DEALS,
    ids=[f"{p}-{'-'.join(map(str, o.values()))}-seed{s}" for p, o, s in ETERNAL_DEALS],
)
def test_eternal_ends_at_the_first_repeated_position(
    preset: str, options: dict[str, Any], seed: int
) -> None:
    rules = Rules.preset(preset, **options)
    expected = find_repetition(Game.new(rules, seed))
    game = Game.new(rules, seed)
    _, repeat = watch(game)
    assert repeat is not None
    assert game.outcome is not None
    assert game.outcome.reason == "eternal"
    assert (game.outcome.rounds, game.outcome.cycle) == repeat
    assert expected == repeat
    fast = Game.new(rules, seed)
    assert run_to_end(fast) == game.outcome
    assert fast.to_dict() == game.to_dict()


def small_deterministic_cases() -> Iterator[Any]:
    rng = random.Random(7)
    presets = ["standard", "klassisk", "razboi", "fem"]
    for index in range(60):
        players = 2 + index % 3
        pickup = ["winner_first", "table"][index % 2]
        preset = presets[index % 4]
        ranks = "".join(rng.sample("23456789TJQKA", rng.randint(1, 4)))
        per_pile = rng.randint(1, min(10, 4 * len(ranks) // players))
        piles = random_piles(rng, players, per_pile, ranks)
        yield pytest.param(preset, pickup, piles, id=f"{index}-{preset}-{pickup}-{players}p")


@pytest.mark.parametrize(("preset", "pickup", "piles"), list(small_deterministic_cases()))
def test_eternal_or_not_agrees_with_brute_force_on_small_deals(
    preset: str, pickup: str, piles: list[list[int]]
) -> None:
    rules = Rules.preset(preset, pickup=pickup)
    game = Game.from_piles(rules, piles)
    _, repeat = watch(game)
    assert game.outcome is not None
    if repeat is None:
        assert game.outcome.reason != "eternal"
        assert find_repetition(Game.from_piles(rules, piles)) is None
    else:
        assert (game.outcome.reason, game.outcome.rounds, game.outcome.cycle) == (
            "eternal",
            *repeat,
        )
        assert find_repetition(Game.from_piles(rules, piles)) == repeat
    fast = Game.from_piles(rules, piles)
    assert run_to_end(fast) == game.outcome


def test_every_field_of_the_rules_is_declared_by_the_fast_path() -> None:
    # A field left out would send every game, whatever its value, down the general path.
    assert set(fast.FAST_OPTIONS) == {field.name for field in dataclasses.fields(Rules)}


def test_a_field_the_fast_path_does_not_declare_sends_even_its_default_games_down_the_general_path(
    fast_options: dict[str, Any],
) -> None:
    standard = Rules.preset("standard")
    assert not standard.two_beats_ace
    assert fast.plays_inline(standard)
    del fast_options["two_beats_ace"]
    fast.plays_inline.cache_clear()
    assert not fast.plays_inline(standard)
