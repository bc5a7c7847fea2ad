"""The table after one round as a picture: every player's cards, the war piles, and who took it.

One column per seat (teams side by side, team 1 on the left), each as wide as what the seat
shows, with the same gap between every two seats. A seat's cards lie in a cascade: the battle
card, then for each war step the face-down pile (a fan of backs with its size on a badge, on the
strip of the pile left in view) and the face-up card, each shifted right and down so the corner
of every card stays in view. A seat not in the war keeps its battle card in grey; a seat out of
the game shows a smaller grey card. The winner's last card glows and their name wears a crown;
the footer says how many cards they took beside a stack that grows with every pot size.

Everything static (the felt, cards with their shadows, the glow, text, the palette) is cached, so
a picture costs a few pastes and one PNG encoding.
"""

from __future__ import annotations

import io
import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Final

from PIL import Image, ImageChops, ImageDraw, ImageFilter

from krigbot.engine import Outcome, Round, WarStep, parse_card
from krigbot.i18n import Lang, t
from krigbot.render.cards import (
    EDGE,
    GOLD,
    PAPER,
    RED,
    RGB,
    SEAT_COLOURS,
    TEAM_COLOURS,
    card_back,
    card_face,
    card_shadow,
    card_width,
    crown_points,
)
from krigbot.render.fonts import (
    Pen,
    Written,
    clean_text,
    fit_text,
    isolate,
    least_size,
    text_width,
)
from krigbot.render.reasons import named_reason

__all__ = [
    "HEIGHT",
    "WIDTH",
    "Layout",
    "Placed",
    "layout_round",
    "render_round",
    "table_texts",
]

WIDTH: Final = 480
HEIGHT: Final = 320
HEADER: Final = 40
FOOTER: Final = 40
MARGIN: Final = 10
NAME_BLOCK: Final = 66
"""A seat's name on one line, its card count and share of the cards on the next."""
MAX_CARD: Final = 256
STEP_X: Final = 0.27
"""Share of a card's width between cascaded cards: enough to show the corner index."""
PILE_STEP_X: Final = 0.38
"""Share of a card's width between a face-down pile and the card on it: room for its badge."""
STEP_Y: Final = 0.09
BADGE_RADIUS: Final = 0.15
"""A pile's badge radius as a share of the card's width."""
MIN_GAP: Final = 8
"""The least felt between two seats' cards."""
NAME_ROOM: Final = 92
"""The narrowest column of a seat in play: room for a name of some length and its count."""
ASIDE_ROOM: Final = 72
"""The narrowest column of a seat that sits out a war: its greyed card, a shorter name."""
OUT_SCALE: Final = 0.8
"""An out seat's greyed card beside a player's: smaller, so the players get the room."""
FAN_CARDS: Final = 5
FAN_ANGLE: Final = 7.0
LEAST: Final = least_size(WIDTH)
"""The smallest text on the table: it still reads when a phone shows the picture."""
TITLE_SIZE: Final = LEAST + 2
PILL_SIZE: Final = LEAST
NAME_SIZE: Final = LEAST
COUNT_SIZE: Final = LEAST
TOTAL_SIZE: Final = LEAST
TAKES_SIZE: Final = LEAST
BADGE_LEAST: Final = (13, 17)
"""The smallest badge radius for a pile of one digit and of two: room for them at the least size."""
FELT_COLOURS: Final = 88

TEXT: Final[RGB] = (244, 244, 236)
TEXT_DIM: Final[RGB] = (150, 170, 156)
FELT_CENTRE: Final[RGB] = (34, 112, 66)
FELT_EDGE: Final[RGB] = (10, 54, 32)
BADGE_INK: Final[RGB] = (120, 16, 30)
OVER: Final[RGB] = (176, 128, 16)
GREY_FLOOR: Final = 46
GREY_SHARE: Final = 0.42
"""A greyed card's brightness is ``GREY_FLOOR + GREY_SHARE * luminance``: paper turns mid-grey."""
POT_CARD: Final = 32
POT_EDGE: Final = 2
POT_LAYERS: Final = 14
POT_BOTTOM: Final = 2
UPSET: Final[RGB] = (40, 86, 160)
"""The pill of a reason the table names (``render.reasons``), such as a 2 that took an ace."""


