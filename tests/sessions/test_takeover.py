"""Shards taken over from a process that died: what a start picks up, for those shards alone."""

from __future__ import annotations

from pathlib import Path

from krigbot.config import Shards
from krigbot.engine import Rules, new_game
from krigbot.engine.game import outcome_to_dict
from krigbot.sessions import GameService, Player
from krigbot.sessions.registry import ENDING
from krigbot.storage import GameRow, Storage
from tests.support.stored_games import T0, running_game

ON_ZERO = 2 << 22
"""A server on shard 0 of two."""


async def finished_unshown(storage: Storage, guild_id: int, channel_id: int) -> GameRow:
    """Store a game that finished just before its process died, its end never shown."""
    row = await running_game(storage, guild_id=guild_id, channel_id=channel_id)
    game = new_game(Rules.preset("classic"), seed=7)
    outcome = game.play_to_end()
    await storage.games.finish_game(
        row.id,
        expected_round=0,
        state=game.to_dict(),
        round=game.round,
        result=outcome_to_dict(outcome),
        results=[],
        now=T0,
        extra={ENDING: "unshown"},
    )
    return row


async def test_the_ends_left_unshown_of_shards_taken_over_are_shown_there_alone(
    tmp_path: Path,
) -> None:
    # Of two shards, this process held shard 0 and takes shard 1 over: the end left unshown in
    # shard 1's server is its to show now; shard 0's was shown (or is left) as at its start.
    async with await Storage.open(tmp_path / "krig.db") as storage:
        service = GameService(storage, clock=lambda: T0, shards=Shards(2, (0,), auto=True))
        on_zero = await finished_unshown(storage, guild_id=2 << 22, channel_id=10)
        on_one = await finished_unshown(storage, guild_id=1 << 22, channel_id=11)

        taken = Shards(2, (1,), auto=True)
        endings = await service.recovery.unshown_endings(taken)

        assert [row.id for row, _ in endings] == [on_one.id]
        assert [row.id for row, _ in await service.recovery.unshown_endings()] == [on_zero.id]


async def test_an_open_tournament_of_a_shard_taken_over_is_restored_with_its_deadline(
    tmp_path: Path,
) -> None:
    # Its sign-up closes by itself: the process that died would have closed it. The one that
    # runs shard 1 alone neither restores it nor keeps its deadline, until it takes shard 0.
    async with await Storage.open(tmp_path / "krig.db") as storage:
        first = GameService(storage, clock=lambda: T0)
        made = await first.tournaments.create(
            guild_id=ON_ZERO,
            channel_id=10,
            organiser=Player(500, "Org"),
            name="Cup",
            signup_minutes=30,
        )
        service = GameService(storage, clock=lambda: T0, shards=Shards(2, (1,), auto=True))

        assert await service.tournaments.restore() == []
        assert service.deadlines.pending(made.id, "tournament_signup") is None

        taken = Shards(2, (0,), auto=True)
        service.registry.hold_shards(Shards(2, (0, 1), auto=True), {0: 7, 1: 8})
        (restored,) = await service.tournaments.restore(taken)

        assert restored.id == made.id
        deadline = service.deadlines.pending(made.id, "tournament_signup")
        assert deadline is not None
        assert deadline.at == made.closes_at
        assert deadline.server_id == ON_ZERO
