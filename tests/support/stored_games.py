"""Stored games built by hand for the storage tests: a fixed start time, games running and over."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from krigbot.storage import GameRow, PlayerResult, Storage

if TYPE_CHECKING:
    from collections.abc import Sequence

    from krigbot.storage import Outcome

T0 = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)


def at(minutes: float) -> datetime:
    """Return T0 plus some minutes."""
    return T0 + timedelta(minutes=minutes)


async def new_game(
    storage: Storage,
    *,
    guild_id: int = 1,
    channel_id: int = 100,
    players: Sequence[int] = (10, 20),
    now: datetime = T0,
    **overrides: Any,
) -> GameRow:
    """Create a challenge with sensible defaults; the first player challenges."""
    arguments: dict[str, Any] = {
        "guild_id": guild_id,
        "channel_id": channel_id,
        "challenger_id": players[0],
        "players": list(players),
        "names": [f"user{p}" for p in players],
        "variant": "classic",
        "rules": {"deck": 52, "war_cards": 3},
        "seed": 1234,
        "now": now,
    }
    arguments.update(overrides)
    return await storage.games.create_game(**arguments)


async def running_game(storage: Storage, **kwargs: Any) -> GameRow:
    """Create a challenge and start it with a small dealt state."""
    game = await new_game(storage, **kwargs)
    started = await storage.games.start_game(
        game.id, state={"hands": [[1, 2], [3, 4]]}, now=game.created_at
    )
    assert started is not None
    return started


def pr(
    user_id: int,
    outcome: Outcome,
    team: int | None = None,
    *,
    rounds: int = 10,
    wars: int = 0,
    pot: int = 0,
) -> PlayerResult:
    """Build a PlayerResult tersely; the seat is filled in by record_game."""
    return PlayerResult(
        user_id=user_id,
        seat=0,
        outcome=outcome,
        rounds=rounds,
        wars_won=wars,
        biggest_pot=pot,
        team=team,
    )


async def record_game(
    storage: Storage,
    results: Sequence[PlayerResult],
    *,
    guild_id: int = 1,
    channel_id: int = 500,
    now: datetime = T0,
) -> GameRow:
    """Play a whole game through the public API and finish it with these results."""
    players = [r.user_id for r in results]
    game = await running_game(
        storage, guild_id=guild_id, channel_id=channel_id, players=players, now=now
    )
    seated = [dataclasses.replace(r, seat=seat) for seat, r in enumerate(results)]
    rounds = max(r.rounds for r in results)
    finished = await storage.games.finish_game(
        game.id,
        expected_round=0,
        state={"hands": []},
        round=rounds,
        result={"reason": "cards", "winners": [s.seat for s in seated if s.outcome == "win"]},
        results=seated,
        now=now,
    )
    assert finished
    row = await storage.games.get_game(game.id)
    assert row is not None
    return row


async def committed(storage: Storage, sql: str, *params: Any) -> list[tuple[Any, ...]]:
    """Run a query on a second storage on the same database: it sees only what is committed."""
    async with await Storage.open(storage.path) as other:
        return [tuple(row) for row in await other.database.fetchall(sql, params)]


def results_for(players: tuple[int, ...], winner: int) -> list[PlayerResult]:
    """Give the winner a win and everyone else a loss."""
    return [
        PlayerResult(user_id=p, seat=i, outcome="win" if p == winner else "loss", rounds=5)
        for i, p in enumerate(players)
    ]
