"""The fairness check's command line: anyone who runs it gets the bot's result, or there is none."""

from __future__ import annotations

import doctest
import json

import pytest

import krigbot.fairness
from krigbot.engine import Game, Rules, run_to_end
from krigbot.engine.steal import StealGame
from krigbot.fairness import fairness_command
from krigbot.sim import main as sim_main


def run_command(capsys: pytest.CaptureFixture[str], command: str) -> dict[str, object]:
    """Run a fairness command as a player would and return what it prints."""
    words = command.split()
    assert words[:3] == ["python", "-m", "krigbot.sim"]
    capsys.readouterr()
    assert sim_main(words[3:]) == 0
    result: dict[str, object] = json.loads(capsys.readouterr().out)
    return result


def test_docstring_examples_hold() -> None:
    result = doctest.testmod(krigbot.fairness)
    assert (result.attempted > 0, result.failed) == (True, 0)


def test_a_time_limit_that_ended_the_game_is_replayed_as_its_round_limit(
    capsys: pytest.CaptureFixture[str],
) -> None:
    game = Game.new(Rules.preset("standard", time_limit=10), seed=5)
    game.play_rounds(7)
    outcome = game.end_by_counting()

    command = fairness_command(game, 5)

    assert command is not None
    assert "max_rounds=7" in command
    assert "time_limit" not in command
    played = run_command(capsys, command)
    assert (played["winners"], played["rounds"]) == (list(outcome.winners), 7)


def test_a_time_limit_that_did_not_end_the_game_is_left_out(
    capsys: pytest.CaptureFixture[str],
) -> None:
    game = Game.new(Rules.preset("klassisk", time_limit=30), seed=11)
    outcome = run_to_end(game)

    command = fairness_command(game, 11)

    assert command == "python -m krigbot.sim play --seed 11 --variant klassisk"
    played = run_command(capsys, command)
    assert (played["winners"], played["rounds"], played["reason"]) == (
        list(outcome.winners),
        outcome.rounds,
        outcome.reason,
    )


def test_a_game_its_time_limit_ended_before_any_round_has_no_command() -> None:
    game = Game.new(Rules.preset("standard", time_limit=1), seed=3)
    game.end_by_counting()

    assert fairness_command(game, 3) is None


def test_a_forfeited_game_has_no_command() -> None:
    game = Game.new(Rules.preset("standard"), seed=8)
    game.play_rounds(2)
    game.forfeit(0)

    assert fairness_command(game, 8) is None


def test_a_steal_war_game_has_no_command() -> None:
    game = StealGame.new(Rules.preset("stjel"), seed=8)
    game.play_to_end()

    assert fairness_command(game, 8) is None