@dataclass(frozen=True, slots=True)
class Placed:
    """One thing on the table: a face-up card or a face-down pile, with its top-left corner."""

    seat: int
    x: int
    y: int
    card: int | None
    """The face-up card; None for a face-down pile of ``down`` cards."""
    down: int = 0


@dataclass(frozen=True, slots=True)
class Layout:
    """Where each seat's column and cards are (the tests use it to find a card's pixels)."""

    card_height: int
    columns: dict[int, tuple[int, int]]
    """Seat -> (left, right) of its column, in the order drawn."""
    placed: tuple[Placed, ...]
    pile_step: int
    """Pixels from a face-down pile's left edge to the card on it."""
    out: dict[int, tuple[int, int, int, int]]
    """Seat -> the box of the greyed card of a seat out of the game."""

    def last_card(self, seat: int) -> Placed | None:
        """Return the seat's deciding card (the last one it turned), if it played."""
        cards = [p for p in self.placed if p.seat == seat and p.card is not None]
        return cards[-1] if cards else None

    def box(self, item: Placed) -> tuple[int, int, int, int]:
        """Return the pixel box of a placed card."""
        return (item.x, item.y, item.x + card_width(self.card_height), item.y + self.card_height)

    def badge_box(self, item: Placed) -> tuple[int, int, int, int]:
        """Return the box of a face-down pile's badge: on the strip of the pile left in view."""
        radius = _badge_radius(card_width(self.card_height), item.down)
        cx, cy = item.x + self.pile_step // 2, item.y + self.card_height // 2
        return (cx - radius, cy - radius, cx + radius, cy + radius)


def _sequence(played: Round, seat: int) -> list[tuple[int | None, int]]:
    """Return a seat's cards in the order placed: (card, 0) face up, (None, n) for n face down."""
    items: list[tuple[int | None, int]] = [(card, 0) for s, card in played.battle if s == seat]
    if not items:
        return []
    for step in played.war_steps:
        if seat not in step.fighters:
            continue
        i = step.fighters.index(seat)
        if step.face_down[i]:
            items.append((None, len(step.face_down[i])))
        face_up = step.face_up[i]
        if face_up is not None:
            items.append((face_up, 0))
    return items


def _badge_radius(width: int, down: int) -> int:
    return max(BADGE_LEAST[down > 9], round(width * BADGE_RADIUS))


def _pile_step(width: int, down: int) -> int:
    """Return how far the card on a face-down pile lies right of it: the badge fits between.

    ``down`` is the largest pile of the round, whose badge is the widest.
    """
    return max(round(width * PILE_STEP_X), 2 * _badge_radius(width, down) + 6)


def _out_height(height: int) -> int:
    return round(height * OUT_SCALE) // 8 * 8


def _steps(items: Sequence[tuple[int | None, int]], width: int, down: int) -> list[int]:
    """Return how far each card of a cascade lies right of the first."""
    step_x, pile_step = round(width * STEP_X), _pile_step(width, down)
    offsets = [0]
    for card, _ in items[:-1]:
        offsets.append(offsets[-1] + (step_x if card is not None else pile_step))
    return offsets


def _spans(contents: Sequence[int], least: Sequence[int], room: int) -> tuple[list[float], float]:
    """Return each column's width and the smallest gap left beside a column's content.

    A column is its content and an even share of the room left, so every two seats have the
    same gap between them; a column that would be narrower than its ``least`` gets that.
    """
    floored: set[int] = set()
    while True:
        free = [i for i in range(len(contents)) if i not in floored]
        left = room - sum(least[i] for i in floored) - sum(contents[i] for i in free)
        gap = left / max(1, len(free))
        narrow = {i for i in free if contents[i] + gap < least[i]}
        if not narrow:
            spans = [least[i] if i in floored else c + gap for i, c in enumerate(contents)]
            return spans, min([gap, *(least[i] - contents[i] for i in floored)])
        floored |= narrow


