"""One interface for every kind of game: the registry and the members plain games answer."""

from __future__ import annotations

import pytest

from krigbot.engine import (
    ChoiceError,
    DealError,
    Game,
    Rules,
    RulesError,
    StateError,
    StealGame,
    find_variant,
    load_game,
    new_game,
    parse_cards,
    variants_with_choices,
)


def test_every_kind_is_found_by_its_name_and_aliases() -> None:
    assert find_variant("krig") is Game
    assert find_variant("stjel") is StealGame
    assert find_variant(" Steal ") is StealGame
    with pytest.raises(RulesError, match="unknown variant"):
        find_variant("chess")


def test_the_rules_choose_the_kind_of_a_new_game() -> None:
    assert type(new_game(Rules.preset("klassisk"), 3)) is Game
    assert type(new_game(Rules.preset("stjel"), 3)) is StealGame


@pytest.mark.parametrize("preset", ["standard", "stjel"])
def test_a_saved_game_of_either_kind_loads_with_the_same_future(preset: str) -> None:
    game = new_game(Rules.preset(preset), 11)
    game.play_rounds(5)
    loaded = load_game(game.to_dict())
    assert type(loaded) is type(game)
    assert loaded.play_to_end() == game.copy().play_to_end()


@pytest.mark.parametrize(("kind", "preset"), [(Game, "stjel"), (StealGame, "standard")])
def test_a_kind_refuses_to_deal_the_rules_of_the_other(
    kind: type[Game | StealGame], preset: str
) -> None:
    piles = [parse_cards(["AS", "2S"]), parse_cards(["KH", "3H"])]
    with pytest.raises(DealError, match=kind.name):
        kind(Rules.preset(preset), piles, seed=1)


def test_a_save_of_an_unknown_kind_is_refused() -> None:
    with pytest.raises(StateError):
        load_game({"format": 1, "kind": "chess"})


def test_a_plain_game_waits_for_no_choice_and_refuses_one() -> None:
    game = new_game(Rules.preset("standard"), 5)
    assert (game.pending(), game.in_battle, game.has_choices) == ((), False, False)
    assert (game.look(0), game.loot_top(0), game.loot_size(0)) == (None, None, 0)
    with pytest.raises(ChoiceError):
        game.steal(0, [1])
    with pytest.raises(ChoiceError):
        game.play(0)
    with pytest.raises(ChoiceError):
        game.put_on_top(0, parse_cards(["KS"])[0])
    assert game.apply_defaults() is None
    assert game.begin_battle() is not None
    assert game.round == 1


def test_steal_war_plays_rounds_in_a_batch_as_one_at_a_time() -> None:
    batched = new_game(Rules.preset("stjel"), 9)
    one_by_one = new_game(Rules.preset("stjel"), 9)
    last = batched.play_rounds(4)
    for _ in range(4):
        expected = one_by_one.play_round()
    assert (batched.round, last) == (4, expected)
    assert batched.to_dict() == one_by_one.to_dict()


def test_only_a_game_nobody_gave_up_replays_from_its_seed() -> None:
    plain = new_game(Rules.preset("standard", players=3), 2)
    assert plain.replays_from_seed
    plain.forfeit(2)
    assert not plain.replays_from_seed
    assert not new_game(Rules.preset("stjel"), 2).replays_from_seed


@pytest.mark.parametrize("preset", ["standard", "stjel"])
def test_every_move_counts_as_one_more_move_made(preset: str) -> None:
    game = new_game(Rules.preset(preset, players=3), 4)
    seen = [game.moves_made]
    game.play_round()
    seen.append(game.moves_made)
    game.forfeit(2)
    seen.append(game.moves_made)
    assert seen == sorted(set(seen))


def test_the_kinds_with_choices_are_steal_war() -> None:
    assert variants_with_choices() == ("stjel",)
    assert (Game.autoplayable, StealGame.autoplayable) == (True, False)
    assert (Game.has_loot, StealGame.has_loot) == (False, True)
