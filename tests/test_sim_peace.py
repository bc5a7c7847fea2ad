"""`python -m krigbot.sim --set lowest_wins=true` plays Peace (rules §1), or refuses it."""

from __future__ import annotations

from pathlib import Path

import pytest

from krigbot.engine import Rules
from krigbot.sim import play_command
from tests.support.sim import deal_file, run


def test_play_set_lowest_wins_lets_the_lower_card_take_the_battle(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    deal = deal_file(tmp_path, [["3S", "5S"], ["KH", "9H"]])
    _, plain, _ = run(capsys, "play", "--deal", deal, "--trace")
    status, peace, _ = run(capsys, "play", "--deal", deal, "--trace", "--set", "lowest_wins=true")
    assert plain is not None
    assert peace is not None
    assert status == 0
    assert plain["trace"][0]["winner"] == 1
    assert (peace["rules"]["lowest_wins"], peace["trace"][0]["winner"]) == (True, 0)


def test_a_seeded_peace_game_plays_to_its_end_and_its_command_says_so(
    capsys: pytest.CaptureFixture[str],
) -> None:
    status, data, _ = run(capsys, "play", "--seed", "3", "--set", "lowest_wins=true")
    assert status == 0
    assert data is not None
    assert data["rules"]["lowest_wins"] is True
    assert data["result"] in ("win", "draw")
    assert "--set lowest_wins=true" in play_command(Rules.preset("standard", lowest_wins=True), 3)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["--set", "lowest_wins=true", "--set", "two_beats_ace=true"],
            "two_beats_ace and lowest_wins cannot be played together",
        ),
        (
            ["--variant", "stjel", "--set", "lowest_wins=true"],
            "lowest_wins cannot be set for variant stjel",
        ),
    ],
)
def test_refusals_print_one_line_and_exit_2(
    capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    status, data, err = run(capsys, "play", "--seed", "1", *argv)
    assert (status, data) == (2, None)
    assert message in err
    assert len(err.strip().splitlines()) == 1
