"""The cards as the application's emojis: small square faces drawn for 22–48 pixels.

A scaled full card is unreadable at emoji size, so each emoji is a compact face of its own: the
rank (in the letters printed on international decks: J, Q, K, A, which every language's
players know from real cards) over a large suit, on the card's paper; the jokers are their
panel with a star, the back is the card back. The text beside an emoji keeps the reader's own
letters (:meth:`CardFaces.text`), so a Norwegian table still reads "D♦".

Each emoji is named ``krig_<version>_<code>`` (``krig_3fa9c1_QD``): the version is a hash of
every image, so changed art gets new names and the old ones can be told apart and removed.

>>> from krigbot.engine import parse_card
>>> emoji_name("3fa9c1", parse_card("QD")), emoji_name("3fa9c1", None)
('krig_3fa9c1_QD', 'krig_3fa9c1_back')
>>> is_ours("krig_3fa9c1_X2"), is_ours("krig_party"), version_of("krig_3fa9c1_TS")
(True, False, '3fa9c1')
>>> faces = CardFaces()
>>> faces.text(parse_card("QD"), "nb")
'D♦'
>>> faces.use("3fa9c1", {parse_card("QD"): 123})
>>> faces.text(parse_card("QD"), "nb")
'<:krig_3fa9c1_QD:123> D♦'
"""

from __future__ import annotations

import hashlib
import io
import re
from collections.abc import Mapping
from functools import cache
from typing import Final

from PIL import Image, ImageDraw

from krigbot.engine.cards import card_code, full_deck, is_joker
from krigbot.i18n import LocaleLike, card_label, t
from krigbot.render.cards import (
    BLACK,
    EDGE,
    JOKER_COLOURS,
    PAPER,
    RED,
    card_back,
    draw_suit,
    is_red,
    star_points,
)
from krigbot.render.fonts import font

__all__ = [
    "EMOJI_CARDS",
    "EMOJI_SIZE",
    "NO_FACES",
    "CardFaces",
    "emoji_image",
    "emoji_name",
    "emoji_png",
    "emoji_set",
    "is_ours",
    "version_of",
]

EMOJI_SIZE: Final = 128
"""Pixels on a side: Discord shows emojis at 22–48 px and recommends uploading 128."""
_SUPERSAMPLE: Final = 4
EMOJI_CARDS: Final[tuple[int | None, ...]] = (*full_deck(jokers=2), None)
"""Every card that has an emoji: the 52, both jokers and (None) the back."""
_NAME: Final = re.compile(r"krig_([0-9a-f]{6})_(?:[2-9TJQKA][SHDC]|X[12]|back)")
_INDEX: Final[dict[str, str]] = {"T": "10"}


def emoji_name(version: str, card: int | None) -> str:
    """Return the emoji's name for a card (None: the back), e.g. ``krig_3fa9c1_QD``."""
    return f"krig_{version}_{'back' if card is None else card_code(card)}"


def is_ours(name: str) -> bool:
    """Tell whether an emoji of the application is one of the cards' (of any version)."""
    return _NAME.fullmatch(name) is not None


def version_of(name: str) -> str | None:
    """Return the version in a card emoji's name, None for another emoji."""
    match = _NAME.fullmatch(name)
    return None if match is None else match.group(1)


@cache
def emoji_image(card: int | None) -> Image.Image:
    """Return a card's emoji (None: the back), ``EMOJI_SIZE`` square, RGBA (shared: no drawing)."""
    if card is None:
        back = card_back(EMOJI_SIZE)
        image = Image.new("RGBA", (EMOJI_SIZE, EMOJI_SIZE), (0, 0, 0, 0))
        image.alpha_composite(back, ((EMOJI_SIZE - back.width) // 2, 0))
        return image
    s = EMOJI_SIZE * _SUPERSAMPLE
    image = Image.new("RGBA", (s, s), (0, 0, 0, 0))
    draw = ImageDraw.Draw(image)
    # Nearly square: wide enough for "10" in big figures, still a card at a glance.
    edge = max(_SUPERSAMPLE, round(s * 0.02))
    box = (s * 0.07, s * 0.01, s * 0.93, s * 0.99)
    if is_joker(card):
        panel, star = JOKER_COLOURS[card & 1]
        draw.rounded_rectangle(box, radius=s * 0.12, fill=panel, outline=star, width=edge * 2)
        draw.polygon(star_points(s / 2, s * 0.5, s * 0.4), fill=star)
    else:
        draw.rounded_rectangle(box, radius=s * 0.12, fill=PAPER, outline=EDGE, width=edge)
        rank = card_code(card)[0]
        text = _INDEX.get(rank, rank)
        colour = RED if is_red(card) else BLACK
        rank_font = font(round(s * (0.56 if len(text) < 2 else 0.5)), bold=True)
        # Centred by the ink, not the font's line: a J reaches below the line into the suit.
        left, top, right, bottom = draw.textbbox((0, 0), text, font=rank_font, anchor="lt")
        at = (s / 2 - (left + right) / 2, s * 0.29 - (top + bottom) / 2)
        draw.text(at, text, font=rank_font, fill=colour, anchor="lt")
        draw_suit(draw, card & 3, s / 2, s * 0.745, s * 0.4)
    return image.reduce(_SUPERSAMPLE)


@cache
def emoji_png(card: int | None) -> bytes:
    """Return a card's emoji as the PNG uploaded to Discord (well under its 256 KiB)."""
    out = io.BytesIO()
    emoji_image(card).save(out, "PNG", optimize=True)
    return out.getvalue()


@cache
def emoji_set() -> tuple[str, dict[int | None, bytes]]:
    """Return the art's version (a hash of every image) and each card's PNG."""
    images = {card: emoji_png(card) for card in EMOJI_CARDS}
    digest = hashlib.sha256()
    for png in images.values():
        digest.update(png)
    return digest.hexdigest()[:6], images


class CardFaces:
    """The card emojis this bot may show, by card; empty until they are synced (or when off).

    A card without an emoji is shown as its label, so no text ever holds a broken mention.
    """

    def __init__(self) -> None:
        self._mentions: dict[int, str] = {}

    def use(self, version: str, ids: Mapping[int | None, int]) -> None:
        """Show these emojis of ``version`` (card -> emoji id) instead of any before."""
        self._mentions = {
            card: f"<:{emoji_name(version, card)}:{emoji_id}>"
            for card, emoji_id in ids.items()
            if card is not None
        }

    def __len__(self) -> int:
        return len(self._mentions)

    def text(self, card: int, lang: LocaleLike) -> str:
        """Return the card as a table shows it: its emoji and label, or the label alone."""
        mention = self._mentions.get(card)
        if mention is None:
            return card_label(card, lang)
        if is_joker(card):
            return f"{mention} {t(lang, 'card.joker')}"
        return f"{mention} {card_label(card, lang)}"


NO_FACES: Final = CardFaces()
"""No emojis: every card as its label (the web view, a text too long with them)."""
