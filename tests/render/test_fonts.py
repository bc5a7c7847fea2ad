"""Names as text in the pictures: every script, emoji, right-to-left names, and fitting a width."""

from __future__ import annotations

import io

import pytest
from PIL import Image, ImageChops, ImageDraw

from krigbot.engine import Game, Rules
from krigbot.render.chart import render_chart
from krigbot.render.fonts import clean_text, fit_text, font, text_mask, text_width
from krigbot.render.table import render_round

CJK = ("田中太郎", "김민준", "王小明", "さくら")


def ink(mask: Image.Image) -> int:
    """Count the pixels a mask inks."""
    return sum(mask.histogram()[129:])


def firago_mask(text: str, size: int) -> tuple[Image.Image, int, int]:
    """Return text drawn straight with Pillow in bold FiraGO, as every name was before."""
    used = font(size, bold=True)
    left, top, right, bottom = (round(v) for v in used.getbbox(text))
    mask = Image.new("L", (right - left, bottom - top))
    ImageDraw.Draw(mask).text((-left, -top), text, font=used, fill=255)
    return mask, left, top


def missing_glyph_box(size: int) -> Image.Image:
    """Return the box FiraGO draws for a character it lacks (a private-use code point)."""
    return firago_mask("\U0010fffd", size)[0]


def alike(a: Image.Image, b: Image.Image) -> bool:
    """Tell whether two masks are of one size and ink nearly the same pixels."""
    if a.size != b.size:
        return False
    differing = sum(ImageChops.difference(a, b).histogram()[97:])
    return differing <= max(4, 0.03 * ink(b))


def crop_width(mask: Image.Image, width: int, *, right: bool = False) -> Image.Image:
    """Return the left (or right) ``width`` columns of a mask, its ink cropped top and bottom."""
    box = (mask.width - width, 0, mask.width, mask.height) if right else (0, 0, width, mask.height)
    part = mask.crop(box)
    bbox = part.getbbox()
    assert bbox is not None
    return part.crop((0, bbox[1], part.width, bbox[3]))


def test_names_keep_every_script_and_emoji_and_lose_only_controls() -> None:
    assert clean_text("Bjørn") == "Bjørn"
    assert clean_text("Åse  Ærlig ") == "Åse Ærlig"
    assert clean_text("שרה לוי") == "שרה לוי"
    assert clean_text("Ольга") == "Ольга"
    assert clean_text("Kari 🎮") == "Kari 🎮"
    assert clean_text("🎮🎲") == "🎮🎲"
    for name in CJK:
        assert clean_text(name) == name
    assert clean_text("👨\u200d👩\u200d👧 Dag") == "👨\u200d👩\u200d👧 Dag"  # a family stays one
    assert clean_text("Ada\u202e") == "Ada"  # a bidi override would turn the rest of a line
    assert clean_text("Bo\ue000\U0010fffd") == "Bo"  # private use: no font means anything by it


@pytest.mark.parametrize("char", [*"".join(CJK), "🎮", "🎲", "❤", "🌙", "न", "ሰ"])
def test_a_letter_firago_lacks_is_drawn_from_another_font(char: str) -> None:
    mask, _, _ = text_mask(char, 24, True)
    box = missing_glyph_box(24)
    assert ink(mask) > 20
    assert not alike(mask, box)


def test_the_letters_of_a_cjk_name_are_distinct_glyphs() -> None:
    shapes = {text_mask(char, 24, True)[0].tobytes() for char in "".join(CJK)}
    assert len(shapes) == len("".join(CJK))


def test_an_emoji_sits_on_the_line_beside_the_latin_letters() -> None:
    plain, _, plain_top = text_mask("Kari", 21, True, "ls")
    mixed, _, mixed_top = text_mask("Kari 🎮", 21, True, "ls")
    assert text_width("Kari 🎮", 21, True) > text_width("Kari ", 21, True) + 12
    assert mixed.width > plain.width + 12
    # The letters are where they were without the emoji: same pixels, same baseline.
    offset = plain_top - mixed_top
    letters = mixed.crop((0, offset, plain.width, offset + plain.height))
    assert alike(letters, plain)
    assert ink(mixed) > ink(plain) + 40


