"""Stored game rows built by hand, for tests that render or check a game without a bot."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from krigbot.engine import Rules
from krigbot.storage import GameRow, GameStatus


def stored_row(
    rules: Rules,
    players: Sequence[int],
    names: Sequence[str],
    *,
    at: datetime,
    game_id: int = 1,
    channel_id: int = 1,
    status: GameStatus = "running",
) -> GameRow:
    """Return a game of ``rules`` as storage holds it: everyone accepted, seat 0 challenged."""
    return GameRow(
        id=game_id,
        guild_id=1,
        channel_id=channel_id,
        challenger_id=players[0],
        status=status,
        variant=rules.preset_name,
        rules=rules.to_dict(),
        seed=1,
        players=tuple(players),
        names=tuple(names),
        accepted=tuple(players),
        state=None,
        round=0,
        table_message_id=None,
        challenge_message_id=None,
        result=None,
        created_at=at,
        updated_at=at,
        last_activity_at=at,
        finished_at=None,
        extra={},
    )
