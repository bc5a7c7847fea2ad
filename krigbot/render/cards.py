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

FRAME: Final[RGB] = (246, 238, 218)
SKIN: Final[RGB] = (250, 218, 188)
CHEEK: Final[RGB] = (240, 150, 140)
NAVY: Final[RGB] = (34, 56, 128)
HAIR: Final[dict[int, RGB]] = {11: (122, 74, 38), 12: (168, 84, 36), 13: (214, 210, 200)}
"""Jack, queen and king: brown hair, auburn hair and a king's white beard."""
JESTER_FACE: Final[RGB] = (255, 248, 236)
JESTER_CAP: Final[dict[int, RGB]] = {0: RED, 1: JOKER_COLOURS[0][0]}
"""The side points of each joker's cap: red on the purple joker, purple on the green one."""


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


def _mix(colour: RGB, other: RGB, share: float) -> RGB:
    r, g, b = (round(a + (b - a) * share) for a, b in zip(colour, other, strict=True))
    return r, g, b


def _curve(start: Point, control: Point, end: Point, steps: int = 12) -> list[Point]:
    """Return points along a quadratic Bézier curve, both ends included."""
    points = []
    for i in range(steps + 1):
        f = i / steps
        points.append(
            (
                (1 - f) ** 2 * start[0] + 2 * (1 - f) * f * control[0] + f**2 * end[0],
                (1 - f) ** 2 * start[1] + 2 * (1 - f) * f * control[1] + f**2 * end[1],
            )
        )
    return points


def _dot(draw: ImageDraw.ImageDraw, x: float, y: float, r: float, fill: RGB) -> None:
    draw.ellipse((x - r, y - r, x + r, y + r), fill=fill)


def _draw_index(image: Image.Image, card: int, lang: Lang, w: int, h: int) -> None:
    """Draw the rank and suit in the top-left corner and, turned round, the bottom-right."""
    # A joker's word down the corner is longer than a rank over a suit.
    index_height = h * (0.42 if is_joker(card) else 0.34)
    index = Image.new("RGBA", (round(w * 0.3), round(index_height)), (0, 0, 0, 0))
    draw = ImageDraw.Draw(index)
    if is_joker(card):
        cx = w * 0.12
        # The word down the corner, as printed on a real joker: it shows in a cascade too.
        colour = JOKER_COLOURS[card & 1][1]
        letters = t(lang, "card.joker").upper()
        step = round(h * 0.36 / max(1, len(letters)))
        for i, letter in enumerate(letters):
            y = h * 0.035 + i * step * 1.02
            draw.text((cx, y), letter, font=font(step, bold=True), fill=colour, anchor="mt")
    else:
        cx = w * 0.135
        text = rank_text(card, lang)
        size = h * (0.15 if len(text) < 2 else 0.125)
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
    value = card >> 2
    if value == 14:
        _draw_ace(draw, card & 3, w, h)
    elif value >= 11:
        _draw_court(image, draw, value, card & 3, w, h)
    else:
        text = rank_text(card, lang)
        size = h * (0.3 if len(text) < 2 else 0.25)
        colour = RED if is_red(card) else BLACK
        draw.text(
            (w / 2, h * 0.4), text, font=font(round(size), bold=True), fill=colour, anchor="mm"
        )
        draw_suit(draw, card & 3, w / 2, h * 0.66, h * 0.2)
    _draw_index(image, card, lang, w, h)
    return _shrink(image)


def _draw_ace(draw: ImageDraw.ImageDraw, suit: int, w: int, h: int) -> None:
    """Draw an ace's centre: one large suit on a gold-rimmed medallion with a ring of rays."""
    colour = RED if suit in (1, 2) else BLACK
    cx, cy = w / 2, h / 2
    outer, inner = w * 0.43, w * 0.33
    for i in range(24):
        # Rays between the medallion and the card's edge, long and short in turn.
        a = 2 * math.pi * i / 24
        reach = outer if i % 2 == 0 else outer * 0.9
        spread = math.pi / 48
        draw.polygon(
            [
                (cx + inner * math.cos(a - spread), cy + inner * math.sin(a - spread)),
                (cx + reach * math.cos(a), cy + reach * math.sin(a)),
                (cx + inner * math.cos(a + spread), cy + inner * math.sin(a + spread)),
            ],
            fill=GOLD if i % 2 == 0 else _mix(colour, PAPER, 0.45),
        )
    ring = (cx - inner, cy - inner, cx + inner, cy + inner)
    draw.ellipse(ring, fill=_mix(colour, PAPER, 0.9), outline=GOLD, width=_SUPERSAMPLE * 3)
    rim = inner * 0.88
    draw.ellipse(
        (cx - rim, cy - rim, cx + rim, cy + rim),
        outline=_mix(colour, PAPER, 0.5),
        width=_SUPERSAMPLE,
    )
    draw_suit(draw, suit, cx, cy + (0.02 * h if suit in (0, 3) else 0), h * 0.27)


