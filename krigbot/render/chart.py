"""A game's story as a picture: who held the cards round by round, its wars, and who won.

Two players get one line, the first player's cards, around the even split (half the deck): above
it the first leads, below it the second, and the space between is shaded in the leader's
colour; two mirror-image lines would say the same thing twice. Three or four players get a line
each, a ribbon over the plot in the colour of whoever leads, and a label where a line stops
because its player went out. Wars are counted in small bars under the plot, one per few pixels
of rounds, so a warlike stretch stands out without turning into a solid fringe.

The plot is drawn at twice its size and shrunk once (Pillow draws lines without antialiasing);
text is drawn afterwards at full size, large enough to read when a phone shows the chart
360 pixels wide. In a team game each line, label and the winners' names take their team's
colour, as on the table. A long game is reduced to one point per pixel column before drawing,
so 2,000 rounds cost no more than 600.

>>> from PIL import Image
>>> png = render_chart([(26, 26), (27, 25), (24, 28)], ["Ada", "Bo"], "en", wars=[2])
>>> Image.open(io.BytesIO(png)).size
(480, 300)
"""

from __future__ import annotations

import io
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Final, TypedDict, Unpack

from PIL import Image, ImageDraw

from krigbot.i18n import Lang, fmt_list, fmt_number, t
from krigbot.render.cards import GOLD, RGB, SEAT_COLOURS, TEAM_COLOURS
from krigbot.render.fonts import (
    Pen,
    Written,
    clean_text,
    fit_text,
    isolate,
    least_size,
    text_mask,
    text_width,
)

__all__ = [
    "CHART_HEIGHT",
    "CHART_WIDTH",
    "ChartLayout",
    "ChartOptions",
    "chart_layout",
    "count_ticks",
    "nice_step",
    "render_chart",
    "war_bins",
]

CHART_WIDTH: Final = 480
CHART_HEIGHT: Final = 300
SCALE: Final = 2
LEFT: Final = 68
RIGHT: Final = 120
BOTTOM: Final = 54
TOP_WITH_TITLE: Final = 52
TOP_PLAIN: Final = 26
WAR_RUG: Final = 12
"""Height of the strip under the plot where the wars are counted."""
WAR_BIN: Final = 8
"""Pixels of rounds whose wars share one bar in the strip."""
LEAST: Final = least_size(CHART_WIDTH)
"""The smallest text on the chart: it still reads when a phone shows the picture."""
TICK_SIZE: Final = LEAST
LABEL_SIZE: Final = LEAST
TITLE_SIZE: Final = LEAST + 2
LABEL_GAP: Final = 4
"""The least room between two labels of lines."""

BACKGROUND: Final[RGB] = (16, 44, 30)
PLOT: Final[RGB] = (22, 58, 40)
GRID: Final[RGB] = (46, 80, 62)
GRID_HALF: Final[RGB] = (110, 146, 124)
TEXT: Final[RGB] = (236, 240, 232)
TEXT_DIM: Final[RGB] = (170, 192, 178)
WAR: Final[RGB] = (240, 84, 84)
LEAD_ALPHA: Final = 0.24
"""How strongly the space between the lead line and the even split takes the leader's colour."""
RIBBON: Final = 6
"""Height of the strip over the plot in the colour of whoever leads (three or four players)."""


@dataclass(frozen=True, slots=True)
class Frame:
    """Where the plot lies and how rounds and card counts map to pixels."""

    left: int
    top: int
    right: int
    bottom: int
    rounds: int
    """The last round index on the x axis (at least 1)."""
    cards: int
    """The card count at the top of the y axis."""

    def x(self, index: float) -> float:
        """Return the pixel column of a round index."""
        return self.left + (self.right - self.left) * index / self.rounds

    def y(self, count: float) -> float:
        """Return the pixel row of a card count."""
        return self.bottom - (self.bottom - self.top) * count / self.cards


def nice_step(span: float, ticks: int = 5) -> int:
    """Return a round step (1, 2, 5 × 10^k) that cuts ``span`` into about ``ticks`` parts.

    >>> nice_step(1200, 6), nice_step(2000), nice_step(3)
    (200, 500, 1)
    """
    raw = max(span / ticks, 1.0)
    power = 10 ** math.floor(math.log10(raw))
    for factor in (1, 2, 5, 10):
        if raw <= factor * power:
            return int(factor * power)
    return int(10 * power)


