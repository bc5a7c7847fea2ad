"""The notes a Steal War look or choice would weigh when the Activity asks another process."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime

from krigbot.adapter.forwarding import encode
from krigbot.adapter.steal import activity_look
from krigbot.engine import Rules, new_game
from krigbot.i18n import LANGS
from tests.support.rows import stored_row

LONG_NAMES = tuple(chr(0x1D504 + seat) * 32 for seat in range(4))
"""Display names as long as Discord's (32 characters), of four bytes each in UTF-8."""
DONE = "x" * 200
"""Room for a choice's line of what was done (``done``), longer than any catalog's."""


def steal_war_answers(seeds: int, rounds: int = 400) -> Iterator[str | None]:
    """Yield the answer note of every look of every seat after every battle of 4-player Steal
    War deals (with the most steal targets and won cards to choose from), as the holder sends
    it back, with a choice's line of what was done besides (None: too long for a note)."""
    rules = Rules.preset("stjel", players=4)
    at = datetime(2026, 1, 1, tzinfo=UTC)
    for seed in range(seeds):
        game = new_game(rules, seed)
        row = stored_row(rules, (1, 2, 3, 4), LONG_NAMES, at=at, game_id=2**62)
        for _ in range(rounds):
            if game.outcome is not None:
                break
            for seat in range(4):
                if game.look(seat) is None:
                    continue
                for lang in LANGS:
                    look = activity_look(row, game, seat, lang)
                    yield encode({"id": "f" * 16, "answer": {"done": DONE, **look}})
            game.play_round()
