"""Replays: a game rebuilt from its seed, rules and moves shows the same rounds again."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from krigbot.engine import Game, Round, Rules
from krigbot.engine.events import LookChoice
from krigbot.engine.replay import Replaying, replay
from krigbot.engine.rules import PRESETS
from krigbot.engine.steal import StealGame


def test_a_finished_game_replays_round_for_round() -> None:
    game = Game.new(Rules.preset("klassisk"), seed=21)
    rounds = []
    while game.outcome is None:
        rounds.append(game.play_round())
    saved = json.loads(json.dumps(game.to_dict()))
    assert list(replay(saved)) == rounds


def test_a_forfeit_in_a_three_player_game_is_replayed_at_its_round() -> None:
    game = Game.new(Rules.preset("standard", players=3), seed=4)
    rounds = [game.play_round() for _ in range(30)]
    game.forfeit(1)
    while game.outcome is None:
        rounds.append(game.play_round())
    again = list(replay(game.to_dict()))
    assert again == rounds
    assert all(1 not in dict(played.battle) for played in again[30:])


def test_a_game_in_progress_replays_up_to_where_it_is() -> None:
    game = Game.new(Rules.preset("standard"), seed=8)
    rounds = [game.play_round() for _ in range(12)]
    assert list(replay(game.to_dict())) == rounds


def _steal_war_with_choices(
    seed: int, saves: list[dict[str, Any]] | None = None, *, steal_only: bool = False
) -> list[Round]:
    """Play a Steal War game whose players make choices the defaults would not (or, with
    ``steal_only``, always steal); return its rounds (and put a save of it after each round in
    ``saves``)."""
    game = StealGame.new(Rules.preset("stjel"), seed=seed)
    rounds = []
    made_a_choice = False
    while game.outcome is None and game.round < 400:
        played = game.begin_battle()
        while played is None:
            looks = [c for c in game.pending() if isinstance(c, LookChoice)]
            # Play instead of stealing every other time: a choice the defaults would not make.
            if game.round % 2 and not steal_only:
                played = game.play(looks[0].seat)
                made_a_choice = True
            else:
                played = game.steal(looks[0].seat, looks[0].can_steal[:1])
        rounds.append(played)
        top = game.pending()
        if top and game.round % 3 == 0:
            choice = top[0]
            game.put_on_top(choice.seat, choice.cards[0])  # type: ignore[union-attr]
        if saves is not None:
            saves.append(json.loads(json.dumps(game.to_dict())))
    assert made_a_choice or steal_only
    if saves is not None:
        saves.append(json.loads(json.dumps(game.to_dict())))
    return rounds


def test_steal_war_replays_with_the_choices_players_made() -> None:
    saves: list[dict[str, Any]] = []
    rounds = _steal_war_with_choices(2, saves)
    assert list(replay(saves[-1])) == rounds


RULES_PLAYED_ON = [
    *(
        Rules.preset(name)
        for name, options in PRESETS.items()
        if options.get("variant", "krig") == "krig"
    ),
    Rules.preset("standard", players=3),
    Rules.preset("standard", lowest_wins=True),
    Rules.preset("best3", max_rounds=3),
]


@pytest.mark.parametrize("rules", RULES_PLAYED_ON, ids=lambda rules: str(rules.preset_name))
@pytest.mark.parametrize("seed", [1, 7])
def test_a_game_replayed_as_it_is_played_shows_the_rounds_of_a_replay_from_its_seed(
    rules: Rules, seed: int
) -> None:
    # A live page's game is replayed from its save after every few rounds; played on from the
    # last save, its rounds are those a replay from the seed gives.
    game = Game.new(rules, seed)
    steps = random.Random(seed)
    replaying = Replaying()
    while game.outcome is None and game.round < 300:
        for _ in range(steps.randint(1, 4)):
            if game.outcome is None:
                game.play_round()
        saved = json.loads(json.dumps(game.to_dict()))
        assert replaying.rounds(saved) == tuple(replay(saved))


def test_steal_war_replayed_as_it_is_played_follows_the_choices() -> None:
    saves: list[dict[str, Any]] = []
    rounds = _steal_war_with_choices(5, saves)
    replaying = Replaying()
    for saved in saves:
        assert replaying.rounds(saved) == tuple(replay(saved))
    assert replaying.rounds(saves[-1]) == tuple(rounds)
    # The same deal played with other choices is another game: replayed from its seed.
    other: list[dict[str, Any]] = []
    _steal_war_with_choices(5, other, steal_only=True)
    assert replaying.rounds(other[30]) == tuple(replay(other[30])) != tuple(rounds[:31])


def test_a_game_replayed_as_it_is_played_follows_a_forfeit_and_another_game() -> None:
    game = Game.new(Rules.preset("standard", players=3), seed=4)
    replaying = Replaying()
    for _ in range(20):
        game.play_round()
    replaying.rounds(game.to_dict())
    game.forfeit(1)  # the course changes at round 20: not what was played on from the seed
    rounds = [game.play_round() for _ in range(5)]
    saved = game.to_dict()
    assert replaying.rounds(saved)[-5:] == tuple(rounds)
    assert replaying.rounds(saved) == tuple(replay(saved))
    # Handed another game's save, it replays that game, not the one it kept.
    other = Game.new(Rules.preset("standard"), seed=9)
    other_rounds = [other.play_round() for _ in range(3)]
    assert replaying.rounds(other.to_dict()) == tuple(other_rounds)


def test_a_team_game_saved_before_forfeits_were_the_team_s_replays_as_it_was_played() -> None:
    # Until rules §9 made a forfeit the team's, the partner played on: such a saved game still
    # shows the rounds that were played after it.
    game = Game.new(Rules.preset("lag", max_rounds=60), seed=3)
    rounds = [game.play_round() for _ in range(10)]
    game.forfeit(3, alone=True)
    while game.outcome is None:
        rounds.append(game.play_round())
    assert game.round == 60
    assert list(replay(json.loads(json.dumps(game.to_dict())))) == rounds


def test_a_team_game_ended_by_a_forfeit_replays_up_to_it() -> None:
    game = Game.new(Rules.preset("lag"), seed=3)
    rounds = [game.play_round() for _ in range(10)]
    assert game.forfeit(3) is not None
    assert list(replay(json.loads(json.dumps(game.to_dict())))) == rounds
