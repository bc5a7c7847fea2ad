"""The pages' web fonts: the pictures' own fonts, cut into slices a browser fetches as it needs.

A visitor without a font for a name's letters (Chinese, Japanese, Korean, emoji, the other
scripts) would see boxes. So the pages bring the fonts the table pictures draw with
(``render.fonts.FACES``, FiraGO first, then Noto), from this site and nowhere else. Each
character goes to the first of them that has it, as in the pictures; each font's characters are
cut into slices of one block of 256 code points, and the style sheet declares every slice with
its exact ``unicode-range``: a browser downloads only the slices of the characters a page shows.
The family comes first in the pages' fonts (a web font listed after an installed one is never
asked for a character, in Chromium on Linux), so it leaves out the Latin letters and the
punctuation every system has: those stay in the visitor's own font, as the rest of the page.
A slice is cut (fontTools) the first time it is asked for, kept in memory, and sent as WOFF2 to
be cached for good: its address carries the fonts' version.

>>> sheet = style_sheet()
>>> "unicode-range: U+4E00-4EFF;" in sheet, sheet.count("/fonts/21-4e-") == 2
(True, True)
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
import io
import unicodedata
from collections import OrderedDict
from concurrent.futures import Executor
from dataclasses import dataclass
from importlib import metadata
from typing import Final

from fontTools import subset  # type: ignore[import-untyped]
from fontTools.ttLib import TTFont  # type: ignore[import-untyped]

from krigbot.render.fonts import FACES, Face, coverage, font_file

FAMILY: Final = "Krig Text"
"""The family name the style sheet gives every slice (``krig.css`` lists it last but one)."""
BLOCK: Final = 256
"""Code points per slice: the size of a Unicode page, as Google Fonts slices CJK too."""
KEPT_SLICES: Final = 96
"""Slices kept cut in memory (a CJK slice is 40-70 kB): a busy page's names and then some."""
_PACKAGES: Final = ("pymupdf-fonts", "manimgx-fonts", "manimgx-fonts-cjk", "fonttools")
SYSTEM_TEXT: Final = (
    range(0x0000, 0x0370),
    range(0x2000, 0x2070),
    range(0xFE00, 0xFE10),
    range(0xE0000, 0xE0200),
)
"""Left to the visitor's own fonts: Latin with its accents and combining marks, punctuation and
spaces, and the variation selectors and tags, which draw nothing of their own (a slice of
nothing else is a font browsers refuse); format characters are left out everywhere."""


@dataclass(frozen=True, slots=True)
class Slice:
    """One WOFF2 file: some characters of one face, regular or bold."""

    name: str
    face: Face
    bold: bool
    codes: tuple[int, ...]


def _drawn(code: int) -> bool:
    """Tell whether a character is the slices': drawn by itself, and not left to the system.

    >>> _drawn(ord("王")), _drawn(ord("å")), _drawn(0xFE0F), _drawn(0x200D)
    (True, False, False, False)
    """
    if any(code in span for span in SYSTEM_TEXT):
        return False
    return unicodedata.category(chr(code)) not in ("Cc", "Cf", "Cs", "Co", "Cn")


@functools.cache
def version() -> str:
    """Return a short digest of the fonts' packages: a slice's address changes with them."""
    versions = ",".join(f"{package}={metadata.version(package)}" for package in _PACKAGES)
    return hashlib.sha256(versions.encode()).hexdigest()[:10]


