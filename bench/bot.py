"""The bot under load, end to end: ``python -m bench.bot``.

Runs ``python bot.py`` as its own process (as a user runs it) against the Discord stand-in of
``tests/standin`` on loopback, and prints:

- the median and p99 time from dispatching a ``/flip`` interaction to the bot's reply arriving,
  one flip at a time (``--images both``: in batches with pictures on and off in turn, so that the
  machine's moods hit both alike, and the ratio of the two medians; ``--pause``: a player's
  moment between seeing a round and flipping again);
- sustained durable flips per second with many games in as many channels flipping at once
  (every flip is committed to SQLite, or with ``--database postgres`` to a PostgreSQL 15 the
  bench starts with fsync on, before its reply goes out);
- the memory an idle running game costs the bot process (resident set growth per game);
- the memory of the busy bot: the peak resident set of the bot process and of each process it
  started (its picture worker), and their sum (``--web on`` serves the web view as well).

Nothing here asserts; it prints figures. Two cores: the stand-in and this driver share one
process, the bot has the other.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import os
import shutil
import socket
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import aiohttp

from bench.collector import Collections, describe
from krigbot.render.emoji import EMOJI_CARDS, is_ours
from tests.standin import BotCrashed, Channel, DiscordStandIn, User
from tests.support.postgres import cluster_running

if TYPE_CHECKING:
    from collections.abc import Awaitable, Iterator

ROOT = Path(__file__).resolve().parent.parent


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """Measure without this process's garbage collector (the bot keeps its own), as timeit does.

    This process is the stand-in and the players: it keeps every message the bot sends, and a
    full collection of all that stops the players for 100-200 ms, which would be counted as the
    bot's reply time. It starts with a full collection of what earlier runs left, which can take
    seconds after a long run: start the clocks inside the block, not before it.
    """
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def free_port() -> int:
    """Return a TCP port on loopback that nothing listens on now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def cpu_seconds(pid: int) -> float:
    """Return the CPU time a process has used (user + system), in seconds."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def preemptions(pid: int) -> int:
    """Return how often a process was taken off its core with work left (involuntary switches).

    A process that waits for its answers gives its core up of its own accord; one taken off
    with work to do has to warm its caches again when it gets a core back.
    """
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("nonvoluntary_ctxt_switches:"):
            return int(line.split()[1])
    return 0


def machine_cpu_seconds() -> tuple[float, float]:
    """Return the CPU time of the whole machine, busy and idle, over all its cores (seconds).

    Busy is everything but idle and I/O wait: every program's, and the kernel's own (for
    loopback connections, softirqs), which no process's figure holds.
    """
    fields = [int(n) for n in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:8]]
    idle = fields[3] + fields[4]
    return (sum(fields) - idle) / os.sysconf("SC_CLK_TCK"), idle / os.sysconf("SC_CLK_TCK")


def cluster_cpu_seconds(pid: int) -> float:
    """Return the CPU time of a PostgreSQL server: its postmaster and its server processes."""
    total = cpu_seconds(pid)
    for child in Path(f"/proc/{pid}/task/{pid}/children").read_text().split():
        with contextlib.suppress(OSError):  # a server process that ended meanwhile
            total += cpu_seconds(int(child))
    return total


def ms(sorted_seconds: list[float], fraction: float) -> float:
    """Return a percentile (0.5 the median) of sorted times in seconds, in milliseconds."""
    return sorted_seconds[int(fraction * (len(sorted_seconds) - 1))] * 1000


@dataclass(frozen=True, slots=True)
class Phase:
    """A measured load: its wall time, and the share of one core each side kept busy."""

    elapsed: float
    bot_share: float
    own_share: float


async def measured(pid: int, load: Awaitable[object]) -> Phase:
    """Run a load with this process's collector paused; time it and the CPU of both sides."""
    with collector_paused():  # its full collection first, outside the clocks
        started = time.perf_counter()
        bot_cpu = cpu_seconds(pid)
        own_cpu = time.process_time()
        await load
        elapsed = time.perf_counter() - started
    return Phase(
        elapsed,
        (cpu_seconds(pid) - bot_cpu) / elapsed,
        (time.process_time() - own_cpu) / elapsed,
    )


