"""Matches: dealing a match's next game, recording its winners, and match records."""

from __future__ import annotations

import pytest

from krigbot.storage import (
    ChannelBusyError,
    MatchRecord,
    MatchStep,
    NextGame,
    PlayerResult,
    Storage,
)
from tests.support.stored_games import at, new_game, pr, record_game, running_game

A, B, C = 1, 2, 3
CHANNEL = 500


def step(match_id: int, games: int, score: tuple[int, ...], *, guild_id: int = 1) -> MatchStep:
    return MatchStep(
        match_id=match_id,
        guild_id=guild_id,
        channel_id=CHANNEL,
        best_of=3,
        players=(A, B),
        score=score,
        games=games,
    )


def following(match_id: int, game: int, score: list[int]) -> NextGame:
    return NextGame(
        challenger_id=A,
        names=("Ada", "Bo"),
        variant="standard",
        rules={"preset": "standard"},
        seed=99,
        state={"round": 0},
        extra={"lang": "nb", "match": {"id": match_id, "best_of": 3, "game": game, "score": score}},
    )


async def finished_match_game(storage: Storage, match_id: int | None, game: int) -> int:
    """Store a finished game of a match (``match_id`` None: the game is the match's first)."""
    row = await record_game(storage, [pr(A, "win"), pr(B, "loss")], channel_id=CHANNEL)
    extra = {"id": match_id or row.id, "best_of": 3, "game": game, "score": [game - 1, 0]}
    await storage.games.update_extra(row.id, {"match": extra})
    return row.id


async def test_advancing_deals_the_next_game_running_and_counts_the_game_once(
    storage: Storage,
) -> None:
    first = await finished_match_game(storage, None, 1)
    assert [row.id for row in await storage.matches.unadvanced_match_games()] == [first]

    dealt = await storage.matches.advance_match(
        step(first, 1, (1, 0)), following(first, 2, [1, 0]), now=at(1)
    )
    again = await storage.matches.advance_match(
        step(first, 1, (1, 0)), following(first, 2, [1, 0]), now=at(2)
    )

    assert dealt is not None
    assert again is None  # recovery racing the live path deals nothing twice
    assert (dealt.status, dealt.players, dealt.accepted, dealt.seed) == (
        "running",
        (A, B),
        (A, B),
        99,
    )
    assert dealt.state == {"round": 0}
    assert dealt.extra["match"]["game"] == 2
    assert (await storage.games.active_game(CHANNEL)) == dealt
    assert await storage.matches.unadvanced_match_games() == []


async def test_a_busy_channel_refuses_the_next_game_and_counts_nothing(storage: Storage) -> None:
    first = await finished_match_game(storage, None, 1)
    await running_game(storage, channel_id=CHANNEL, players=(A, C))

    with pytest.raises(ChannelBusyError):
        await storage.matches.advance_match(
            step(first, 1, (1, 0)), following(first, 2, [1, 0]), now=at(1)
        )

    assert [row.id for row in await storage.matches.unadvanced_match_games()] == [first]


async def test_finishing_a_match_records_everyones_result_and_counts_it(storage: Storage) -> None:
    first = await finished_match_game(storage, None, 1)
    dealt = await storage.matches.advance_match(
        step(first, 1, (1, 0)), following(first, 2, [1, 0]), now=at(1)
    )
    assert dealt is not None
    seated = [PlayerResult(A, 0, "win", 10), PlayerResult(B, 1, "loss", 10)]
    assert await storage.games.finish_game(
        dealt.id, expected_round=0, state={}, round=10, result={}, results=seated, now=at(2)
    )
    second = dealt.id

    assert await storage.matches.finish_match(
        step(first, 2, (2, 0)), [A], game_id=second, now=at(3)
    )
    assert not await storage.matches.finish_match(
        step(first, 2, (2, 0)), [A], game_id=second, now=at(4)
    )

    assert await storage.matches.unadvanced_match_games() == []
    assert await storage.matches.match_records(1, [A, B, C]) == {
        A: MatchRecord(matches=1, wins=1),
        B: MatchRecord(matches=1, wins=0),
    }
    assert await storage.matches.match_records(1, [A], since=at(5)) == {}
    assert await storage.matches.match_records(2, [A]) == {}
    assert await storage.matches.match_records(1, []) == {}


async def test_a_game_outside_any_match_is_never_taken_for_one(storage: Storage) -> None:
    await record_game(storage, [pr(A, "win"), pr(B, "loss")], channel_id=CHANNEL)
    await new_game(storage, channel_id=CHANNEL + 1)

    assert await storage.matches.unadvanced_match_games() == []
