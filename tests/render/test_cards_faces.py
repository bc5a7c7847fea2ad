"""Card faces a player tells apart at a glance: jesters for jokers, figures, medallion aces."""

from __future__ import annotations

import itertools
from collections.abc import Callable

import pytest
from PIL import Image, ImageChops, ImageStat

from krigbot.engine import parse_card
from krigbot.render.cards import card_face, card_width
from tests.support.pixels import rgba_pixels

HEIGHT = 160
NUMBERED = [f"{rank}{suit}" for rank in "23456789T" for suit in "SHDC"]


def glance(code: str, lang: str = "en", height: int = HEIGHT) -> Image.Image:
    """Return a card as seen small in a Discord preview: on the felt, 14 × 20 pixels."""
    face = card_face(parse_card(code), height, lang)
    seen = Image.new("RGBA", face.size, (34, 112, 66, 255))
    seen.alpha_composite(face)
    return seen.convert("RGB").resize((14, 20), Image.Resampling.BOX)


def difference(a: Image.Image, b: Image.Image) -> float:
    """Return the mean difference of two pictures of one size, 0..255."""
    return sum(ImageStat.Stat(ImageChops.difference(a, b)).mean) / 3


def centre(code: str, lang: str = "en") -> list[tuple[int, int, int, int]]:
    """Return the pixels of the middle of a card, inside its corner indices."""
    face = card_face(parse_card(code), HEIGHT, lang)
    w, h = face.size
    return rgba_pixels(
        face.crop((round(w * 0.28), round(h * 0.16), round(w * 0.72), round(h * 0.84)))
    )


def count(pixels: list[tuple[int, int, int, int]], wanted: str) -> int:
    """Count pixels of a kind of ink: skin, blue robe, red, gold."""
    tests: dict[str, Callable[[int, int, int], bool]] = {
        "skin": lambda r, g, b: r > 235 and 195 < g < 235 and 160 < b < 215,
        "blue": lambda r, g, b: b > 100 and r < 80 and g < 90,
        "red": lambda r, g, b: r > 170 and g < 60 and b < 80,
        "gold": lambda r, g, b: r > 220 and g > 170 and b < 110,
    }
    test = tests[wanted]
    return sum(1 for r, g, b, a in pixels if a > 200 and test(r, g, b))


def test_a_joker_looks_like_no_numbered_card_even_in_a_small_preview() -> None:
    for joker in ("X1", "X2"):
        nearest = min(difference(glance(joker), glance(code)) for code in NUMBERED)
        # Two numbered cards differ by a few levels at this size; a joker by a coloured card.
        assert nearest > 60, joker
    assert max(difference(glance(a), glance(b)) for a, b in itertools.pairwise(NUMBERED)) < 15


def test_a_jokers_corner_spells_its_name_down_the_side_that_shows_in_a_cascade() -> None:
    w = card_width(HEIGHT)
    for joker in ("X1", "X2"):
        face = card_face(parse_card(joker), HEIGHT, "nb")
        corner = face.crop((round(w * 0.08), 0, round(w * 0.16), round(HEIGHT * 0.45)))
        # Light letters on the joker's dark panel.
        rows = [
            any(
                r > 200 and g > 160
                for r, g, _, _ in rgba_pixels(corner.crop((0, y, corner.width, y + 1)))
            )
            for y in range(corner.height)
        ]
        letters = sum(1 for above, here in itertools.pairwise([False, *rows]) if here and not above)
        assert letters == len("JOKER"), joker


@pytest.mark.parametrize("suit", "SHDC")
def test_court_cards_show_a_figure_in_colours_not_a_letter(suit: str) -> None:
    for rank in "JQK":
        middle = centre(rank + suit)
        # A face, a blue and a red robe, gold trim: what no letter in a box shows.
        assert count(middle, "skin") > 150, rank + suit
        assert count(middle, "blue") > 60, rank + suit
        assert count(middle, "red") > 60, rank + suit
        assert count(middle, "gold") > 150, rank + suit
    for code in (f"{rank}{suit}" for rank in "2579T"):
        middle = centre(code)
        assert count(middle, "skin") < 30, code  # only where red ink fades into the paper
        assert count(middle, "blue") == 0, code


def test_jack_queen_and_king_are_three_different_figures() -> None:
    height = 120
    w = card_width(height)
    heads = {}
    for rank in "JQK":
        face = card_face(parse_card(rank + "H"), height, "en").convert("RGB")
        heads[rank] = face.crop(
            (round(w * 0.3), round(height * 0.14), round(w * 0.7), round(height * 0.5))
        )
    for a, b in itertools.combinations("JQK", 2):
        assert difference(heads[a], heads[b]) > 8, (a, b)
    king, queen = (count(rgba_pixels(heads[r].convert("RGBA")), "gold") for r in "KQ")
    assert king > queen  # the king's crown is the largest headdress


def test_a_court_figure_is_the_same_in_every_language_and_only_the_letters_differ() -> None:
    for code in ("JH", "QS", "KD"):
        assert centre(code, "nb") == centre(code, "en")
    jack_nb, jack_da = (card_face(parse_card("JH"), HEIGHT, lang) for lang in ("nb", "da"))
    assert jack_nb.tobytes() != jack_da.tobytes()  # "Kn" against "B" in the corners


@pytest.mark.parametrize("suit", "SHDC")
def test_an_ace_carries_one_large_suit_on_a_gold_medallion(suit: str) -> None:
    assert count(centre("A" + suit), "gold") > 300
    assert count(centre("2" + suit), "gold") == 0

    def suit_width(code: str) -> int:
        face = card_face(parse_card(code), HEIGHT, "en")
        w, h = face.size
        middle = face.crop((0, round(h * 0.3), w, round(h * 0.7)))
        columns = [
            x
            for x in range(middle.width)
            if any(
                a > 200 and ((r > 170 and g < 60) if suit in "HD" else max(r, g, b) < 70)
                for r, g, b, a in rgba_pixels(middle.crop((x, 0, x + 1, middle.height)))
            )
        ]
        return max(columns) - min(columns)

    # Wider than the two's pip and numeral: the suit is the ace's picture.
    assert suit_width("A" + suit) > 1.2 * suit_width("2" + suit)