def _columns(
    history: Sequence[Sequence[int]], seats: int, frame: Frame, scale: int
) -> list[list[tuple[float, float, float, float]]]:
    """Reduce the history to one (x, first, low, high) per seat and pixel column.

    A seat's line stops where it ran out of cards, so that the players who went out early do
    not lie on top of each other along the bottom for the rest of the game.
    """
    per_seat: list[list[tuple[float, float, float, float]]] = [[] for _ in range(seats)]
    ends = [_last_round_in(history, seat) for seat in range(seats)]
    width = (frame.right - frame.left) * scale
    current = -1
    for index, counts in enumerate(history):
        column = int(width * index / frame.rounds)
        for seat in range(seats):
            if index > ends[seat]:
                continue
            value = counts[seat]
            points = per_seat[seat]
            if column != current or not points:
                points.append((frame.x(index) * scale, value, value, value))
            else:
                x, first, low, high = points[-1]
                points[-1] = (x, first, min(low, value), max(high, value))
        current = column
    return per_seat


def _last_round_in(history: Sequence[Sequence[int]], seat: int) -> int:
    """Return the index of the round in which a seat ran out of cards, or the last round."""
    index = len(history) - 1
    while index > 0 and history[index][seat] == 0 and history[index - 1][seat] == 0:
        index -= 1
    return index


def _leaders(history: Sequence[Sequence[int]]) -> list[int | None]:
    """Return who leads after each round: the lead changes only when another seat has more.

    None until someone first holds more cards than everyone else.
    """
    leaders: list[int | None] = []
    leader: int | None = None
    for counts in history:
        top = max(counts)
        holders = [seat for seat, n in enumerate(counts) if n == top]
        if len(holders) == 1:
            leader = holders[0]
        leaders.append(leader)
    return leaders


def count_ticks(cards: int) -> list[int]:
    """Return the card counts to mark on the y axis: quarters of all the cards.

    >>> count_ticks(52), count_ticks(54)
    ([0, 13, 26, 39, 52], [0, 14, 27, 40, 54])
    """
    return [round(cards * quarter / 4) for quarter in range(5)]


def _blend(colour: RGB, base: RGB, alpha: float) -> RGB:
    r, g, b = (round(c * alpha + p * (1 - alpha)) for c, p in zip(colour, base, strict=True))
    return (r, g, b)


