"""`python -m krigbot.sim --set lowest_wins=true` plays Peace (rules §1), or refuses it.

What ``--set`` does for every house rule (a seeded game, Steal War's refusal) is in
tests/test_sim.py.
"""

from __future__ import annotations

from pathlib import Path

import pytest

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


def test_peace_with_two_beats_ace_is_refused_in_one_line_naming_both(
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv = ["--set", "lowest_wins=true", "--set", "two_beats_ace=true"]
    status, data, err = run(capsys, "play", "--seed", "1", *argv)
    assert (status, data) == (2, None)
    assert "two_beats_ace and lowest_wins cannot be played together" in err
    assert len(err.strip().splitlines()) == 1
