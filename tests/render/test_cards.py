"""Card pictures: localised ranks, red and black suits, jokers and the cache."""

from __future__ import annotations

import pytest
from PIL import Image

from krigbot.engine import parse_card
from krigbot.render.cards import card_back, card_face, card_width, rank_text
from tests.support.pixels import pixels, rgba_pixels


def red_pixels(image: Image.Image) -> int:
    """Count clearly red pixels (the ink of hearts and diamonds)."""
    return sum(1 for r, g, b in pixels(image) if r > 150 and g < 90 and b < 100)


def dark_pixels(image: Image.Image) -> int:
    """Count near-black pixels (the ink of spades and clubs) on the card itself."""
    return sum(1 for r, g, b, a in rgba_pixels(image) if a > 200 and max(r, g, b) < 70)


@pytest.mark.parametrize(
    ("code", "lang", "rank"),
    [
        ("JH", "nb", "Kn"),
        ("JH", "sv", "Kn"),
        ("JH", "da", "B"),
        ("JH", "en", "J"),
        ("QD", "nb", "D"),
        ("AS", "nb", "E"),
        ("AS", "en", "A"),
        ("TC", "da", "10"),
        ("X1", "nb", ""),
    ],
)
def test_the_rank_on_a_card_is_the_languages_own(code: str, lang: str, rank: str) -> None:
    assert rank_text(parse_card(code), lang) == rank  # type: ignore[arg-type]


def test_a_card_is_drawn_once_and_shared() -> None:
    queen = parse_card("QD")
    assert card_face(queen, 120, "nb") is card_face(queen, 120, "nb")
    assert card_back(120) is card_back(120)
    assert card_face(queen, 120, "nb").size == (card_width(120), 120)


def test_the_danish_jack_is_not_the_norwegian_jack() -> None:
    jack = parse_card("JH")
    danish, norwegian = card_face(jack, 120, "da"), card_face(jack, 120, "nb")
    assert danish.tobytes() != norwegian.tobytes()


def test_hearts_and_diamonds_are_red_spades_and_clubs_black() -> None:
    for code in ("7H", "7D"):
        face = card_face(parse_card(code), 160, "en")
        assert red_pixels(face) > 500, code
    for code in ("7S", "7C"):
        face = card_face(parse_card(code), 160, "en")
        assert red_pixels(face) == 0, code
        assert dark_pixels(face) > 500, code


def test_suits_are_drawn_differently() -> None:
    faces = [card_face(parse_card(f"7{suit}"), 160, "en").tobytes() for suit in "SHDC"]
    assert len(set(faces)) == 4


def test_jokers_look_like_jokers_and_differ_from_each_other() -> None:
    x1, x2 = (card_face(parse_card(code), 160, "nb") for code in ("X1", "X2"))
    assert x1.tobytes() != x2.tobytes()
    for joker in (x1, x2):
        colours = pixels(joker)
        # Mostly a coloured panel with a gold star, not the white paper of an ordinary card.
        paper = sum(1 for r, g, b in colours if min(r, g, b) > 235)
        golden = sum(1 for r, g, b in colours if r > 220 and g > 170 and b < 140)
        assert paper < joker.width * joker.height * 0.25
        assert golden > 300