def status_kib(pid: int, field: str) -> int:
    """Return a size in KiB from a process's ``/proc/PID/status`` (``VmRSS``, ``VmHWM``)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1])
    raise RuntimeError(f"no {field}")


def rss_kib(pid: int) -> int:
    """Return a process's resident set size in KiB."""
    return status_kib(pid, "VmRSS")


def peak_rss_mib(pid: int) -> float:
    """Return a process's peak resident set size in MiB."""
    return status_kib(pid, "VmHWM") / 1024


def descendants(pid: int) -> list[int]:
    """Return the processes a process started, and theirs (its picture workers), while they run."""
    found: list[int] = []
    with contextlib.suppress(OSError):  # a process that ended meanwhile
        for child in Path(f"/proc/{pid}/task/{pid}/children").read_text().split():
            found += [int(child), *descendants(int(child))]
    return found


def process_name(pid: int) -> str:
    """Return what a process runs, short: ``bot.py``, or the module a spawned worker runs."""
    args = Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace").split("\0")
    if any("multiprocessing" in arg and "resource_tracker" in arg for arg in args):
        return "resource tracker"
    if any("multiprocessing" in arg for arg in args):
        return "picture worker"
    # The script, also when a module runs it (python -m cProfile … bot.py, bench.collector).
    script = next((arg for arg in args[1:] if arg.endswith(".py")), None)
    if script is not None:
        return Path(script).name
    return Path(args[1]).name if len(args) > 1 else args[0]


def memory_report(pid: int) -> str:
    """Describe the peak resident sets of a process and of all it started, and their sum.

    The sum counts twice what the processes share (the interpreter's own pages, mostly): it is
    what the machine must have free for them, at most.
    """
    parts = [(process_name(p), peak_rss_mib(p)) for p in (pid, *descendants(pid))]
    listed = ", ".join(f"{name} {mib:.0f} MiB" for name, mib in parts)
    return f"{sum(mib for _, mib in parts):.0f} MiB in all ({listed})"