def layout_round(played: Round, players: int, *, teams: bool = False) -> Layout:
    """Return where every card of a round goes, sized so that the deepest war still fits.

    The fighters' columns are as wide as the longest cascade; a seat with one card, or out
    of the game with its smaller grey card, takes only its own room, and the room left is
    shared evenly between the columns, so the table stays balanced.
    """
    order = [0, 2, 1, 3] if teams else list(range(players))
    sequences = {seat: _sequence(played, seat) for seat in order}
    fighters = set(played.war_steps[0].fighters) if played.war_steps else set()
    depth = max((len(items) - 1 for items in sequences.values()), default=0)
    widest_pile = max((n for items in sequences.values() for _, n in items), default=0)
    area_top = HEADER + NAME_BLOCK
    area_height = HEIGHT - FOOTER - area_top - 6

    def contents(height: int) -> list[int]:
        """Return the width each seat's cards take, for cards this tall."""
        width = card_width(height)
        own = {
            seat: _steps(items, width, widest_pile)[-1] + width
            for seat, items in sequences.items()
            if items
        }
        widest = max((own[seat] for seat in fighters), default=0)
        return [
            max(own[seat], widest if seat in fighters else 0)
            if seat in own
            else card_width(_out_height(height))
            for seat in order
        ]

    # A seat in play needs room for its name; a seat out shows its name struck through.
    least = [
        (ASIDE_ROOM if fighters and seat not in fighters else NAME_ROOM) if sequences[seat] else 0
        for seat in order
    ]
    room = WIDTH - 2 * MARGIN
    # Heights in steps of 8 pixels keep the number of cached card pictures small.
    height = int(min(MAX_CARD, area_height / (1 + STEP_Y * depth))) // 8 * 8
    while height > 8 and _spans(contents(height), least, room)[1] < MIN_GAP:
        height -= 8
    width = card_width(height)
    spans, _ = _spans(contents(height), least, room)
    step_y = round(height * STEP_Y)
    top = area_top + (area_height - (height + depth * step_y)) // 2
    columns: dict[int, tuple[int, int]] = {}
    placed: list[Placed] = []
    out: dict[int, tuple[int, int, int, int]] = {}
    x = float(MARGIN)
    for seat, span in zip(order, spans, strict=True):
        left, right = round(x), round(x + span)
        columns[seat] = (left, right)
        x += span
        items = sequences[seat]
        if not items:
            out_height = _out_height(height)
            out_width = card_width(out_height)
            ox = (left + right - out_width) // 2
            oy = area_top + (area_height - out_height) // 2
            out[seat] = (ox, oy, ox + out_width, oy + out_height)
            continue
        offsets = _steps(items, width, widest_pile)
        x0 = (left + right - (offsets[-1] + width)) // 2
        for i, ((card, down), dx) in enumerate(zip(items, offsets, strict=True)):
            placed.append(Placed(seat, x0 + dx, top + i * step_y, card, down))
    return Layout(height, columns, tuple(placed), _pile_step(width, widest_pile), out)


# --------------------------------------------------------------------------- cached parts


@lru_cache(maxsize=1)
def _smooth_felt() -> Image.Image:
    centre = Image.new("RGB", (WIDTH, HEIGHT), FELT_CENTRE)
    edge = Image.new("RGB", (WIDTH, HEIGHT), FELT_EDGE)
    # Pillow's radial gradient is black in the middle; stretch it a bit past the table.
    big = (round(WIDTH * 1.3), round(HEIGHT * 1.5))
    mask = Image.radial_gradient("L").resize(big)
    left, top = (big[0] - WIDTH) // 2, (big[1] - HEIGHT) // 2
    felt = Image.composite(edge, centre, mask.crop((left, top, left + WIDTH, top + HEIGHT)))
    draw = ImageDraw.Draw(felt, "RGBA")
    draw.rectangle((0, 0, WIDTH, HEADER), fill=(0, 0, 0, 70))
    draw.rectangle((0, HEIGHT - FOOTER, WIDTH, HEIGHT), fill=(0, 0, 0, 70))
    draw.line((0, HEADER, WIDTH, HEADER), fill=(255, 255, 255, 28))
    draw.line((0, HEIGHT - FOOTER, WIDTH, HEIGHT - FOOTER), fill=(255, 255, 255, 28))
    return felt


