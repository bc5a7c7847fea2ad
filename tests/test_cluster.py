"""Several `python bot.py` processes of one bot, on one database, against one sharded stand-in.

Disjoint shards play many servers at once; one is killed mid-stream and its replacement takes
its shards back; two holding the same shard (a hand-off) flip in one channel at once. Each
process is the real one, as a user runs it; the database is read from outside.

The database is a fixture (:class:`ClusterDatabase`), and every test runs on both: one SQLite
file in WAL mode, which processes on one machine can share, and a real PostgreSQL database.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest

from krigbot.i18n import t
from tests.standin import ChannelEvent, DiscordStandIn, Message, StandInTimeout
from tests.standin.store import MessageWatcher
from tests.support.cluster import (
    IDENTIFY_SECONDS,
    ClusterDatabase,
    ShardProcess,
    end_processes,
    guilds_on,
    seat_games,
)
from tests.support.flip_stream import (
    Countdown,
    Table,
    flip_stream,
    public_answer,
    round_shown,
    settle,
)
from tests.support.players import UPDATE_MESSAGE, buttons, game_id_of, text_of
from tests.support.settings import BACKENDS

pytestmark = pytest.mark.slow


@pytest.fixture(params=BACKENDS)
def database(request: pytest.FixtureRequest, tmp_path: Path) -> ClusterDatabase:
    """Return the shared database: an SQLite file in WAL mode, or a PostgreSQL database."""
    path = tmp_path / "data" / "krig.db"
    if request.param == "sqlite":
        return ClusterDatabase("sqlite", path)
    path.parent.mkdir(parents=True, exist_ok=True)
    return ClusterDatabase(
        "postgres", path, request.getfixturevalue("postgres"), request.getfixturevalue("pg_dsn")
    )


@pytest.fixture
async def processes(
    standin: DiscordStandIn, tmp_path: Path, database: ClusterDatabase
) -> AsyncIterator[Callable[..., ShardProcess]]:
    """Return a maker of bot processes on the shared database; every one is ended after."""
    made: list[ShardProcess] = []

    def make(shards: str, **settings: str) -> ShardProcess:
        name = f"bot-{len(made)}"
        process = ShardProcess(standin, tmp_path, database, shards, name, settings)
        made.append(process)
        return process

    try:
        yield make
    finally:
        await end_processes(standin, made)


@pytest.mark.standin(shard_count=4, identify_interval=IDENTIFY_SECONDS)
async def test_two_processes_with_disjoint_shards_play_in_many_guilds_at_once(
    standin: DiscordStandIn,
    processes: Callable[..., ShardProcess],
    database: ClusterDatabase,
) -> None:
    first, second = processes("0-1"), processes("2-3")
    # Started together: their four identifies take turns (through the database on PostgreSQL,
    # through lock files beside the SQLite file).
    await asyncio.gather(first.start(), second.start())
    tables = await seat_games(standin, guilds_on(standin, range(4), per_shard=3))
    flips = 5

    async def play(table: Table, turn: random.Random) -> None:
        for _ in range(flips):
            player = table.players[turn.randrange(2)]
            if turn.random() < 0.5:
                rec = await standin.slash("flip", user=player, channel=table.newest.channel)
            else:
                custom_id = next(c for c in buttons(table.newest) if c.startswith("krig:flip:"))
                rec = await standin.click(table.newest, custom_id, user=player)
            table.sent.append(rec)
            table.newest = await public_answer(rec, 30)
            table.acknowledged = round_shown(table.newest) or 0

    rng = random.Random(11)
    await asyncio.gather(*(play(table, random.Random(rng.random())) for table in tables))

    games = database.games()
    assert [games[table.game_id].round for table in tables] == [flips] * len(tables)
    assert [table.acknowledged for table in tables] == [flips] * len(tables)
    # Every server's game was played by the process of its shard: the other never had it.
    for process, shards in ((first, "0-1"), (second, "2-3")):
        log = process.log()
        assert f"Krigbot is starting: database {database}, shards {shards} of 4" in log
        for shard in process.ids:
            assert f"shard {shard}: connected" in log
    assert "commands not synced" in second.log()
    assert "commands not synced" not in first.log()
    assert len(standin.syncs) == 1


@pytest.mark.standin(shard_count=4, identify_interval=IDENTIFY_SECONDS)
async def test_a_killed_process_s_replacement_takes_its_shards_back_and_loses_no_round(
    standin: DiscordStandIn,
    processes: Callable[..., ShardProcess],
    database: ClusterDatabase,
) -> None:
    rng = random.Random(20_261_201)
    first, second = processes("0-1"), processes("2-3")
    await first.start()
    await second.start()
    tables = await seat_games(standin, guilds_on(standin, range(4), per_shard=2))
    theirs, ours = tables[len(tables) // 2 :], tables[: len(tables) // 2]  # shards 2-3, 0-1

    for kill in range(3):
        countdown = Countdown(rng.randrange(1, 3 * len(tables)))
        streams = [
            asyncio.create_task(flip_stream(standin, table, random.Random(rng.random()), countdown))
            for table in tables
            if not table.over
        ]
        await asyncio.wait_for(countdown.rung.wait(), timeout=60)
        await second.kill()
        for task in streams:
            task.cancel()
        for task in streams:
            with contextlib.suppress(asyncio.CancelledError):
                await task

        games = database.games()
        for table in tables:
            settle(table)
            stored = games[table.game_id]
            table.over = stored.status == "finished"
            # Acknowledged: kept. At most one round saved whose answer the kill cut off.
            assert table.acknowledged <= stored.round <= table.acknowledged + 1, (
                kill,
                table.game_id,
                table.acknowledged,
                stored.round,
            )
        # The other process plays on while its neighbour is down.
        for table in [each for each in ours if not each.over]:
            rec = await standin.slash("flip", user=table.players[0], channel=table.newest.channel)
            table.newest = await public_answer(rec, 30)
            table.acknowledged = round_shown(table.newest) or database.games()[table.game_id].round
            table.over = round_shown(table.newest) is None

        await second.start()
        games = database.games()
        for table in [each for each in tables if not each.over]:
            stored_round = games[table.game_id].round
            custom_id = next(c for c in buttons(table.newest) if c.startswith("krig:flip:"))
            rec = await standin.click(table.newest, custom_id, user=table.players[1])
            answer = await rec.response(timeout=30)
            assert answer.type in (UPDATE_MESSAGE, 6), text_of(answer)
            if answer.type == 6:
                await rec.original_edit(timeout=30)
            expected = stored_round + 1 if stored_round == table.acknowledged else stored_round
            shown = round_shown(table.newest)
            if shown is None:
                table.over = True
                shown = database.games()[table.game_id].round
            assert shown == expected, (kill, table.game_id, stored_round, text_of(table.newest))
            table.acknowledged = shown

    games = database.games()
    running = [each for each in tables if not each.over]
    assert [games[each.game_id].round for each in running] == [
        each.acknowledged for each in running
    ]
    assert theirs, "no game on the killed process's shards"
    assert ours, "no game on the other process's shards"


@pytest.mark.standin(shard_count=1, identify_interval=IDENTIFY_SECONDS)
async def test_two_processes_holding_one_shard_save_exactly_the_rounds_they_acknowledge(
    standin: DiscordStandIn,
    processes: Callable[..., ShardProcess],
    database: ClusterDatabase,
) -> None:
    # A hand-off: both sessions of shard 0 stay, and the channel's events go to each in turn.
    standin.gateway.overlapping = True
    first, second = processes("0"), processes("0")
    await first.start()
    await second.start()
    (table,) = await seat_games(standin, [standin.add_guild("one", locale="nb")])
    alice, bob = table.players
    channel = table.newest.channel
    raced = t("nb", "flip.raced")

    shown: list[int] = []
    refused = 0
    for _ in range(8):
        # Two flips at once, one to each process (the stand-in hands them out in turn).
        recs = [
            await standin.slash("flip", user=alice, channel=channel),
            await standin.slash("flip", user=bob, channel=channel),
        ]
        for rec in recs:
            answer = await rec.response(timeout=30)
            message = (await rec.followup(timeout=30)) if answer.deferred else answer.message
            assert message is not None
            if message.ephemeral:
                assert text_of(message) == raced  # the loser says what happened, in Norwegian
                refused += 1
                continue
            number = round_shown(message)
            assert number is not None, text_of(message)
            shown.append(number)
            if number == max(shown):  # the answers of a pair may come in either order
                table.newest = message

    # Each acknowledged round is a different one, and exactly those are saved.
    assert sorted(shown) == list(range(1, len(shown) + 1))
    assert database.games()[table.game_id].round == len(shown)
    assert len(shown) + refused == 16
    reloads = sum(p.log().count("moved by another process") for p in (first, second))
    # Each loss of a write was read again and tried once more; only a second loss refuses.
    assert reloads >= 1, "the two processes never raced for the game"
    assert refused < reloads, (refused, reloads)

    # Both press the newest table's one button at once: one round is played, not two, and the
    # table shows it whoever answered last.
    for _ in range(4):
        before = database.games()[table.game_id].round
        custom_id = next(c for c in buttons(table.newest) if c.startswith("krig:flip:"))
        watcher = standin.watch(channel)
        presses = [
            await standin.click(table.newest, custom_id, user=alice),
            await standin.click(table.newest, custom_id, user=bob),
        ]
        for rec in presses:
            answer = await rec.response(timeout=30)
            if answer.ephemeral:
                assert text_of(answer) in {raced, t("nb", "err.stale_button")}, text_of(answer)
            elif answer.type == UPDATE_MESSAGE:  # the winner's table, or the loser's current one
                assert round_shown(answer) == before + 1, text_of(answer)
        if round_shown(table.newest) != before + 1:  # an answer deferred: its edit follows

            def shows_the_round(e: ChannelEvent, wanted: int = before + 1) -> bool:
                return e.message is table.newest and round_shown(e.revision) == wanted

            await watcher.next("edit", predicate=shows_the_round, timeout=30)
        assert database.games()[table.game_id].round == before + 1


async def edited(
    watcher: MessageWatcher, messages: list[Message], process: ShardProcess | None = None
) -> None:
    """Wait until each of ``messages`` has been edited, in whatever order (a time-out names
    the ones left, with the log of the ``process`` that should have edited them)."""
    waiting = {message.id for message in messages}
    while waiting:
        try:
            event = await watcher.next(
                "edit", predicate=lambda e: e.message.id in waiting, timeout=20
            )
        except StandInTimeout as exc:
            log = "" if process is None else process.log()
            raise AssertionError(f"never edited: {sorted(waiting)}\n{exc}\n{log}") from exc
        waiting.discard(event.message.id)


@pytest.mark.standin(shard_count=2, identify_interval=IDENTIFY_SECONDS)
async def test_each_process_restores_and_times_out_only_the_games_of_its_shards(
    standin: DiscordStandIn,
    processes: Callable[..., ShardProcess],
    database: ClusterDatabase,
) -> None:
    first, second = processes("0"), processes("1")
    await first.start()
    await second.start()
    challenges: dict[int, list[Message]] = {0: [], 1: []}
    game_ids: dict[int, list[int]] = {0: [], 1: []}
    for shard in (0, 1, 0, 1):
        guild = standin.add_guild(f"server on {shard}", shard=shard, locale="nb")
        channel = standin.add_channel(guild, "krig")
        alice, bob = standin.add_user(f"a-{guild.id}"), standin.add_user(f"b-{guild.id}")
        for user in (alice, bob):
            standin.add_member(guild, user)
        started = await standin.slash(
            "krig start", user=alice, channel=channel, options={"opponent": bob}
        )
        message = (await started.response(timeout=20)).message
        assert message is not None
        challenges[shard].append(message)
        game_ids[shard].append(game_id_of(message))
    await first.kill()
    await second.kill()

    # Started again with challenges that expire at once: each expires only its own shard's.
    first = processes("0", KRIG_CHALLENGE_SECONDS="1")
    watcher = standin.watch()
    await first.start()
    await edited(watcher, challenges[0], first)
    assert "restored 2 open challenges" in first.log()
    games = database.games()
    assert [games[game_id].status for game_id in game_ids[0]] == ["expired", "expired"]
    # Left to shard 1's process, which is not running.
    assert [games[game_id].status for game_id in game_ids[1]] == ["challenge", "challenge"]

    second = processes("1", KRIG_CHALLENGE_SECONDS="1")
    watcher = standin.watch()
    await second.start()
    await edited(watcher, challenges[1], second)
    assert "restored 2 open challenges" in second.log()
    assert {game.status for game in database.games().values()} == {"expired"}