class Bench:
    """The stand-in, its world and one bot process."""

    def __init__(
        self,
        standin: DiscordStandIn,
        workdir: Path,
        images: bool,
        metrics: bool = False,
        web: bool = False,
    ) -> None:
        self.standin = standin
        self.workdir = workdir
        self.images = images
        self.metrics_port = free_port() if metrics else None
        self.web_port = free_port() if web else None
        self.scrapes = 0
        self.guild = standin.add_guild("Bench", locale="nb")
        moderators = standin.add_role(self.guild, "Moderator", ["manage_messages"])
        self.moderator = standin.add_user("mod", "Mona Mod", locale="nb")
        standin.add_member(self.guild, self.moderator, roles=[moderators])
        self.proc: asyncio.subprocess.Process | None = None
        self.database_url: str | None = None
        """The PostgreSQL database the bot uses (None: SQLite in the work folder)."""
        self.database_pid: int | None = None
        """The PostgreSQL server's postmaster, whose CPU is counted with the bot's."""
        self.render_processes: int | None = None
        """The bot's picture workers (None: its default)."""
        self.collections: Path | None = None
        """Where the bot writes its garbage collector's totals (None: not timed)."""
        self.users: list[User] = []
        self.deferrals = 0
        self.pictures = 0
        """Rounds whose reply carried the table's picture."""

    def pair(self, index: int) -> tuple[Channel, User, User]:
        """Return a new channel with two new players in it."""
        channel = self.standin.add_channel(self.guild, f"krig-{index}")
        alice = self.standin.add_user(f"a{index}", f"Alice {index}", locale="nb")
        bob = self.standin.add_user(f"b{index}", f"Bob {index}", locale="nb")
        self.standin.add_member(self.guild, alice)
        self.standin.add_member(self.guild, bob)
        return channel, alice, bob

    async def start_bot(self) -> None:
        env = self.standin.subprocess_env()
        env.update(
            DISCORD_TOKEN="bench-token", KRIG_DB=str(self.workdir / "krig.db"), LOG_LEVEL="WARNING"
        )
        if self.database_url is not None:
            env["KRIG_DATABASE_URL"] = self.database_url
        if self.render_processes is not None:
            env["KRIG_RENDER_PROCESSES"] = str(self.render_processes)
        if self.metrics_port is not None:
            env["KRIG_METRICS_PORT"] = str(self.metrics_port)
        if self.web_port is not None:
            env.update(KRIG_WEB_PORT=str(self.web_port), KRIG_WEB_SECRET="bench-web-secret-0123")
        profile = (
            ["-m", "cProfile", "-o", os.environ["BOT_CPROFILE"]]
            if os.environ.get("BOT_CPROFILE")
            else []
        )
        if self.collections is not None:
            profile = ["-m", "bench.collector", str(self.collections)]
            env["PYTHONPATH"] = f"{ROOT}:{env['PYTHONPATH']}"
        self.proc = await asyncio.create_subprocess_exec(
            sys.executable,
            *profile,
            str(ROOT / "bot.py"),
            env=env,
            cwd=self.workdir,
            stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.DEVNULL,
        )
        watcher = asyncio.create_task(self.proc.wait())
        self.standin.watch_task(watcher)
        try:
            await self.standin.wait_for_ready(timeout=60)
        except BotCrashed as exc:
            raise SystemExit(f"the bot did not start: {exc}") from None
        finally:
            self.standin.unwatch_task(watcher)
            watcher.cancel()
        await self.card_emojis_synced()

    async def card_emojis_synced(self, within: float = 60.0) -> None:
        """Wait until the bot has uploaded its card emojis (once, in the background after ready).

        Drawing and uploading them takes a second and some megabytes; measured during the
        figures, that one-time cost would be counted as the games' and the flips'.
        """
        app, deadline = self.standin.app, time.monotonic() + within
        while sum(is_ours(e["name"]) for e in app.emojis.values()) < len(EMOJI_CARDS):
            if time.monotonic() > deadline:
                raise SystemExit("the bot did not upload its card emojis")
            await asyncio.sleep(0.05)  # a bench, not a test: the bot's own process is watched

    async def scrape(self) -> None:
        """Read the bot's metrics once a second, as a (demanding) Prometheus would."""
        assert self.metrics_port is not None
        url = f"http://127.0.0.1:{self.metrics_port}/metrics"
        async with aiohttp.ClientSession() as http:
            while True:
                async with http.get(url) as answer:
                    await answer.read()
                self.scrapes += 1
                await asyncio.sleep(1.0)

    async def stop_bot(self) -> None:
        if self.proc is not None and self.proc.returncode is None:
            self.proc.terminate()
            await self.proc.wait()

    async def set_images(self, channel: Channel, on: bool | None = None) -> None:
        """Turn the server's pictures on or off (by default as asked), as a moderator would."""
        record = await self.standin.slash(
            "krig settings",
            user=self.moderator,
            channel=channel,
            options={"images": "on" if (self.images if on is None else on) else "off"},
        )
        await record.response(timeout=30)

    async def new_game(self, channel: Channel, alice: User, bob: User) -> None:
        """Challenge and accept, so the channel has a running game."""
        record = await self.standin.slash(
            "krig start", user=alice, channel=channel, options={"opponent": bob}
        )
        answer = await record.response(timeout=30)
        # Under load the bot defers; the challenge then fills the "thinking" message after.
        message = await record.followup(timeout=30) if answer.deferred else answer.message
        assert message is not None
        accept = next(cid for cid in message.custom_ids() if cid.startswith("krig:accept:"))
        press = await self.standin.click(message, accept, user=bob)
        if (await press.response(timeout=30)).deferred:
            # The game is dealt once the deferral is filled in (the challenge edited into the
            # table, or a follow-up): a flip sent before would find no game yet.
            waits = {
                asyncio.ensure_future(press.original_edit(timeout=60)),
                asyncio.ensure_future(press.followup(timeout=60)),
            }
            done, pending = await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
            for waiting in pending:
                waiting.cancel()
            for shown in done:
                shown.result()

    async def flip(self, channel: Channel, user: User) -> tuple[float, bool]:
        """Send /flip; return (seconds until the reply arrived, whether a round was played)."""
        record = await self.standin.slash("flip", user=user, channel=channel)
        response = await record.response(timeout=30)
        if response.deferred:
            # The bot deferred (its work neared Discord's 3 s): the round comes as a follow-up.
            self.deferrals += 1
            message = await record.followup(0, timeout=30)
            played = not message.ephemeral and bool(message.embeds)
            self.pictures += played and bool(message.files)
            return response.latency, played
        played = not response.ephemeral and bool(response.embeds)
        self.pictures += played and bool(response.files)
        return response.latency, played


