"""Card pictures drawn with Pillow: faces with vector suits, jokers and a patterned back.

Every picture is drawn once per (card, height, language) and cached, so the images returned are
shared: paste them, never draw on them. Pillow draws shapes without antialiasing, so each card is
drawn at ``_SUPERSAMPLE`` times its size and shrunk once.

The ranks are printed in FiraGO (``krigbot.render.fonts``).

>>> from krigbot.engine import parse_card
>>> rank_text(parse_card("JH"), "nb"), rank_text(parse_card("TS"), "en"), is_red(parse_card("QD"))
('Kn', '10', True)
>>> card_face(parse_card("QD"), 120, "nb").size
(84, 120)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import cache, lru_cache
from typing import Final

from PIL import Image, ImageDraw, ImageFilter

from krigbot.engine.cards import is_joker
from krigbot.i18n import Lang, card_label, t
from krigbot.render.fonts import font, text_width

__all__ = [
    "BLACK",
    "CARD_RATIO",
    "EDGE",
    "GOLD",
    "PAPER",
    "RED",
    "SEAT_COLOURS",
    "TEAM_COLOURS",
    "Point",
    "card_back",
    "card_face",
    "card_shadow",
    "card_width",
    "crown_points",
    "draw_suit",
    "is_red",
    "rank_text",
    "star_points",
]

RGB = tuple[int, int, int]
Point = tuple[float, float]

CARD_RATIO: Final = 0.7
"""Width over height; a poker card is 63 × 88 mm."""
_SUPERSAMPLE: Final = 4

PAPER: Final[RGB] = (252, 250, 244)
EDGE: Final[RGB] = (178, 174, 164)
RED: Final[RGB] = (200, 24, 44)
BLACK: Final[RGB] = (26, 28, 36)
GOLD: Final[RGB] = (246, 196, 64)
BACK: Final[RGB] = (150, 26, 42)
BACK_LINE: Final[RGB] = (186, 64, 76)
SEAT_COLOURS: Final[tuple[RGB, ...]] = (
    # one colour per seat, the same on the table and in the chart
    (255, 190, 60),
    (96, 184, 255),
    (255, 118, 170),
    (136, 222, 112),
)
TEAM_COLOURS: Final[tuple[RGB, RGB]] = ((96, 184, 255), (255, 150, 70))
JOKER_COLOURS: Final[dict[int, tuple[RGB, RGB]]] = {
    # suit bits of X1 and X2: (panel, star); the two jokers differ at a glance, as in a real deck
    0: ((112, 40, 150), GOLD),
    1: ((18, 110, 104), (255, 226, 120)),
}


def card_width(height: int) -> int:
    """Return the width of a card drawn ``height`` pixels tall."""
    return round(height * CARD_RATIO)


def is_red(card: int) -> bool:
    """Tell whether a card is printed in red (hearts and diamonds)."""
    return not is_joker(card) and card & 3 in (1, 2)


def rank_text(card: int, lang: Lang) -> str:
    """Return the rank as printed in the language ("Kn", "10", "E"); "" for a joker."""
    if is_joker(card):
        return ""
    return card_label(card, lang)[:-1]  # the label is the rank followed by one suit symbol


# ---------------------------------------------------------------------------------- shapes


@cache
def _heart_outline() -> tuple[Point, ...]:
    # The classic parametric heart, scaled into the unit square (y down, lobes on top).
    points = []
    for i in range(96):
        a = 2 * math.pi * i / 96
        x = 16 * math.sin(a) ** 3
        y = 13 * math.cos(a) - 5 * math.cos(2 * a) - 2 * math.cos(3 * a) - math.cos(4 * a)
        points.append((x, -y))
    return _normalise(points)


def _normalise(points: Sequence[Point]) -> tuple[Point, ...]:
    xs = [x for x, _ in points]
    ys = [y for _, y in points]
    scale = max(max(xs) - min(xs), max(ys) - min(ys))
    mid_x = (max(xs) + min(xs)) / 2
    mid_y = (max(ys) + min(ys)) / 2
    return tuple(((x - mid_x) / scale, (y - mid_y) / scale) for x, y in points)


def _place(shape: Sequence[Point], cx: float, cy: float, size: float) -> list[Point]:
    return [(cx + x * size, cy + y * size) for x, y in shape]


def draw_suit(draw: ImageDraw.ImageDraw, suit: int, cx: float, cy: float, size: float) -> None:
    """Draw a suit symbol (0..3 = spade, heart, diamond, club) about ``size`` pixels tall."""
    colour = RED if suit in (1, 2) else BLACK
    if suit == 1:
        draw.polygon(_place(_heart_outline(), cx, cy, size), fill=colour)
    elif suit == 2:
        half_w, half_h = 0.37 * size, 0.5 * size
        draw.polygon(
            [(cx, cy - half_h), (cx + half_w, cy), (cx, cy + half_h), (cx - half_w, cy)],
            fill=colour,
        )
    elif suit == 0:
        # An upside-down heart over a flared stem.
        body = [(x, -y - 0.1) for x, y in _heart_outline()]
        draw.polygon(_place(body, cx, cy, size * 0.82), fill=colour)
        _draw_stem(draw, cx, cy, size, colour)
    else:
        r = 0.2 * size
        for dx, dy in ((0.0, -0.25), (-0.23, 0.08), (0.23, 0.08)):
            x, y = cx + dx * size, cy + dy * size
            draw.ellipse((x - r, y - r, x + r, y + r), fill=colour)
        draw.polygon(
            [(cx, cy - 0.2 * size), (cx + 0.16 * size, cy + 0.1 * size), (cx - 0.16 * size, cy)],
            fill=colour,
        )
        draw.ellipse(
            (cx - 0.12 * size, cy - 0.1 * size, cx + 0.12 * size, cy + 0.14 * size), fill=colour
        )
        _draw_stem(draw, cx, cy, size, colour)


def _draw_stem(draw: ImageDraw.ImageDraw, cx: float, cy: float, size: float, colour: RGB) -> None:
    top, bottom = cy + 0.05 * size, cy + 0.5 * size
    points: list[Point] = [(cx - 0.04 * size, top)]
    for i in range(9):  # a concave flare, like a printed pip
        f = i / 8
        points.append((cx - 0.04 * size - 0.17 * size * f**2.2, top + (bottom - top) * f))
    points.extend((2 * cx - x, y) for x, y in reversed(points))
    draw.polygon(points, fill=colour)


def star_points(cx: float, cy: float, radius: float, inner: float = 0.42) -> list[Point]:
    """Return the corners of a five-pointed star, one point up."""
    points = []
    for i in range(10):
        r = radius if i % 2 == 0 else radius * inner
        a = -math.pi / 2 + i * math.pi / 5
        points.append((cx + r * math.cos(a), cy + r * math.sin(a)))
    return points


def crown_points(x: float, y: float, width: float) -> list[Point]:
    """Return a three-pointed crown whose top-left corner is at (x, y)."""
    w, h = width, width * 0.72
    return [
        (x, y + h * 0.18),
        (x + w * 0.27, y + h * 0.55),
        (x + w * 0.5, y),
        (x + w * 0.73, y + h * 0.55),
        (x + w, y + h * 0.18),
        (x + w * 0.88, y + h),
        (x + w * 0.12, y + h),
    ]


# ----------------------------------------------------------------------------------- cards


def _blank(height: int, fill: RGB) -> tuple[Image.Image, ImageDraw.ImageDraw, int, int]:
    s = _SUPERSAMPLE
    w, h = card_width(height) * s, height * s
    image = Image.new("RGBA", (w, h), (0, 0, 0, 0))
    draw = ImageDraw.Draw(image)
    draw.rounded_rectangle(
        (0, 0, w - 1, h - 1), radius=round(w * 0.08), fill=fill, outline=EDGE, width=s
    )
    return image, draw, w, h


def _shrink(image: Image.Image) -> Image.Image:
    # A box filter over whole blocks is the plain average supersampling needs, and fast.
    return image.reduce(_SUPERSAMPLE)


def _draw_index(image: Image.Image, card: int, lang: Lang, w: int, h: int) -> None:
    """Draw the rank and suit in the top-left corner and, turned round, the bottom-right."""
    index = Image.new("RGBA", (round(w * 0.3), round(h * 0.34)), (0, 0, 0, 0))
    draw = ImageDraw.Draw(index)
    cx = w * 0.135
    if is_joker(card):
        draw.polygon(star_points(cx, h * 0.1, h * 0.07), fill=JOKER_COLOURS[card & 1][1])
    else:
        text = rank_text(card, lang)
        size = h * (0.15 if len(text) < 2 else 0.135)
        colour = RED if is_red(card) else BLACK
        draw.text((cx, h * 0.03), text, font=font(round(size), bold=True), fill=colour, anchor="mt")
        draw_suit(draw, card & 3, cx, h * 0.235, h * 0.095)
    image.alpha_composite(index, (0, 0))
    turned = index.transpose(Image.Transpose.ROTATE_180)
    image.alpha_composite(turned, (w - index.width, h - index.height))


@lru_cache(maxsize=512)
def card_face(card: int, height: int, lang: Lang) -> Image.Image:
    """Return the face of a card ``height`` pixels tall (RGBA, shared: do not draw on it)."""
    if is_joker(card):
        return _joker_face(card, height, lang)
    image, draw, w, h = _blank(height, PAPER)
    colour = RED if is_red(card) else BLACK
    text = rank_text(card, lang)
    size = h * (0.3 if len(text) < 2 else 0.25)
    if card >> 2 >= 11:  # court cards and aces get a framed centre, like a printed picture
        inset = (w * 0.26, h * 0.19, w * 0.74, h * 0.81)
        draw.rounded_rectangle(inset, radius=w * 0.05, fill=(246, 238, 218))
        draw.rounded_rectangle(inset, radius=w * 0.05, outline=GOLD, width=_SUPERSAMPLE * 2)
    draw.text((w / 2, h * 0.4), text, font=font(round(size), bold=True), fill=colour, anchor="mm")
    draw_suit(draw, card & 3, w / 2, h * 0.66, h * 0.2)
    _draw_index(image, card, lang, w, h)
    return _shrink(image)


def _joker_face(card: int, height: int, lang: Lang) -> Image.Image:
    image, draw, w, h = _blank(height, PAPER)
    panel, star = JOKER_COLOURS[card & 1]
    draw.rounded_rectangle(
        (w * 0.05, w * 0.05, w * 0.95, h - w * 0.05),
        radius=w * 0.06,
        fill=panel,
        outline=star,
        width=6,
    )
    draw.polygon(star_points(w / 2, h * 0.43, w * 0.33), fill=star)
    draw.polygon(star_points(w / 2, h * 0.43, w * 0.13), fill=panel)
    word = t(lang, "card.joker").upper()
    size = round(h * 0.11)
    word_font = font(round(size * min(1.0, w * 0.72 / text_width(word, size, True))), bold=True)
    draw.text((w / 2, h * 0.76), word, font=word_font, fill=(255, 255, 255), anchor="mm")
    _draw_index(image, card, lang, w, h)
    return _shrink(image)


@lru_cache(maxsize=64)
def card_back(height: int) -> Image.Image:
    """Return the back of a card ``height`` pixels tall (RGBA, shared: do not draw on it)."""
    image, _, w, h = _blank(height, PAPER)
    inset = round(w * 0.07)
    box = (inset, inset, w - 1 - inset, h - 1 - inset)
    pattern = Image.new("RGBA", (w, h), BACK)
    lines = ImageDraw.Draw(pattern)
    step = w / 7
    line_width = max(_SUPERSAMPLE, round(w * 0.012))
    for i in range(-14, 22):  # a diagonal lattice
        x = i * step
        lines.line((x, 0, x + h, h), fill=BACK_LINE, width=line_width)
        lines.line((x, 0, x - h, h), fill=BACK_LINE, width=line_width)
    cx, cy = w / 2, h / 2
    lines.ellipse((cx - w * 0.2, cy - w * 0.2, cx + w * 0.2, cy + w * 0.2), fill=BACK, outline=GOLD)
    lines.polygon(star_points(cx, cy, w * 0.14), fill=GOLD)
    mask = Image.new("L", (w, h))
    ImageDraw.Draw(mask).rounded_rectangle(box, radius=round(w * 0.05), fill=255)
    image.paste(pattern, (0, 0), mask)
    return _shrink(image)


@lru_cache(maxsize=64)
def card_shadow(height: int, blur: int = 4) -> Image.Image:
    """Return a soft shadow for a card (an "L" mask, larger than the card by ``2 * blur``)."""
    w, h = card_width(height), height
    mask = Image.new("L", (w + 4 * blur, h + 4 * blur))
    ImageDraw.Draw(mask).rounded_rectangle(
        (2 * blur, 2 * blur, 2 * blur + w - 1, 2 * blur + h - 1), radius=round(w * 0.08), fill=110
    )
    return mask.filter(ImageFilter.GaussianBlur(blur))
