"""Text in the pictures: names in any script, drawn with the first font that has their letters.

The main font is FiraGO from ``pymupdf-fonts`` (Latin with the Nordic letters, Cyrillic, Greek,
Hebrew, Arabic, Thai, Devanagari). Whatever it lacks comes from the Noto fonts of
``manimgx-fonts`` (Noto Emoji, Noto Sans for the other scripts, symbols) and
``manimgx-fonts-cjk`` (Noto Sans CJK for Chinese, Japanese and Korean): a text is cut into runs,
one per font, laid out in the order the Unicode bidirectional rules give, and each run is drawn
by Pillow's text layout (raqm), which shapes Arabic and joins emoji sequences. A text that
FiraGO covers whole, as most names are, is drawn in one piece exactly as before, and no other
font is opened. Nothing comes from the system's fonts, so a picture looks the same everywhere.

>>> clean_text("Kari  🎮 "), clean_text("Ada\u202e"), clean_text("\U0010fffd")
('Kari 🎮', 'Ada', '')
>>> [(run.face.name, run.text) for run in runs_of("Bo 田中")]
[('FiraGO', 'Bo '), ('Noto Sans CJK', '田中')]
"""

from __future__ import annotations

import io
import struct
import unicodedata
from bisect import bisect_right
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache, lru_cache
from importlib import resources
from typing import BinaryIO, Final

import pymupdf_fonts  # type: ignore[import-untyped]
from PIL import Image, ImageDraw, ImageFont

__all__ = [
    "FACES",
    "LEAST_TEXT",
    "PHONE_WIDTH",
    "Face",
    "Pen",
    "Run",
    "Written",
    "cap_height",
    "clean_text",
    "coverage",
    "face_of",
    "fit_text",
    "font",
    "font_file",
    "isolate",
    "least_size",
    "runs_of",
    "text_mask",
    "text_width",
]


@dataclass(frozen=True, slots=True)
class Face:
    """One font of the fallback chain: where its file is and how to make it regular or bold."""

    name: str
    regular: str
    """A ``pymupdf-fonts`` font name, or a file name inside ``package``."""
    bold: str = ""
    """The bold font (``pymupdf-fonts``); "" for a variable font, made bold by its weight axis."""
    package: str = ""
    """The package holding the file; "" for ``pymupdf-fonts``."""
    index: int = 0
    """The face inside a font collection (.ttc)."""
    weights: tuple[int, int] = (400, 700)
    """The weight axis for regular and bold, for a variable font."""


_NOTO: Final = "manimgx_fonts"
FACES: Final[tuple[Face, ...]] = (
    Face("FiraGO", "figo", "figbo"),
    Face("Noto Sans", "NotoSans[wght].ttf", package=_NOTO),
    *(
        Face(f"Noto Sans {script}", f"NotoSans{script}[wght].ttf", package=_NOTO)
        for script in (
            "Arabic",
            "Hebrew",
            "Devanagari",
            "Bengali",
            "Gurmukhi",
            "Gujarati",
            "Oriya",
            "Tamil",
            "Telugu",
            "Kannada",
            "Malayalam",
            "Sinhala",
            "Thai",
            "Lao",
            "Khmer",
            "Myanmar",
            "Georgian",
            "Armenian",
            "Ethiopic",
        )
    ),
    # The Japanese face of the collection: its Han letters serve Chinese names too.
    Face("Noto Sans CJK", "NotoSansCJK-VF.otf.ttc", package="manimgx_fonts_cjk"),
    # Emoji are monochrome and take the colour of the text, as a name's letters do.
    Face("Noto Emoji", "NotoEmoji[wght].ttf", package=_NOTO, weights=(450, 650)),
    Face("Noto Sans Symbols", "NotoSansSymbols[wght].ttf", package=_NOTO),
    Face("Noto Sans Symbols 2", "symbol2", "symbol2"),
    Face("Noto Sans Math", "math", "math"),
)
"""The fonts in the order they are asked for a character: FiraGO first."""
EMOJI: Final = next(face for face in FACES if face.name == "Noto Emoji")

_ZWJ: Final = "\u200d"
_EMOJI_STYLE: Final = "\ufe0f"
_KEEP_FORMAT: Final = frozenset("\u200c\u200d")
"""Format characters that shape a name (ZWNJ in Persian, ZWJ in emoji sequences): kept."""


def _is_attached(char: str) -> bool:
    """Tell whether a character belongs to the one before it: marks, joiners, emoji modifiers."""
    code = ord(char)
    return (
        unicodedata.category(char)[0] == "M"
        or char in _KEEP_FORMAT
        or 0x1F3FB <= code <= 0x1F3FF  # skin tones
        or 0xE0020 <= code <= 0xE007F  # the tags of a subdivision's flag
    )


