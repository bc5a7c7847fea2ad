"""A tournament's picture reads on a phone: every text big enough, inside it, none overlapping."""

from __future__ import annotations

import random

import pytest

from krigbot.engine.tournament import Bracket, Format, next_round, record, start
from krigbot.render.bracket import WIDTH, bracket_layout
from krigbot.render.fonts import LEAST_TEXT, PHONE_WIDTH, cap_height
from krigbot.render.tournament import Shown

LONG = "Åse Marie Kristoffersen-Haugland von Stralsund"
CJK = "田中太郎 김민준 王小明"
NAMES = [LONG, CJK, "Bob", "שרה 🎮", "Alice", "Øyvind", "Zoë", "Kai"]


def played(format: Format, count: int, rounds: int, seed: int = 3) -> Bracket:
    """Return a bracket with ``rounds`` rounds paired and all but the last one's final played."""
    bracket = start(format, range(1, count + 1), seed)
    results = random.Random(seed)
    for number in range(rounds):
        bracket = next_round(bracket)
        for match, pairing in enumerate(bracket.current):
            if pairing.done or (number == rounds - 1 and match == 0):
                continue
            bracket = record(bracket, match, results.choice([pairing.a, pairing.b, None]))
    return bracket


def shown(bracket: Bracket) -> Shown:
    players = [(n, NAMES[n % len(NAMES)]) for n in bracket.players]
    return Shown(
        name=f"{LONG} Cup",
        format=bracket.format,
        variant="standard",
        best_of=1,
        size=64,
        seed=bracket.seed,
        status="running",
        players=players,
        bracket=bracket,
    )


CASES = [
    ("knockout", 5, 2),
    ("knockout", 64, 3),
    ("swiss", 9, 3),
    ("round_robin", 10, 4),
]


@pytest.mark.parametrize(("format", "count", "rounds"), CASES)
def test_every_text_reads_on_a_phone_inside_the_picture_and_apart(
    format: Format, count: int, rounds: int
) -> None:
    drawn = bracket_layout(shown(played(format, count, rounds)), "nb")

    assert drawn.image.width == WIDTH
    assert drawn.written
    for text in drawn.written:
        assert cap_height(text.size) * PHONE_WIDTH >= LEAST_TEXT * WIDTH, text
        left, top, right, bottom = text.box
        assert left >= 0, text
        assert right <= drawn.image.width, text
        assert top >= 0, text
        assert bottom <= drawn.image.height, text
    boxes = [text.box for text in drawn.written]
    for i, a in enumerate(boxes):
        for b in boxes[i + 1 :]:
            assert not (a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]), (a, b)


def test_a_knockout_shows_every_round_and_a_long_round_says_how_many_more() -> None:
    drawn = bracket_layout(shown(played("knockout", 64, 2)), "en")

    texts = [text.text for text in drawn.written]
    assert "Round 1 of 6" in texts
    assert "Round 2 of 6" in texts
    assert "… and 16 more" in texts


def test_swiss_standings_list_every_player_with_points_and_buchholz() -> None:
    bracket = played("swiss", 9, 3)
    drawn = bracket_layout(shown(bracket), "en")

    places = [text.text for text in drawn.written if text.text.endswith(".")]
    assert places == [f"{n}." for n in range(1, 10)]
