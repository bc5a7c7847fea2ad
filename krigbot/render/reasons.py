"""Which reasons for winning a round a table names: its narration line and its picture's pill.

A round records why it was won (``Round.won_by``, decided by ``engine.compare``). Most reasons
go without saying; the ones a house rule brings (rules §1) are named, each with the emoji its
narration line starts with. The line is the catalog's ``table.<reason>``, the pill on the
picture's header ``picture.<reason>``: a new reason is named by one entry here and those two
messages in every language.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from krigbot.engine import Round
from krigbot.engine.compare import WonBy

NAMED: Final[Mapping[WonBy, str]] = {
    "two_beats_ace": "✌️",
    "lowest_wins": "🕊️",
}
"""The reasons a table names, each with the emoji of its narration line."""


def named_reason(played: Round) -> WonBy | None:
    """Return why the round was won if the table names it, else None."""
    reason = played.won_by
    return reason if reason is not None and reason in NAMED else None
