"""Soak: many games played to the end at once, then every result checked (python -m bench.soak).

Starts ``python bot.py`` against the Discord stand-in, opens one game in each of N channels and
plays them all to the end with ``/flip count:50`` (``--count``). Prints flips per second (rounds
and interactions), median and p99 reply time, the peak memory of the bot and its picture worker,
and checks that every finished game's result is in the leaderboard data exactly once, and that
nothing failed; then the database's size a finished game.

How the interactions arrive:

- ``--rate R`` (the default, 100/s): as people send them, independently of one another. They
  arrive at random (a Poisson process) at R per second in all, each for a game picked at random
  among those not waiting for an answer: a new game (challenge, then acceptance) or its next flip.
  A slow answer does not slow the arrivals, so the reply times are what a player would see at
  that load (an open loop).
- ``--concurrency N``: a fixed number in flight, each sent as soon as one is answered: the bot at
  full load, to find its capacity (a closed loop; the reply times are then mostly the queue).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import sqlite3
import tempfile
from pathlib import Path

from bench.bot import Bench, measured, memory_report, ms, peak_rss_mib
from tests.standin import Channel, DiscordStandIn, User


class Arrivals:
    """Admit interactions one at a time, at random, at ``rate`` per second in all (open loop)."""

    def __init__(self, rate: float, seed: int = 1) -> None:
        self.rate = rate
        self.rng = random.Random(seed)
        self.waiting: list[asyncio.Future[None]] = []
        self.task: asyncio.Task[None] | None = None

    async def __aenter__(self) -> None:
        """Wait for an arrival: a turn picked at random among the games waiting for one."""
        turn = asyncio.get_running_loop().create_future()
        self.waiting.append(turn)
        if self.task is None:
            self.task = asyncio.create_task(self._arrive())
        await turn

    async def __aexit__(self, *exc: object) -> None:
        """Nothing to release: the next arrival does not wait for this one's answer."""

    async def _arrive(self) -> None:
        loop = asyncio.get_running_loop()
        due = loop.time()
        while self.waiting:
            due += self.rng.expovariate(self.rate)
            await asyncio.sleep(max(0.0, due - loop.time()))
            if not self.waiting:
                break
            index = self.rng.randrange(len(self.waiting))
            self.waiting[index], self.waiting[-1] = self.waiting[-1], self.waiting[index]
            self.waiting.pop().set_result(None)
        self.task = None


async def soak(bench: Bench, games: int, rate: float | None, concurrency: int, count: int) -> None:
    assert bench.proc is not None
    tables = [bench.pair(i) for i in range(games)]
    await bench.set_images(tables[0][0])
    gate: Arrivals | asyncio.Semaphore = (
        Arrivals(rate) if rate is not None else asyncio.Semaphore(concurrency)
    )
    latencies: list[float] = []
    refusals = deferred = lost = 0
    errors: list[str] = []

    async def play(table: tuple[Channel, User, User]) -> None:
        nonlocal refusals, deferred, lost
        channel, alice, bob = table
        async with gate:
            try:
                await bench.new_game(channel, alice, bob)
            except AssertionError as exc:
                errors.append(f"starting a game: {str(exc)[:200]}")
                return
        turn = 0
        last_lost = False
        while True:
            async with gate:
                record = await bench.standin.slash(
                    "flip",
                    user=bob if turn % 2 else alice,
                    channel=channel,
                    options={"count": count},
                )
                turn += 1
                try:
                    response = await record.response(timeout=5)
                    # A deferral is an answer in time; the round fills the message after it.
                    table_shown = await record.followup(timeout=60) if response.deferred else None
                except AssertionError as exc:
                    if record.rejected:
                        # Answered after Discord's 3 s: the bot shows the round in the channel
                        # instead, and the players play on from there.
                        lost += 1
                        last_lost = True
                        continue
                    errors.append(str(exc)[:200])
                    return
            latencies.append(response.latency)
            deferred += response.deferred
            if response.ephemeral:
                # "No game here": expected only when the answer to the game's last flip was lost.
                refusals += not last_lost
                return
            last_lost = False
            table_shown = table_shown or response.message
            shown = table_shown.custom_ids() if table_shown is not None else []
            if not any(custom_id.startswith("krig:flip:") for custom_id in shown):
                return  # no Flip button (a finished game offers a rematch): the game is over

    phase = await measured(bench.proc.pid, asyncio.gather(*(play(table) for table in tables)))
    elapsed = phase.elapsed

    latencies.sort()
    load = (
        f"interactions arriving at random, {rate:g}/s"
        if rate is not None
        else f"{concurrency} interactions in flight at all times"
    )
    print(f"{games} games to the end with /flip count:{count}, {load}")
    rate = len(latencies) / elapsed
    print(f"  {len(latencies)} /flip interactions in {elapsed:.1f} s: {rate:.0f}/s")
    print(
        f"  reply time: median {ms(latencies, 0.5):.1f} ms, p90 {ms(latencies, 0.9):.1f} ms, "
        f"p99 {ms(latencies, 0.99):.1f} ms, "
        f"max {latencies[-1] * 1000:.0f} ms   (target p99 < 100 ms)"
    )
    print(
        f"  the bot's memory at its peak: {memory_report(bench.proc.pid)}; "
        f"the stand-in and players: {peak_rss_mib(os.getpid()):.0f} MiB"
    )
    print(
        f"  CPU: the bot {phase.bot_share:.0%} of one core, "
        f"the stand-in and the players {phase.own_share:.0%} (2 cores in all)"
    )
    print(
        f"  errors: {len(errors)}, unexpected refusals: {refusals}, deferred: {deferred}, "
        f"answered after Discord's 3 s (shown in the channel instead): {lost}"
    )
    for error in errors[:3]:
        print("  e.g.", error)
    check_results(bench.workdir / "krig.db", games)


