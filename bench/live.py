"""Live pages' cost: the bot's CPU per flip with nobody watching and with viewers on its games.

Run: ``python -m bench.live --viewers 500`` (one game, 500 viewers) or
``python -m bench.live --games 200 --viewers 200`` (200 games, one viewer each). The session
parts and the web view run in this process, on SQLite, as in the bot, and the web view hands
the streams to its live relay (``--no-relay``: this process writes them, as where the relay
cannot run); the viewers read the streams from a process of their own. Each measure flips
every game ``--flips`` times and waits until every viewer has every round. Counted per flip:
this process's CPU (all its threads: the bot's), the relay's, the viewers' process's, and the
whole machine's busy CPU (everything running on it, other work included). The viewers stand in
for browsers on other machines and read their streams with as little CPU as they can. Nothing here
asserts; it prints figures: the median of ``--repeats`` measures and their range.

``--control`` keeps the machine equally busy in both measures: a second bot's process flips as
many games beside this one, at the same pace, and the viewers watch its games in one measure
and this one's in the other. What it compares is what watching adds to the bot's own work,
apart from what the relay's writes and the viewers' reads take from the cores the bot shares.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal
from urllib.parse import urlsplit

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


VIEWERS_READ_EVERY = 0.5
"""How often the viewers read what has come on their streams (each read takes all of it)."""


class _Viewer(asyncio.Protocol):
    """One viewer's stream, read as lightly as a client can: what has come is read every
    ``VIEWERS_READ_EVERY`` seconds, and only searched for the last round's id (a browser on
    another machine reads each event as it comes, and parses it, there)."""

    def __init__(self, request: bytes, last: int, ready: asyncio.Semaphore) -> None:
        self.request = request
        self.wanted = f"\nid: {last}\n".encode()
        self.ready = ready
        self.tail = b""
        self.done = asyncio.get_running_loop().create_future()
        self.heard = False

    def itself(self) -> _Viewer:
        """Return the viewer (the protocol its connection is made with)."""
        return self

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        transport.write(self.request)

    def data_received(self, data: bytes) -> None:
        if not self.heard:
            self.heard = True
            self.ready.release()
        # The last few bytes are kept: the id looked for may arrive in two reads.
        seen = self.tail + data
        if self.wanted in seen and not self.done.done():
            self.done.set_result(None)
            self.transport.close()
        self.tail = seen[-len(self.wanted) :]
        if not self.transport.is_closing():
            self.transport.pause_reading()  # until the next read of every stream

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.done.done():
            self.done.set_exception(ConnectionError("a stream ended before its last round"))


async def watch(urls: list[str], per_game: int, last: int) -> None:
    """The viewers' process: ``per_game`` viewers on each stream, until each has round ``last``.

    They stand in for browsers on other machines: they are read with as little CPU as a client
    can spend (all that has come, every ``VIEWERS_READ_EVERY`` seconds, with one search of the
    bytes), so that what they take of this machine's cores, which the bot shares with them
    here, is the least it can be. The relay still writes each viewer each round as it comes:
    what waits is in the viewers' own buffers, which keep far more than half a second's rounds."""
    loop = asyncio.get_running_loop()
    ready = asyncio.Semaphore(0)
    viewers: list[_Viewer] = []
    for url in urls:
        parts = urlsplit(url)
        assert parts.hostname is not None
        assert parts.port is not None
        request = (
            f"GET {parts.path}?{parts.query} HTTP/1.1\r\nHost: {parts.netloc}\r\n"
            "Accept: text/event-stream\r\n\r\n"
        ).encode()
        for _ in range(per_game):
            viewers.append(_Viewer(request, last, ready))
            await loop.create_connection(viewers[-1].itself, parts.hostname, parts.port)
    for _ in viewers:
        await ready.acquire()
    print("ready", flush=True)

    async def read() -> None:
        while True:
            await asyncio.sleep(VIEWERS_READ_EVERY)
            for viewer in viewers:
                if not viewer.transport.is_closing():
                    viewer.transport.resume_reading()

    reading = asyncio.create_task(read())
    await asyncio.gather(*(viewer.done for viewer in viewers))
    reading.cancel()
    print("done", flush=True)


TICKS = os.sysconf("SC_CLK_TCK")


def process_cpu(pid: int | None) -> float:
    """Return a running process's CPU seconds so far (user and system), 0 for none."""
    if pid is None:
        return 0.0
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def peak_mib(pid: int | None) -> float:
    """Return a running process's largest resident set so far in MiB, 0 for none."""
    if pid is None:
        return 0.0
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return 0.0