def test_a_right_to_left_name_with_an_emoji_reads_from_the_right() -> None:
    hebrew, _, _ = text_mask("שרה", 21, True, "ls")
    mixed, _, _ = text_mask("שרה 🎮", 21, True, "ls")
    # The Hebrew letters come first, at the right; the emoji ends the name on the left.
    assert alike(crop_width(mixed, hebrew.width, right=True), crop_width(hebrew, hebrew.width))
    assert not alike(crop_width(mixed, hebrew.width), crop_width(hebrew, hebrew.width))


def test_arabic_letters_stay_joined_beside_an_emoji() -> None:
    arabic, _, _ = text_mask("محمد", 21, True, "ls")
    mixed, _, _ = text_mask("محمد 🌙", 21, True, "ls")
    assert alike(crop_width(mixed, arabic.width, right=True), crop_width(arabic, arabic.width))


def test_a_hebrew_or_arabic_name_alone_is_drawn_as_before() -> None:
    for name in ("שרה לוי", "محمد علي", "Ingrid"):
        mask, left, top = text_mask(name, 21, True)
        before, before_left, before_top = firago_mask(name, 21)
        assert (left, top) == (before_left, before_top)
        assert mask.tobytes() == before.tobytes()


def test_a_name_inside_a_sentence_keeps_its_place() -> None:
    sentence = "\u2068שרה 🎮\u2069 tar 4 kort"
    mixed, _, _ = text_mask(sentence, 21, True, "ls")
    tail, _, _ = text_mask(" tar 4 kort", 21, True, "ls")
    # Left to right as the sentence is: the Norwegian words stay at the right end.
    assert alike(
        crop_width(mixed, tail.width - 8, right=True), crop_width(tail, tail.width - 8, right=True)
    )


@pytest.mark.parametrize(
    "name",
    [
        "Åse Marie Kristoffersen-Haugland",
        "田中太郎田中太郎田中太郎",
        "Kari 🎮🎲🎯🎳🎮🎲",
        "👨\u200d👩\u200d👧" * 7,
        "🇸🇪🇩🇰🇸🇪🇩🇰🇸🇪🇩🇰🇸🇪",
        "שרה לוי 🎮 שרה לוי",
    ],
)
def test_a_long_name_is_shortened_to_fit_and_never_inside_a_letter(name: str) -> None:
    shown = fit_text(name, 21, 120, True)
    assert shown.endswith("…")
    assert text_width(shown, 21, True) <= 120
    kept = shown[:-1]
    assert name.startswith(kept)
    assert not kept.endswith("\u200d")
    assert name[len(kept) : len(kept) + 1] not in ("\u200d", "\ufe0f")
    flags = len(kept) - len(kept.rstrip("".join(map(chr, range(0x1F1E6, 0x1F200)))))
    assert flags % 2 == 0  # a flag is two letters: never one of them alone
    assert fit_text("Ada", 21, 120, True) == "Ada"


def table(names: tuple[str, str]) -> bytes:
    game = Game.new(Rules.preset("standard"), 7)
    return render_round(game.play_round(), names, "nb", total_cards=52)


@pytest.mark.parametrize(("name", "without"), [("田中太郎", ""), ("🎮🎲", ""), ("Kari 🎮", "Kari")])
def test_a_name_in_another_script_is_drawn_on_the_table_not_a_seat_number(
    name: str, without: str
) -> None:
    drawn = table((name, "Bo"))
    assert drawn != table(("#1", "Bo"))
    if without:
        assert drawn != table((without, "Bo"))  # the emoji is there, not dropped


@pytest.mark.parametrize("name", ["田中太郎", "🎮🎲"])
def test_a_name_in_another_script_is_drawn_in_the_chart(name: str) -> None:
    history = [(26, 26), (28, 24), (30, 22)]

    def drawn(names: list[str]) -> Image.Image:
        return Image.open(io.BytesIO(render_chart(history, names, "en"))).convert("RGB")

    assert ImageChops.difference(drawn([name, "Bo"]), drawn(["#1", "Bo"])).getbbox() is not None
