"""Leaderboard, player statistics and game history."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Sequence
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

import pytest

from krigbot.storage import HeadToHead, PartnerRecord, PlayerStats, Storage
from tests.support.stored_games import at, new_game, pr, record_game, running_game

if TYPE_CHECKING:
    from pathlib import Path

    from krigbot.storage.base import Connection, Row

A, B, C, D, E, F, G, H = 1, 2, 3, 4, 5, 6, 7, 8


async def seed_guild_one(storage: Storage) -> None:
    """Play eight two-player games in guild 1 whose records exercise every tiebreak."""
    games = [
        (pr(A, "win"), pr(B, "loss")),
        (pr(A, "win"), pr(C, "loss")),
        (pr(A, "draw"), pr(D, "draw")),
        (pr(B, "win"), pr(C, "loss")),
        (pr(E, "win"), pr(C, "loss")),
        (pr(G, "win"), pr(H, "loss")),
        (pr(F, "win"), pr(H, "loss")),
    ]
    for minute, results in enumerate(games):
        await record_game(storage, results, guild_id=1, now=at(minute))


async def test_leaderboard_order_and_win_rate(storage: Storage) -> None:
    await seed_guild_one(storage)
    board = await storage.stats.leaderboard(1)
    # wins desc; then win rate desc (E, F, G at 1.0 before B at 0.5); then games desc
    # (C 3, H 2, D 1 at zero wins); user id breaks the E/F/G tie.
    assert [row.user_id for row in board] == [A, E, F, G, B, C, H, D]
    by_user = {row.user_id: row for row in board}
    a = by_user[A]
    assert (a.games, a.wins, a.draws, a.losses) == (3, 2, 1, 0)
    assert a.win_rate == pytest.approx(2 / 3)
    assert by_user[B].win_rate == 0.5
    assert (by_user[C].games, by_user[C].losses, by_user[C].win_rate) == (3, 3, 0.0)
    assert (by_user[D].draws, by_user[D].win_rate) == (1, 0.0)
    assert [row.user_id for row in await storage.stats.leaderboard(1, limit=3)] == [A, E, F]


async def test_leaderboard_keeps_guilds_apart(storage: Storage) -> None:
    await seed_guild_one(storage)
    for minute in range(3):
        await record_game(storage, [pr(H, "win"), pr(99, "loss")], guild_id=2, now=at(minute))
    guild_two = await storage.stats.leaderboard(2)
    assert [(r.user_id, r.games, r.wins) for r in guild_two] == [(H, 3, 3), (99, 3, 0)]
    h_in_one = next(r for r in await storage.stats.leaderboard(1) if r.user_id == H)
    assert (h_in_one.games, h_in_one.wins) == (2, 0)
    assert await storage.stats.leaderboard(3) == []


async def test_leaderboard_since_filters_by_finish_time(storage: Storage) -> None:
    await record_game(storage, [pr(A, "win"), pr(B, "loss")], now=at(0))
    await record_game(storage, [pr(A, "win"), pr(B, "loss")], now=at(10))
    await record_game(storage, [pr(B, "win"), pr(A, "loss")], now=at(20))
    await record_game(storage, [pr(B, "win"), pr(A, "loss")], now=at(30))
    await record_game(storage, [pr(B, "win"), pr(A, "loss")], now=at(40))

    all_time = await storage.stats.leaderboard(1)
    assert [(r.user_id, r.wins, r.games) for r in all_time] == [(B, 3, 5), (A, 2, 5)]
    recent = await storage.stats.leaderboard(1, since=at(20))  # inclusive bound
    assert [(r.user_id, r.wins, r.games) for r in recent] == [(B, 3, 3), (A, 0, 3)]
    assert await storage.stats.leaderboard(1, since=at(41)) == []
    # Abandoned and running games never count.
    running = await running_game(storage, players=(A, B), channel_id=7)
    assert await storage.games.end_game(running.id, "abandoned", at(50))
    assert await storage.stats.leaderboard(1) == all_time


async def test_player_stats_totals_opponent_and_partner(storage: Storage) -> None:
    # Free-for-all games (team None).
    for minute in range(3):
        await record_game(
            storage, [pr(A, "win", wars=2, pot=8, rounds=30), pr(B, "loss")], now=at(minute)
        )
    await record_game(storage, [pr(A, "loss", rounds=55), pr(C, "win")], now=at(3))
    # Team games: A and D (team 0) against B and C (team 1), twice; then A with C.
    for minute in (4, 5):
        await record_game(
            storage,
            [pr(A, "win", 0, pot=20), pr(B, "loss", 1), pr(D, "win", 0), pr(C, "loss", 1)],
            now=at(minute),
        )
    await record_game(
        storage,
        [pr(A, "draw", 0, wars=1), pr(B, "draw", 1), pr(C, "draw", 0), pr(D, "draw", 1)],
        now=at(6),
    )
    # The same people in another guild must not count.
    await record_game(storage, [pr(A, "loss"), pr(C, "win")], guild_id=2, now=at(7))

    stats = await storage.stats.player_stats(1, A)
    assert stats == PlayerStats(
        games=7,
        wins=5,
        draws=1,
        losses=1,
        wars_won=7,
        biggest_pot=20,
        longest_game=55,
        # B: 3 free-for-all + 2 team games against + 1 against = 6, A won 5, neither won 1.
        top_opponent=HeadToHead(user_id=B, games=6, won=5, lost=0, neither=1),
        # D partnered A twice (both won); C only once.
        top_partner=PartnerRecord(user_id=D, games=2, wins=2, draws=0, losses=0),
    )
    c_stats = await storage.stats.player_stats(1, C)
    assert c_stats.top_partner == PartnerRecord(user_id=B, games=2, wins=0, draws=0, losses=2)
    # A and C: 1 ffa + 2 team games against each other (A only partnered C once).
    assert c_stats.top_opponent == HeadToHead(user_id=A, games=3, won=1, lost=2, neither=0)

    recent = await storage.stats.player_stats(1, A, since=at(6))
    assert (recent.games, recent.draws) == (1, 1)
    assert recent.top_partner == PartnerRecord(user_id=C, games=1, wins=0, draws=1, losses=0)


async def test_player_stats_for_newcomers_and_free_for_all_only(storage: Storage) -> None:
    assert await storage.stats.player_stats(1, 12345) == PlayerStats(
        0, 0, 0, 0, 0, 0, 0, None, None
    )
    await record_game(storage, [pr(A, "win"), pr(B, "loss"), pr(C, "loss")])
    await record_game(storage, [pr(A, "win"), pr(C, "loss")], now=at(1))
    stats = await storage.stats.player_stats(1, A)
    assert stats.top_partner is None
    # C shares two games with A, B only one.
    assert stats.top_opponent == HeadToHead(user_id=C, games=2, won=2, lost=0, neither=0)
    await record_game(storage, [pr(A, "loss"), pr(B, "win")], now=at(2))
    tied = await storage.stats.player_stats(1, A)
    # Two shared games each: the lower user id is chosen, deterministically.
    assert tied.top_opponent == HeadToHead(user_id=B, games=2, won=1, lost=1, neither=0)


async def test_player_stats_agree_with_themselves_while_other_connections_finish_games(
    storage: Storage, database: str | Path
) -> None:
    # Another process of the bot (here: another storage on the same database) finishes
    # games while the stats are read; A only ever plays B, so B is A's whole record.
    other = await Storage.open(database)
    finishing = True
    seen: set[int] = set()

    async def finish_games() -> None:
        nonlocal finishing
        try:
            for n in range(120):
                results = [pr(A, "win"), pr(B, "loss")] if n % 3 else [pr(A, "loss"), pr(B, "win")]
                await record_game(other, results, now=at(n))
        finally:
            finishing = False

    async def read_stats() -> None:
        while finishing:
            stats = await storage.stats.player_stats(1, A)
            if stats.games == 0:
                continue
            assert stats.top_opponent is not None
            shared = stats.top_opponent
            assert (shared.games, shared.won, shared.lost) == (
                stats.games,
                stats.wins,
                stats.losses,
            ), stats
            seen.add(stats.games)

    try:
        await asyncio.gather(finish_games(), read_stats())
    finally:
        await other.close()
    # The reads really ran while the games finished, not before or after them all.
    assert len(seen) >= 10, seen


async def test_head_to_head_in_three_player_games_mirrors_between_the_two_players(
    storage: Storage,
) -> None:
    # A beats B and C once; C wins twice (A and B both lose); A and B draw once (C is out).
    games = [
        (pr(A, "win"), pr(B, "loss"), pr(C, "loss")),
        (pr(C, "win"), pr(A, "loss"), pr(B, "loss")),
        (pr(B, "loss"), pr(C, "win"), pr(A, "loss")),
        (pr(A, "draw"), pr(B, "draw"), pr(C, "loss")),
    ]
    for minute, results in enumerate(games):
        await record_game(storage, results, now=at(minute))

    a_view = (await storage.stats.player_stats(1, A)).top_opponent
    b_view = (await storage.stats.player_stats(1, B)).top_opponent

    # C's wins are nobody's between A and B: A lost them, but B did not win them.
    assert a_view == HeadToHead(user_id=B, games=4, won=1, lost=0, neither=3)
    assert b_view == HeadToHead(user_id=A, games=4, won=0, lost=1, neither=3)
    c_view = (await storage.stats.player_stats(1, C)).top_opponent
    assert c_view == HeadToHead(user_id=A, games=4, won=2, lost=1, neither=1)


async def test_recent_games_newest_first_per_guild_and_user(storage: Storage) -> None:
    first = await record_game(storage, [pr(A, "win"), pr(B, "loss")], now=at(0))
    cancelled = await new_game(storage, players=(A, C), channel_id=2, now=at(1))
    assert await storage.games.end_game(cancelled.id, "cancelled", at(2))
    abandoned = await running_game(storage, players=(B, C), channel_id=3, now=at(1))
    assert await storage.games.end_game(abandoned.id, "abandoned", at(3))
    last = await record_game(storage, [pr(C, "win"), pr(A, "loss")], now=at(4))
    declined = await new_game(storage, players=(A, B), channel_id=4, now=at(5))
    assert await storage.games.end_game(declined.id, "declined", at(5))
    await running_game(storage, players=(A, B), channel_id=5, now=at(6))
    await record_game(storage, [pr(A, "win"), pr(B, "loss")], guild_id=2, now=at(7))

    ids = [g.id for g in await storage.stats.recent_games(1)]
    assert ids == [last.id, abandoned.id, cancelled.id, first.id]
    mine = [g.id for g in await storage.stats.recent_games(1, user_id=A)]
    assert mine == [last.id, cancelled.id, first.id]
    page = [g.id for g in await storage.stats.recent_games(1, limit=2, offset=1)]
    assert page == [abandoned.id, cancelled.id]
    assert await storage.stats.recent_games(1, user_id=999) == []
    with_declined = await storage.stats.recent_games(1, statuses=["declined", "expired"])
    assert [g.id for g in with_declined] == [declined.id]
    assert (await storage.stats.recent_games(1))[0] == last


class FinishingAfterFirstRead:
    """A connection of the storage read by ``player_stats``: once its first query is answered,
    another process finishes a game between the same players."""

    def __init__(self, connection: Connection, finish: Callable[[], Awaitable[object]]) -> None:
        self._connection = connection
        self._finish = finish
        self.finished = False

    async def fetch(self, sql: str, params: Iterable[Any] = ()) -> list[Row]:
        rows = await self._connection.fetch(sql, params)
        if not self.finished:
            self.finished = True
            await self._finish()
        return rows

    async def run(self, sql: str, params: Iterable[Any] = ()) -> int:
        return await self._connection.run(sql, params)

    async def run_many(self, sql: str, rows: Iterable[Sequence[Any]]) -> None:
        await self._connection.run_many(sql, rows)


async def test_player_stats_read_one_moment_while_another_process_finishes_a_game(
    storage: Storage, database: str | Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    await record_game(storage, [pr(A, "win"), pr(B, "loss")])
    async with await Storage.open(database) as other:
        between = None
        real_session = storage.database.session

        @asynccontextmanager
        async def session() -> AsyncIterator[Connection]:
            nonlocal between
            async with real_session() as connection:
                if between is not None:  # once only
                    yield connection
                    return
                between = FinishingAfterFirstRead(
                    connection,
                    lambda: record_game(other, [pr(A, "win"), pr(B, "loss")], now=at(5)),
                )
                yield between

        monkeypatch.setattr(storage.database, "session", session)
        stats = await storage.stats.player_stats(1, A)
        assert between is not None
        assert between.finished
    # The totals and the head-to-head counted the same games: the one finished meanwhile in
    # neither (a page would otherwise say 1 game played, 2 of them against B).
    assert stats.games == 1
    assert stats.top_opponent is not None
    assert stats.top_opponent.games == 1
    assert (await storage.stats.player_stats(1, A)).games == 2