def machine_cpu() -> float:
    """Return the machine's busy CPU seconds so far, over all its cores."""
    values = [int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle = values[3] + values[4]  # idle and waiting for the disk
    return (sum(values[:8]) - idle) / TICKS


@dataclass(frozen=True)
class Spent:
    """CPU seconds per flip in each place, and the relay's peak memory."""

    bot: float
    relay: float
    viewers: float
    machine: float
    relay_peak: float = 0.0
    """The relay's largest resident set so far, in MiB (0: no relay ran)."""


@dataclass
class Tables:
    """Games dealt in one process, each with the signed address of its live stream."""

    service: GameService
    view: WebView
    storage: Storage
    channels: list[int]
    urls: list[str]

    async def flip(self, flips: int, pace: float) -> None:
        """Flip every game ``flips`` times, ``pace`` seconds apart."""
        for _ in range(flips):
            for channel in self.channels:
                await self.service.play.flip(channel, ALICE.user_id)
            # A game's flips come from people pressing a button: not back to back in one loop
            # (and the pauses count no CPU).
            await asyncio.sleep(pace)

    def relay_pid(self) -> int | None:
        """Return the live relay's process id (None: this process writes the streams)."""
        return None if self.view.relay is None else self.view.relay.pid

    async def close(self) -> None:
        await self.view.stop()
        await self.service.deadlines.close()
        await self.storage.close()


async def deal(folder: str, games: int, flips: int, relay: bool) -> Tables:
    """Deal ``games`` games lasting more than ``flips`` rounds, with the web view on."""
    storage = await Storage.open(Path(folder) / "krig.db")
    seed = long_seed(flips + 1)
    service = GameService(storage, seeds=lambda: seed, clock=lambda: datetime.now(UTC))
    access = WebAccess(storage, secret="bench-secret-of-enough-length", base_url="http://b")
    await access.set_on(GUILD, True)
    view = WebView(
        storage, access, clock=lambda: datetime.now(UTC), live=service.registry.live, relay=relay
    )
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
    return Tables(service, view, storage, channels, urls)


async def serve(games: int, flips: int, pace: float, relay: bool) -> None:
    """The other bot's process (``--control``): deal and tell the streams' addresses; then,
    as it is told, say its relay's process id (it starts with the first viewer), flip its
    games and say when that is done, or stop."""
    loop = asyncio.get_running_loop()
    with tempfile.TemporaryDirectory() as folder:
        tables = await deal(folder, games, flips, relay)
        print(" ".join(tables.urls), flush=True)
        while (told := (await loop.run_in_executor(None, sys.stdin.readline)).strip()) != "stop":
            if told == "relay":
                print(tables.relay_pid() or 0, flush=True)
            elif told == "go":
                await tables.flip(flips, pace)
                print("flipped", flush=True)
        await tables.close()


async def tell(process: asyncio.subprocess.Process, what: str) -> None:
    """Tell a child process something, on its standard input."""
    assert process.stdin is not None
    process.stdin.write(f"{what}\n".encode())
    await process.stdin.drain()


async def child(*args: str) -> asyncio.subprocess.Process:
    """Start this bench in another process, to talk with on its standard input and output."""
    return await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "bench.live",
        *args,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
    )


async def line(process: asyncio.subprocess.Process) -> str:
    """Return the next line a child process says."""
    assert process.stdout is not None
    return (await process.stdout.readline()).decode().strip()


