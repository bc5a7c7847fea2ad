"""Properties every game must have, whatever the options and the deal (hypothesis)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from krigbot.engine import (
    END_REASONS,
    PRESETS,
    Game,
    Round,
    Rules,
    StateError,
    full_deck,
    run_to_end,
)
from krigbot.engine.rules import FACE_DOWN_CHOICES, PICKUPS, SHORTAGES, WAR_PLAYERS
from tests.support.deals import comparable, play, roundtrip, watch

PLAYABLE_PRESETS = [name for name in PRESETS if name not in ("lag", "stjel")]

FAST = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
SLOW = settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@dataclass(frozen=True)
class Setup:
    """A way to start a game: rules and either a seed for a full deal or explicit piles."""

    rules: Rules
    seed: int
    piles: tuple[tuple[int, ...], ...] | None = None

    def start(self) -> Game:
        if self.piles is None:
            return Game.new(self.rules, self.seed)
        return Game.from_piles(self.rules, self.piles, seed=self.seed)

    @property
    def cards(self) -> int:
        """How many cards the game is dealt from (in piles or set aside at the deal)."""
        if self.piles is None:
            return self.rules.deck_size
        return sum(len(p) for p in self.piles)


@st.composite
def rules_for(draw: st.DrawFn, players: int, *, limit: bool = False) -> Rules:
    """Any rules for ``players`` seats; with ``limit``, always a round limit."""
    teams = players == 4 and draw(st.booleans())
    preset = "lag" if teams else draw(st.sampled_from(PLAYABLE_PRESETS))
    options: dict[str, Any] = {
        "pickup": draw(st.sampled_from(PICKUPS)),
        "shortage": draw(st.sampled_from(SHORTAGES)),
        "shuffle_won": draw(st.booleans()),
        "war_players": draw(st.sampled_from(WAR_PLAYERS)),
        "wide_war": draw(st.booleans()),
    }
    if draw(st.booleans()):
        options["face_down"] = draw(st.sampled_from(FACE_DOWN_CHOICES))
    if limit or draw(st.integers(0, 3)) == 0:
        options["max_rounds"] = draw(st.integers(1, 400))
    if preset == "lag":
        return Rules.preset(preset, **options)
    return Rules.preset(preset, players=players, **options)


@st.composite
def small_deals(draw: st.DrawFn) -> Setup:
    """Up to 13 cards a seat from a few ranks, so that wars and shortages are frequent."""
    players = draw(st.integers(2, 4))
    rules = draw(rules_for(players))
    deck = full_deck(decks=rules.decks, jokers=rules.jokers)
    ranks = set(draw(st.lists(st.integers(2, 14), min_size=1, max_size=13)))
    cards = [card for card in deck if card >> 2 in ranks or card >> 2 == 15]
    cards = draw(st.permutations(cards))
    sizes = [draw(st.integers(1, 13)) for _ in range(players)]
    while sum(sizes) > len(cards):  # one rank has at least 4 cards: every seat keeps one
        sizes[sizes.index(max(sizes))] -= 1
    piles: list[tuple[int, ...]] = []
    start = 0
    for size in sizes:
        piles.append(tuple(cards[start : start + size]))
        start += size
    return Setup(rules, draw(st.integers(0, 2**32)), tuple(piles))


@st.composite
def full_deals(draw: st.DrawFn) -> Setup:
    """A real shuffled deal. Three or four seats always get a round limit: their deterministic
    games can take a very long time to repeat (the fast sweep covers some by fixed seeds)."""
    players = draw(st.integers(2, 4))
    rules = draw(rules_for(players, limit=players > 2))
    return Setup(rules, draw(st.integers(0, 2**32)))


any_deal = st.one_of(small_deals(), full_deals())


def table_cards(played: Round) -> int:
    """Count the cards that were on the table in a round."""
    cards = len(played.battle)
    for step in played.war_steps:
        cards += sum(len(down) for down in step.face_down)
        cards += sum(card is not None for card in step.face_up)
    return cards


# ------------------------------------------------------------------------ conservation


@FAST
@given(any_deal)
def test_cards_are_conserved_every_round(setup: Setup) -> None:
    game = setup.start()
    assert sum(game.counts) + game.set_aside == setup.cards
    while not game.finished and game.round < 3000:
        played = game.play_round()
        on_table = table_cards(played)
        # the table goes to the winner or is set aside, all of it
        assert played.taken + played.set_aside == on_table
        assert (played.winner is None) == (played.taken == 0)
        assert sum(played.counts) + game.set_aside == setup.cards
        assert played.counts == game.counts
        for seat in played.eliminated:
            assert played.counts[seat] == 0
        assert all(count >= 0 for count in played.counts)


@FAST
@given(any_deal)
def test_every_battle_is_fought_by_the_players_still_in_the_game(setup: Setup) -> None:
    game = setup.start()
    while not game.finished and game.round < 500:
        in_game = [seat for seat in range(game.players) if game.in_game[seat]]
        played = game.play_round()
        assert [seat for seat, _ in played.battle] == in_game
        for step in played.war_steps:
            assert set(step.fighters) <= set(in_game)
            assert set(step.knocked_out) <= set(step.short) or game.rules.teams


# ------------------------------------------------------------------------ reproducible


@FAST
@given(any_deal)
def test_same_seed_and_rules_give_the_same_game(setup: Setup) -> None:
    first, second = setup.start(), setup.start()
    assert first.to_dict() == second.to_dict()
    assert play(first, 2000) == play(second, 2000)
    assert first.to_dict() == second.to_dict()


@SLOW
@given(any_deal, st.integers(0, 300))
def test_save_and_restore_at_any_round_gives_the_same_future(setup: Setup, at: int) -> None:
    game = setup.start()
    play(game, at)
    saved = json.loads(json.dumps(game.to_dict()))
    restored = Game.from_dict(saved)
    assert restored.to_dict() == game.to_dict()
    assert play(restored, 3000) == play(game, 3000)
    assert restored.to_dict() == game.to_dict()
    assert roundtrip(game).to_dict() == game.to_dict()


@SLOW
@given(any_deal, st.integers(0, 200))
def test_copy_has_the_same_future_and_leaves_the_original_alone(setup: Setup, at: int) -> None:
    game = setup.start()
    play(game, at)
    before = game.to_dict()
    twin = game.copy()
    future = play(twin, 3000)
    assert game.to_dict() == before
    assert play(game, 3000) == future


# ------------------------------------------------------------------------ every game ends


@SLOW
@given(small_deals())
def test_every_game_ends_or_is_declared_eternal(setup: Setup) -> None:
    game = setup.start()
    outcome = run_to_end(game)
    rules = setup.rules
    assert game.finished
    assert outcome.reason in END_REASONS
    assert outcome.rounds == game.round <= 100_000
    assert not set(outcome.winners) & set(outcome.drawn)
    if rules.teams:  # rules §9: the result is the team's
        for first, second in ((0, 2), (1, 3)):
            assert (first in outcome.winners) == (second in outcome.winners)
            assert (first in outcome.drawn) == (second in outcome.drawn)
    if outcome.reason == "eternal":
        assert rules.detects_eternal
        assert outcome.cycle is not None
        assert 1 <= outcome.cycle <= outcome.rounds
        _, repeat = watch(setup.start())
        assert repeat == (outcome.rounds, outcome.cycle)
    if outcome.reason == "round_limit":
        assert outcome.rounds == rules.max_rounds
    if outcome.reason == "target":
        assert rules.target_tricks is not None
    if outcome.reason == "all_cards":
        (winner_unit,) = {seat % 2 if rules.teams else seat for seat in outcome.winners}
        holders = {
            seat % 2 if rules.teams else seat for seat in range(game.players) if game.counts[seat]
        }
        assert holders == {winner_unit}


@SLOW
@given(small_deals())
def test_eternal_detection_agrees_with_brute_force(setup: Setup) -> None:
    rules = setup.rules.replace(
        pickup="table" if setup.rules.pickup == "shuffled" else setup.rules.pickup,
        shuffle_won=False,
        max_rounds=None,
        target_tricks=None,
        points=False,
    )
    assert rules.detects_eternal
    game = Game.from_piles(rules, setup.piles or (), seed=setup.seed)
    played, repeat = watch(game)
    assert game.outcome is not None
    if repeat is None:
        assert game.outcome.reason != "eternal"
    else:
        assert game.outcome.reason == "eternal"
        assert (game.outcome.rounds, game.outcome.cycle) == repeat
        n = game.players
        in_play = [game.in_game[s] or (rules.teams and game.in_game[(s + 2) % n]) for s in range(n)]
        assert game.outcome.drawn == tuple(s for s in range(game.players) if in_play[s])
    assert len(played) == game.outcome.rounds


# ------------------------------------------------------------------------ the fast path


@FAST
@given(any_deal)
def test_run_to_end_gives_the_same_game_as_play_round(setup: Setup) -> None:
    slow, fast = setup.start(), setup.start()
    play(slow, 1_000_000)
    outcome = run_to_end(fast)
    assert slow.outcome == outcome
    assert comparable(fast) == comparable(slow)


@FAST
@given(any_deal, st.integers(1, 100))
def test_run_to_end_from_the_middle_of_a_game_gives_the_same_end(setup: Setup, at: int) -> None:
    slow, fast = setup.start(), setup.start()
    play(slow, at)
    play(fast, at)
    play(slow, 1_000_000)
    assert run_to_end(fast) == slow.outcome
    assert comparable(fast) == comparable(slow)


@pytest.mark.parametrize(
    "damage",
    [
        lambda d: d.update(piles=[[1, 2], [3]]),
        lambda d: d.update(piles="KS"),
        lambda d: d.pop("rules"),
        lambda d: d.update(format=99),
        lambda d: d.update(rng=[3]),
        lambda d: d.update(eternal=None),
    ],
)
def test_a_damaged_save_is_refused_with_a_state_error(damage: Any) -> None:
    saved = Game.new(Rules.preset("standard", pickup="shuffled"), 3).to_dict()
    damage(saved)
    with pytest.raises(StateError):
        Game.from_dict(saved)