@functools.cache
def slices() -> dict[str, Slice]:
    """Return every slice by its file name, FiraGO's first."""
    taken: set[int] = set()
    found: dict[str, Slice] = {}
    for index, face in enumerate(FACES):
        blocks: dict[int, list[int]] = {}
        for first, last in coverage(face):
            for code in range(first, last + 1):
                if code not in taken and _drawn(code):
                    taken.add(code)
                    blocks.setdefault(code // BLOCK, []).append(code)
        weights = (False, True) if face.bold and face.bold != face.regular else (False,)
        for block, codes in blocks.items():
            for bold in weights:
                name = f"{index}{'b' if bold else ''}-{block:x}-{version()}.woff2"
                found[name] = Slice(name, face, bold, tuple(codes))
    return found


def _ranges(codes: tuple[int, ...]) -> str:
    """Return code points as a ``unicode-range`` value.

    >>> _ranges((0x41, 0x42, 0x43, 0x61, 0x4E00))
    'U+41-43, U+61, U+4E00'
    """
    spans: list[list[int]] = []
    for code in codes:
        if spans and spans[-1][1] == code - 1:
            spans[-1][1] = code
        else:
            spans.append([code, code])
    return ", ".join(f"U+{a:X}" if a == b else f"U+{a:X}-{b:X}" for a, b in spans)


@functools.cache
def style_sheet() -> str:
    """Return the ``@font-face`` rules of every slice."""
    rules: list[str] = []
    for piece in slices().values():
        # A browser joins the faces of one family and weight into one font, and falls back to
        # the next family, not to the family's faces of another weight: so every slice is
        # declared at both weights, a face without a bold file (a variable one) twice.
        own_bold = piece.face.bold not in ("", piece.face.regular)
        weights = ("700" if piece.bold else "400",) if own_bold else ("400", "700")
        rules.extend(
            f'@font-face {{ font-family: "{FAMILY}"; font-weight: {weight}; '
            f'font-display: swap; src: url("/fonts/{piece.name}") format("woff2"); '
            f"unicode-range: {_ranges(piece.codes)}; }}"
            for weight in weights
        )
    return "\n".join(rules) + "\n"


def cut(piece: Slice) -> bytes:
    """Return a slice as WOFF2: its face's glyphs for its characters, and nothing else."""
    data = io.BytesIO(font_file(piece.face, piece.bold))
    font = TTFont(data, fontNumber=piece.face.index, lazy=True)
    options = subset.Options()
    options.flavor = "woff2"
    options.layout_features = ["*"]
    options.hinting = False
    subsetter = subset.Subsetter(options)
    subsetter.populate(unicodes=piece.codes)
    subsetter.subset(font)
    out = io.BytesIO()
    font.flavor = "woff2"
    font.save(out)
    return out.getvalue()


_CUT: OrderedDict[str, bytes] = OrderedDict()
"""The slices cut, by name: the same bytes for every web view in the process."""


class FontSlices:
    """Cut slices on request, at most two at once (a CJK slice takes a few seconds of one core),
    and keep the last ones asked for; a slice asked for again while it is cut waits for it.

    ``cutter`` is where they are cut: the bot's drawing workers, so that fontTools (pure Python)
    never holds the bot's own interpreter while it answers; without one, a thread of this
    process (a web view on its own, the tests).
    """

    def __init__(
        self, kept: int = KEPT_SLICES, at_once: int = 2, *, cutter: Executor | None = None
    ) -> None:
        self.kept = kept
        self._cutter = cutter
        self._cut = _CUT
        self._cutting: dict[str, asyncio.Future[bytes]] = {}
        self._at_once = asyncio.Semaphore(at_once)

    async def get(self, name: str) -> bytes | None:
        """Return a slice's WOFF2 by its file name; None for a name that is no slice."""
        piece = slices().get(name)
        if piece is None:
            return None
        data = self._cut.get(name)
        if data is not None:
            self._cut.move_to_end(name)
            return data
        under_way = self._cutting.get(name)
        if under_way is not None:
            return await asyncio.shield(under_way)
        under_way = asyncio.get_running_loop().create_future()
        self._cutting[name] = under_way
        try:
            async with self._at_once:
                data = await (
                    asyncio.to_thread(cut, piece)
                    if self._cutter is None
                    else asyncio.wrap_future(self._cutter.submit(cut, piece))
                )
        except asyncio.CancelledError:
            under_way.cancel()
            raise
        except Exception as error:
            under_way.set_exception(error)
            under_way.exception()  # read here, so a slice nobody else waited for logs nothing
            raise
        finally:
            del self._cutting[name]
        under_way.set_result(data)
        self._cut[name] = data
        while len(self._cut) > self.kept:
            self._cut.popitem(last=False)
        return data
