"""A game's story as a picture: every player's cards round by round, its wars and its leaders.

The plot is drawn at twice its size and shrunk once (Pillow draws lines without antialiasing);
text is drawn afterwards at full size so that it stays crisp. A long game is reduced to one
point per pixel column before drawing, so 2,000 rounds cost no more than 600.

>>> from PIL import Image
>>> png = render_chart([(26, 26), (27, 25), (24, 28)], ["Ada", "Bo"], "en", wars=[2])
>>> Image.open(io.BytesIO(png)).size
(800, 400)
"""

from __future__ import annotations

import io
import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Final

from PIL import Image, ImageDraw

from krigbot.i18n import Lang, fmt_number
from krigbot.render.cards import RGB, SEAT_COLOURS
from krigbot.render.fonts import clean_text, draw_text, fit_text, text_mask, text_width

__all__ = [
    "CHART_HEIGHT",
    "CHART_WIDTH",
    "count_ticks",
    "nice_step",
    "render_chart",
]

CHART_WIDTH: Final = 800
CHART_HEIGHT: Final = 400
SCALE: Final = 2
LEFT: Final = 58
RIGHT: Final = 132
BOTTOM: Final = 50
TOP_WITH_TITLE: Final = 56
TOP_PLAIN: Final = 24
WAR_RUG: Final = 10
"""Height of the strip under the plot where each war leaves a tick."""

BACKGROUND: Final[RGB] = (16, 44, 30)
PLOT: Final[RGB] = (22, 58, 40)
GRID: Final[RGB] = (46, 80, 62)
GRID_HALF: Final[RGB] = (84, 120, 100)
TEXT: Final[RGB] = (236, 240, 232)
TEXT_DIM: Final[RGB] = (150, 176, 160)
WAR: Final[RGB] = (236, 72, 72)
LEAD_ALPHA: Final = 0.09
RIBBON: Final = 6
"""Height of the strip over the plot in the colour of whoever leads."""


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