def _draw_court(
    image: Image.Image, draw: ImageDraw.ImageDraw, value: int, suit: int, w: int, h: int
) -> None:
    """Draw a court card's centre: a framed double-ended figure, crowned by its rank."""
    left, top, right, bottom = round(w * 0.26), round(h * 0.135), round(w * 0.74), round(h * 0.865)
    frame = (left, top, right, bottom)
    draw.rounded_rectangle(frame, radius=w * 0.04, fill=FRAME)
    # Drawn once and turned round, so the card reads the same either way up.
    half = _court_half(value, suit, right - left, (bottom - top) // 2)
    image.alpha_composite(half, (left, top))
    image.alpha_composite(half.transpose(Image.Transpose.ROTATE_180), (left, top + half.height))
    middle = top + half.height
    draw.line((left, middle, right, middle), fill=GOLD, width=_SUPERSAMPLE * 2)
    draw.rounded_rectangle(frame, radius=w * 0.04, outline=GOLD, width=_SUPERSAMPLE * 2)


def _court_half(value: int, suit: int, width: int, height: int) -> Image.Image:
    """Return the upper half of a court figure: head and headdress, shoulders, the suit."""
    half = Image.new("RGBA", (width, height), (0, 0, 0, 0))
    draw = ImageDraw.Draw(half)
    u, v = width, height
    red = suit in (1, 2)
    robe, accent = (RED, NAVY) if red else (NAVY, RED)
    hair = HAIR[value]
    head_x, head_y, head_rx, head_ry = u * 0.5, v * 0.47, u * 0.165, u * 0.185
    if value == 12:
        # Long hair behind the head, falling to the shoulders.
        draw.ellipse(
            (head_x - u * 0.2, head_y - u * 0.2, head_x + u * 0.2, head_y + u * 0.16), fill=hair
        )
        draw.polygon(
            [
                (head_x - u * 0.2, head_y),
                (head_x + u * 0.2, head_y),
                (head_x + u * 0.25, v * 0.8),
                (head_x - u * 0.25, v * 0.8),
            ],
            fill=hair,
        )
    shoulders = v * 0.74
    draw.polygon(
        [
            (u * 0.04, v),
            (u * 0.08, shoulders + v * 0.08),
            (u * 0.24, shoulders),
            (u * 0.76, shoulders),
            (u * 0.92, shoulders + v * 0.08),
            (u * 0.96, v),
        ],
        fill=robe,
    )
    collar = [(u * 0.34, shoulders), (u * 0.5, v * 0.93), (u * 0.66, shoulders)]
    draw.polygon(collar, fill=accent)
    draw.line(collar, fill=GOLD, width=_SUPERSAMPLE * 2, joint="curve")
    draw.line((u * 0.24, shoulders, u * 0.76, shoulders), fill=GOLD, width=_SUPERSAMPLE * 2)
    for x in (u * 0.15, u * 0.85):
        _dot(draw, x, shoulders + v * 0.1, u * 0.035, GOLD)
    draw.rectangle((head_x - u * 0.05, head_y, head_x + u * 0.05, shoulders), fill=SKIN)
    draw.ellipse(
        (head_x - head_rx, head_y - head_ry, head_x + head_rx, head_y + head_ry), fill=SKIN
    )
    eye_y = head_y - head_ry * 0.05
    for side in (-1, 1):
        _dot(draw, head_x + side * u * 0.055, eye_y, u * 0.018, BLACK)
        _dot(draw, head_x + side * u * 0.085, head_y + head_ry * 0.35, u * 0.025, CHEEK)
    draw.line(
        (head_x - u * 0.03, head_y + head_ry * 0.55, head_x + u * 0.03, head_y + head_ry * 0.55),
        fill=RED,
        width=_SUPERSAMPLE * 2,
    )
    crown_top = head_y - head_ry
    if value == 13:
        beard = [
            (head_x - head_rx, head_y + head_ry * 0.1),
            (head_x - head_rx * 0.6, head_y + head_ry * 0.5),
            (head_x + head_rx * 0.6, head_y + head_ry * 0.5),
            (head_x + head_rx, head_y + head_ry * 0.1),
            (head_x + head_rx * 0.8, head_y + head_ry * 1.3),
            (head_x, head_y + head_ry * 1.75),
            (head_x - head_rx * 0.8, head_y + head_ry * 1.3),
        ]
        draw.polygon(beard, fill=hair)
        crown = crown_points(head_x - u * 0.2, crown_top - u * 0.25, u * 0.4)
        draw.polygon(crown, fill=GOLD, outline=(170, 120, 20))
        for x, y in crown[:5:2]:  # a pearl on each of the three points
            _dot(draw, x, y, u * 0.03, GOLD)
        _dot(draw, head_x, crown_top - u * 0.06, u * 0.035, accent)
    elif value == 12:
        band = (head_x - u * 0.15, crown_top - u * 0.04, head_x + u * 0.15, crown_top + u * 0.03)
        draw.rounded_rectangle(band, radius=u * 0.02, fill=GOLD)
        for i in range(5):
            x = head_x + (i - 2) * u * 0.065
            y = crown_top - u * (0.1 if i == 2 else 0.075)
            draw.line((x, band[1], x, y), fill=GOLD, width=_SUPERSAMPLE * 2)
            _dot(draw, x, y, u * (0.03 if i == 2 else 0.022), GOLD)
        _dot(draw, head_x, band[1] + u * 0.035, u * 0.025, accent)
    else:
        draw.pieslice(
            (head_x - head_rx, head_y - head_ry, head_x + head_rx, head_y + head_ry * 0.6),
            180,
            360,
            fill=hair,
        )
        cap = (head_x - u * 0.22, crown_top - u * 0.09, head_x + u * 0.2, crown_top + u * 0.07)
        draw.ellipse(cap, fill=accent)
        draw.rectangle(
            (
                head_x - head_rx * 1.05,
                crown_top + u * 0.02,
                head_x + head_rx * 1.05,
                crown_top + u * 0.06,
            ),
            fill=GOLD,
        )
        feather = _curve(
            (head_x + u * 0.12, crown_top - u * 0.02),
            (head_x + u * 0.36, crown_top - u * 0.1),
            (head_x + u * 0.32, crown_top - u * 0.36),
        )
        back = _curve(
            (head_x + u * 0.32, crown_top - u * 0.36),
            (head_x + u * 0.2, crown_top - u * 0.12),
            (head_x + u * 0.06, crown_top - u * 0.04),
        )
        draw.polygon(feather + back, fill=GOLD if red else robe)
    draw_suit(draw, suit, u * 0.17, v * 0.2, u * 0.2)
    return half


def _joker_face(card: int, height: int, lang: Lang) -> Image.Image:
    image, draw, w, h = _blank(height, PAPER)
    panel, star = JOKER_COLOURS[card & 1]
    inset = w * 0.05
    draw.rounded_rectangle(
        (inset, inset, w - inset, h - inset), radius=w * 0.06, fill=panel, outline=star, width=6
    )
    _draw_jester(draw, card, w / 2, h * 0.47, w)
    word = t(lang, "card.joker").upper()
    size = round(h * 0.11)
    word_font = font(round(size * min(1.0, w * 0.6 / text_width(word, size, True))), bold=True)
    draw.text((w / 2, h * 0.79), word, font=word_font, fill=(255, 255, 255), anchor="mm")
    _draw_index(image, card, lang, w, h)
    return _shrink(image)


def _draw_jester(draw: ImageDraw.ImageDraw, card: int, cx: float, cy: float, w: float) -> None:
    """Draw a jester's head: a three-pointed cap with bells over a white, grinning face."""
    star = JOKER_COLOURS[card & 1][1]
    other = JESTER_CAP[card & 1]
    face_rx, face_ry = w * 0.17, w * 0.18
    band = cy - face_ry * 0.55
    ruff_y = cy + face_ry * 0.9
    points = 9
    ruff = []
    for i in range(points * 2 + 1):
        # A zigzag collar, points out and in.
        x = cx - w * 0.26 + i * w * 0.52 / (points * 2)
        ruff.append((x, ruff_y + (w * 0.12 if i % 2 == 0 else w * 0.04)))
    draw.polygon([(cx - w * 0.26, ruff_y), *ruff, (cx + w * 0.26, ruff_y)], fill=star)
    tips = []
    for side, colour in ((-1, other), (1, other), (0, star)):
        if side == 0:
            base_left, base_right = cx - w * 0.11, cx + w * 0.11
            tip = (cx, band - w * 0.4)
            control = (cx, band - w * 0.2)
        else:
            base_left, base_right = cx + side * w * 0.05, cx + side * w * 0.22
            tip = (cx + side * w * 0.3, band - w * 0.02)
            control = (cx + side * w * 0.3, band - w * 0.42)
        outer = _curve((base_right, band), control, tip)
        inner = _curve(
            tip, ((control[0] + base_left) / 2, control[1] + w * 0.12), (base_left, band)
        )
        draw.polygon(outer + inner, fill=colour)
        tips.append(tip)
    draw.rounded_rectangle(
        (cx - w * 0.22, band - w * 0.04, cx + w * 0.22, band + w * 0.05), radius=w * 0.03, fill=star
    )
    for x, y in tips:
        _dot(draw, x, y, w * 0.055, (70, 50, 20))
        _dot(draw, x, y, w * 0.045, GOLD)
    draw.ellipse((cx - face_rx, band + w * 0.03, cx + face_rx, cy + face_ry), fill=JESTER_FACE)
    eye_y = cy - face_ry * 0.05
    for side in (-1, 1):
        x = cx + side * face_rx * 0.42
        draw.arc(
            (x - w * 0.04, eye_y - w * 0.03, x + w * 0.04, eye_y + w * 0.04),
            200,
            340,
            fill=BLACK,
            width=_SUPERSAMPLE * 3,
        )
        draw.polygon(star_points(x, eye_y + w * 0.07, w * 0.025), fill=other)
    _dot(draw, cx, cy + face_ry * 0.3, w * 0.03, RED)
    draw.chord(
        (cx - face_rx * 0.6, cy + face_ry * 0.2, cx + face_rx * 0.6, cy + face_ry * 0.8),
        0,
        180,
        fill=RED,
    )


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