async def run(args: argparse.Namespace) -> None:
    postgres = cluster_running(durable=True) if args.database == "postgres" else None
    with tempfile.TemporaryDirectory() as tmp, postgres or contextlib.nullcontext() as cluster:
        # Bodies are checked against Discord's schema in the tests; here it would take the
        # stand-in's core from the figures (about 0.8 ms of CPU a flip).
        async with DiscordStandIn(check_bodies=False) as standin:
            bench = Bench(
                standin,
                Path(tmp),
                images=args.images != "off",
                metrics=args.metrics == "on",
                web=args.web == "on",
            )
            bench.render_processes = args.render_processes
            if args.collector:
                bench.collections = Path(tmp) / "collections.json"
            if cluster is not None:
                bench.database_url = cluster.create_database()
                bench.database_pid = cluster.process.pid
            print(f"database: {args.database}")
            await bench.start_bot()
            scraper = asyncio.create_task(bench.scrape()) if args.metrics == "on" else None
            try:
                await measure(bench, args)
            finally:
                if scraper is not None:
                    scraper.cancel()
                    print(f"metrics endpoint scraped {bench.scrapes} times, once a second")
                await bench.stop_bot()


def paused(pause: float) -> str:
    """Describe the pause between flips, if any."""
    return f", {pause * 1000:g} ms between them" if pause else ""


async def one_at_a_time(
    bench: Bench, table: tuple[Channel, User, User], flips: int, pause: float
) -> list[float]:
    """Flip one at a time until ``flips`` rounds are played; return their sorted reply times."""
    channel, alice, bob = table
    latencies: list[float] = []
    while len(latencies) < flips:
        latency, played = await bench.flip(channel, alice if len(latencies) % 2 else bob)
        if played:
            latencies.append(latency)
        else:
            await bench.new_game(channel, alice, bob)
        if pause:
            await asyncio.sleep(pause)
    latencies.sort()
    return latencies