def _pad(height: int) -> int:
    """Return the room a card picture needs around the card for its shadow and a turned fan."""
    return round(height * 0.1) + 12


@lru_cache(maxsize=512)
def _sprite(card: int | None, down: int, height: int, lang: Lang, grey: bool) -> Image.Image:
    """Return a card (or a fan of ``down`` backs) with its shadow, ``_pad`` pixels around it.

    A grey card is one not in play: without colour, and dim against the felt.
    """
    if grey:
        luminance, alpha = _sprite(card, down, height, lang, False).convert("LA").split()
        dim = luminance.point([GREY_FLOOR + round(v * GREY_SHARE) for v in range(256)])
        return Image.merge("RGBA", (dim, dim, dim, alpha))
    pad = _pad(height)
    width = card_width(height)
    sprite = Image.new("RGBA", (width + 2 * pad, height + 2 * pad), (0, 0, 0, 0))
    shadow = card_shadow(height)
    offset = pad - (shadow.height - height) // 2
    sprite.paste((0, 0, 0, 255), (offset + 3, offset + 5), shadow)
    if card is not None:
        sprite.alpha_composite(card_face(card, height, lang), (pad, pad))
        return sprite
    shown = min(down, FAN_CARDS)
    for i in range(shown):
        # A fan: the backs turn a little about the pile's centre, the bottom one the most.
        angle = 0.0 if shown == 1 else FAN_ANGLE * (1 - 2 * i / (shown - 1))
        back = card_back(height).rotate(angle, resample=Image.Resampling.BICUBIC, expand=True)
        sprite.alpha_composite(
            back, ((sprite.width - back.width) // 2, (sprite.height - back.height) // 2)
        )
    return sprite


@lru_cache(maxsize=16)
def _glow(height: int) -> tuple[Image.Image, int]:
    """Return a gold halo mask for a card and how far its box reaches past the card's edge."""
    reach = max(8, height // 14)
    w = card_width(height)
    mask = Image.new("L", (w + 6 * reach, height + 6 * reach))
    ImageDraw.Draw(mask).rounded_rectangle(
        (2 * reach, 2 * reach, w + 4 * reach, height + 4 * reach), radius=w * 0.12, fill=255
    )
    # The blur fades out well inside the box, so its edge leaves no seam in the felt.
    return mask.filter(ImageFilter.GaussianBlur(reach * 0.6)), 3 * reach


def _pot_layers(taken: int) -> int:
    """Return how many card edges the pot's stack shows: it grows at every size, ever slower."""
    return min(POT_LAYERS, round(2.5 * math.log2(max(1, taken))) + 1)


@lru_cache(maxsize=POT_LAYERS)
def _pot(layers: int) -> Image.Image:
    """Return the pot seen from the side: card edges stacked under the back of its top card."""
    sheet = card_back(POT_CARD).rotate(90, expand=True)
    top = sheet.resize((sheet.width, sheet.height // 2), Image.Resampling.LANCZOS)
    stack = Image.new("RGBA", (top.width, top.height + POT_EDGE * (layers - 1)), (0, 0, 0, 0))
    draw = ImageDraw.Draw(stack)
    for i in range(layers - 1):
        y = stack.height - top.height - i * POT_EDGE
        draw.rounded_rectangle(
            (0, y, top.width - 1, y + top.height - 1), radius=3, fill=PAPER, outline=EDGE
        )
    stack.alpha_composite(top, (0, 0))
    return stack


# ---------------------------------------------------------------------------------- drawing


def _seat_colour(seat: int, teams: bool) -> RGB:
    return TEAM_COLOURS[seat % 2] if teams else SEAT_COLOURS[seat]


def _draw_name_block(
    pen: Pen,
    draw: ImageDraw.ImageDraw,
    seat: int,
    name: str,
    count: int,
    *,
    column: tuple[int, int],
    total_cards: int,
    teams: bool,
    winner: bool,
    out: bool,
) -> None:
    """Draw a seat's name (crowned if it took the round), then its card count and share."""
    left, right = column
    centre = (left + right) / 2
    colour = _seat_colour(seat, teams)
    crown = 27 if winner else 0
    shown = fit_text(name, NAME_SIZE, round(right - left - 12 - crown), True)
    name_width = text_width(shown, NAME_SIZE, True)
    x = centre - (crown + name_width) / 2
    y = HEADER + 16
    if winner:
        draw.polygon(crown_points(x, y - 10, 22), fill=GOLD, outline=(150, 100, 10))
        x += crown
    name_colour = GOLD if winner else (TEXT_DIM if out else TEXT)
    pen.write((x, y), shown, size=NAME_SIZE, bold=True, fill=name_colour, anchor="lm")
    if out:
        draw.line((x - 2, y + 1, x + name_width + 2, y + 1), fill=(230, 80, 80), width=3)
    # The count on a pill, and beside it the seat's (or team's) share of all cards as a bar.
    count_text = str(count)
    count_width = text_width(count_text, COUNT_SIZE, True) + 32
    # The bar gives way first in a narrow column, so two seats' pills never meet.
    bar_width = min((right - left) * 0.36, right - left - 16 - 8 - count_width)
    if bar_width < 16:
        bar_width = -8.0  # no bar, and no gap before it: the pill alone in the middle
    x = centre - (count_width + 8 + bar_width) / 2
    y += 29
    draw.rounded_rectangle(
        (x, y - 13, x + count_width, y + 13), radius=13, fill=(0, 0, 0, 90), outline=colour, width=2
    )
    draw.rounded_rectangle(
        (x + 9, y - 7, x + 18, y + 7), radius=2, fill=(200, 40, 56), outline=TEXT, width=1
    )
    pen.write((x + 23, y + 1), count_text, size=COUNT_SIZE, bold=True, fill=TEXT, anchor="lm")
    if bar_width < 0:
        return
    bar = (x + count_width + 8, y - 3, x + count_width + 8 + bar_width, y + 3)
    draw.rounded_rectangle(bar, radius=3, fill=(0, 0, 0, 80))
    share = min(1.0, count / total_cards) if total_cards > 0 else 0.0
    if share > 0:
        filled = max(bar[0] + bar_width * share, bar[0] + 6)
        draw.rounded_rectangle((bar[0], bar[1], filled, bar[3]), radius=3, fill=colour)


def _draw_header(pen: Pen, draw: ImageDraw.ImageDraw, played: Round, lang: Lang) -> None:
    """Draw the round's number, and on pills what kind of round it was, right to left."""
    right: float = WIDTH - MARGIN
    reason = named_reason(played)
    if reason is not None:
        # Why the round was won (a house rule's), right of whatever else the header says.
        right = _draw_pill(pen, draw, right, t(lang, f"picture.{reason}"), UPSET) - 8
    if played.outcome is not None:
        right = _draw_pill(pen, draw, right, t(lang, "over.title"), OVER) - 8
    elif played.war_steps:
        steps = len(played.war_steps)
        if steps > 1:
            # A double (or deeper) war: its depth on a pill of its own.
            right = _draw_pill(pen, draw, right, f"×{steps}", BADGE_INK) - 8
        # Who fights shows on the table: their cards are in colour, the others' grey.
        right = _draw_pill(pen, draw, right, t(lang, "picture.war"), RED) - 8
    title = fit_text(
        t(lang, "picture.round", round=played.number), TITLE_SIZE, round(right - 4 - MARGIN), True
    )
    pen.write((MARGIN, HEADER // 2), title, size=TITLE_SIZE, bold=True, fill=TEXT, anchor="lm")


def _draw_pill(pen: Pen, draw: ImageDraw.ImageDraw, right: float, label: str, colour: RGB) -> float:
    """Draw a label on a pill in the header ending at ``right``; return the pill's left edge."""
    label = fit_text(label, PILL_SIZE, round(WIDTH * 0.45), True)
    left = right - text_width(label, PILL_SIZE, True) - 24
    draw.rounded_rectangle((left, 5, right, HEADER - 5), radius=15, fill=colour)
    middle = ((left + right) / 2, HEADER // 2)
    pen.write(middle, label, size=PILL_SIZE, bold=True, fill=TEXT, anchor="mm")
    return left


def _draw_footer(pen: Pen, played: Round, names: Sequence[str], lang: Lang, teams: bool) -> None:
    """Draw who took the pot beside its stack; with teams, each team's cards at either side."""
    middle = HEIGHT - FOOTER // 2
    room = WIDTH - 2 * MARGIN
    if teams:
        widest = 0.0
        for team, (seats, anchor, x) in enumerate(
            (((0, 2), "lm", MARGIN), ((1, 3), "rm", WIDTH - MARGIN)), start=1
        ):
            label = t(lang, "picture.team_total", team=team, n=sum(played.counts[s] for s in seats))
            colour = TEAM_COLOURS[team - 1]
            written = pen.write(
                (x, middle), label, size=TOTAL_SIZE, bold=True, fill=colour, anchor=anchor
            )
            widest = max(widest, written.box[2] - written.box[0])
        room = round(WIDTH - 2 * (MARGIN + widest + 12))
    if played.winner is not None:
        name = isolate(names[played.winner])
        text = t(lang, "table.takes", count=played.taken, name=name, n=played.taken)
        colour = GOLD
    elif played.set_aside:
        text = t(lang, "table.set_aside", count=played.set_aside, n=played.set_aside)
        colour = TEXT_DIM
    else:
        return
    pot = _pot(_pot_layers(played.taken or played.set_aside))
    text = fit_text(text, TAKES_SIZE, room - pot.width - 12, True)
    x = round((WIDTH - text_width(text, TAKES_SIZE, True) - pot.width - 12) / 2)
    pen.canvas.paste(pot, (x, HEIGHT - POT_BOTTOM - pot.height), pot)
    text_x = x + pot.width + 12
    pen.write((text_x, middle), text, size=TAKES_SIZE, bold=True, fill=colour, anchor="lm")


def _draw_badge(
    pen: Pen, draw: ImageDraw.ImageDraw, box: tuple[int, int, int, int], n: int
) -> None:
    radius = (box[2] - box[0]) / 2
    draw.ellipse(box, fill=PAPER, outline=BADGE_INK, width=max(2, round(radius / 6)))
    text = str(n)
    size = max(LEAST, round(radius * (1.2 if len(text) < 2 else 0.95)))
    centre = ((box[0] + box[2]) / 2, (box[1] + box[3]) / 2)
    pen.write(centre, text, size=size, bold=True, fill=BADGE_INK, anchor="mm")


def _draw(
    played: Round,
    names: Sequence[str],
    lang: Lang,
    total_cards: int,
    teams: bool,
    felt: Image.Image,
) -> tuple[Image.Image, tuple[Written, ...]]:
    """Draw a round on the felt; return the picture and every text on it, with its box."""
    players = len(played.counts)
    layout = layout_round(played, players, teams=teams)
    canvas = felt.copy()
    pen = Pen(canvas)
    draw = ImageDraw.Draw(canvas, "RGBA")
    names = [clean_text(name) or f"#{seat + 1}" for seat, name in enumerate(names)]
    height = layout.card_height
    in_battle = {seat for seat, _ in played.battle}
    fighters = set(played.war_steps[0].fighters) if played.war_steps else in_battle
    if teams:
        middle = (layout.columns[2][1] + layout.columns[1][0]) / 2
        draw.line((middle, HEADER + 12, middle, HEIGHT - FOOTER - 12), fill=(255, 255, 255, 40))
    for seat, column in layout.columns.items():
        out = seat in played.eliminated or seat not in in_battle
        _draw_name_block(
            pen,
            draw,
            seat,
            names[seat],
            played.counts[seat],
            column=column,
            total_cards=total_cards,
            teams=teams,
            winner=seat == played.winner,
            out=out,
        )
    for box in layout.out.values():
        # Out of the game: a greyed card where the seat's cards would be.
        out_height = box[3] - box[1]
        sprite = _sprite(None, 1, out_height, lang, True)
        pad = _pad(out_height)
        canvas.paste(sprite, (box[0] - pad, box[1] - pad), sprite)
    if played.winner is not None:
        last = layout.last_card(played.winner)
        if last is not None:
            glow, reach = _glow(height)
            canvas.paste(GOLD, (last.x - reach, last.y - reach), glow)
    pad = _pad(height)
    for item in layout.placed:
        # Not in the war: their battle card stays on the table, greyed.
        sprite = _sprite(item.card, item.down, height, lang, item.seat not in fighters)
        canvas.paste(sprite, (item.x - pad, item.y - pad), sprite)
    for item in layout.placed:
        if item.card is None:
            _draw_badge(pen, draw, layout.badge_box(item), item.down)
    _draw_header(pen, draw, played, lang)
    # The footer names the winner in as many letters as its room allows.
    _draw_footer(pen, played, [fit_text(n, TAKES_SIZE, 220, True) for n in names], lang, teams)
    return canvas, tuple(pen.written)


def table_texts(
    played: Round,
    names: Sequence[str],
    lang: Lang,
    *,
    total_cards: int,
    teams: bool = False,
) -> tuple[Written, ...]:
    """Return every text the picture of a round shows, with its font size and its box."""
    return _draw(played, names, lang, total_cards, teams, _smooth_felt())[1]


# --------------------------------------------------------------------------------- encoding


def _palette_probe() -> list[tuple[Round, bool]]:
    """Return rounds (and whether teams play) that show every colour a table picture can have."""
    c = parse_card
    war = WarStep(
        fighters=(0, 1, 2),
        face_down=((c("KC"),), (c("QH"),), (c("2D"), c("5S"), c("7C"))),
        face_up=(c("X1"), c("JH"), c("8C")),
        compared=(c("X1"), c("JH"), c("8C")),
    )
    # A 2 takes an ace (rules §1 two_beats_ace), so the header's pill for it is in the palette.
    team_war = WarStep(
        fighters=(0, 1),
        face_down=((c("3H"), c("4S"), c("6D")), (c("TC"), c("X2"), c("KD"))),
        face_up=(c("AS"), c("2H")),
        compared=(c("AS"), c("2H")),
    )
    nothing = (0, 0, 0, 0)
    war_of_three = Round(
        number=12,
        battle=((0, c("9H")), (1, c("9S")), (2, c("9D")), (3, c("4C"))),
        war_steps=(war,),
        winner=0,
        taken=12,
        eliminated=(),
        counts=(30, 8, 10, 4),
        outcome=None,
        tricks=nothing,
        points=nothing,
        set_aside=0,
    )
    return [
        (war_of_three, False),
        (
            war_of_three._replace(
                number=80,
                battle=((0, c("AH")), (1, c("AC")), (3, c("5D"))),
                war_steps=(team_war,),
                winner=1,
                taken=11,
                counts=(20, 22, 0, 10),
                outcome=Outcome(reason="all_cards", rounds=80, winners=(1, 3)),
                won_by="two_beats_ace",
            ),
            True,
        ),
        # The other joker and the queens' and kings' colours, with a seat out of the game.
        (
            war_of_three._replace(
                number=140,
                battle=((0, c("X2")), (1, c("QS")), (3, c("KD"))),
                war_steps=(),
                taken=3,
                eliminated=(3,),
                counts=(40, 12, 0, 0),
            ),
            False,
        ),
    ]


PALETTE_FILE: Final = Path(__file__).with_name("palette.rgb")
"""The palette :func:`probe_palette` builds, stored: building it takes a third of a second,
which every new process (every picture worker) would pay before its first picture. A test
checks that it is still what the code builds (``python -m krigbot.render.table`` writes it)."""


def probe_palette() -> bytes:
    """Build one 256-colour palette (RGB triples) for every table picture.

    Mapping onto a fixed palette takes a millisecond where building one per picture takes six.
    A third of it goes to the felt alone, so that its gradient shows no rings; the rest comes
    from probe rounds with every card colour, the seats' and teams' colours and the glow.
    """
    rounds = _palette_probe()
    names = ["Ada", "Bo", "Cy", "Dag"]
    probe = Image.new("RGB", (WIDTH, len(rounds) * HEIGHT))
    for i, (played, teams) in enumerate(rounds):
        probe.paste(_draw(played, names, "en", 52, teams, _smooth_felt())[0], (0, i * HEIGHT))
    felt = _smooth_felt().quantize(FELT_COLOURS, method=Image.Quantize.FASTOCTREE)
    rest = probe.quantize(256 - FELT_COLOURS, method=Image.Quantize.FASTOCTREE)
    felt_colours = (felt.getpalette() or [])[: 3 * FELT_COLOURS]
    return bytes(felt_colours + (rest.getpalette() or [])[: 768 - len(felt_colours)])


@lru_cache(maxsize=1)
def _palette() -> Image.Image:
    """Return the palette of every table picture, as an image to map pictures onto."""
    palette = Image.new("P", (1, 1))
    palette.putpalette(PALETTE_FILE.read_bytes())
    return palette


FELT_DITHER: Final = 5
"""How far (in levels of each colour) the felt's ordered dither moves a pixel either way:
about one step between the felt's greens as the palette mapping tells them apart."""


def _bayer(size: int) -> list[list[int]]:
    """Return the ordered-dither matrix of ``size`` × ``size`` (a power of two): 0 … size² - 1.

    >>> _bayer(2)
    [[0, 2], [3, 1]]
    """
    matrix = [[0]]
    while len(matrix) < size:
        n = len(matrix)
        matrix = [
            [4 * matrix[y % n][x % n] + ((0, 2), (3, 1))[y // n][x // n] for x in range(2 * n)]
            for y in range(2 * n)
        ]
    return matrix


@lru_cache(maxsize=1)
def _felt() -> Image.Image:
    """Return the felt dithered once onto the palette, so its gradient shows no bands.

    Mapping a picture onto a fixed palette can only tell greens apart in coarse steps; the
    felt's own pixels are palette colours already and map to themselves. The dither is an
    ordered one (a 4 × 4 Bayer matrix): its pattern repeats every four pixels, which zlib
    finds cheaply, where error diffusion's noise was most of a picture's bytes and PNG time.
    """
    size = 4
    matrix = _bayer(size)
    tile = Image.new("L", (size, size))
    tile.putdata(
        [
            round((matrix[y][x] + 0.5) / size**2 * 2 * FELT_DITHER)
            for y in range(size)
            for x in range(size)
        ]
    )
    row = Image.new("L", (WIDTH, size))
    for x in range(0, WIDTH, size):
        row.paste(tile, (x, 0))
    noise = Image.new("L", (WIDTH, HEIGHT))
    for y in range(0, HEIGHT, size):
        noise.paste(row, (0, y))
    shaken = ImageChops.add(_smooth_felt(), Image.merge("RGB", (noise,) * 3), 1.0, -FELT_DITHER)
    return shaken.quantize(palette=_palette(), dither=Image.Dither.NONE).convert("RGB")


def _encode(image: Image.Image) -> bytes:
    quantised = image.quantize(palette=_palette(), dither=Image.Dither.NONE)
    out = io.BytesIO()
    quantised.save(out, "PNG", compress_level=1)
    return out.getvalue()


def render_round(
    played: Round,
    names: Sequence[str],
    lang: Lang,
    *,
    total_cards: int,
    teams: bool = False,
) -> bytes:
    """Return a PNG (480 × 320) of the table after a round; ``names`` raw, in seat order."""
    return _encode(_draw(played, names, lang, total_cards, teams, _felt())[0])


if __name__ == "__main__":
    PALETTE_FILE.write_bytes(probe_palette())
    print(f"wrote {PALETTE_FILE}")
