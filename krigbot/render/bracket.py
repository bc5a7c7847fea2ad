"""A tournament's picture: the knockout bracket round by round, or the Swiss or round robin
standings, 480 pixels wide and read on a phone (every text at least ``fonts.least_size(480)``).

A knockout is drawn as a column of rounds, each match a box of two lines, the winner's in gold
and the loser's grey; a round of more than :data:`MOST_MATCHES` matches shows its first ones
and says how many more. Standings are a table: place, name, points, wins-draws-losses,
Buchholz.
"""

from __future__ import annotations

import io
from dataclasses import dataclass

from PIL import Image, ImageDraw

from krigbot.engine.tournament import Pairing, advancing, standings
from krigbot.i18n import Lang, t
from krigbot.render.fonts import Pen, Written, fit_text, least_size
from krigbot.render.tournament import Shown, points_text

WIDTH = 480
TEXT = least_size(WIDTH)
TITLE = TEXT + 6
MARGIN = 16
LINE = TEXT + 14
"""The height of one name's line in a match box, or of one row of the standings."""
GAP = 10
MOST_MATCHES = 16
BACKGROUND = (0x2B, 0x2D, 0x31)
BOX = (0x38, 0x3A, 0x40)
WHITE = (0xF2, 0xF3, 0xF5)
GREY = (0x9A, 0x9C, 0xA3)
GOLD = (0xF0, 0xB2, 0x32)


@dataclass(frozen=True, slots=True)
class Drawn:
    """A drawn picture and every text on it, where it went (for the layout's tests)."""

    image: Image.Image
    written: tuple[Written, ...]

    def png(self) -> bytes:
        """Return the picture as PNG."""
        out = io.BytesIO()
        self.image.save(out, "PNG", optimize=False)
        return out.getvalue()


def draw_bracket(shown: Shown, lang: Lang) -> bytes:
    """Return the PNG of a tournament's bracket or standings (in a drawing worker)."""
    return bracket_layout(shown, lang).png()


def bracket_layout(shown: Shown, lang: Lang) -> Drawn:
    """Draw a tournament's bracket (knockout) or standings, and keep where each text went."""
    names = {user: name for user, name in shown.players}
    rows = _rows(shown, names, lang)
    height = MARGIN + TITLE + GAP + sum(height for height, _ in rows) + MARGIN
    image = Image.new("RGB", (WIDTH, height), BACKGROUND)
    pen = Pen(image)
    fitted = fit_text(shown.name, TITLE, WIDTH - 2 * MARGIN, bold=True)
    pen.write((MARGIN, MARGIN), fitted, size=TITLE, fill=WHITE, bold=True)
    y = MARGIN + TITLE + GAP
    for row_height, draw in rows:
        draw(pen, y)
        y += row_height
    return Drawn(image, tuple(pen.written))


def _rows(shown: Shown, names: dict[int, str], lang: Lang) -> list[tuple[int, _Draw]]:
    bracket = shown.bracket
    if bracket is None:
        return []
    rows: list[tuple[int, _Draw]] = []
    if bracket.format != "knockout" and bracket.rounds:
        rows.append((LINE + GAP, _Heading(t(lang, "tournament.standings"))))
        for place, standing in enumerate(standings(bracket), 1):
            rows.append(
                (
                    LINE,
                    _Standing(
                        f"{place}.",
                        names.get(standing.player, "?"),
                        points_text(standing.points),
                        f"{standing.wins}-{standing.draws}-{standing.losses}",
                        points_text(standing.buchholz),
                        gold=place == 1 and bracket.finished,
                    ),
                )
            )
        return rows
    for number, matches in enumerate(bracket.rounds, 1):
        heading = t(lang, "tournament.round", round=number, total=bracket.total_rounds)
        rows.append((LINE + GAP, _Heading(heading)))
        for pairing in matches[:MOST_MATCHES]:
            rows.append((2 * LINE + GAP, _Match(pairing, names, advancing(bracket, pairing))))
        if len(matches) > MOST_MATCHES:
            more = t(lang, "tournament.more", n=len(matches) - MOST_MATCHES)
            rows.append((LINE + GAP, _Heading(more, colour=GREY)))
    return rows


class _Draw:
    def __call__(self, pen: Pen, y: int) -> None:
        raise NotImplementedError


@dataclass(frozen=True, slots=True)
class _Heading(_Draw):
    text: str
    colour: tuple[int, int, int] = GOLD

    def __call__(self, pen: Pen, y: int) -> None:
        fitted = fit_text(self.text, TEXT, WIDTH - 2 * MARGIN, bold=True)
        pen.write((MARGIN, y + 4), fitted, size=TEXT, fill=self.colour, bold=True)


@dataclass(frozen=True, slots=True)
class _Match(_Draw):
    pairing: Pairing
    names: dict[int, str]
    through: int | None

    def __call__(self, pen: Pen, y: int) -> None:
        ImageDraw.Draw(pen.canvas).rounded_rectangle(
            (MARGIN, y, WIDTH - MARGIN, y + 2 * LINE - 2), radius=8, fill=BOX
        )
        for line, player in enumerate((self.pairing.a, self.pairing.b)):
            top = y + line * LINE + 6
            if player is None:
                pen.write((MARGIN + 12, top), "—", size=TEXT, fill=GREY)
                continue
            won = self.pairing.done and self.through == player
            lost = self.pairing.done and not won
            colour = GOLD if won else GREY if lost else WHITE
            name = fit_text(self.names.get(player, "?"), TEXT, WIDTH - 2 * MARGIN - 24, bold=won)
            pen.write((MARGIN + 12, top), name, size=TEXT, fill=colour, bold=won)


@dataclass(frozen=True, slots=True)
class _Standing(_Draw):
    place: str
    name: str
    points: str
    score: str
    buchholz: str
    gold: bool

    def __call__(self, pen: Pen, y: int) -> None:
        colour = GOLD if self.gold else WHITE
        top = y + 6
        pen.write((MARGIN, top), self.place, size=TEXT, fill=GREY)
        name = fit_text(self.name, TEXT, 210, bold=self.gold)
        pen.write((MARGIN + 50, top), name, size=TEXT, fill=colour, bold=self.gold)
        pen.write((330, top), self.points, size=TEXT, fill=colour, bold=True, anchor="ra")
        pen.write((420, top), self.score, size=TEXT, fill=GREY, anchor="ra")
        pen.write((WIDTH - MARGIN, top), self.buchholz, size=TEXT, fill=GREY, anchor="ra")
