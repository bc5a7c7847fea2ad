"""Takeover after a SIGKILL with ``KRIG_SHARDS=auto``: ``python -m bench.takeover``.

Starts ``--processes`` (3) ``python bot.py`` processes with ``KRIG_SHARDS=auto`` on one
PostgreSQL database (fsync on) against the Discord stand-in with ``--shards`` (4) shards, seats
a game in ``--guilds`` servers of every shard, and keeps a stream of flips going in every one of
them (each channel sends its next ``/flip`` when its last was answered, or after
``PROBE_SECONDS`` without an answer: a flip sent to a dead process is never answered). Then,
``--kills`` times, it SIGKILLs one process in turn, measures how long after the kill every shard
of the killed process answered a flip again (the process that took it over identified and
restored its games), starts the killed process again and waits until the shards are dealt out
evenly once more.

It prints each kill's takeover time and the median and worst, then checks every channel:

- rounds lost: the game's stored round is behind the newest round an answer showed;
- rounds doubled: two answers showed the same round;
- two sessions on one shard: the times the stand-in saw an IDENTIFY for a shard another
  connection still served (its ``overlap`` event), which must never happen;
- the lease writes a second (rows of ``shard_claims`` and ``shard_members`` inserted, updated or
  deleted, from ``pg_stat_user_tables``) while the cluster stood still before the first kill.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import random
import signal
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from krigbot.adapter.leases import RENEW_SECONDS
from krigbot.config import shard_of
from tests.standin import DiscordStandIn, StandInTimeout
from tests.support.cluster import (
    IDENTIFY_SECONDS,
    AutoProcess,
    Claims,
    deal,
    guilds_on,
    seat_games,
)
from tests.support.flip_stream import Table, public_answer, round_shown
from tests.support.postgres import Cluster, cluster_running

PROBE_SECONDS = 0.5
"""How long a channel waits for a flip's answer before it sends the next: the resolution of the
takeover times (a later answer still counts; a flip it races is refused, and plays nothing)."""
QUIET_SECONDS = 9.0
"""How long the lease writes are counted while the cluster stands still (three renewals)."""


@dataclass
class Stream:
    """One channel's flips: every round an answer showed, and when."""

    table: Table
    shard: int
    shown: list[tuple[float, int, int]] = field(default_factory=list)
    """When an answer came, the game it was of and the round it showed."""
    answered: asyncio.Event = field(default_factory=asyncio.Event)


async def flip_on(standin: DiscordStandIn, stream: Stream, seed: int, pause: float) -> None:
    """Flip in the stream's channel for ever, ``pause`` after each answer; deal anew at an end."""
    table = stream.table
    turn = random.Random(seed)
    while True:
        await asyncio.sleep(pause)  # a player's pace, not a wait for something
        rec = await standin.slash(
            "flip", user=table.players[turn.randrange(2)], channel=table.newest.channel
        )
        try:
            answer = await public_answer(rec, PROBE_SECONDS)
        except (StandInTimeout, AssertionError):
            continue  # sent to a process that is gone, or refused: the next one tells
        number = round_shown(answer)
        if number is None:  # the game is over: the same players start another
            alice, bob = table.players
            table = stream.table = await deal(
                standin, answer.channel, alice, bob, table.channel_index
            )
            continue
        table.newest = answer
        stream.shown.append((time.perf_counter(), table.game_id, number))
        stream.answered.set()


def lease_rows(postgres: Cluster, url: str) -> int:
    """Return the rows of the lease tables written so far (inserted, updated, deleted)."""
    total = postgres.psql(
        "SELECT COALESCE(SUM(n_tup_ins + n_tup_upd + n_tup_del), 0) FROM pg_stat_user_tables "
        "WHERE relname IN ('shard_claims', 'shard_members')",
        url,
    )
    return int(total)


