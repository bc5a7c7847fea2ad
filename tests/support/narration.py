"""Stored rows for the narration tests, with the players' names."""

from __future__ import annotations

from datetime import UTC, datetime

from krigbot.engine import Rules
from krigbot.storage import GameRow
from tests.support.rows import stored_row

NAMES = ("Alice", "Bob", "Carol", "Dave")


NOW = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)


def row_for(rules: Rules) -> GameRow:
    """Return a stored game row for rendering a game of ``rules`` without a bot."""
    players = range(1, rules.players + 1)
    return stored_row(rules, players, NAMES[: rules.players], at=NOW, game_id=7)
