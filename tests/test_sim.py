"""The `python -m krigbot.sim` command line: results as JSON, one clear line for bad input."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from krigbot.engine import Game, Rules, new_game, run_to_end
from krigbot.engine.tournament import next_round, start
from krigbot.sim import play_command
from tests.support.doctests import assert_every_example_runs
from tests.support.house_rules import HOUSE_RULES, with_house_rule
from tests.support.sim import deal_file, run


def test_play_deal_reports_the_queen_taking_the_ten(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, data, _ = run(capsys, "play", "--deal", deal_file(tmp_path, [["QC"], ["TD"]]))
    assert status == 0
    assert data is not None
    assert (data["result"], data["winner"], data["reason"]) == ("win", 0, "all_cards")
    assert (data["rounds"], data["war_rounds"], data["war_steps"]) == (1, 0, 0)
    assert data["counts"] == [2, 0]


def test_play_trace_shows_the_war_of_rules_example(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # rules §12 (000): both turn an 8, one card down each, then jack against 7: six cards.
    deal = deal_file(tmp_path, [["8S", "2H", "JC"], ["8D", "3S", "7H"]])
    status, data, _ = run(capsys, "play", "--deal", deal, "--trace")
    assert status == 0
    assert data is not None
    first = data["trace"][0]
    assert first == {
        "round": 1,
        "winner": 0,
        "cards": 6,
        "war_steps": 1,
        "counts": [6, 0],
        "battle": ["8S", "8D"],
    }
    assert data["war_rounds"] == 1


def test_play_set_changes_the_rules(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    deal = deal_file(tmp_path, [["8S", "2H", "2C", "2D", "JC"], ["8D", "3S", "3C", "3D", "7H"]])
    _, one_down, _ = run(capsys, "play", "--deal", deal, "--trace")
    _, three_down, _ = run(capsys, "play", "--deal", deal, "--trace", "--set", "face_down=3")
    assert one_down is not None
    assert three_down is not None
    assert one_down["trace"][0]["cards"] == 6  # 8, 2, 2 against 8, 3, 3: the 2 loses to the 3
    assert three_down["trace"][0]["cards"] == 10
    assert three_down["rules"]["face_down"] == 3


def test_play_set_wide_war_makes_three_tied_fight_one_down(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    deal = deal_file(tmp_path, [["8S", "2S", "KS"], ["8H", "2H", "QH"], ["8D", "2D", "JD"]])
    argv = ["play", "--deal", deal, "--trace", "--set", "face_down=3"]
    _, narrow, _ = run(capsys, *argv)
    _, wide, _ = run(capsys, *argv, "--set", "wide_war=true")
    assert narrow is not None
    assert wide is not None
    assert narrow["reason"] == "war_shortage"  # 3 down: all three are short
    assert wide["rules"]["wide_war"] is True
    assert (wide["trace"][0]["winner"], wide["trace"][0]["cards"]) == (0, 9)


@pytest.mark.parametrize(
    ("key", "piles"),
    [
        ("two_beats_ace", [["2S", "5S"], ["AH", "9H"]]),  # the 2 takes the ace
        ("lowest_wins", [["3S", "5S"], ["KH", "9H"]]),  # Peace: the 3 takes the king
    ],
)
def test_play_set_a_house_rule_lets_the_first_players_lower_card_take_the_battle(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], key: str, piles: list[list[str]]
) -> None:
    deal = deal_file(tmp_path, piles)
    _, plain, _ = run(capsys, "play", "--deal", deal, "--trace")
    status, ruled, _ = run(capsys, "play", "--deal", deal, "--trace", "--set", f"{key}=true")
    assert plain is not None
    assert ruled is not None
    assert status == 0
    assert plain["trace"][0]["winner"] == 1
    assert (ruled["rules"][key], ruled["trace"][0]["winner"]) == (True, 0)


def test_peace_with_two_beats_ace_is_refused_in_one_line_naming_both(
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv = ["--set", "lowest_wins=true", "--set", "two_beats_ace=true"]
    status, data, err = run(capsys, "play", "--seed", "1", *argv)
    assert (status, data) == (2, None)
    assert "two_beats_ace and lowest_wins cannot be played together" in err
    assert len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("key", HOUSE_RULES)
def test_play_set_a_house_rule_plays_the_seeded_game_by_it_as_its_command_says(
    capsys: pytest.CaptureFixture[str], key: str
) -> None:
    rules = with_house_rule(key)
    assert f"--set {key}=true" in play_command(rules, 3)

    status, data, _ = run(capsys, "play", "--seed", "3", "--set", f"{key}=true")

    assert status == 0
    assert data is not None
    assert data["rules"][key] is True
    assert Rules.from_dict(data["rules"]) == rules
    assert data["result"] in ("win", "draw")
    outcome = run_to_end(Game.new(rules, 3))
    assert (data["winners"], data["rounds"], data["reason"]) == (
        list(outcome.winners),
        outcome.rounds,
        outcome.reason,
    )


@pytest.mark.parametrize("key", HOUSE_RULES)
def test_a_house_rule_set_for_steal_war_is_refused_in_one_line_naming_it(
    capsys: pytest.CaptureFixture[str], key: str
) -> None:
    argv = ["--seed", "1", "--variant", "stjel", "--set", f"{key}=true"]
    status, data, err = run(capsys, "play", *argv)
    assert (status, data) == (2, None)
    (line,) = err.strip().splitlines()
    assert f"{key} cannot be set for variant stjel" in line


def test_play_best_of_three_rounds(capsys: pytest.CaptureFixture[str]) -> None:
    status, data, _ = run(capsys, "play", "--seed", "3", "--variant", "best3")
    assert status == 0
    assert data is not None
    assert data["reason"] == "target"
    assert 2 <= data["rounds"] <= 3
    assert data["rules"]["target_tricks"] == 2


def test_play_seed_matches_the_engine(capsys: pytest.CaptureFixture[str]) -> None:
    status, data, _ = run(capsys, "play", "--seed", "42", "--variant", "klassisk")
    game = Game.new(Rules.preset("klassisk"), 42)
    outcome = run_to_end(game)
    assert status == 0
    assert data is not None
    assert data["rounds"] == outcome.rounds
    assert data["reason"] == outcome.reason
    assert data["counts"] == list(game.counts)
    _, again, _ = run(capsys, "play", "--seed", "42", "--variant", "klassisk")
    assert again == data


def test_play_three_players_from_a_seed(capsys: pytest.CaptureFixture[str]) -> None:
    status, data, _ = run(capsys, "play", "--seed", "5", "--players", "3")
    assert status == 0
    assert data is not None
    assert len(data["counts"]) == 3
    assert sum(data["counts"]) == 51  # one card was set aside at the deal
    assert data["rules"]["pickup"] == "shuffled"


def test_stats_summarises_every_game(capsys: pytest.CaptureFixture[str]) -> None:
    status, data, _ = run(capsys, "stats", "--games", "200", "--seed", "1")
    assert status == 0
    assert data is not None
    assert data["games"] == 200
    assert sum(data["wins"]) + data["draws"] == 200
    assert data["median_rounds"] <= data["p90_rounds"] <= data["p99_rounds"] <= data["max_rounds"]
    assert 0 <= data["eternal_fraction"] <= 1
    assert data["war_rounds_per_game"] > 0


def test_stats_counts_eternal_games_with_table_pickup(capsys: pytest.CaptureFixture[str]) -> None:
    # rules §6: deterministic `table` pickup never ends in a large share of games with f = 1.
    _, data, _ = run(capsys, "stats", "--games", "300", "--seed", "1", "--set", "pickup=table")
    assert data is not None
    assert data["eternal_fraction"] > 0.2
    assert data["draws"] >= round(data["eternal_fraction"] * 300)


def test_stats_on_two_processes_gives_the_same_figures(capsys: pytest.CaptureFixture[str]) -> None:
    _, one, _ = run(capsys, "stats", "--games", "120", "--seed", "9")
    _, two, _ = run(capsys, "stats", "--games", "120", "--seed", "9", "--jobs", "2")
    assert one is not None
    assert two is not None
    one.pop("games_per_second")
    two.pop("games_per_second")
    assert one == two


def test_stats_plays_steal_war_by_its_defaults(capsys: pytest.CaptureFixture[str]) -> None:
    status, data, _ = run(capsys, "stats", "--games", "50", "--seed", "3", "--variant", "stjel")
    assert status == 0
    assert data is not None
    assert data["games"] == 50
    assert data["rules"]["jokers"] == 2


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["play", "--seed", "1", "--variant", "nope"], "unknown variant"),
        (["play", "--seed", "1", "--set", "colour=red"], "unknown option"),
        (["play", "--seed", "1", "--set", "face_down=2"], "face_down"),
        (["play", "--seed", "1", "--set", "shuffle_won=maybe"], "shuffle_won"),
        (["play", "--seed", "1", "--set", "face_down"], "KEY=VALUE"),
        (["play", "--seed", "1", "--variant", "stjel", "--set", "shortage=last_card"], "shortage"),
        (
            ["stats", "--games", "5", "--seed", "1", "--variant", "stjel", "--set", "pickup=table"],
            "pickup cannot be set for variant stjel",
        ),
        (["play", "--seed", "1", "--variant", "stjel", "--set", "wide_war=true"], "wide_war"),
        # Steal War does not take these at all: the value it plays by is refused too.
        (
            ["play", "--seed", "1", "--variant", "stjel", "--set", "pickup=winner_first"],
            "pickup cannot be set for variant stjel",
        ),
        (
            ["play", "--seed", "1", "--variant", "stjel", "--set", "shortage=lose"],
            "shortage cannot be set for variant stjel",
        ),
        (
            ["play", "--seed", "1", "--variant", "stjel", "--set", "points=true"],
            "points cannot be set for variant stjel",
        ),
        (["play", "--seed", "x"], "invalid int"),
        (["play"], "exactly one of --deal"),
        (["stats", "--games", "0", "--seed", "1"], "at least 1"),
        (["fly"], "invalid choice"),
    ],
)
def test_bad_arguments_print_one_line_and_exit_2(
    capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    status, data, err = run(capsys, *argv)
    assert status == 2
    assert data is None
    lines = err.strip().splitlines()
    assert len(lines) == 1
    assert message in lines[0]
    assert "Traceback" not in err


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ({"piles": [["QC", "ZZ"], ["TD"]]}, "unknown card code"),
        ({"piles": [["QC", "QC"], ["TD"]]}, "appears 2 times"),
        ({"piles": [["QC"]]}, "2 to 4 piles"),
        ({"piles": [["QC"], ["TD"], ["2S"], ["3S"], ["4S"]]}, "2 to 4 piles"),
        ({"piles": [["QC"], []]}, "at least one card"),
        ({"piles": [["X1"], ["TD"]]}, "not in the deck"),
        ({"cards": []}, "must hold"),
        ("not json at all", "not valid JSON"),
    ],
)
def test_malformed_deals_print_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: Any, message: str
) -> None:
    path = tmp_path / "deal.json"
    path.write_text(content if isinstance(content, str) else json.dumps(content), encoding="utf-8")
    status, data, err = run(capsys, "play", "--deal", str(path))
    assert status == 2
    assert data is None
    assert len(err.strip().splitlines()) == 1
    assert message in err


def test_missing_deal_file_is_reported(capsys: pytest.CaptureFixture[str]) -> None:
    status, _, err = run(capsys, "play", "--deal", "/nonexistent/deal.json")
    assert status == 2
    assert "cannot read deal file" in err


def test_the_module_runs_as_a_program(tmp_path: Path) -> None:
    bad = subprocess.run(
        [sys.executable, "-m", "krigbot.sim", "play", "--seed", "1", "--variant", "nope"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert bad.returncode == 2
    assert bad.stderr.count("\n") == 1
    good = subprocess.run(
        [sys.executable, "-m", "krigbot.sim", "play", "--seed", "7"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert good.returncode == 0
    assert json.loads(good.stdout)["result"] in ("win", "draw")


@pytest.mark.parametrize(
    "rules",
    [
        Rules.preset("standard"),
        Rules.preset("klassisk", pickup="table"),
        Rules.preset("standard", players=3),
        Rules.preset("standard", players=3, pickup="winner_first", max_rounds=200),
        Rules.preset("lag"),
        Rules.preset("poeng", max_rounds=20),
        Rules.preset("razboi", shortage="last_card", war_players="all", players=4),
        Rules.preset("stjel"),
        Rules.preset("best5"),
        Rules.preset("klassisk", players=3, wide_war=False),
    ],
    ids=lambda rules: f"{rules.preset_name}-{rules.players}",
)
def test_play_command_plays_the_same_game_as_the_bot(
    capsys: pytest.CaptureFixture[str], rules: Rules
) -> None:
    # What the game-over message shows, run as anyone would: the same rules, the same result.
    words = play_command(rules, 1234).split()
    assert words[:4] == ["python", "-m", "krigbot.sim", "play"]

    status, data, _ = run(capsys, *words[3:])

    assert status == 0
    assert data is not None
    assert Rules.from_dict(data["rules"]) == rules
    game = new_game(rules, seed=1234)
    outcome = run_to_end(game) if isinstance(game, Game) else game.play_to_end()
    assert (data["winners"], data["rounds"], data["reason"]) == (
        list(outcome.winners),
        outcome.rounds,
        outcome.reason,
    )


@pytest.mark.parametrize("command", ["play", "stats"])
def test_a_time_limit_is_refused_because_sim_has_no_clock(
    capsys: pytest.CaptureFixture[str], command: str
) -> None:
    more = ["--games", "10"] if command == "stats" else []
    status, data, err = run(capsys, command, "--seed", "1", *more, "--set", "time_limit=30")
    assert (status, data) == (2, None)
    (line,) = err.strip().splitlines()
    assert "time_limit needs a clock" in line
    assert "max_rounds" in line  # what to use instead


def test_the_docstring_examples_of_sim_run_and_hold() -> None:
    assert_every_example_runs("krigbot.sim")


def test_pairings_gives_a_tournaments_seeding_and_first_round_from_its_seed(
    capsys: pytest.CaptureFixture[str],
) -> None:
    status, data, _ = run(
        capsys, "pairings", "--format", "knockout", "--players", "5", "--seed", "7"
    )

    bracket = next_round(start("knockout", range(1, 6), 7))
    assert status == 0
    assert data == {
        "format": "knockout",
        "seed": 7,
        "rounds": 3,
        "seeding": list(bracket.players),
        "round_1": [[pairing.a, pairing.b] for pairing in bracket.current],
    }
    assert sum(b is None for _, b in data["round_1"]) == 3  # byes fill eight places


def test_pairings_refuses_a_size_its_format_does_not_take(
    capsys: pytest.CaptureFixture[str],
) -> None:
    status, _, error = run(
        capsys, "pairings", "--format", "round_robin", "--players", "11", "--seed", "1"
    )

    assert status == 2
    assert "round_robin takes 2 to 10 players" in error