def _draw_plot(
    history: Sequence[Sequence[int]], wars: Sequence[int], frame: Frame, seats: int
) -> Image.Image:
    """Draw shading, grid, war ticks and lines at ``SCALE`` times the size; return them shrunk."""
    s = SCALE
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

    # Who leads: a faint band in the leader's colour for as long as they lead.
    leaders = _leaders(history)
    start = 0
    for index in range(1, len(leaders) + 1):
        if index == len(leaders) or leaders[index] != leaders[start]:
            leader = leaders[start]
            if leader is not None:
                colour = SEAT_COLOURS[leader]
                left, right = px(start), max(px(min(index, frame.rounds)), px(start) + 1)
                band = _blend(colour, PLOT, LEAD_ALPHA)
                draw.rectangle((left, above * s, right, py(0)), fill=band)
                draw.rectangle((left, 0, right, RIBBON * s), fill=colour)
            start = index
    ticks = count_ticks(frame.cards)
    for count in ticks:
        # The even split, half of all the cards, is the line a leader is measured against.
        colour = GRID_HALF if count == ticks[2] else GRID
        draw.line((0, py(count), width, py(count)), fill=colour, width=s)
    rug = py(0) + 4 * s
    for index in wars:
        x = px(index)
        draw.line((x, rug, x, rug + WAR_RUG * s), fill=WAR, width=s)
    for seat, points in enumerate(_columns(history, seats, frame, s)):
        colour = SEAT_COLOURS[seat]
        line: list[tuple[float, float]] = []
        for x, first, low, high in points:
            x -= origin_x
            if high != low:  # several rounds share this column: show how far they swung
                draw.line((x, py(low), x, py(high)), fill=colour, width=s * 2)
            line.append((x, py(first)))
        if len(line) > 1:
            draw.line(line, fill=colour, width=round(s * 2.5), joint="curve")
        if line and (len(line) == 1 or line[-1][0] < width - 4 * s):
            # A dot where the line ends early: the round in which this seat went out.
            x, y = line[-1]
            draw.ellipse((x - 3 * s, y - 3 * s, x + 3 * s, y + 3 * s), fill=colour, outline=PLOT)
    return plot.resize((width // s, height // s), Image.Resampling.LANCZOS)


@lru_cache(maxsize=32)
def _vertical_text(text: str, size: int) -> Image.Image:
    mask, _, _ = text_mask(text, size, False, "la")
    return mask.rotate(90, expand=True)


def _draw_end_labels(
    canvas: Image.Image, history: Sequence[Sequence[int]], names: Sequence[str], frame: Frame
) -> None:
    """Name each line at its right end, nudged apart so that no two labels overlap."""
    last = history[-1] if history else [0] * len(names)
    order = sorted(range(len(names)), key=lambda seat: -last[seat])
    gap = 19
    ys: list[float] = []
    for seat in order:
        y = frame.y(last[seat])
        if ys and y < ys[-1] + gap:
            y = ys[-1] + gap
        ys.append(y)
    overflow = ys[-1] - (frame.bottom + 4) if ys else 0.0
    if overflow > 0:
        ys = [max(y - overflow, frame.top) for y in ys]
        for i in range(1, len(ys)):
            ys[i] = max(ys[i], ys[i - 1] + gap)
    for seat, y in zip(order, ys, strict=True):
        label = f"{fit_text(names[seat], 15, RIGHT - 52, True)}  {last[seat]}"
        colour = SEAT_COLOURS[seat]
        draw_text(
            canvas, (frame.right + 10, y), label, size=15, bold=True, fill=colour, anchor="lm"
        )


def _draw(
    history: Sequence[Sequence[int]],
    names: Sequence[str],
    lang: Lang,
    wars: Sequence[int],
    title: str | None,
    x_label: str | None,
    y_label: str | None,
) -> Image.Image:
    seats = len(names)
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
    canvas.paste(_draw_plot(history, wars, frame, seats), (frame.left, frame.top - RIBBON - 4))
    if title:
        shown = fit_text(clean_text(title), 21, CHART_WIDTH - 2 * LEFT, True)
        draw_text(canvas, (18, top / 2), shown, size=21, bold=True, fill=TEXT, anchor="lm")
    for count in count_ticks(frame.cards):
        label = fmt_number(count, lang)
        draw_text(
            canvas, (frame.left - 8, frame.y(count)), label, size=13, fill=TEXT_DIM, anchor="rm"
        )
    x_step = nice_step(frame.rounds, 6)
    tick_y = frame.bottom + WAR_RUG + 10
    for index in range(0, frame.rounds + 1, x_step):
        x = frame.x(index)
        if frame.right - x < text_width(fmt_number(index, lang), 13) / 2:
            continue  # would run into the labels at the right
        label = fmt_number(index, lang)
        draw_text(canvas, (x, tick_y), label, size=13, fill=TEXT_DIM, anchor="mt")
    if x_label:
        centre = ((frame.left + frame.right) / 2, CHART_HEIGHT - 10)
        draw_text(canvas, centre, clean_text(x_label), size=14, fill=TEXT_DIM, anchor="ms")
    if y_label:
        vertical = _vertical_text(clean_text(y_label), 14)
        y = (frame.top + frame.bottom - vertical.height) // 2
        canvas.paste(TEXT_DIM, (6, y, 6 + vertical.width, y + vertical.height), vertical)
    _draw_end_labels(canvas, history, names, frame)
    return canvas


def render_chart(
    history: Sequence[Sequence[int]],
    names: Sequence[str],
    lang: Lang,
    *,
    wars: Sequence[int] = (),
    title: str | None = None,
    x_label: str | None = None,
    y_label: str | None = None,
) -> bytes:
    """Return a PNG (800 × 400) of every seat's cards after each round.

    ``history[i]`` holds the counts after round ``i`` (``history[0]`` may be the deal);
    ``wars`` lists the indices of rounds with a war. The labels come translated from the caller.
    """
    image = _draw(history, names, lang, wars, title, x_label, y_label)
    quantised = image.quantize(256, method=Image.Quantize.FASTOCTREE, dither=Image.Dither.NONE)
    out = io.BytesIO()
    quantised.save(out, "PNG", compress_level=6)
    return out.getvalue()