# ------------------------------------------------------------------------------ the files


@cache
def _pymupdf_data(name: str) -> bytes:
    return bytes(pymupdf_fonts.myfont(name))


def _open(face: Face, bold: bool = False) -> BinaryIO | str:
    """Return the font file of a face: a path for the files on disk, bytes for pymupdf's."""
    if not face.package:
        return io.BytesIO(_pymupdf_data(face.bold if bold else face.regular))
    # The big CJK file is opened by path, so FreeType maps it instead of reading it all.
    return str(resources.files(face.package).joinpath(face.regular))


def _read_cmap(file: BinaryIO, index: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Return the starts and ends of the code point ranges a font's cmap maps to a glyph."""

    def read(offset: int, size: int) -> bytes:
        file.seek(offset)
        return file.read(size)

    start = 0
    if read(0, 4) == b"ttcf":
        (start,) = struct.unpack(">I", read(12 + 4 * index, 4))
    (tables,) = struct.unpack(">H", read(start + 4, 2))
    records = read(start + 12, 16 * tables)
    cmap = next(
        struct.unpack(">I", records[i + 8 : i + 12])[0]
        for i in range(0, len(records), 16)
        if records[i : i + 4] == b"cmap"
    )
    (count,) = struct.unpack(">H", read(cmap + 2, 2))
    subtables = {}
    for i in range(count):
        platform, encoding, offset = struct.unpack(">HHI", read(cmap + 4 + 8 * i, 8))
        subtables[(platform, encoding)] = cmap + offset
    for key in ((3, 10), (0, 4), (0, 6), (3, 1), (0, 3)):
        if key in subtables:
            return _ranges(read, subtables[key])
    return (), ()


def _ranges(read: Callable[[int, int], bytes], at: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
    (kind,) = struct.unpack(">H", read(at, 2))
    spans: list[tuple[int, int]] = []
    if kind == 12:
        (groups,) = struct.unpack(">I", read(at + 12, 4))
        data = read(at + 16, 12 * groups)
        spans = [(s, e) for s, e, _ in struct.iter_unpack(">III", data)]
    elif kind == 4:
        (length,) = struct.unpack(">H", read(at + 2, 2))
        data = read(at, length)
        segments = struct.unpack(">H", data[6:8])[0] // 2
        ends = struct.unpack(f">{segments}H", data[14 : 14 + 2 * segments])
        base = 16 + 2 * segments
        starts = struct.unpack(f">{segments}H", data[base : base + 2 * segments])
        deltas = struct.unpack(f">{segments}h", data[base + 2 * segments : base + 4 * segments])
        offsets_at = base + 4 * segments
        for i, (first, last, delta) in enumerate(zip(starts, ends, deltas, strict=True)):
            (offset,) = struct.unpack(">H", data[offsets_at + 2 * i : offsets_at + 2 * i + 2])
            for code in range(first, min(last, 0xFFFE) + 1):
                glyph = code
                if offset:  # glyph ids from the array, where 0 means no glyph
                    at_glyph = offsets_at + 2 * i + offset + 2 * (code - first)
                    (glyph,) = struct.unpack(">H", data[at_glyph : at_glyph + 2])
                if glyph == 0 or (glyph + delta) & 0xFFFF == 0:
                    continue
                if spans and spans[-1][1] == code - 1:
                    spans[-1] = (spans[-1][0], code)
                else:
                    spans.append((code, code))
    return tuple(s for s, _ in spans), tuple(e for _, e in spans)


@cache
def _coverage(face: Face) -> tuple[tuple[int, ...], tuple[int, ...]]:
    opened = _open(face)
    if isinstance(opened, str):
        with open(opened, "rb") as file:
            return _read_cmap(file, face.index)
    return _read_cmap(opened, face.index)


def coverage(face: Face) -> tuple[tuple[int, int], ...]:
    """Return the code point ranges (first, last) a font has a glyph for."""
    return tuple(zip(*_coverage(face), strict=True))


def font_file(face: Face, bold: bool = False) -> bytes:
    """Return a face's font file (the bold one, for a face with one of its own)."""
    opened = _open(face, bold)
    if isinstance(opened, str):
        with open(opened, "rb") as file:
            return file.read()
    return opened.read()


def _covers(face: Face, code: int) -> bool:
    starts, ends = _coverage(face)
    i = bisect_right(starts, code) - 1
    return i >= 0 and code <= ends[i]


@lru_cache(maxsize=8192)
def face_of(char: str, emoji_style: bool = False) -> Face | None:
    """Return the first font that has a character (the emoji font first if asked), or None."""
    code = ord(char)
    if emoji_style and _covers(EMOJI, code):
        return EMOJI
    return next((face for face in FACES if _covers(face, code)), None)


@lru_cache(maxsize=512)
def _face_font(face: Face, size: int, bold: bool) -> ImageFont.FreeTypeFont:
    loaded = ImageFont.truetype(_open(face, bold), size, index=face.index)
    if not face.bold:
        loaded.set_variation_by_axes([face.weights[bold]])
    return loaded


def font(size: int, *, bold: bool = False) -> ImageFont.FreeTypeFont:
    """Return FiraGO (regular or bold) at a pixel size."""
    return _face_font(FACES[0], size, bold)


# ------------------------------------------------------------------------------ the text


def _drawable(char: str) -> bool:
    category = unicodedata.category(char)
    if category[0] == "C":  # controls, bidi overrides, private use: never shown
        return _is_attached(char)
    if category[0] in "ZM":
        return True
    return face_of(char) is not None


def clean_text(text: str) -> str:
    """Return text with whitespace collapsed and the characters no font has left out."""
    text = unicodedata.normalize("NFC", text)
    return " ".join("".join(char for char in text if _drawable(char)).split())


def isolate(name: str) -> str:
    """Return a name wrapped so that a right-to-left name keeps its place inside a sentence."""
    return f"\u2068{name}\u2069"


@dataclass(frozen=True, slots=True)
class Run:
    """A stretch of text drawn in one font and one direction."""

    face: Face
    text: str
    """The characters in logical order, as the layout wants them."""
    rtl: bool


def _faces(text: str) -> list[Face]:
    """Return the font of each character: an attached one takes its base's; spaces FiraGO's.

    The fallback fonts' spaces are wider than FiraGO's (an emoji font's is an emoji wide), so
    a space between two runs is FiraGO's whatever its neighbours.
    """
    faces: list[Face | None] = []
    for i, char in enumerate(text):
        category = unicodedata.category(char)[0]
        if category == "Z":
            faces.append(FACES[0])
            continue
        if faces and _is_attached(char):
            faces.append(faces[-1])
            continue
        if category == "C":  # an isolate's start or end: drawn with a neighbour, as nothing
            faces.append(None)
            continue
        wants_emoji = text[i + 1 : i + 2] == _EMOJI_STYLE or text[i - 1 : i] == _ZWJ
        faces.append(face_of(char, wants_emoji))
    first = next((face for face in faces if face is not None), FACES[0])
    resolved: list[Face] = []
    for face in faces:  # leading spaces join the first run; a missing glyph stays in FiraGO
        resolved.append(face or (resolved[-1] if resolved else first))
    return resolved


_STRONG: Final = {"L": 0, "R": 1, "AL": 1}
_OPENERS: Final = frozenset({"LRI", "RLI", "FSI"})


def _first_strong(classes: Sequence[str], start: int) -> int | None:
    """Return 0 (left to right) or 1 for the first strong letter from start, isolates skipped."""
    depth = 0
    for cls in classes[start:]:
        if cls in _OPENERS:
            depth += 1
        elif cls == "PDI":
            if depth == 0:
                return None
            depth -= 1
        elif depth == 0 and cls in _STRONG:
            return _STRONG[cls]
    return None


def _levels(text: str) -> list[int]:
    """Return each character's bidirectional level: the Unicode rules, isolates included.

    Explicit embeddings and overrides are left out (``clean_text`` drops them); numbers and
    neutrals are resolved as rules W1-W7 and N1-N2 do for the common cases.
    """
    classes = [unicodedata.bidirectional(char) for char in text]
    base = _first_strong(classes, 0) or 0
    embedding = [base]
    levels: list[int] = []
    strong: list[int | None] = []  # the direction each character counts as for N1, if any
    depth_of: list[int] = []
    for i, cls in enumerate(classes):
        level = embedding[-1]
        depth_of.append(len(embedding))
        if cls in _OPENERS:
            rtl = cls == "RLI" or (cls == "FSI" and _first_strong(classes, i + 1) == 1)
            embedding.append(level + 1 + (level % 2 == rtl))
            strong.append(None)
        elif cls == "PDI":
            if len(embedding) > 1:
                embedding.pop()
            level = embedding[-1]
            depth_of[-1] = len(embedding)
            strong.append(None)
        elif cls == "NSM" and strong:
            strong.append(strong[-1])
        elif cls in _STRONG:
            strong.append(_STRONG[cls])
        elif cls in ("EN", "AN"):
            strong.append(1 if cls == "AN" or _previous_strong(strong, depth_of, i) == 1 else 0)
        else:
            strong.append(None)
        levels.append(level)
    for i, level in enumerate(levels):
        direction = strong[i]
        if direction is None:  # a neutral: the direction on both sides, or the embedding's
            before = _previous_strong(strong, depth_of, i)
            after = _next_strong(strong, depth_of, i)
            direction = before if before is not None and before == after else level % 2
        if classes[i] in ("EN", "AN"):
            # A number reads left to right, a level above the right-to-left text around it.
            levels[i] = level + 1 if level % 2 else level + 2 * direction
        elif direction != level % 2:
            levels[i] = level + 1
    return levels


def _previous_strong(strong: Sequence[int | None], depth: Sequence[int], i: int) -> int | None:
    for j in range(i - 1, -1, -1):
        if depth[j] < depth[i]:
            return None
        if depth[j] == depth[i] and strong[j] is not None:
            return strong[j]
    return None


def _next_strong(strong: Sequence[int | None], depth: Sequence[int], i: int) -> int | None:
    for j in range(i + 1, len(strong)):
        if depth[j] < depth[i]:
            return None
        if depth[j] == depth[i] and strong[j] is not None:
            return strong[j]
    return None


@lru_cache(maxsize=2048)
def runs_of(text: str) -> tuple[Run, ...]:
    """Return the runs of a text from left to right as drawn: one per font and direction."""
    faces = _faces(text)
    if all(face is FACES[0] for face in faces):
        return (Run(FACES[0], text, False),) if text else ()
    levels = _levels(text)
    pieces: list[tuple[Face, int, list[str]]] = []
    for char, face, level in zip(text, faces, levels, strict=True):
        if pieces and pieces[-1][0] is face and pieces[-1][1] == level:
            pieces[-1][2].append(char)
        else:
            pieces.append((face, level, [char]))
    # Rule L2: from the highest level down, turn round every stretch at that level or above.
    order = list(range(len(pieces)))
    top = max(level for _, level, _ in pieces)
    lowest_odd = min((level for _, level, _ in pieces if level % 2), default=top + 1)
    for level in range(top, lowest_odd - 1, -1):
        i = 0
        while i < len(order):
            if pieces[order[i]][1] >= level:
                j = i
                while j < len(order) and pieces[order[j]][1] >= level:
                    j += 1
                order[i:j] = reversed(order[i:j])
                i = j
            else:
                i += 1
    return tuple(Run(pieces[i][0], "".join(pieces[i][2]), pieces[i][1] % 2 == 1) for i in order)


def _direction(run: Run) -> str:
    return "rtl" if run.rtl else "ltr"


@lru_cache(maxsize=1024)
def text_width(text: str, size: int, bold: bool = False) -> float:
    """Return how many pixels wide ``text`` is at ``size``, in whichever fonts it needs."""
    runs = runs_of(text)
    if len(runs) == 1 and runs[0].face is FACES[0]:
        return font(size, bold=bold).getlength(text)
    return sum(_advance(run, size, bold) for run in runs)


def _advance(run: Run, size: int, bold: bool) -> int:
    """Return a run's width in whole pixels, so every run starts on a pixel as it would alone."""
    return round(_face_font(run.face, size, bold).getlength(run.text, direction=_direction(run)))


def _cut_points(text: str) -> list[int]:
    """Return where text may be shortened: never inside a letter with its marks or an emoji."""
    points = []
    regional = 0
    for i in range(1, len(text)):
        char, before = text[i], text[i - 1]
        regional = regional + 1 if 0x1F1E6 <= ord(before) <= 0x1F1FF else 0
        if _is_attached(char) or before == _ZWJ or char == _EMOJI_STYLE:
            continue
        if regional % 2 and 0x1F1E6 <= ord(char) <= 0x1F1FF:
            continue  # the second letter of a flag
        points.append(i)
    return points


@lru_cache(maxsize=1024)
def fit_text(text: str, size: int, max_width: int, bold: bool = False) -> str:
    """Return text shortened with "…" so that it is at most ``max_width`` pixels wide."""
    if text_width(text, size, bold) <= max_width:
        return text
    points = [0, *_cut_points(text)]
    low, high = 0, len(points) - 1
    while low < high:  # the longest prefix that fits with the ellipsis
        middle = (low + high + 1) // 2
        if text_width(text[: points[middle]].rstrip() + "…", size, bold) <= max_width:
            low = middle
        else:
            high = middle - 1
    return text[: points[low]].rstrip() + "…"


@lru_cache(maxsize=2048)
def text_mask(
    text: str, size: int, bold: bool = False, anchor: str = "la"
) -> tuple[Image.Image, int, int]:
    """Return text as an "L" mask and where its top-left corner lies from the anchor point."""
    runs = runs_of(text)
    if len(runs) <= 1 and (not runs or runs[0].face is FACES[0]):
        used = font(size, bold=bold)
        left, top, right, bottom = (round(v) for v in used.getbbox(text, anchor=anchor))
        mask = Image.new("L", (max(1, right - left), max(1, bottom - top)))
        ImageDraw.Draw(mask).text((-left, -top), text, font=used, fill=255, anchor=anchor)
        return mask, left, top
    return _mixed_mask(runs, size, bold, anchor)


def _mixed_mask(
    runs: Sequence[Run], size: int, bold: bool, anchor: str
) -> tuple[Image.Image, int, int]:
    """Draw runs in several fonts on FiraGO's baseline; place them as the anchor says."""
    boxes = []
    pen = 0
    for run in runs:
        used = _face_font(run.face, size, bold)
        left, top, right, bottom = used.getbbox(run.text, anchor="ls", direction=_direction(run))
        boxes.append((pen, used, (left + pen, top, right + pen, bottom)))
        pen += _advance(run, size, bold)
    left = round(min(box[0] for _, _, box in boxes))
    top = round(min(box[1] for _, _, box in boxes))
    right = round(max(box[2] for _, _, box in boxes))
    bottom = round(max(box[3] for _, _, box in boxes))
    mask = Image.new("L", (max(1, right - left), max(1, bottom - top)))
    draw = ImageDraw.Draw(mask)
    for run, (x, used, _) in zip(runs, boxes, strict=True):
        draw.text(
            (x - left, -top), run.text, font=used, fill=255, anchor="ls", direction=_direction(run)
        )
    # The anchor point, measured from the pen's start on the baseline, in FiraGO's metrics.
    ascent, descent = font(size, bold=bold).getmetrics()
    x_anchor = {"l": 0.0, "m": pen / 2, "r": pen}[anchor[0]]
    y_anchor = {
        "a": -ascent,
        "t": top,
        "m": (descent - ascent) / 2,
        "s": 0,
        "b": bottom,
        "d": descent,
    }[anchor[1]]
    return mask, round(left - x_anchor), round(top - y_anchor)


PHONE_WIDTH: Final = 360
"""How wide a phone shows a picture in a chat, in pixels."""
LEAST_TEXT: Final = 11
"""How tall, in pixels, the capitals and digits of a text must stand at ``PHONE_WIDTH`` to read."""


@lru_cache(maxsize=64)
def cap_height(size: int) -> int:
    """Return how tall the ink of FiraGO's capitals and digits is at a size, regular or bold.

    >>> cap_height(20), cap_height(28)
    (13, 19)
    """
    return min(
        round(-font(size, bold=bold).getbbox(letter, anchor="ls")[1])
        for bold in (False, True)
        for letter in "H0"
    )


def least_size(width: int) -> int:
    """Return the smallest font size on a picture ``width`` pixels wide that reads on a phone.

    Its capitals and digits, shown ``PHONE_WIDTH`` pixels wide, stand ``LEAST_TEXT`` tall.

    >>> least_size(480), least_size(640), least_size(360)
    (22, 30, 16)
    """
    size = 1
    while cap_height(size) * PHONE_WIDTH < LEAST_TEXT * width:
        size += 1
    return size


@dataclass(frozen=True, slots=True)
class Written:
    """One text on a picture: what it says, its font size and the box its letters ink."""

    text: str
    size: int
    box: tuple[int, int, int, int]


class Pen:
    """Draw text on a picture and keep where each text went, so a layout can be checked."""

    def __init__(self, canvas: Image.Image) -> None:
        self.canvas = canvas
        self.written: list[Written] = []

    def write(
        self,
        xy: tuple[float, float],
        text: str,
        *,
        size: int,
        fill: tuple[int, int, int],
        bold: bool = False,
        anchor: str = "la",
    ) -> Written:
        """Draw text from a cached mask; return (and keep) where it went.

        The masks are cached because laying text out is the slow part of a picture."""
        mask, left, top = text_mask(text, size, bold, anchor)
        x, y = round(xy[0]) + left, round(xy[1]) + top
        box = (x, y, x + mask.width, y + mask.height)
        self.canvas.paste(fill, box, mask)
        written = Written(text, size, box)
        self.written.append(written)
        return written
