"""The game life cycle: challenge, accept, start, rounds, finish, end."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from typing import Any

import pytest

from krigbot.config import Shards
from krigbot.storage import ChannelBusyError, GameRow, PlayerResult, RoundConflictError, Storage
from tests.support.stored_games import T0, at, committed, new_game, results_for, running_game


async def count_results(storage: Storage, game_id: int) -> int:
    """Count result rows through a second connection (sees only committed data)."""
    ((count,),) = await committed(
        storage, "SELECT COUNT(*) FROM results WHERE game_id = ?", game_id
    )
    return int(count)


async def test_create_game_stores_a_challenge(storage: Storage) -> None:
    game = await new_game(
        storage,
        players=(10, 20, 30),
        rules={"deck": 52, "order": (3, 1)},
        extra={"theme": "dark"},
        now=at(0.5),
    )
    assert game.rules == {"deck": 52, "order": [3, 1]}  # as JSON will give it back
    assert game.status == "challenge"
    assert game.players == (10, 20, 30)
    assert game.names == ("user10", "user20", "user30")
    assert game.accepted == (10,)
    assert (game.state, game.result, game.round, game.finished_at) == (None, None, 0, None)
    assert game.created_at == game.updated_at == game.last_activity_at == at(0.5)
    assert game.extra == {"theme": "dark"}
    assert game.is_active
    assert await storage.games.get_game(game.id) == game
    assert await storage.games.active_game(100) == game
    assert await storage.games.active_game(101) is None
    assert await storage.games.get_game(game.id + 1) is None


async def test_games_are_read_together_by_id_and_a_missing_one_is_left_out(
    storage: Storage, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("krigbot.storage.games._IDS_A_QUERY", 2)  # three ids: two queries
    games = [await new_game(storage, channel_id=100 + n) for n in range(3)]
    ids = [game.id for game in games]
    assert await storage.games.get_games([*ids, ids[-1] + 1]) == {g.id: g for g in games}
    assert await storage.games.get_games([]) == {}


async def test_create_game_validates_its_arguments(storage: Storage) -> None:
    with pytest.raises(ValueError, match="challenger"):
        await new_game(storage, challenger_id=99)
    with pytest.raises(ValueError, match="names"):
        await new_game(storage, names=["only one"])
    with pytest.raises(ValueError, match="distinct"):
        await new_game(storage, players=(10, 10))
    with pytest.raises(ValueError, match="64-bit"):
        await new_game(storage, seed=2**64 - 1)
    with pytest.raises(ValueError, match="naive"):
        await new_game(storage, now=T0.replace(tzinfo=None))
    assert await storage.games.game_count() == 0


async def test_one_active_game_per_channel(storage: Storage) -> None:
    first = await new_game(storage, channel_id=100)
    with pytest.raises(ChannelBusyError) as caught:
        await new_game(storage, channel_id=100, players=(30, 40))
    assert (caught.value.game_id, caught.value.channel_id) == (first.id, 100)
    # Also while running, and other channels are unaffected.
    assert await storage.games.start_game(first.id, state={}, now=T0) is not None
    with pytest.raises(ChannelBusyError):
        await new_game(storage, channel_id=100)
    await new_game(storage, channel_id=101)
    # Once the game ends the channel is free again.
    assert await storage.games.end_game(first.id, "abandoned", at(1))
    again = await new_game(storage, channel_id=100)
    assert again.id != first.id
    assert await storage.games.game_count() == 3


async def test_concurrent_challenges_in_one_channel_yield_one_game(storage: Storage) -> None:
    outcomes = await asyncio.gather(
        *(new_game(storage, channel_id=7, players=(p, p + 1)) for p in range(0, 20, 2)),
        return_exceptions=True,
    )
    created = [o for o in outcomes if not isinstance(o, BaseException)]
    refused = [o for o in outcomes if isinstance(o, BaseException)]
    assert len(created) == 1
    assert len(refused) == 9
    assert all(isinstance(e, ChannelBusyError) and e.game_id == created[0].id for e in refused)
    assert await storage.games.game_count() == 1


async def test_accept_is_idempotent_and_only_for_open_challenges(storage: Storage) -> None:
    game = await new_game(storage, players=(10, 20, 30))
    accepted = await storage.games.accept(game.id, 30, at(1))
    assert accepted is not None
    assert accepted.accepted == (10, 30)
    assert accepted.last_activity_at == at(1)
    again = await storage.games.accept(game.id, 30, at(2))
    assert again == accepted  # nothing changed, not even the timestamps
    assert await storage.games.accept(game.id, 99, at(2)) is None  # not a player
    assert await storage.games.accept(game.id + 1, 20, at(2)) is None  # no such game
    assert await storage.games.start_game(game.id, state={"deck": []}, now=at(3)) is not None
    assert await storage.games.accept(game.id, 20, at(4)) is None  # no longer a challenge
    final = await storage.games.get_game(game.id)
    assert final is not None
    assert final.accepted == (10, 30)


async def test_players_accepting_at_once_are_all_recorded(storage: Storage) -> None:
    game = await new_game(storage, players=(10, 20, 30, 40))
    rows = await asyncio.gather(
        *(storage.games.accept(game.id, p, at(1)) for p in (20, 30, 40, 30))
    )
    assert all(row is not None for row in rows)
    final = await storage.games.get_game(game.id)
    assert final is not None
    assert sorted(final.accepted) == [10, 20, 30, 40]


async def test_start_game_deals_once(storage: Storage) -> None:
    game = await new_game(storage)
    started = await storage.games.start_game(game.id, state={"hands": [[1], [2]]}, now=at(1))
    assert started is not None
    assert (started.status, started.round, started.state) == ("running", 0, {"hands": [[1], [2]]})
    assert started.last_activity_at == at(1)
    assert started.created_at == game.created_at
    assert await storage.games.start_game(game.id, state={"other": True}, now=at(2)) is None
    assert await storage.games.get_game(game.id) == started

    cancelled = await new_game(storage, channel_id=200)
    assert await storage.games.end_game(cancelled.id, "cancelled", at(1))
    assert await storage.games.start_game(cancelled.id, state={}, now=at(2)) is None
    assert await storage.games.start_game(12345, state={}, now=at(2)) is None


async def test_save_round_advances_the_game(storage: Storage) -> None:
    game = await running_game(storage)
    assert await storage.games.save_round(
        game.id, expected_round=0, state={"hands": [[2], [1]]}, round=1, now=at(5)
    )
    row = await storage.games.get_game(game.id)
    assert row is not None
    assert (row.round, row.state, row.last_activity_at) == (1, {"hands": [[2], [1]]}, at(5))
    assert await storage.games.save_round(
        game.id, expected_round=1, state={"n": 2}, round=2, now=at(6)
    )


async def test_save_round_with_a_stale_round_changes_nothing(storage: Storage) -> None:
    game = await running_game(storage)
    assert await storage.games.save_round(
        game.id, expected_round=0, state={"n": 1}, round=1, now=at(1)
    )
    before = await storage.games.get_game(game.id)
    with pytest.raises(RoundConflictError) as moved:
        await storage.games.save_round(
            game.id, expected_round=0, state={"n": "stale"}, round=1, now=at(2)
        )
    # The refusal says what the database holds instead.
    assert (moved.value.game_id, moved.value.round, moved.value.status) == (game.id, 1, "running")
    assert await storage.games.get_game(game.id) == before
    # Nor does it touch a game that is not running, or that does not exist.
    challenge = await new_game(storage, channel_id=300)
    with pytest.raises(RoundConflictError) as moved:
        await storage.games.save_round(challenge.id, expected_round=0, state={}, round=1, now=at(2))
    assert (moved.value.round, moved.value.status) == (0, "challenge")
    assert await storage.games.get_game(challenge.id) == challenge
    with pytest.raises(RoundConflictError) as moved:
        await storage.games.save_round(999, expected_round=0, state={}, round=1, now=at(2))
    assert (moved.value.round, moved.value.status) == (None, None)
    # A state that is not JSON-safe is refused before anything is written.
    with pytest.raises(ValueError, match="JSON"):
        await storage.games.save_round(
            game.id, expected_round=1, state={"x": float("nan")}, round=2, now=at(2)
        )
    assert await storage.games.get_game(game.id) == before


async def test_racing_flips_play_exactly_one_round(storage: Storage) -> None:
    game = await running_game(storage)
    for current in range(5):
        presses = [
            storage.games.save_round(
                game.id, expected_round=current, state={"by": who}, round=current + 1, now=at(who)
            )
            for who in range(6)
        ]
        outcomes = await asyncio.gather(*presses, return_exceptions=True)
        assert outcomes.count(True) == 1
        assert all(isinstance(lost, RoundConflictError) for lost in outcomes if lost is not True)
        row = await storage.games.get_game(game.id)
        assert row is not None
        assert row.round == current + 1
        assert row.state == {"by": outcomes.index(True)}


async def test_finish_game_records_results_once(storage: Storage) -> None:
    game = await running_game(storage, players=(10, 20))
    assert await storage.games.save_round(game.id, expected_round=0, state={}, round=1, now=at(1))
    results = results_for(game.players, winner=20)
    finish: dict[str, Any] = {
        "expected_round": 1,
        "state": {"hands": [[], [1, 2]]},
        "round": 2,
        "result": {"reason": "cards", "winners": [1]},
        "results": results,
        "now": at(2),
    }
    assert await storage.games.finish_game(game.id, **finish)
    with pytest.raises(RoundConflictError):
        await storage.games.finish_game(game.id, **finish)
    with pytest.raises(RoundConflictError):
        await storage.games.finish_game(game.id, **{**finish, "expected_round": 2})
    assert await count_results(storage, game.id) == 2
    row = await storage.games.get_game(game.id)
    assert row is not None
    assert (row.status, row.round, row.finished_at) == ("finished", 2, at(2))
    assert row.result == {"reason": "cards", "winners": [1]}
    assert not row.is_active
    assert await storage.games.active_game(game.channel_id) is None
    # A late Flip press after the finish does nothing.
    with pytest.raises(RoundConflictError):
        await storage.games.save_round(game.id, expected_round=2, state={}, round=3, now=at(3))


async def test_finish_game_with_a_stale_round_writes_nothing(storage: Storage) -> None:
    game = await running_game(storage)
    assert await storage.games.save_round(game.id, expected_round=0, state={}, round=1, now=at(1))
    before = await storage.games.get_game(game.id)
    with pytest.raises(RoundConflictError):
        await storage.games.finish_game(
            game.id,
            expected_round=0,
            state={},
            round=1,
            result={},
            results=results_for(game.players, winner=10),
            now=at(2),
        )
    assert await storage.games.get_game(game.id) == before
    assert await count_results(storage, game.id) == 0


async def test_finish_game_rolls_back_on_bad_results(storage: Storage) -> None:
    game = await running_game(storage, players=(10, 20))
    before = await storage.games.get_game(game.id)
    stranger = [*results_for(game.players, winner=10), PlayerResult(99, 2, "loss", 1)]
    with pytest.raises(ValueError, match="not players"):
        await storage.games.finish_game(
            game.id, expected_round=0, state={}, round=1, result={}, results=stranger, now=at(1)
        )
    with pytest.raises(ValueError, match="at most once"):
        await storage.games.finish_game(
            game.id,
            expected_round=0,
            state={},
            round=1,
            result={},
            results=[PlayerResult(10, 0, "win", 1), PlayerResult(20, 0, "loss", 1)],
            now=at(1),
        )
    with pytest.raises(ValueError, match="outcome"):
        PlayerResult(10, 0, "victory", 1)  # type: ignore[arg-type]
    assert await storage.games.get_game(game.id) == before
    assert await count_results(storage, game.id) == 0
    # The failed attempts left no transaction open: the game can still finish.
    assert await storage.games.finish_game(
        game.id,
        expected_round=0,
        state={},
        round=1,
        result={},
        results=results_for(game.players, winner=10),
        now=at(2),
    )
    assert await count_results(storage, game.id) == 2


async def test_end_game_statuses_and_conditions(storage: Storage) -> None:
    game = await running_game(storage)
    with pytest.raises(ValueError, match="end_game status"):
        await storage.games.end_game(game.id, "finished", at(1))
    # Only from the expected statuses ...
    assert not await storage.games.end_game(
        game.id, "declined", at(1), expected_statuses=["challenge"]
    )
    # ... and, if asked, only at the expected round (a sweep losing to a fresh Flip).
    assert await storage.games.save_round(game.id, expected_round=0, state={}, round=1, now=at(1))
    assert not await storage.games.end_game(game.id, "abandoned", at(2), expected_round=0)
    assert await storage.games.end_game(
        game.id, "abandoned", at(3), expected_round=1, result={"reason": "inactive"}
    )
    row = await storage.games.get_game(game.id)
    assert row is not None
    assert (row.status, row.finished_at, row.result) == ("abandoned", at(3), {"reason": "inactive"})
    assert not await storage.games.end_game(game.id, "cancelled", at(4))
    assert await count_results(storage, game.id) == 0


async def test_message_ids_and_extra(storage: Storage) -> None:
    game = await new_game(storage)
    assert await storage.games.set_challenge_message(game.id, 111, now=at(1))
    assert await storage.games.set_table_message(game.id, 222)
    assert await storage.games.update_extra(game.id, {"a": 1}) == {"a": 1}
    assert await storage.games.update_extra(game.id, {"b": [2]}, now=at(2)) == {"a": 1, "b": [2]}
    row = await storage.games.get_game(game.id)
    assert row is not None
    assert (row.challenge_message_id, row.table_message_id) == (111, 222)
    assert row.extra == {"a": 1, "b": [2]}
    assert row.updated_at == at(2)
    assert row.last_activity_at == game.last_activity_at  # bookkeeping is not activity
    assert await storage.games.set_table_message(game.id, None)
    assert not await storage.games.set_table_message(999, 1)
    assert not await storage.games.set_challenge_message(999, 1)
    assert await storage.games.update_extra(999, {"a": 1}) is None


async def test_an_extra_change_is_made_from_the_extra_as_stored(storage: Storage) -> None:
    game = await new_game(storage)
    await storage.games.update_extra(game.id, {"ending": None})

    def unshown(extra: dict[str, Any]) -> dict[str, Any]:
        return {} if extra.get("ending") is None else {"ending": "unreached"}

    kept = await storage.games.update_extra(game.id, unshown)
    await storage.games.update_extra(game.id, {"ending": "unshown", "other": 1})
    changed = await storage.games.update_extra(game.id, unshown)

    def refused(extra: dict[str, Any]) -> dict[str, Any]:
        raise LookupError("no")

    with pytest.raises(LookupError):
        await storage.games.update_extra(game.id, refused)

    assert kept == {"ending": None}
    assert changed == {"ending": "unreached", "other": 1}
    row = await storage.games.get_game(game.id)
    assert row is not None
    assert row.extra == {"ending": "unreached", "other": 1}
    # What the change raised rolled its transaction back: the storage writes on.
    assert await storage.games.update_extra(game.id, {"other": 2}) is not None


async def test_running_and_stale_games(storage: Storage) -> None:
    challenge = await new_game(storage, channel_id=1, now=at(0))
    old = await running_game(storage, channel_id=2, now=at(0))
    fresh = await running_game(storage, channel_id=3, now=at(0))
    assert await storage.games.save_round(fresh.id, expected_round=0, state={}, round=1, now=at(30))
    done = await running_game(storage, channel_id=4, now=at(0))
    assert await storage.games.end_game(done.id, "cancelled", at(1))

    assert [g.id for g in await storage.games.running_games()] == [challenge.id, old.id, fresh.id]
    assert [g.id for g in await storage.games.stale_games(at(10))] == [old.id]
    assert [g.id for g in await storage.games.stale_games(at(60))] == [old.id, fresh.id]
    assert [g.id for g in await storage.games.stale_games(at(10), statuses=["challenge"])] == [
        challenge.id
    ]
    assert await storage.games.stale_games(at(0)) == []
    assert await storage.games.game_count("running") == 2
    with pytest.raises(ValueError, match="unknown"):
        await storage.games.stale_games(at(0), statuses=["paused"])  # type: ignore[list-item]


async def test_concurrent_mixed_writes_do_not_interleave(storage: Storage) -> None:
    games = [await running_game(storage, channel_id=c, players=(c, c + 1000)) for c in range(20)]

    async def play(game_id: int, players: tuple[int, ...], rounds: int) -> None:
        for r in range(rounds):
            assert await storage.games.save_round(
                game_id, expected_round=r, state={"r": r + 1}, round=r + 1, now=at(r)
            )
            await storage.games.accept(game_id, players[1], at(r))  # a read-modify-write no-op
        assert await storage.games.finish_game(
            game_id,
            expected_round=rounds,
            state={},
            round=rounds + 1,
            result={},
            results=results_for(players, winner=players[0]),
            now=at(rounds),
        )

    await asyncio.gather(
        *(play(g.id, g.players, 10) for g in games),
        *(new_game(storage, channel_id=500 + c) for c in range(20)),
        *(storage.settings.set_setting(1, f"k{c}", "v") for c in range(20)),
    )
    assert await storage.games.game_count("finished") == 20
    assert await storage.games.game_count("challenge") == 20
    for game in games:
        assert await count_results(storage, game.id) == 2
    assert len(await storage.settings.get_settings(1)) == 20


@pytest.mark.parametrize("steps", range(8))
async def test_cancelled_finish_is_all_or_nothing(storage: Storage, steps: int) -> None:
    game = await running_game(storage)
    task = asyncio.create_task(
        storage.games.finish_game(
            game.id,
            expected_round=0,
            state={},
            round=1,
            result={},
            results=results_for(game.players, winner=10),
            now=at(1),
        )
    )
    for _ in range(steps):
        await asyncio.sleep(0)  # ok: one loop step each, to cancel at every point
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)
    row = await storage.games.get_game(game.id)
    assert row is not None
    assert (row.status == "finished") == (await count_results(storage, game.id) == 2)
    assert await count_results(storage, game.id) in (0, 2)
    # The connection is usable and not stuck inside a half-done transaction.
    other = await running_game(storage, channel_id=999)
    assert await storage.games.save_round(other.id, expected_round=0, state={}, round=1, now=at(2))
    assert await count_results(storage, game.id) in (0, 2)
    ((status,),) = await committed(storage, "SELECT status FROM games WHERE id = ?", other.id)
    assert status == "running"  # committed, visible to another connection


async def test_rows_are_frozen(storage: Storage) -> None:
    game = await new_game(storage)
    with pytest.raises(AttributeError):
        game.status = "running"  # type: ignore[misc]
    assert replace(game, round=3).round == 3


async def test_start_game_merges_the_deal_s_extra_into_the_game_s_in_the_same_write(
    storage: Storage,
) -> None:
    game = await new_game(storage, extra={"lang": "sv", "match": {"id": 1}})
    dealt = {"dealt_at": "2026-12-01T10:00:00.000000Z"}
    started = await storage.games.start_game(game.id, state={}, now=at(1), extra=dealt)
    assert started is not None
    assert started.extra == {"lang": "sv", "match": {"id": 1}, **dealt}
    assert await storage.games.get_game(game.id) == started
    plain = await new_game(storage, channel_id=300, extra={"lang": "da"})
    unchanged = await storage.games.start_game(plain.id, state={}, now=at(1))
    assert unchanged is not None
    assert unchanged.extra == {"lang": "da"}


async def test_a_process_reads_at_start_only_the_games_of_its_own_shards(storage: Storage) -> None:
    # Servers 0-7 on shards 0-3 of 4 (the shard is (id >> 22) % 4), one of them with an id near
    # Discord's largest, and a DM: a chat's games are the chat's own (guild_id is the
    # channel's), and shard 0's, whatever the shard formula makes of the channel's id (1 here).
    servers = [n << 22 for n in range(7)] + [(2**40 + 7) << 22]
    games = [
        await running_game(storage, guild_id=guild, channel_id=10 + n)
        for n, guild in enumerate(servers)
    ]
    dm = await running_game(storage, guild_id=(5 << 22) + 1, channel_id=(5 << 22) + 1)
    challenges = [
        await new_game(storage, guild_id=guild, channel_id=200 + n)
        for n, guild in enumerate(servers)
    ]
    odd, even = Shards(4, (1, 3)), Shards(4, (0, 2))

    def ids(rows: list[GameRow]) -> list[int]:
        return [row.id for row in rows]

    assert ids(await storage.games.active_games_after(0, 100, shards=odd)) == [
        *(games[n].id for n in (1, 3, 5, 7)),
        *(challenges[n].id for n in (1, 3, 5, 7)),
    ]
    # Paged by id as before: a page holds only the process's games.
    assert ids(await storage.games.active_games_after(0, 2, shards=odd)) == [
        games[1].id,
        games[3].id,
    ]
    assert ids(await storage.games.active_games_after(games[3].id, 2, shards=odd)) == [
        games[5].id,
        games[7].id,
    ]
    assert dm.id in ids(await storage.games.active_games_after(0, 100, shards=even))
    assert ids(await storage.games.games_to_resume(shards=Shards(4, (0,)))) == [
        challenges[0].id,
        challenges[4].id,
    ]
    # One process of all the shards reads every game.
    assert len(await storage.games.active_games_after(0, 100)) == len(games) + 1 + len(challenges)
    # A process that claims its shards (KRIG_SHARDS=auto) and holds none yet reads none.
    holding_none = Shards(4, (), auto=True)
    assert await storage.games.active_games_after(0, 100, shards=holding_none) == []
    assert await storage.games.games_to_resume(shards=holding_none) == []


async def test_a_save_from_a_copy_another_process_moved_within_the_round_is_refused(
    storage: Storage,
) -> None:
    # A Steal War battle's moves leave the round alone: the moves tell the copies apart.
    game = await running_game(storage)
    first = {"actions": [["top", 1]]}
    assert await storage.games.save_round(
        game.id, expected_round=0, state=first, round=0, now=at(1), moves=1, expected_moves=0
    )
    with pytest.raises(RoundConflictError):
        await storage.games.save_round(
            game.id,
            expected_round=0,
            state={"actions": [["top", 2]]},
            round=0,
            now=at(2),
            moves=1,
            expected_moves=0,
        )
    with pytest.raises(RoundConflictError):
        await storage.games.finish_game(
            game.id,
            expected_round=0,
            state={},
            round=0,
            result={"winner": 0},
            results=results_for(game.players, game.players[0]),
            now=at(2),
            moves=1,
            expected_moves=0,
        )
    stored = await storage.games.get_game(game.id)
    assert stored is not None
    assert (stored.state, stored.status) == (first, "running")

    # Many at once go as one statement: the same check, one of them wins.
    saves = [
        storage.games.save_round(
            game.id,
            expected_round=0,
            state={"actions": [["top", 1], ["play", n]]},
            round=0,
            now=at(3),
            moves=2,
            expected_moves=1,
        )
        for n in range(4)
    ]
    outcomes = await asyncio.gather(*saves, return_exceptions=True)
    assert sum(outcome is True for outcome in outcomes) == 1
    assert all(isinstance(o, RoundConflictError) for o in outcomes if o is not True)


MESSAGE = 1_234_567_890_123_456_789
"""An autoplay message's id, as large as Discord's."""


def autoplay_in(message: int, state: str = "running") -> dict[str, Any]:
    """Return the extra of a game whose autoplay is in ``message``."""
    return {"autoplay": {"state": state, "message": message, "speed": "normal", "by": "Alice"}}


async def test_an_autoplay_step_is_saved_only_while_its_autoplay_runs_in_its_message(
    storage: Storage,
) -> None:
    # During a hand-off a Pause or Stop may be recorded by the other process of the shard:
    # the step of the autoplay that still runs here must then write nothing.
    game = await running_game(storage)
    await storage.games.update_extra(game.id, autoplay_in(MESSAGE))
    assert await storage.games.save_round(
        game.id, expected_round=0, state={"n": 1}, round=1, now=at(1), autoplay=MESSAGE
    )
    for extra in (autoplay_in(MESSAGE + 1), autoplay_in(MESSAGE, "paused"), {"autoplay": None}):
        await storage.games.update_extra(game.id, extra)
        with pytest.raises(RoundConflictError):
            await storage.games.save_round(
                game.id, expected_round=1, state={"n": 2}, round=2, now=at(2), autoplay=MESSAGE
            )
        with pytest.raises(RoundConflictError):
            await storage.games.finish_game(
                game.id,
                expected_round=1,
                state={"n": 2},
                round=2,
                result={"winner": 0},
                results=results_for(game.players, game.players[0]),
                now=at(2),
                autoplay=MESSAGE,
            )
    stored = await storage.games.get_game(game.id)
    assert stored is not None
    assert (stored.round, stored.state, stored.status) == (1, {"n": 1}, "running")
    assert await count_results(storage, game.id) == 0
    # A hand's flip names no autoplay: it is saved whatever the autoplay.
    assert await storage.games.save_round(
        game.id, expected_round=1, state={"n": 2}, round=2, now=at(3)
    )

    # Many at once go as one statement: each row checked against its own game.
    games = [await running_game(storage, channel_id=9000 + n) for n in range(4)]
    for n, other in enumerate(games):
        await storage.games.update_extra(
            other.id, autoplay_in(MESSAGE + n, "paused" if n == 2 else "running")
        )
    saves = [
        storage.games.save_round(
            other.id, expected_round=0, state={"n": 1}, round=1, now=at(4), autoplay=MESSAGE + n
        )
        for n, other in enumerate(games)
    ]
    outcomes = await asyncio.gather(*saves, return_exceptions=True)
    assert [outcome is True for outcome in outcomes] == [True, True, False, True]
    assert isinstance(outcomes[2], RoundConflictError)


async def test_a_game_saved_before_moves_were_counted_is_checked_from_its_next_save(
    storage: Storage,
) -> None:
    game = await running_game(storage)
    # As a bot before the count saved it (nothing known of its moves), or a writer that
    # does not count them.
    assert await storage.games.save_round(
        game.id, expected_round=0, state={"n": 1}, round=1, now=at(1)
    )
    assert await storage.games.save_round(
        game.id, expected_round=1, state={"n": 2}, round=1, now=at(2), moves=8, expected_moves=7
    )
    with pytest.raises(RoundConflictError):
        await storage.games.save_round(
            game.id, expected_round=1, state={"n": 3}, round=1, now=at(3), moves=8, expected_moves=7
        )
