"""Seats, stored rows and games dealt through the game service, for the session tests."""

from __future__ import annotations

from datetime import UTC, datetime

from krigbot.engine import Rules
from krigbot.sessions import GameService, Player
from krigbot.storage import GameRow, GameStatus
from tests.support.rows import stored_row

ALICE, BOB, CAROL, ONLOOKER = 1, 2, 3, 9


NOW = datetime(2026, 1, 1, tzinfo=UTC)

GUILD, CHANNEL = 10, 100
"""The server and the channel of a game :func:`dealt` deals."""


def row(status: GameStatus = "running", players: tuple[int, ...] = (ALICE, BOB)) -> GameRow:
    """Return a game of Alice's in channel 10."""
    rules = Rules.preset("standard", players=len(players))
    names = ("Alice", "Bob", "Carol")[: len(players)]
    return stored_row(rules, players, names, at=NOW, game_id=7, channel_id=10, status=status)


async def dealt(
    service: GameService, variant: str = "standard", *, channel_id: int = CHANNEL, **options: object
) -> GameRow:
    """Let Alice challenge Bob to a game in the channel and Bob accept it; return it dealt."""
    made = await service.challenges.challenge(
        guild_id=GUILD,
        channel_id=channel_id,
        challenger=Player(ALICE, "Alice"),
        opponents=[Player(BOB, "Bob")],
        variant=variant,
        options=dict(options),
    )
    accepted = await service.challenges.accept(made.row.id, BOB)
    assert accepted.game is not None
    return accepted.row
