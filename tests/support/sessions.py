"""Seats and stored rows for the session tests."""

from __future__ import annotations

from datetime import UTC, datetime

from krigbot.engine import Rules
from krigbot.storage import GameRow, GameStatus
from tests.support.rows import stored_row

ALICE, BOB, CAROL, ONLOOKER = 1, 2, 3, 9


NOW = datetime(2026, 1, 1, tzinfo=UTC)


def row(status: GameStatus = "running", players: tuple[int, ...] = (ALICE, BOB)) -> GameRow:
    """Return a game of Alice's in channel 10."""
    rules = Rules.preset("standard", players=len(players))
    names = ("Alice", "Bob", "Carol")[: len(players)]
    return stored_row(rules, players, names, at=NOW, game_id=7, channel_id=10, status=status)
