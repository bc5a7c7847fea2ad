"""Autoplay through the stand-in: a seed for a long game and the rounds its table shows."""

from __future__ import annotations

import re

from tests.support.texts import pattern

LONG_SEED = 17
"""Standard: 117 rounds, long enough to press buttons while autoplay plays."""


TITLE = pattern("nb", "table.title", round=re.compile(r"\d+"))


def round_shown(text: str) -> int:
    """Return the round a Norwegian table shows (t("nb", "table.title", round=12))."""
    title = TITLE.search(text)
    assert title is not None
    return int(title["round"])