async def run(args: argparse.Namespace) -> int:
    """Run the kills and print the figures; return the exit status (1: a round lost or doubled,
    or a shard with two sessions)."""
    folder = Path(tempfile.mkdtemp(prefix="krig-takeover-"))
    (folder / "data").mkdir()
    parts = _dealt(args.shards, args.processes)
    fewer = _dealt(args.shards, args.processes - 1)
    with cluster_running(durable=True) as postgres:
        url = postgres.create_database()
        async with DiscordStandIn(
            check_bodies=False, shard_count=args.shards, identify_interval=IDENTIFY_SECONDS
        ) as standin:
            claims = Claims(standin)
            processes = [
                AutoProcess(standin, folder, url, f"bot-{n}", claims, {})
                for n in range(args.processes)
            ]
            streams: list[asyncio.Task[None]] = []
            takeovers: list[float] = []
            flows: list[Stream] = []
            try:
                for process in processes:
                    await process.start()
                await claims.settled(parts)
                tables = await seat_games(
                    standin, guilds_on(standin, range(args.shards), per_shard=args.guilds)
                )
                flows = [Stream(table, shard_of(guild_id(table), args.shards)) for table in tables]
                streams = [
                    asyncio.create_task(flip_on(standin, flow, n, args.pause))
                    for n, flow in enumerate(flows)
                ]
                before = lease_rows(postgres, url)
                started = time.perf_counter()
                await asyncio.sleep(QUIET_SECONDS)  # counting writes over a stretch of time
                writes = (lease_rows(postgres, url) - before) / (time.perf_counter() - started)
                print(f"lease writes: {writes:.1f} rows/s with {args.processes} processes")
                for kill in range(args.kills):
                    victim = processes[kill % len(processes)]
                    held = claims.now[victim.name].holds
                    # At any moment of its renewals, as a crash comes (not just after one).
                    await asyncio.sleep(random.uniform(0, RENEW_SECONDS))
                    killed = time.perf_counter()
                    await victim.signal(signal.SIGKILL)
                    waiting = [flow for flow in flows if flow.shard in held]
                    back = await _answered_after(waiting, killed)
                    takeovers.append(back - killed)
                    print(
                        f"kill {kill + 1}: {victim.name} (shards {sorted(held)}) "
                        f"answered again after {back - killed:.2f} s"
                    )
                    await claims.settled(fewer)
                    await victim.start()
                    await claims.settled(parts)
            finally:
                for task in streams:
                    task.cancel()
                for task in streams:
                    with contextlib.suppress(asyncio.CancelledError):
                        await task
                for process in processes:
                    await process.stop()
            overlaps = sum(1 for e in standin.gateway_events.items if e.kind == "overlap")
            stored = postgres.psql(
                "SELECT string_agg(id::text || ':' || round::text, ',') FROM games", url
            )
    rounds = {int(game): int(at) for game, at in (item.split(":") for item in stored.split(","))}
    shown = [(game, number) for flow in flows for _, game, number in flow.shown]
    doubled = len(shown) - len(set(shown))
    newest: dict[int, int] = {}
    for game, number in shown:
        newest[game] = max(newest.get(game, 0), number)
    lost = sum(1 for game, number in newest.items() if rounds[game] < number)
    played = sum(len(flow.shown) for flow in flows)
    if takeovers:
        print(
            f"takeover after SIGKILL of 1 of {args.processes}: median "
            f"{statistics.median(takeovers):.2f} s, worst {max(takeovers):.2f} s "
            f"({len(takeovers)} kills)"
        )
    print(f"rounds answered: {played}; lost: {lost}; doubled: {doubled}")
    print(f"two sessions on one shard: {overlaps} times")
    return 1 if lost or doubled or overlaps else 0


async def _answered_after(flows: list[Stream], moment: float) -> float:
    """Wait until every stream has an answer after ``moment``; return when the last came."""
    last = moment
    for flow in flows:
        while not any(at > moment for at, _, _ in flow.shown):
            flow.answered.clear()
            await flow.answered.wait()
        last = max(last, min(at for at, _, _ in flow.shown if at > moment))
    return last


def guild_id(table: Table) -> int:
    """Return the server of a table's channel."""
    guild = table.newest.channel.guild
    assert guild is not None
    return guild.id


def _dealt(shards: int, processes: int) -> list[int]:
    """Return how many shards each process holds once they are dealt out evenly."""
    each, more = divmod(shards, processes)
    return [each + (1 if n < more else 0) for n in range(processes)]


def main(argv: list[str] | None = None) -> int:
    """Parse the arguments and run."""
    parser = argparse.ArgumentParser(prog="python -m bench.takeover", description=__doc__)
    parser.add_argument("--processes", type=int, default=3)
    parser.add_argument("--shards", type=int, default=4)
    parser.add_argument("--guilds", type=int, default=2, help="servers on each shard")
    parser.add_argument("--kills", type=int, default=10)
    parser.add_argument(
        "--pause", type=float, default=0.2, help="seconds a channel waits after each answer"
    )
    args = parser.parse_args(argv)
    return asyncio.run(run(args))


if __name__ == "__main__":
    sys.exit(main())