async def measure(
    games: int,
    per_game: int,
    flips: int,
    pace: float,
    relay: bool,
    other: Literal["mine", "its"] | None = None,
) -> Spent:
    """Return the CPU spent per flip, with ``per_game`` viewers on each game.

    ``other``: another bot's process flips as many games of its own beside this one, and the
    viewers watch ``"mine"`` (this process's games) or ``"its"`` (the other's).
    """
    with tempfile.TemporaryDirectory() as folder:
        tables = await deal(folder, games, flips, relay)
        urls = tables.urls
        beside = None
        if other is not None:
            beside = await child("--serve", str(games), str(flips), str(pace), str(int(relay)))
            its_urls = (await line(beside)).split()
            if other == "its":
                urls = its_urls
        viewers = None
        if per_game:
            viewers = await child("--watch", str(per_game), str(flips), *urls)
            assert await line(viewers) == "ready"
        relay_pid = tables.relay_pid()
        if beside is not None and other == "its":
            await tell(beside, "relay")
            relay_pid = int(await line(beside)) or None
        viewers_pid = None if viewers is None else viewers.pid
        started = time.process_time()
        relay_started = process_cpu(relay_pid)
        viewers_started = process_cpu(viewers_pid)
        machine_started = machine_cpu()
        if beside is not None:
            await tell(beside, "go")
        await tables.flip(flips, pace)
        if beside is not None:
            assert await line(beside) == "flipped"
        viewers_spent = 0.0
        if viewers is not None:
            assert await line(viewers) == "done"
            viewers_spent = process_cpu(viewers_pid) - viewers_started
        spent = Spent(
            time.process_time() - started,
            process_cpu(relay_pid) - relay_started,
            viewers_spent,
            machine_cpu() - machine_started,
        )
        relay_peak = peak_mib(relay_pid)
        if viewers is not None:
            await viewers.wait()
        if beside is not None:
            await tell(beside, "stop")
            await beside.wait()
        await tables.close()
        n = flips * games
        return Spent(
            spent.bot / n, spent.relay / n, spent.viewers / n, spent.machine / n, relay_peak
        )


def _ms(values: list[float]) -> str:
    """Return the median of some seconds in ms, and their range."""
    return (
        f"{statistics.median(values) * 1e3:6.2f} ms "
        f"({min(values) * 1e3:.2f}-{max(values) * 1e3:.2f})"
    )


async def run() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.live", description=__doc__)
    parser.add_argument("--games", type=int, default=1)
    parser.add_argument("--viewers", type=int, default=500, help="viewers in all")
    parser.add_argument("--flips", type=int, default=100, help="flips of each game")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--pace", type=float, default=0.05, help="seconds between flips")
    parser.add_argument(
        "--no-relay",
        dest="relay",
        action="store_false",
        help="the bot's process writes the streams (as where the relay cannot run)",
    )
    parser.add_argument(
        "--control",
        action="store_true",
        help="a second bot's process flips as many games beside this one, and what is compared"
        " is the viewers on its games with the viewers on this one's: the machine equally busy",
    )
    parser.add_argument("--watch", nargs="+", help=argparse.SUPPRESS)
    parser.add_argument("--serve", nargs=4, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.watch:
        per_game, last, *urls = args.watch
        await watch(urls, int(per_game), int(last))
        return
    if args.serve:
        games, flips, pace, relay = args.serve
        await serve(int(games), int(flips), float(pace), bool(int(relay)))
        return
    per_game = max(1, args.viewers // args.games)
    alone: list[Spent] = []
    watched: list[Spent] = []
    for _ in range(args.repeats):
        if args.control:
            alone.append(
                await measure(args.games, per_game, args.flips, args.pace, args.relay, "its")
            )
            watched.append(
                await measure(args.games, per_game, args.flips, args.pace, args.relay, "mine")
            )
        else:
            alone.append(await measure(args.games, 0, args.flips, args.pace, args.relay))
            watched.append(await measure(args.games, per_game, args.flips, args.pace, args.relay))
    where = "the relay" if args.relay else "the bot's process"
    viewers = per_game * args.games
    print(f"games {args.games}, viewers {viewers} ({per_game} a game), streams by {where}")
    if args.control:
        print("beside a second bot's process flipping as many games; the viewers on")
        print(f"CPU per flip, median (range) of {args.repeats}: its games | this one's")
    else:
        print(f"CPU per flip, median (range) of {args.repeats}: nobody watching | watched")
    for name in ("bot", "relay", "viewers", "machine"):
        print(f"  {name:8} {_ms([getattr(s, name) for s in alone])} | ", end="")
        print(_ms([getattr(s, name) for s in watched]))
    ratio = statistics.median(s.bot for s in watched) / statistics.median(s.bot for s in alone)
    unwatched = "unwatched, with the viewers on the other's games" if args.control else "unwatched"
    print(f"the bot's process watched: {ratio:.2f} of {unwatched}")
    if args.relay:
        peaks = [s.relay_peak for s in watched]
        print(
            f"the relay's peak memory: {statistics.median(peaks):.0f} MiB "
            f"({min(peaks):.0f}-{max(peaks):.0f})"
        )


def main() -> None:
    asyncio.run(run())


if __name__ == "__main__":
    main()