def check_results(db: Path, games: int) -> None:
    """Check every finished game has one result per player, counted once on the leaderboard."""
    with sqlite3.connect(db) as conn:
        finished = conn.execute("SELECT COUNT(*) FROM games WHERE status = 'finished'").fetchone()[
            0
        ]
        per_game = conn.execute(
            "SELECT COUNT(*) FROM (SELECT game_id, COUNT(*) AS n FROM results GROUP BY game_id "
            "HAVING n != 2)"
        ).fetchone()[0]
        missing = conn.execute(
            "SELECT COUNT(*) FROM games g WHERE status = 'finished' AND NOT EXISTS "
            "(SELECT 1 FROM results r WHERE r.game_id = g.id)"
        ).fetchone()[0]
        total_games = conn.execute("SELECT COUNT(DISTINCT game_id) FROM results").fetchone()[0]
        rounds = conn.execute("SELECT SUM(round) FROM games WHERE status = 'finished'").fetchone()[
            0
        ]
        (pages,) = conn.execute("PRAGMA page_count").fetchone()
        (free,) = conn.execute("PRAGMA freelist_count").fetchone()
        (page_size,) = conn.execute("PRAGMA page_size").fetchone()
    ok = finished == games and per_game == 0 and missing == 0 and total_games == games
    print(
        f"  results: {finished} finished games, {total_games} on the leaderboard, "
        f"{missing} missing, {per_game} with a wrong count, {rounds} rounds in all: "
        f"{'OK' if ok else 'MISMATCH'}"
    )
    used = (pages - free) * page_size
    print(
        f"  the database: {used / 2**20:.1f} MiB in use, "
        f"{used / max(finished, 1) / 1024:.1f} KiB a finished game with its results"
    )


async def run(args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        # Bodies are checked against Discord's schema in the tests; here it would take the
        # stand-in's core from the figures (about 0.8 ms of CPU a flip).
        async with DiscordStandIn(check_bodies=False) as standin:
            bench = Bench(standin, Path(tmp), images=args.images == "on")
            await bench.start_bot()
            try:
                await soak(bench, args.games, args.rate, args.concurrency, args.count)
            finally:
                await bench.stop_bot()


def main() -> None:
    """Parse the options and run."""
    parser = argparse.ArgumentParser(
        prog="python -m bench.soak", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--games", type=int, default=1000)
    parser.add_argument(
        "--rate", type=float, default=100.0, help="interactions arriving per second (open loop)"
    )
    parser.add_argument(
        "--concurrency",
        type=int,
        help="instead of --rate: this many interactions in flight at all times (closed loop)",
    )
    parser.add_argument("--count", type=int, default=50, help="rounds per /flip (1 to 50)")
    parser.add_argument("--images", choices=("on", "off"), default="off", help="table pictures")
    args = parser.parse_args()
    if args.concurrency is not None:
        args.rate = None
    asyncio.run(run(args))


if __name__ == "__main__":
    main()
