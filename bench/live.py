"""Live pages' cost: the bot's CPU per flip with nobody watching and with viewers on its games.

Run: ``python -m bench.live --viewers 500`` (one game, 500 viewers) or
``python -m bench.live --games 200 --viewers 200`` (200 games, one viewer each). The session
parts and the web view run in this process, on SQLite, as in the bot; the viewers read the
streams from a process of their own, so only the serving side is counted. Each measure flips
every game ``--flips`` times and waits until every viewer has every round; the CPU counted is
this process's (all its threads: the replays are rebuilt off the event loop). Nothing here
asserts; it prints figures.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

import aiohttp

from krigbot.engine import Game, Rules
from krigbot.sessions import Player
from krigbot.sessions.service import GameService
from krigbot.storage import Storage
from krigbot.web.access import WebAccess
from krigbot.web.server import WebView

GUILD = 1
ALICE, BOB = Player(1, "Alice"), Player(2, "Bob")


def long_seed(rounds: int) -> int:
    """Return the first seed whose standard game lasts more than ``rounds`` rounds."""
    rules = Rules.preset("standard")
    seed = 0
    while True:
        game = Game.new(rules, seed)
        while game.outcome is None and game.round <= rounds:
            game.play_round()
        if game.outcome is None:
            return seed
        seed += 1


async def watch(urls: list[str], per_game: int, last: int) -> None:
    """The viewers' process: ``per_game`` viewers on each stream, until each has round ``last``."""
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as session:
        ready = asyncio.Semaphore(0)

        async def viewer(url: str) -> None:
            async with session.get(url, timeout=aiohttp.ClientTimeout(total=None)) as answer:
                ready.release()
                async for line in answer.content:
                    if line.startswith(b"id: ") and int(line[4:]) >= last:
                        return

        tasks = [asyncio.create_task(viewer(url)) for url in urls for _ in range(per_game)]
        for _ in tasks:
            await ready.acquire()
        print("ready", flush=True)
        await asyncio.gather(*tasks)
    print("done", flush=True)


async def measure(games: int, per_game: int, flips: int, pace: float) -> float:
    """Return this process's CPU seconds per flip, with ``per_game`` viewers on each game."""
    with tempfile.TemporaryDirectory() as folder:
        storage = await Storage.open(Path(folder) / "krig.db")
        seed = long_seed(flips + 1)
        service = GameService(storage, seeds=lambda: seed, clock=lambda: datetime.now(UTC))
        access = WebAccess(storage, secret="bench-secret-of-enough-length", base_url="http://b")
        await access.set_on(GUILD, True)
        view = WebView(storage, access, clock=lambda: datetime.now(UTC), live=service.registry.live)
        await view.start("127.0.0.1", 0)
        assert view._runner is not None
        host, port = view._runner.addresses[0][:2]
        site = await access.site(GUILD)
        assert site is not None
        channels = list(range(100, 100 + games))
        urls = []
        for channel in channels:
            made = await service.challenges.challenge(
                guild_id=GUILD,
                channel_id=channel,
                challenger=ALICE,
                opponents=[BOB],
                variant="standard",
                options={},
            )
            await service.challenges.accept(made.row.id, BOB.user_id)
            urls.append(f"http://{host}:{port}{access.game_path(site, made.row.id)}/live?after=0")
        viewers = None
        if per_game:
            viewers = await asyncio.create_subprocess_exec(
                sys.executable,
                "-m",
                "bench.live",
                "--watch",
                str(per_game),
                str(flips),
                *urls,
                stdout=asyncio.subprocess.PIPE,
            )
            assert viewers.stdout is not None
            assert (await viewers.stdout.readline()).strip() == b"ready"
        started = time.process_time()
        for _ in range(flips):
            for channel in channels:
                await service.play.flip(channel, ALICE.user_id)
            # A game's flips come from people pressing a button: not back to back in one loop
            # (and the pauses count no CPU).
            await asyncio.sleep(pace)
        if viewers is not None:
            assert viewers.stdout is not None
            assert (await viewers.stdout.readline()).strip() == b"done"
            await viewers.wait()
        spent = time.process_time() - started
        await view.stop()
        await service.deadlines.close()
        await storage.close()
        return spent / (flips * games)


async def run() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.live", description=__doc__)
    parser.add_argument("--games", type=int, default=1)
    parser.add_argument("--viewers", type=int, default=500, help="viewers in all")
    parser.add_argument("--flips", type=int, default=100, help="flips of each game")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--pace", type=float, default=0.05, help="seconds between flips")
    parser.add_argument("--watch", nargs="+", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.watch:
        per_game, last, *urls = args.watch
        await watch(urls, int(per_game), int(last))
        return
    per_game = max(1, args.viewers // args.games)
    alone, watched = [], []
    for _ in range(args.repeats):
        alone.append(await measure(args.games, 0, args.flips, args.pace))
        watched.append(await measure(args.games, per_game, args.flips, args.pace))
    a, w = statistics.median(alone), statistics.median(watched)
    print(f"games {args.games}, viewers {per_game * args.games} ({per_game} a game)")
    print(f"CPU per flip, nobody watching: {a * 1e3:.2f} ms")
    print(f"CPU per flip, watched:         {w * 1e3:.2f} ms ({w / a:.2f} of unwatched)")


def main() -> None:
    asyncio.run(run())


if __name__ == "__main__":
    main()
