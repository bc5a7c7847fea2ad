"""Replays: a game rebuilt from its seed, rules and moves shows the same rounds again."""

from __future__ import annotations

import json

from krigbot.engine import Game, Rules
from krigbot.engine.events import LookChoice
from krigbot.engine.replay import replay
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


def test_steal_war_replays_with_the_choices_players_made() -> None:
    game = StealGame.new(Rules.preset("stjel"), seed=2)
    rounds = []
    made_a_choice = False
    while game.outcome is None and game.round < 400:
        played = game.begin_battle()
        while played is None:
            looks = [c for c in game.pending() if isinstance(c, LookChoice)]
            # Play instead of stealing every other time: a choice the defaults would not make.
            if game.round % 2:
                played = game.play(looks[0].seat)
                made_a_choice = True
            else:
                played = game.steal(looks[0].seat, looks[0].can_steal[:1])
        rounds.append(played)
        top = game.pending()
        if top and game.round % 3 == 0:
            choice = top[0]
            game.put_on_top(choice.seat, choice.cards[0])  # type: ignore[union-attr]
    assert made_a_choice
    assert list(replay(json.loads(json.dumps(game.to_dict())))) == rounds


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