async def alternating(
    bench: Bench, args: argparse.Namespace, table: tuple[Channel, User, User]
) -> None:
    """Print the one-at-a-time figures with pictures on and off, in batches taken in turn."""
    pause = args.pause / 1000
    times: dict[bool, list[float]] = {True: [], False: []}
    pictures = {True: 0, False: 0}
    batches = max(1, args.flips // args.batch)
    with collector_paused():
        for batch in range(2 * batches):
            on = batch % 2 == 0
            await bench.set_images(table[0], on)
            await one_at_a_time(bench, table, 5, pause)  # the first after a switch: not counted
            bench.pictures = 0
            times[on] += await one_at_a_time(bench, table, args.batch, pause)
            pictures[on] += bench.pictures
    for on in (True, False):
        times[on].sort()
        print(
            f"/flip reply, one at a time, pictures {'on' if on else 'off'} ({len(times[on])} "
            f"flips in {batches} batches of {args.batch}{paused(pause)}): median "
            f"{ms(times[on], 0.5):.2f} ms, p99 {ms(times[on], 0.99):.2f} ms, "
            f"{pictures[on]} with a picture"
        )
    ratio = ms(times[True], 0.5) / ms(times[False], 0.5)
    target = "≤ 1.5 × at a player's pace, 250 ms" if pause >= 0.25 else "≤ 2 × back to back"
    print(f"   with a picture / without, medians: {ratio:.2f} ×   (target {target})")


async def measure(bench: Bench, args: argparse.Namespace) -> None:
    assert bench.proc is not None
    # Latency: one game, one flip at a time (a new game when one ends).
    channel, alice, bob = bench.pair(0)
    await bench.set_images(channel)
    await bench.new_game(channel, alice, bob)
    for _ in range(50):  # warm-up
        _, played = await bench.flip(channel, alice)
        if not played:
            await bench.new_game(channel, alice, bob)
    pause = args.pause / 1000
    if args.images == "both":
        await alternating(bench, args, (channel, alice, bob))
    else:
        print(f"pictures: {'on' if bench.images else 'off'}")
        bench.pictures = 0
        with collector_paused():
            one = await one_at_a_time(bench, (channel, alice, bob), args.flips, pause)
        print(
            f"/flip reply, one at a time ({len(one)} flips{paused(pause)}): "
            f"median {ms(one, 0.5):.2f} ms, p99 {ms(one, 0.99):.2f} ms, "
            f"{bench.pictures} with a picture"
        )
        print(f"   (targets: median ≤ {8 if bench.images else 5} ms, p99 ≤ 25 ms)")
    if args.images == "both":
        await bench.set_images(channel, True)  # the rest is measured with pictures on

    # Memory: resident set growth per idle running game.
    # Channels and members first (Discord's own caches grow with them whatever the bot does),
    # then the games: the difference is what the games themselves cost.
    tables = [bench.pair(i) for i in range(1, args.idle_games + 1)]
    for table in tables[:8]:
        await bench.flip(table[0], table[1])  # the bot meets a few of them: "no game here"
    before = rss_kib(bench.proc.pid)
    gate = asyncio.Semaphore(32)

    async def setup(table: tuple[Channel, User, User]) -> None:
        async with gate:
            await bench.new_game(*table)

    await asyncio.gather(*(setup(table) for table in tables))
    after = rss_kib(bench.proc.pid)
    per_game = (after - before) / args.idle_games
    print(
        f"idle running game: {per_game:.1f} KiB of bot memory each "
        f"({args.idle_games} games)   (target ≤ 20 KB)"
    )

    # Throughput: every channel flips as fast as its replies come back, first for a warm-up
    # (the first flip of every channel comes at once, and such a burst is deferred by design),
    # then with the clocks running.
    played_total = 0
    latencies: list[float] = []
    deadline = time.perf_counter() + args.warm_up

    async def player(table: tuple[Channel, User, User]) -> None:
        nonlocal played_total
        channel, alice, bob = table
        turn = 0
        while time.perf_counter() < deadline:
            latency, played = await bench.flip(channel, alice if turn % 2 else bob)
            turn += 1
            if played:
                played_total += 1
                latencies.append(latency)
            else:
                await bench.new_game(channel, alice, bob)

    if args.warm_up:
        await asyncio.gather(*(player(table) for table in tables[: args.games]))
    played_total = 0
    latencies.clear()
    bench.pictures = 0
    bench.deferrals = 0
    deadline = time.perf_counter() + args.seconds
    spy = None
    if args.profile:
        spy = await asyncio.create_subprocess_exec(
            args.py_spy,
            "record",
            "-p",
            str(bench.proc.pid),
            "-d",
            str(int(args.seconds)),
            "-f",
            "raw",
            "-o",
            args.profile,
            "--nonblocking",
            "--rate",
            "400",
            "--gil",
            stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.DEVNULL,
        )
    server = bench.database_pid
    server_cpu = cluster_cpu_seconds(server) if server is not None else 0.0
    collected = None if bench.collections is None else Collections.read(bench.collections)
    phase = await measured(
        bench.proc.pid, asyncio.gather(*(player(table) for table in tables[: args.games]))
    )
    if bench.collections is not None and collected is not None:
        collected = Collections.read(bench.collections).since(collected)
    server_cpu = cluster_cpu_seconds(server) - server_cpu if server is not None else 0.0
    latencies.sort()
    print(
        f"{args.games} channels flipping at once: {played_total / phase.elapsed:.0f} durable "
        f"flips/s over {phase.elapsed:.1f} s (median reply {ms(latencies, 0.5):.1f} ms, "
        f"p99 {ms(latencies, 0.99):.1f} ms; {bench.pictures / max(played_total, 1):.0%} "
        f"with a picture)   (target ≥ {'450/s, half with a picture' if bench.images else '500/s'})"
    )
    per_flip = phase.bot_share * phase.elapsed / max(played_total, 1) * 1000
    print(
        f"   CPU busy: bot process {phase.bot_share:.0%} ({per_flip:.2f} ms per flip), "
        f"stand-in and driver {phase.own_share:.0%}   (bare discord.py: python -m bench.floor)"
    )
    if server is not None:
        print(
            f"   PostgreSQL server: {server_cpu / phase.elapsed:.0%} of a core "
            f"({server_cpu / max(played_total, 1) * 1000:.2f} ms per flip)"
        )
    if collected is not None:
        print(f"   {describe(collected, played_total, per_flip)}")
    print(f"   replies deferred (work near the 3 s deadline): {bench.deferrals}")
    print(f"   memory at its peak: {memory_report(bench.proc.pid)}")
    if spy is not None:
        await spy.wait()


def py_spy() -> str:
    """Return the py-spy beside this Python (requirements-dev.txt installs it), or stop."""
    beside = Path(sys.executable).with_name("py-spy")
    found = str(beside) if beside.is_file() else shutil.which("py-spy")
    if found is None:
        raise SystemExit("--profile needs py-spy: pip install -r requirements-dev.txt")
    return found


def main() -> None:
    """Parse the options and run."""
    parser = argparse.ArgumentParser(
        prog="python -m bench.bot", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--flips", type=int, default=1000, help="flips for the latency figure")
    parser.add_argument("--games", type=int, default=200, help="games (channels) flipping at once")
    parser.add_argument(
        "--images",
        choices=("on", "off", "both"),
        default="on",
        help="table pictures (both: latency in batches with them on and off in turn)",
    )
    parser.add_argument(
        "--batch", type=int, default=50, help="flips in each batch of --images both"
    )
    parser.add_argument(
        "--pause",
        type=float,
        default=0.0,
        metavar="MS",
        help="milliseconds between a reply and the next flip of the latency figure",
    )
    parser.add_argument(
        "--metrics",
        choices=("on", "off"),
        default="off",
        help="serve the metrics endpoint and scrape it once a second",
    )
    parser.add_argument(
        "--web",
        choices=("on", "off"),
        default="off",
        help="serve the web view too (for the memory figure: its templates and server)",
    )
    parser.add_argument(
        "--idle-games",
        type=int,
        default=1000,
        help="running games for the memory figure (bounded caches, e.g. SQLite's, amortise)",
    )
    parser.add_argument("--seconds", type=float, default=10.0, help="length of the load phase")
    parser.add_argument(
        "--warm-up",
        type=float,
        default=1.0,
        metavar="SECONDS",
        help="seconds every channel flips before the load phase's clocks start",
    )
    parser.add_argument(
        "--database",
        choices=("sqlite", "postgres"),
        default="sqlite",
        help="the bot's database (postgres: a PostgreSQL 15 started for the run, fsync on)",
    )
    parser.add_argument(
        "--render-processes",
        type=int,
        metavar="N",
        help="the bot's picture workers (KRIG_RENDER_PROCESSES; default: the bot's own)",
    )
    parser.add_argument(
        "--profile", metavar="FILE", help="record the bot with py-spy during the load"
    )
    parser.add_argument(
        "--collector",
        action="store_true",
        help="time the bot's garbage collector and print its cost a flip (bench.collector)",
    )
    args = parser.parse_args()
    args.py_spy = py_spy() if args.profile else None  # before the minutes the bench takes
    asyncio.run(run(args))


if __name__ == "__main__":
    main()