def war_bins(wars: Sequence[int], frame: Frame) -> list[tuple[float, int]]:
    """Return the wars counted per ``WAR_BIN`` pixels of rounds: (mean pixel column, count).

    >>> war_bins([3, 4, 90], Frame(left=0, top=0, right=100, bottom=50, rounds=100, cards=52))
    [(3.5, 2), (90.0, 1)]
    """
    bins: dict[int, list[float]] = {}
    for index in wars:
        x = frame.x(index)
        bins.setdefault(int((x - frame.left) // WAR_BIN), []).append(x)
    return [(sum(xs) / len(xs), len(xs)) for _, xs in sorted(bins.items())]


def _draw_plot(
    history: Sequence[Sequence[int]],
    wars: Sequence[int],
    frame: Frame,
    colours: Sequence[RGB],
) -> Image.Image:
    """Draw the plot, its grid, the war bars and the lines at ``SCALE`` times; return it shrunk."""
    s = SCALE
    seats = len(colours)
    above = RIBBON + 4  # the ribbon sits over the plot, apart from the line at the top count
    width = (frame.right - frame.left) * s
    height = (frame.bottom - frame.top + above + WAR_RUG + 4) * s
    plot = Image.new("RGB", (width, height), PLOT)
    draw = ImageDraw.Draw(plot)
    origin_x, origin_y = frame.left * s, (frame.top - above) * s

    def px(index: float) -> float:
        return frame.x(index) * s - origin_x

    def py(count: float) -> float:
        return frame.y(count) * s - origin_y

    points = _columns(history, seats, frame, s)
    if seats == 2:
        _shade_lead(plot, points[0], origin_x, py, frame.cards)
    else:
        _draw_ribbon(draw, _leaders(history), px, frame.rounds, colours)
    ticks = count_ticks(frame.cards)
    for count in ticks:
        # The even split, half of all the cards, is the line a leader is measured against.
        colour = GRID_HALF if count == ticks[2] else GRID
        draw.line((0, py(count), width, py(count)), fill=colour, width=s)
    rug_bottom = py(0) + (WAR_RUG + 3) * s
    for x, count in war_bins(wars, frame):
        # A bar per bin, taller for more wars: a run of wars reads as a rise, not a smear.
        x = x * s - origin_x
        bar = min(WAR_RUG, 6 + 3 * (count - 1)) * s
        half = (WAR_BIN - 3) * s / 2
        draw.rounded_rectangle((x - half, rug_bottom - bar, x + half, rug_bottom), s, fill=WAR)
    if seats == 2:
        _draw_lead(plot, points[0], origin_x, py, frame.cards)
    else:
        for seat, seat_points in enumerate(points):
            _draw_line(draw, seat_points, origin_x, py, colours[seat], width)
    return plot.resize((width // s, height // s), Image.Resampling.LANCZOS)


Columns = list[tuple[float, float, float, float]]
Scale = Callable[[float], float]


def _draw_ribbon(
    draw: ImageDraw.ImageDraw,
    leaders: Sequence[int | None],
    px: Scale,
    rounds: int,
    colours: Sequence[RGB],
) -> None:
    """Draw the strip over the plot in the colour of whoever leads, for as long as they lead."""
    start = 0
    for index in range(1, len(leaders) + 1):
        if index == len(leaders) or leaders[index] != leaders[start]:
            leader = leaders[start]
            if leader is not None:
                left, right = px(start), max(px(min(index, rounds)), px(start) + 1)
                draw.rectangle((left, 0, right, RIBBON * SCALE), fill=colours[leader])
            start = index


def _lead_line(points: Columns, origin_x: float, py: Scale) -> list[tuple[float, float]]:
    return [(x - origin_x, py(first)) for x, first, _, _ in points]


def _split_paste(plot: Image.Image, mask: Image.Image, middle: float) -> None:
    """Paste the first seat's colour through a mask above the middle, the second's below it."""
    cut = round(middle)
    top, bottom = (0, 0, plot.width, cut), (0, cut, plot.width, plot.height)
    plot.paste(SEAT_COLOURS[0], top, mask.crop(top))
    plot.paste(SEAT_COLOURS[1], bottom, mask.crop(bottom))


def _shade_lead(plot: Image.Image, points: Columns, origin_x: float, py: Scale, cards: int) -> None:
    """Shade between the lead line and the even split in the colour of whoever is ahead."""
    line = _lead_line(points, origin_x, py)
    if len(line) < 2:
        return
    middle = py(cards / 2)
    area = Image.new("L", plot.size)
    polygon = [*line, (line[-1][0], middle), (line[0][0], middle)]
    ImageDraw.Draw(area).polygon(polygon, fill=round(255 * LEAD_ALPHA))
    _split_paste(plot, area, middle)


def _draw_lead(plot: Image.Image, points: Columns, origin_x: float, py: Scale, cards: int) -> None:
    """Draw the first seat's cards as one line, in the colour of whoever it shows ahead."""
    stroke = Image.new("L", plot.size)
    draw = ImageDraw.Draw(stroke)
    for x, _, low, high in points:
        if high != low:  # several rounds share this column: show how far they swung
            draw.line((x - origin_x, py(low), x - origin_x, py(high)), fill=255, width=SCALE)
    line = _lead_line(points, origin_x, py)
    if len(line) > 1:
        draw.line(line, fill=255, width=round(SCALE * 2.5), joint="curve")
    _split_paste(plot, stroke, py(cards / 2))


def _draw_line(
    draw: ImageDraw.ImageDraw,
    points: Columns,
    origin_x: float,
    py: Scale,
    colour: RGB,
    width: int,
) -> None:
    """Draw one seat's cards, with a dot where the line stops because the seat went out."""
    s = SCALE
    line: list[tuple[float, float]] = []
    for x, first, low, high in points:
        x -= origin_x
        if high != low:  # several rounds share this column: show how far they swung
            draw.line((x, py(low), x, py(high)), fill=colour, width=s * 2)
        line.append((x, py(first)))
    if len(line) > 1:
        draw.line(line, fill=colour, width=round(s * 2.5), joint="curve")
    if line and _ends_early(line, width):
        x, y = line[-1]
        draw.ellipse((x - 4 * s, y - 4 * s, x + 4 * s, y + 4 * s), fill=colour, outline=PLOT)


def _ends_early(line: Sequence[tuple[float, float]], width: float) -> bool:
    return len(line) == 1 or line[-1][0] < width - 4 * SCALE


@lru_cache(maxsize=32)
def _vertical_text(text: str, size: int) -> Image.Image:
    mask, _, _ = text_mask(text, size, False, "la")
    return mask.rotate(90, expand=True)


def _spread(wanted: Sequence[float], gap: float, low: float, high: float) -> list[float]:
    """Return label rows as near as may be to the wanted ones, ``gap`` apart, inside the range.

    >>> _spread([100, 104, 300], 20, 0, 400)
    [100, 120, 300]
    """
    rows: list[float] = []
    for y in wanted:
        rows.append(max(y, rows[-1] + gap) if rows else y)
    overflow = rows[-1] - high if rows else 0.0
    if overflow > 0:
        rows = [max(y - overflow, low) for y in rows]
        for i in range(1, len(rows)):
            rows[i] = max(rows[i], rows[i - 1] + gap)
    return rows


Box = tuple[float, float, float, float]


@dataclass(frozen=True, slots=True)
class ChartLayout:
    """Every text the chart shows, and the boxes of the labels that name its lines."""

    texts: tuple[Written, ...]
    labels: tuple[Box, ...]


def _draw_end_labels(
    pen: Pen,
    history: Sequence[Sequence[int]],
    names: Sequence[str],
    frame: Frame,
    lang: Lang,
    colours: Sequence[RGB],
) -> list[Box]:
    """Name each line: at the right end if it gets there, else where its player went out.

    Return the boxes of the labels, none of which overlaps another.
    """
    last = history[-1] if history else [0] * len(names)
    seats = len(names)
    ends = [_last_round_in(history, seat) for seat in range(seats)] if history else []
    labels: list[Box] = []
    if seats == 2:
        # One line: the first player is up, the second down; both ends of the axis say so.
        rows = [(0, frame.y(frame.cards)), (1, frame.y(0))]
    else:
        at_end = [seat for seat in range(seats) if not ends or ends[seat] >= frame.rounds - 1]
        at_end.sort(key=lambda seat: -last[seat])
        wanted = [frame.y(last[seat]) for seat in at_end]
        spread = _spread(wanted, LABEL_SIZE + LABEL_GAP + 2, frame.top, frame.bottom + 4)
        rows = list(zip(at_end, spread, strict=True))
        out = [seat for seat in range(seats) if seat not in at_end]
        labels += _draw_out_labels(pen, out, ends, names, frame, lang, colours)
    for seat, y in rows:
        count = f"  {last[seat]}"
        room = round(RIGHT - 14 - text_width(count, LABEL_SIZE, True))
        label = f"{isolate(fit_text(names[seat], LABEL_SIZE, room, True))}{count}"
        written = pen.write(
            (frame.right + 10, y),
            label,
            size=LABEL_SIZE,
            bold=True,
            fill=colours[seat],
            anchor="lm",
        )
        labels.append(written.box)
    return labels


def _draw_out_labels(
    pen: Pen,
    out: Sequence[int],
    ends: Sequence[int],
    names: Sequence[str],
    frame: Frame,
    lang: Lang,
    colours: Sequence[RGB],
) -> list[Box]:
    """Label the players who went out beside the dot where their line stops, never overlapping.

    A label that would touch one placed before it moves up, a clear gap above it.
    """
    draw = ImageDraw.Draw(pen.canvas)
    placed: list[Box] = []
    size = LABEL_SIZE
    height = size + 8
    for seat in sorted(out, key=lambda seat: ends[seat]):
        label = t(lang, "chart.out", name=isolate(fit_text(names[seat], size, 100, True)))
        width = text_width(label, size, True) + 14
        x, bottom = frame.x(ends[seat]) + 8, frame.y(0) - 6
        if x + width > frame.right:
            x = frame.x(ends[seat]) - 8 - width
        box = (x, bottom - height, x + width, bottom)
        while any(_overlaps(_grown(box, LABEL_GAP), other) for other in placed):
            box = (box[0], box[1] - height - LABEL_GAP, box[2], box[3] - height - LABEL_GAP)
        placed.append(box)
        draw.rounded_rectangle(box, radius=6, fill=BACKGROUND, outline=colours[seat])
        middle = (box[0] + 7, (box[1] + box[3]) / 2)
        pen.write(middle, label, size=size, bold=True, fill=colours[seat], anchor="lm")
    return placed


def _grown(box: Box, by: float) -> Box:
    return (box[0] - by, box[1] - by, box[2] + by, box[3] + by)


def _overlaps(a: Box, b: Box) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def _draw_title(
    pen: Pen,
    title: str,
    names: Sequence[str],
    winners: Sequence[int] | None,
    lang: Lang,
    top: int,
    colours: Sequence[RGB],
) -> None:
    """Draw the title; when the game is over it names the winners, in their line's colour."""
    parts: list[tuple[str, RGB]] = [(clean_text(title), TEXT)]
    if winners is not None and not winners:
        parts = [(clean_text(t(lang, "chart.title_drawn", title=title)), TEXT)]
    elif winners:
        # The template around the names, cut where the names go, so they get their own colour.
        before, _, after = t(lang, "chart.title_won", title=title, names="\x00").partition("\x00")
        # A team's players share their team's colour; winners of different colours are gold.
        shared = {colours[seat] for seat in winners}
        colour = shared.pop() if len(shared) == 1 else GOLD
        room = CHART_WIDTH - 36 - text_width(before + after, TITLE_SIZE, True)
        won = fit_text(
            fmt_list([names[seat] for seat in winners], lang),
            TITLE_SIZE,
            max(60, round(room)),
            True,
        )
        parts = [(before, TEXT), (won, colour), (after, TEXT)]
    x = 16.0
    # Above the middle of its band: the label of the line at the top count lies just under it.
    middle = (top - 8) / 2
    pieces: list[Written] = []
    for text, colour in parts:
        if text:
            shown = fit_text(text, TITLE_SIZE, round(CHART_WIDTH - 16 - x), True)
            pieces.append(
                pen.write((x, middle), shown, size=TITLE_SIZE, bold=True, fill=colour, anchor="lm")
            )
            x += text_width(shown, TITLE_SIZE, True)
    if not pieces:
        return
    # The pieces are one line of text, whose letters may touch where the colour changes.
    del pen.written[-len(pieces) :]
    boxes = [piece.box for piece in pieces]
    line = (
        min(b[0] for b in boxes),
        min(b[1] for b in boxes),
        max(b[2] for b in boxes),
        max(b[3] for b in boxes),
    )
    pen.written.append(Written("".join(piece.text for piece in pieces), TITLE_SIZE, line))


def _draw_axes(pen: Pen, frame: Frame, lang: Lang, seats: int) -> None:
    """Label the card counts up the side and the rounds along the bottom."""
    ticks = count_ticks(frame.cards)
    for count in ticks:
        shown, colour = count, TEXT_DIM
        if seats == 2 and count != ticks[2]:
            # The lead line's axis counts the cards of whoever is ahead on that side.
            above = count > ticks[2]
            shown = count if above else frame.cards - count
            colour = SEAT_COLOURS[0 if above else 1]
        pen.write(
            (frame.left - 8, frame.y(count)),
            fmt_number(shown, lang),
            size=TICK_SIZE,
            bold=True,
            fill=colour,
            anchor="rm",
        )
    x_step = nice_step(frame.rounds, 5)
    tick_y = frame.bottom + WAR_RUG + 6
    last_right = -math.inf
    for index in range(0, frame.rounds + 1, x_step):
        x = frame.x(index)
        label = fmt_number(index, lang)
        width = text_width(label, TICK_SIZE)
        # A number that would run into the labels at the right ends where the plot ends.
        left, anchor = (x - width / 2, "mt") if x + width / 2 <= frame.right else (0.0, "rt")
        if anchor == "rt":
            x = frame.right
            left = x - width
        if left < last_right + 8:
            continue
        last_right = pen.write(
            (x, tick_y), label, size=TICK_SIZE, fill=TEXT_DIM, anchor=anchor
        ).box[2]


def _colours(seats: int, teams: bool) -> list[RGB]:
    """Return each seat's colour: its own, or in a team game its team's, as on the table."""
    return [TEAM_COLOURS[seat % 2] if teams else SEAT_COLOURS[seat] for seat in range(seats)]


class ChartOptions(TypedDict, total=False):
    """What a chart shows besides the counts: the labels come translated from the caller."""

    wars: Sequence[int]
    """The indices of the rounds with a war."""
    winners: Sequence[int] | None
    """The seats that won a finished game (``()`` for a draw), which the title then names."""
    title: str | None
    x_label: str | None
    y_label: str | None
    teams: bool
    """Colour each seat as its team."""


def _draw(
    history: Sequence[Sequence[int]], names: Sequence[str], lang: Lang, options: ChartOptions
) -> tuple[Image.Image, ChartLayout]:
    wars, winners = options.get("wars", ()), options.get("winners")
    title, x_label, y_label = options.get("title"), options.get("x_label"), options.get("y_label")
    teams = options.get("teams", False)
    seats = len(names)
    colours = _colours(seats, teams)
    names = [clean_text(name) or f"#{seat + 1}" for seat, name in enumerate(names)]
    # The top of the axis is every card in play: the dealt total, or more if counts ever exceed it.
    cards = max((sum(history[0]), *(max(counts) for counts in history))) if history else 1
    top = TOP_WITH_TITLE if title else TOP_PLAIN
    frame = Frame(
        left=LEFT,
        top=top,
        right=CHART_WIDTH - RIGHT,
        bottom=CHART_HEIGHT - BOTTOM - WAR_RUG,
        rounds=max(1, len(history) - 1),
        cards=max(1, cards),
    )
    canvas = Image.new("RGB", (CHART_WIDTH, CHART_HEIGHT), BACKGROUND)
    pen = Pen(canvas)
    canvas.paste(_draw_plot(history, wars, frame, colours), (frame.left, frame.top - RIBBON - 4))
    if title:
        _draw_title(pen, title, names, winners, lang, top, colours)
    _draw_axes(pen, frame, lang, seats)
    if x_label:
        centre = ((frame.left + frame.right) / 2, CHART_HEIGHT - 6)
        pen.write(centre, clean_text(x_label), size=LEAST, fill=TEXT_DIM, anchor="ms")
    if y_label:
        vertical = _vertical_text(clean_text(y_label), LEAST)
        y = (frame.top + frame.bottom - vertical.height) // 2
        box = (4, y, 4 + vertical.width, y + vertical.height)
        canvas.paste(TEXT_DIM, box, vertical)
        pen.written.append(Written(clean_text(y_label), LEAST, box))
    placed = _draw_end_labels(pen, history, names, frame, lang, colours)
    return canvas, ChartLayout(tuple(pen.written), tuple(placed))


def render_chart(
    history: Sequence[Sequence[int]],
    names: Sequence[str],
    lang: Lang,
    **options: Unpack[ChartOptions],
) -> bytes:
    """Return a PNG (480 × 300) of every seat's cards after each round.

    ``history[i]`` holds the counts after round ``i`` (``history[0]`` may be the deal); the
    options (:class:`ChartOptions`) add the wars, the title, the axes' labels and the teams.
    """
    image, _ = _draw(history, names, lang, options)
    quantised = image.quantize(256, method=Image.Quantize.FASTOCTREE, dither=Image.Dither.NONE)
    out = io.BytesIO()
    quantised.save(out, "PNG", compress_level=6)
    return out.getvalue()


def chart_layout(
    history: Sequence[Sequence[int]],
    names: Sequence[str],
    lang: Lang,
    **options: Unpack[ChartOptions],
) -> ChartLayout:
    """Return where :func:`render_chart` puts every text and label for the same arguments."""
    return _draw(history, names, lang, options)[1]
