"""The chart of a game: its size, the lead line or the players' lines, the ribbon, wars, title."""

from __future__ import annotations

import io
import random
from collections.abc import Sequence

from PIL import Image

from krigbot.render.cards import SEAT_COLOURS, TEAM_COLOURS
from krigbot.render.chart import (
    BOTTOM,
    CHART_HEIGHT,
    CHART_WIDTH,
    LEFT,
    RIBBON,
    RIGHT,
    TOP_PLAIN,
    TOP_WITH_TITLE,
    WAR_BIN,
    chart_layout,
    render_chart,
)
from krigbot.render.fonts import LEAST_TEXT, PHONE_WIDTH
from tests.support.pixels import pixels

NAMES = ("Ingrid", "Bjørn", "Cy")
PLOT_BOTTOM = CHART_HEIGHT - BOTTOM - 12
"""Where the zero count lies (the war strip is under it)."""


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
    assert image.size == (CHART_WIDTH, CHART_HEIGHT) == (480, 300)


def test_a_long_game_is_drawn() -> None:
    image = chart(random_walk(2000), wars=list(range(0, 2000, 17)))
    assert image.size == (CHART_WIDTH, CHART_HEIGHT)
    colours = pixels(image)
    for seat_colour in SEAT_COLOURS[:2]:
        assert sum(1 for c in colours if near(c, seat_colour)) > 500


def test_the_ribbon_shows_who_leads_among_three_and_a_tie_keeps_the_lead() -> None:
    # Ingrid leads, a tie does not take her lead, then Bjørn leads to the end.
    history = [
        (18, 17, 17),
        (22, 15, 15),
        (22, 15, 15),
        (18, 18, 16),
        (18, 18, 16),
        (14, 24, 14),
        (12, 26, 14),
        (10, 30, 12),
    ]
    image = chart(history)
    rounds = len(history) - 1
    y = TOP_PLAIN - 4 - RIBBON // 2
    ribbon = pixels(image.crop((0, y, CHART_WIDTH, y + 1)))
    assert near(ribbon[plot_x(2, rounds)], SEAT_COLOURS[0])
    assert near(ribbon[plot_x(4, rounds)], SEAT_COLOURS[0])
    assert near(ribbon[plot_x(6, rounds)], SEAT_COLOURS[1])


def plot_area(image: Image.Image, top: int = TOP_PLAIN) -> Image.Image:
    """Return the plot without the labels around it."""
    return image.crop((LEFT + 2, top, CHART_WIDTH - RIGHT - 2, PLOT_BOTTOM))


def coloured(image: Image.Image, colour: tuple[int, int, int]) -> int:
    return sum(1 for c in pixels(image) if near(c, colour))


def test_two_players_get_one_line_in_the_colour_of_whoever_is_ahead() -> None:
    ahead = [(26, 26), *((26 + n, 26 - n) for n in range(1, 20)), (30, 22), (34, 18)]
    behind = [(b, a) for a, b in ahead]
    first, second = plot_area(chart(ahead)), plot_area(chart(behind))
    # Ingrid ahead all game: her line only, no mirror image of Bjørn's cards below the middle.
    assert coloured(first, SEAT_COLOURS[0]) > 300
    # (The line starts on the middle, where its width dips a pixel or two below it.)
    assert coloured(first, SEAT_COLOURS[1]) < 10
    assert coloured(second, SEAT_COLOURS[1]) > 300
    assert coloured(second, SEAT_COLOURS[0]) < 10


def test_the_lead_line_lies_above_the_middle_while_the_first_player_leads() -> None:
    history = [(26, 26), (30, 22), (34, 18), (38, 14), (34, 18), (30, 22), (26, 26)]
    image = chart(history)
    middle = round((TOP_PLAIN + PLOT_BOTTOM) / 2)
    x = plot_x(3, 6)
    column = pixels(image.crop((x, TOP_PLAIN, x + 1, PLOT_BOTTOM)))
    rows = [i + TOP_PLAIN for i, c in enumerate(column) if near(c, SEAT_COLOURS[0])]
    assert rows
    assert max(rows) < middle - 20


def test_a_war_leaves_a_bar_under_the_plot() -> None:
    history = random_walk(40)
    y = CHART_HEIGHT - BOTTOM
    x = plot_x(20, 40)

    def reddish(image: Image.Image) -> int:
        strip = pixels(image.crop((x - 3, y - 3, x + 4, y + 1)))
        return sum(1 for r, g, b in strip if r > 180 and g < 120 and b < 120)

    assert reddish(chart(history, wars=[20])) > 0
    assert reddish(chart(history)) == 0


