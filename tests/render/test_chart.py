"""The chart of a game: its size, the players' lines, the leader ribbon and the war ticks."""

from __future__ import annotations

import io
import random
from collections.abc import Sequence

from PIL import Image

from krigbot.render.cards import SEAT_COLOURS
from krigbot.render.chart import (
    BOTTOM,
    CHART_HEIGHT,
    CHART_WIDTH,
    LEFT,
    RIBBON,
    RIGHT,
    TOP_PLAIN,
    WAR_RUG,
    render_chart,
)
from tests.render import pixels

NAMES = ("Ingrid", "Bjørn")


def chart(history: Sequence[Sequence[int]], **options: object) -> Image.Image:
    png = render_chart(history, NAMES[: len(history[0])], "nb", **options)  # type: ignore[arg-type]
    image = Image.open(io.BytesIO(png))
    assert image.format == "PNG"
    return image.convert("RGB")


def near(colour: tuple[int, int, int], target: tuple[int, int, int], tolerance: int = 40) -> bool:
    return sum(abs(a - b) for a, b in zip(colour, target, strict=True)) <= tolerance


def plot_x(index: float, rounds: int) -> int:
    right = CHART_WIDTH - RIGHT
    return round(LEFT + (right - LEFT) * index / rounds)


def random_walk(rounds: int, seed: int = 1) -> list[tuple[int, int]]:
    rng = random.Random(seed)
    history = [(26, 26)]
    for _ in range(rounds):
        a, _ = history[-1]
        a = min(52, max(0, a + rng.choice((-2, 2))))
        history.append((a, 52 - a))
    return history


def test_a_chart_is_a_png_of_the_intended_size() -> None:
    image = chart([(26, 26), (28, 24), (30, 22)], title="#1", x_label="Runde", y_label="Kort")
    assert image.size == (CHART_WIDTH, CHART_HEIGHT) == (800, 400)


def test_a_long_game_is_drawn() -> None:
    image = chart(random_walk(2000), wars=list(range(0, 2000, 17)))
    assert image.size == (CHART_WIDTH, CHART_HEIGHT)
    colours = pixels(image)
    for seat_colour in SEAT_COLOURS[:2]:
        assert sum(1 for c in colours if near(c, seat_colour)) > 500


def test_the_ribbon_shows_who_leads_and_a_tie_keeps_the_lead() -> None:
    # Ingrid leads, a tie does not take her lead, then Bjørn leads to the end.
    history = [(26, 26), (30, 22), (30, 22), (26, 26), (26, 26), (20, 32), (18, 34), (16, 36)]
    image = chart(history)
    rounds = len(history) - 1
    y = TOP_PLAIN - 4 - RIBBON // 2
    ribbon = pixels(image.crop((0, y, CHART_WIDTH, y + 1)))
    assert near(ribbon[plot_x(2, rounds)], SEAT_COLOURS[0])
    assert near(ribbon[plot_x(4, rounds)], SEAT_COLOURS[0])
    assert near(ribbon[plot_x(6, rounds)], SEAT_COLOURS[1])


def test_wars_leave_ticks_under_the_plot() -> None:
    history = random_walk(40)
    y = CHART_HEIGHT - BOTTOM - WAR_RUG + 4 + WAR_RUG // 2
    x = plot_x(20, 40)

    def reddish(image: Image.Image) -> int:
        strip = pixels(image.crop((x - 3, y - 3, x + 4, y + 4)))
        return sum(1 for r, g, b in strip if r > 180 and g < 120 and b < 120)

    assert reddish(chart(history, wars=[20])) > 0
    assert reddish(chart(history)) == 0


def test_an_empty_or_one_round_history_still_draws() -> None:
    assert chart([(26, 26)]).size == (CHART_WIDTH, CHART_HEIGHT)
    png = render_chart([], NAMES, "en")
    assert Image.open(io.BytesIO(png)).size == (CHART_WIDTH, CHART_HEIGHT)