def test_wars_in_every_round_stay_separate_bars_not_a_fringe() -> None:
    image = chart(random_walk(2000), wars=list(range(1, 2001)))
    row = pixels(
        image.crop((LEFT, CHART_HEIGHT - BOTTOM, CHART_WIDTH - RIGHT, CHART_HEIGHT - BOTTOM + 1))
    )
    red = [r > 180 and g < 120 and b < 120 for r, g, b in row]
    bars = sum(1 for i, is_red in enumerate(red) if is_red and (i == 0 or not red[i - 1]))
    gaps = sum(1 for i, is_red in enumerate(red) if not is_red and i > 0 and red[i - 1])
    assert bars >= len(row) // WAR_BIN - 2  # one bar per bin ...
    assert gaps >= bars - 1  # ... each apart from the next


def title_strip(image: Image.Image) -> Image.Image:
    return image.crop((0, 0, CHART_WIDTH, TOP_WITH_TITLE - RIBBON - 6))


def test_the_title_names_the_winner_in_their_colour() -> None:
    history = [(26, 26), (20, 32), (0, 52)]
    plain = chart(history, title="Spillets gang")
    won = chart(history, title="Spillets gang", winners=(1,))
    drawn = chart(history, title="Spillets gang", winners=())
    assert coloured(title_strip(won), SEAT_COLOURS[1]) > 40
    assert coloured(title_strip(plain), SEAT_COLOURS[1]) == 0
    assert title_strip(won).tobytes() != title_strip(plain).tobytes()
    assert title_strip(drawn).tobytes() != title_strip(plain).tobytes()


def test_a_team_that_won_is_named_in_its_team_colour_not_a_losers() -> None:
    # Lag (rules §9): Bo and Dag, seats 1 and 3, are team 2; Ada and Cy lost.
    history = [(13, 13, 13, 13), (10, 16, 10, 16), (0, 26, 0, 26)]
    names = ("Ada", "Bo", "Cy", "Dag")
    png = render_chart(history, names, "sv", title="Spelets gång", winners=(1, 3), teams=True)
    title = title_strip(Image.open(io.BytesIO(png)).convert("RGB"))
    assert coloured(title, TEAM_COLOURS[1]) > 40
    assert coloured(title, SEAT_COLOURS[0]) == 0  # not Ada's yellow
    right_labels = (
        Image.open(io.BytesIO(png))
        .convert("RGB")
        .crop((CHART_WIDTH - RIGHT + 4, 0, CHART_WIDTH, CHART_HEIGHT))
    )
    assert coloured(right_labels, TEAM_COLOURS[1]) > 40  # "Bo 26", "Dag 26"


def test_a_player_who_went_out_is_labelled_where_their_line_ends() -> None:
    history = [(18, 17, 17)]
    for n in range(1, 41):  # Cy runs out of cards in round 9; Ingrid and Bjørn play on
        cy = max(0, 17 - 2 * n)
        ingrid = 18 + (17 - cy) // 2 + n % 3
        history.append((ingrid, 52 - ingrid - cy, cy))
    image = chart(history)
    out_at = plot_x(9, 40)
    near_the_end = image.crop((out_at - 10, PLOT_BOTTOM - 60, out_at + 120, PLOT_BOTTOM))
    right_labels = image.crop((CHART_WIDTH - RIGHT + 4, 0, CHART_WIDTH, CHART_HEIGHT))
    assert coloured(near_the_end, SEAT_COLOURS[2]) > 120  # the label, not just the dot
    assert coloured(right_labels, SEAT_COLOURS[2]) == 0
    assert coloured(right_labels, SEAT_COLOURS[0]) > 40


def test_tick_labels_are_tall_enough_to_read_on_a_phone() -> None:
    image = chart(random_walk(300))
    middle = round((TOP_PLAIN + PLOT_BOTTOM) / 2)
    label = image.crop((20, middle - 15, LEFT - 4, middle + 15)).convert("L")
    bbox = label.point(lambda v: 255 if v > 120 else 0).getbbox()
    assert bbox is not None
    # The digits' ink, shown 360 pixels wide.
    assert (bbox[3] - bbox[1]) * PHONE_WIDTH / CHART_WIDTH >= LEAST_TEXT


def test_the_rounds_axis_is_numbered_to_the_end_of_a_long_game() -> None:
    history = random_walk(1084)
    texts = {written.text for written in chart_layout(history, NAMES[:2], "en").texts}
    assert {"0", "500", "1,000"} <= texts


def test_an_empty_or_one_round_history_still_draws() -> None:
    assert chart([(26, 26)]).size == (CHART_WIDTH, CHART_HEIGHT)
    png = render_chart([], NAMES[:2], "en")
    assert Image.open(io.BytesIO(png)).size == (CHART_WIDTH, CHART_HEIGHT)
