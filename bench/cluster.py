"""Several bot processes of one bot on one database: ``python -m bench.cluster``.

Runs 1, then 2 (``--processes 1,2``) ``python bot.py`` processes, each with its part of the
shards, against one sharded Discord stand-in on loopback and one database (``--database
sqlite``, a file in WAL mode; ``--database postgres``, a PostgreSQL 15 started for the bench with
fsync on and a new database for each run; or a PostgreSQL DSN of your own). Every
channel flips as fast as its replies come back, for a second's warm-up and then ``--seconds``
measured; for each process count it prints, as the median and range over ``--runs`` runs:

- durable flips per second (each committed before its reply went out);
- the median and p99 reply time;
- CPU per flip: the bot processes together, and the database server's (a PostgreSQL on this
  machine; SQLite runs inside the bots);
- commits per flip and write conflicts (another process moved the game first), from the bots'
  metrics;
- requests a second against Discord's global limit, from ``--autoplay`` games under autoplay
  (answers to interactions are exempt): each process keeps to 80 % of its share of 50;
- the whole machine's CPU per flip (every program's and the kernel's) and how busy its cores
  were, so what the cores allow at that cost is plain;
- how often a second each bot process was taken off its core with work left (involuntary
  context switches): what sharing too few cores costs it;
- and, after every run, rounds lost or doubled: the rounds stored against the rounds answered.

A count written ``2auto`` runs that many processes with ``KRIG_SHARDS=auto`` (PostgreSQL only),
started one after the other and measured once they hold the shards evenly: ``--processes
2,2auto --database postgres`` sets the claimed shards beside the same processes with lists.

The runs go in rounds, each process count once a round, and each count's flips a second and
bot CPU per flip are compared with the first count's round by round. The bots and PostgreSQL
run at nice 10 (``--fair``: at the stand-in's priority): Discord's servers are not on a bot's
machine, and the stand-in, one process, must not be the one kept waiting.

Nothing here asserts; it prints figures. On two cores the stand-in and this driver share the
cores with the bots and the database, so more processes add only what the first leaves idle.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import aiohttp
from prometheus_client.parser import text_string_to_metric_families

from bench.bot import (
    collector_paused,
    cpu_seconds,
    free_port,
    machine_cpu_seconds,
    ms,
    preemptions,
)
from krigbot.storage import Storage
from tests.standin import (
    BotCrashed,
    Channel,
    DiscordStandIn,
    GatewayEvent,
    Guild,
    InteractionResponse,
    User,
)
from tests.support.cluster import Claims
from tests.support.postgres import Cluster, cluster_running

ROOT = Path(__file__).resolve().parent.parent
IDENTIFY_SECONDS = 0.2
"""The stand-in's pause between identifies, and the bots' (Discord's is 5 s)."""
WARM_UP_SECONDS = 1.0
"""How long the players flip before the clocks start."""
OURS_NICE = 10
"""The scheduling niceness of the bots and the database server: Discord's side goes first.

Discord's servers are not on the bot's machine. Here the stand-in, one process playing Discord
for every bot, shares two cores with them: at one priority, two or four bots would each take
as much of a core as it, and it would set the pace. ``--fair`` runs everything at one
priority."""


@dataclass
class Run:
    """The figures of one run."""

    flips_per_second: float
    median_ms: float
    p99_ms: float
    bot_cpu_ms: float
    preempted_per_second: float
    """How often a bot process was taken off its core with work left, a second (each)."""
    db_cpu_ms: float | None
    standin_cpu_ms: float
    """This process's: the stand-in serving every process, and the players driving it."""
    machine_cpu_ms: float
    """The whole machine's busy CPU: every program's, and the kernel's."""
    machine_busy: float
    """The share of the machine's cores that was busy."""
    deferred: float
    """The share of rounds first answered with a deferral."""
    commits_per_flip: float
    conflicts: float
    global_per_second: float
    tables: list[Table]
    wrong_rounds: int | None = None
    """Rounds stored against rounds answered, over every game (None: not read)."""


@dataclass
class Process:
    """One bot process and its metrics endpoint."""

    shards: str
    port: int
    proc: asyncio.subprocess.Process | None = None
    reader: asyncio.Task[None] | None = None
    """With KRIG_SHARDS=auto: the task reading its log, which says which shards it holds."""

    async def scrape(self, http: aiohttp.ClientSession) -> dict[str, float]:
        """Return the process's counters, summed over their labels but ``kind``."""
        async with http.get(f"http://127.0.0.1:{self.port}/metrics") as answer:
            text = await answer.text()
        found: dict[str, float] = {}
        for family in text_string_to_metric_families(text):
            for sample in family.samples:
                key = sample.name + "".join(
                    f":{v}" for k, v in sample.labels.items() if k == "kind"
                )
                found[key] = found.get(key, 0.0) + sample.value
        return found


@dataclass
class Table:
    """One channel's players and how many rounds its games showed."""

    channel: Channel
    players: tuple[User, User]
    shown: int = 0
    """Every round shown, the warm-up's too: what the database must hold."""
    measured: int = 0
    """The rounds shown while the clocks ran."""
    deferred: int = 0
    """Of those, the rounds whose first answer was a deferral, the round following."""
    latencies: list[float] = field(default_factory=list)
    games: list[int] = field(default_factory=list)


@dataclass
class Window:
    """When the players count their rounds: after the warm-up, until the clocks stop."""

    open: bool = False
    over: bool = False


def split(shards: int, processes: int) -> list[str]:
    """Return each process's KRIG_SHARDS: the shards dealt out in order."""
    per = shards // processes
    return [f"{n * per}-{(n + 1) * per - 1}" for n in range(processes)]


def database_env(database: str, folder: Path) -> dict[str, str]:
    """Return the settings that point a bot at the database (a file, or a PostgreSQL URL).

    With PostgreSQL the file's folder still holds the identify turns the processes share.
    """
    if database == "sqlite":
        return {"KRIG_DB": str(folder / "krig.db")}
    return {"KRIG_DB": str(folder / "krig.db"), "KRIG_DATABASE_URL": database}


def postgres_pids() -> list[int]:
    """Return the ids of this machine's PostgreSQL server processes."""
    found = []
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            with contextlib.suppress(OSError):
                if Path(f"/proc/{pid}/comm").read_text().strip() in ("postgres", "postmaster"):
                    found.append(int(pid))
    return found


def database_cpu(database: str) -> float | None:
    """Return the CPU seconds of this machine's PostgreSQL server processes (None: SQLite)."""
    if database == "sqlite":
        return None
    total = 0.0
    for pid in postgres_pids():
        with contextlib.suppress(OSError):  # one that ended meanwhile
            total += cpu_seconds(pid)
    return total


async def start(
    standin: DiscordStandIn, process: Process, env: dict[str, str], *, fair: bool
) -> None:
    """Start one bot process and wait until each of its shards had its READY."""
    after = len(standin.gateway_events)
    process.proc = await asyncio.create_subprocess_exec(
        sys.executable,
        str(ROOT / "bot.py"),
        env=env | {"KRIG_SHARDS": process.shards, "KRIG_METRICS_PORT": str(process.port)},
        cwd=ROOT,
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.DEVNULL,
        preexec_fn=None if fair else lambda: os.setpriority(os.PRIO_PROCESS, 0, OURS_NICE),
    )
    watcher = asyncio.create_task(process.proc.wait())
    standin.watch_task(watcher)
    first, _, last = process.shards.partition("-")
    try:
        for shard in range(int(first), int(last) + 1):

            def ready(e: GatewayEvent, shard: int = shard) -> bool:
                return e.kind == "ready" and e.shard[0] == shard

            await standin.gateway_events.wait(
                ready,
                start=after,
                timeout=60,
                what=f"shard {shard}",
            )
    except BotCrashed as exc:
        raise SystemExit(f"a bot process did not start: {exc}") from None
    finally:
        # Not cancelled: another process starting meanwhile waits with it in view, and would
        # take the cancellation for a death. It ends with the process.
        standin.unwatch_task(watcher)


async def start_claiming(
    standin: DiscordStandIn, bots: list[Process], env: dict[str, str], *, fair: bool, shards: int
) -> None:
    """Start bot processes with KRIG_SHARDS=auto one after the other; return once they hold the
    shards evenly, each connected (as their logs say)."""
    claims = Claims(standin)

    async def read(name: str, stream: asyncio.StreamReader) -> None:
        while line := await stream.readline():
            claims.told(name, line.decode(errors="replace"))

    for n, bot in enumerate(bots):
        bot.proc = await asyncio.create_subprocess_exec(
            sys.executable,
            str(ROOT / "bot.py"),
            env=env
            | {"KRIG_SHARDS": "auto", "KRIG_METRICS_PORT": str(bot.port), "LOG_LEVEL": "INFO"},
            cwd=ROOT,
            stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.PIPE,
            preexec_fn=None if fair else lambda: os.setpriority(os.PRIO_PROCESS, 0, OURS_NICE),
        )
        assert bot.proc.stderr is not None
        # Ends with its process (the pipe closes).
        bot.reader = asyncio.create_task(read(f"bot-{n}", bot.proc.stderr))
        each, more = divmod(shards, n + 1)
        await claims.settled([each + (1 if k < more else 0) for k in range(n + 1)])


async def deal(standin: DiscordStandIn, table: Table) -> None:
    """Challenge and accept, so the channel has a running game."""
    alice, bob = table.players
    record = await standin.slash(
        "krig start", user=alice, channel=table.channel, options={"opponent": bob}
    )
    answer = await record.response(timeout=30)
    message = await record.followup(timeout=30) if answer.deferred else answer.message
    assert message is not None
    accept = next(cid for cid in message.custom_ids() if cid.startswith("krig:accept:"))
    table.games.append(int(accept.rsplit(":", 1)[1]))
    await (await standin.click(message, accept, user=bob)).response(timeout=30)


async def flip(standin: DiscordStandIn, table: Table, turn: int) -> InteractionResponse | None:
    """Send /flip; return its first answer if it showed a round (None: the game had ended)."""
    record = await standin.slash("flip", user=table.players[turn % 2], channel=table.channel)
    response = await record.response(timeout=30)
    shown = await record.followup(0, timeout=30) if response.deferred else response.message
    played = shown is not None and not shown.ephemeral and bool(shown.embeds)
    return response if played else None


async def one_run(args: argparse.Namespace, processes: str, cluster: Cluster | None) -> Run:
    """Measure one run with ``processes`` bot processes (``2auto``: with KRIG_SHARDS=auto);
    return its figures."""
    count, auto = int(processes.removesuffix("auto")), processes.endswith("auto")
    database = args.database if cluster is None else cluster.create_database()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        # Bodies are checked against Discord's schema in the tests; here it would take the
        # stand-in's core from the figures (about 0.8 ms of CPU a flip).
        async with DiscordStandIn(
            check_bodies=False, shard_count=args.shards, identify_interval=IDENTIFY_SECONDS
        ) as standin:
            env = standin.subprocess_env() | {
                "DISCORD_TOKEN": "bench-token",
                "KRIG_SHARD_COUNT": str(args.shards),
                "KRIG_IDENTIFY_SECONDS": str(IDENTIFY_SECONDS),
                "KRIG_RENDER_PROCESSES": "0",
                "LOG_LEVEL": "WARNING",
                "KRIG_AUTOPLAY_SECONDS": str(args.autoplay_seconds),
                **database_env(database, folder),
            }
            shards = ["auto"] * count if auto else split(args.shards, count)
            bots = [Process(part, free_port()) for part in shards]
            try:
                if auto:
                    await start_claiming(standin, bots, env, fair=args.fair, shards=args.shards)
                else:
                    await asyncio.gather(
                        *(start(standin, bot, env, fair=args.fair) for bot in bots)
                    )
                if not args.fair:
                    for pid in postgres_pids():  # its server processes, the new ones too
                        os.setpriority(os.PRIO_PROCESS, pid, OURS_NICE)
                run = await load(args, standin, bots)
            finally:
                for bot in bots:
                    if bot.proc is not None and bot.proc.returncode is None:
                        bot.proc.terminate()
                        await bot.proc.wait()
            stored = folder / "krig.db" if database == "sqlite" else database
            run.wrong_rounds = await wrong_rounds(stored, run.tables)
            # The tables' channels hold the whole stand-in and all it kept: let it go.
            run.tables = []
            return run


async def load(args: argparse.Namespace, standin: DiscordStandIn, bots: list[Process]) -> Run:
    """Seat the games, flip everywhere for a warm-up and ``args.seconds``; return the figures."""
    guilds: list[Guild] = [
        standin.add_guild(f"server {shard}", shard=shard, locale="nb")
        for shard in range(args.shards)
    ]
    for guild in guilds:
        # Pictures as asked (a moderator's setting): off measures the flip path alone.
        moderators = standin.add_role(guild, "Moderator", ["manage_messages"])
        moderator = standin.add_user(f"mod-{guild.id}", locale="nb")
        standin.add_member(guild, moderator, roles=[moderators])
        lobby = standin.add_channel(guild, "lobby")
        await (
            await standin.slash(
                "krig settings", user=moderator, channel=lobby, options={"images": args.images}
            )
        ).response(timeout=30)
    tables: list[Table] = []
    for n in range(args.games):
        guild = guilds[n % len(guilds)]
        channel = standin.add_channel(guild, f"krig-{n}")
        alice = standin.add_user(f"a{n}", locale="nb")
        bob = standin.add_user(f"b{n}", locale="nb")
        for user in (alice, bob):
            standin.add_member(guild, user)
        tables.append(Table(channel, (alice, bob)))
    gate = asyncio.Semaphore(32)

    async def seat(table: Table) -> None:
        async with gate:
            await deal(standin, table)

    await asyncio.gather(*(seat(table) for table in tables))
    # Games under autoplay, whose edits count against Discord's global limit (flips do not).
    for n in range(args.autoplay):
        guild = guilds[n % len(guilds)]
        auto = Table(standin.add_channel(guild, f"auto-{n}"), tables[n % len(tables)].players)
        await deal(standin, auto)
        started = await standin.slash(
            "krig auto", user=auto.players[0], channel=auto.channel, options={"speed": "slow"}
        )
        await started.response(timeout=30)
    window = Window()

    async def player(table: Table) -> None:
        turn = 0
        while not window.over:
            response = await flip(standin, table, turn)
            if response is None:
                await deal(standin, table)
            else:
                table.shown += 1
                if window.open:
                    table.measured += 1
                    table.latencies.append(response.latency)
                    table.deferred += response.deferred
            turn += 1

    async with aiohttp.ClientSession() as http:
        with collector_paused():  # its full collection first, before the clocks start
            players = asyncio.gather(*(player(table) for table in tables))
            # The first second is not measured: every channel's first /flip comes at once to
            # processes that answered little yet, and a burst is deferred first (by design).
            await asyncio.sleep(WARM_UP_SECONDS)
            before = [await bot.scrape(http) for bot in bots]
            pids = [bot.proc.pid for bot in bots if bot.proc is not None]
            bot_cpu = sum(cpu_seconds(pid) for pid in pids)
            preempted = sum(preemptions(pid) for pid in pids)
            db_cpu = database_cpu(args.database)
            own_cpu = time.process_time()
            machine = machine_cpu_seconds()
            clock = time.perf_counter()
            window.open = True
            await asyncio.sleep(args.seconds)
            window.open = False
            elapsed = time.perf_counter() - clock
            own_cpu = time.process_time() - own_cpu
            busy, idle = (
                now - then for now, then in zip(machine_cpu_seconds(), machine, strict=True)
            )
            bot_cpu = sum(cpu_seconds(pid) for pid in pids) - bot_cpu
            preempted = sum(preemptions(pid) for pid in pids) - preempted
            db_after = database_cpu(args.database)
            after = [await bot.scrape(http) for bot in bots]
            window.over = True
            await players

    def moved(name: str) -> float:
        return sum(a.get(name, 0.0) - b.get(name, 0.0) for a, b in zip(after, before, strict=True))

    played = sum(table.measured for table in tables)
    latencies = sorted(latency for table in tables for latency in table.latencies)
    return Run(
        flips_per_second=played / elapsed,
        median_ms=ms(latencies, 0.5),
        p99_ms=ms(latencies, 0.99),
        bot_cpu_ms=bot_cpu / max(played, 1) * 1000,
        preempted_per_second=preempted / max(len(pids), 1) / elapsed,
        db_cpu_ms=None
        if db_cpu is None or db_after is None
        else (db_after - db_cpu) / played * 1000,
        standin_cpu_ms=own_cpu / max(played, 1) * 1000,
        machine_cpu_ms=busy / max(played, 1) * 1000,
        machine_busy=busy / max(busy + idle, 1e-9),
        deferred=sum(table.deferred for table in tables) / max(played, 1),
        commits_per_flip=moved("krig_db_commit_seconds_count") / max(played, 1),
        conflicts=moved("krig_db_write_conflicts_total"),
        global_per_second=moved("krig_discord_requests_total:global") / elapsed,
        tables=tables,
    )


async def wrong_rounds(database: Path | str, tables: list[Table]) -> int:
    """Return how far the rounds stored are from the rounds answered, over every game."""
    # No flip was in flight at the end: every player awaited each answer.
    storage = await Storage.open(database)
    try:
        stored = 0
        for game_id in (game_id for table in tables for game_id in table.games):
            row = await storage.games.get_game(game_id)
            stored += row.round if row is not None else 0
    finally:
        await storage.close()
    return abs(stored - sum(table.shown for table in tables))


def summary(values: list[float], unit: str, digits: int = 1) -> str:
    """Return the median and range of a figure over the runs."""
    return (
        f"{statistics.median(values):.{digits}f}{unit} "
        f"({min(values):.{digits}f}-{max(values):.{digits}f})"
    )


@contextlib.contextmanager
def heading(text: str) -> Iterator[None]:
    """Print a heading, then the lines below it."""
    print(text)
    yield
    print()


async def run(args: argparse.Namespace) -> None:
    counts = [entry.strip() for entry in args.processes.split(",")]
    database = "sqlite" if args.database == "sqlite" else "postgresql"
    print(
        f"{args.games} channels flipping at once over {args.shards} shards, {database}, "
        f"{args.seconds:.0f} s a run, {args.runs} runs: median (range); meanwhile "
        f"{args.autoplay} games under autoplay asking for "
        f"{args.autoplay / args.autoplay_seconds / 2:.0f} edits a second in all\n"
    )
    postgres = cluster_running(durable=True) if args.database == "postgres" else None
    runs: dict[str, list[Run]] = {processes: [] for processes in counts}
    with postgres or contextlib.nullcontext() as cluster:
        # Each round runs every process count once: a machine whose speed drifts over the
        # minutes (a shared one does) then slows all of them alike, not the last ones.
        for n in range(args.runs):
            for processes in counts:
                runs[processes].append(done := await one_run(args, processes, cluster))
                print(
                    f"run {n + 1}, {described(processes)}: "
                    f"{done.flips_per_second:.0f} flips/s, CPU per flip: bot "
                    f"{done.bot_cpu_ms:.2f} ms, stand-in {done.standin_cpu_ms:.2f} ms; "
                    f"{done.deferred * 100:.0f} % deferred",
                    flush=True,
                )
    print()
    for processes in counts:
        report(processes, database, runs[processes], (counts[0], runs[counts[0]]))


def described(processes: str) -> str:
    """Return a process count of ``--processes`` in words: ``2 processes (KRIG_SHARDS=auto)``."""
    count, auto = int(processes.removesuffix("auto")), processes.endswith("auto")
    return f"{count} process{'es' if count > 1 else ''}" + (" (KRIG_SHARDS=auto)" if auto else "")


def report(processes: str, database: str, runs: list[Run], first: tuple[str, list[Run]]) -> None:
    """Print the figures of ``processes`` bot processes, and how they compare with ``first``'s
    (the first process count's).

    The ratio is of the runs of one round, then the median of those: the processes measured
    side by side, on the machine as it was at the time.
    """
    with heading(f"{described(processes)}, bot ({database})"):
        print(f"  durable flips/s:        {summary([r.flips_per_second for r in runs], '', 0)}")
        print(f"  reply median:           {summary([r.median_ms for r in runs], ' ms')}")
        print(f"  reply p99:              {summary([r.p99_ms for r in runs], ' ms')}")
        print(f"  deferred, then shown:   {summary([r.deferred * 100 for r in runs], ' %', 0)}")
        print(f"  bot CPU per flip:       {summary([r.bot_cpu_ms for r in runs], ' ms', 2)}")
        print(
            "  bot preemptions:        "
            + summary([r.preempted_per_second for r in runs], "", 0)
            + " a second, each process   (taken off a core with work left)"
        )
        db = [r.db_cpu_ms for r in runs if r.db_cpu_ms is not None]
        print(
            "  database CPU per flip:  "
            + (summary(db, " ms", 2) if db else "inside the bot processes (SQLite)")
        )
        print(
            "  stand-in CPU per flip:  "
            + summary([r.standin_cpu_ms for r in runs], " ms", 2)
            + "   (Discord's side and the players, in this process)"
        )
        print(
            "  machine CPU per flip:   "
            + summary([r.machine_cpu_ms for r in runs], " ms", 2)
            + "   (every program's and the kernel's)"
        )
        cores = os.cpu_count() or 1
        print(
            f"  machine busy:           {summary([r.machine_busy * 100 for r in runs], ' %', 0)}"
            f" of {cores} cores: at that cost they allow "
            f"{statistics.median(cores * 1000 / r.machine_cpu_ms for r in runs):.0f} flips/s"
        )
        print(f"  commits per flip:       {summary([r.commits_per_flip for r in runs], '', 2)}")
        print(f"  write conflicts:        {summary([r.conflicts for r in runs], '', 0)}")
        print(
            f"  global-limit requests/s: {summary([r.global_per_second for r in runs], '')}"
            "   (Discord allows 50 for the whole bot)"
        )
        wrong = [r.wrong_rounds for r in runs if r.wrong_rounds is not None]
        print(f"  rounds lost or doubled: {sum(wrong) if wrong else 'not read'}")
        count, theirs = first
        if count != processes:
            ratios = [
                r.flips_per_second / f.flips_per_second for r, f in zip(runs, theirs, strict=True)
            ]
            print(f"  flips/s ÷ {described(count)}', round by round: {summary(ratios, ' ×', 2)}")
            costs = [r.bot_cpu_ms / f.bot_cpu_ms for r, f in zip(runs, theirs, strict=True)]
            print(
                f"  bot CPU per flip ÷ {described(count)}', round by round: "
                f"{summary(costs, ' ×', 2)}"
            )


def main() -> None:
    """Parse the options and run."""
    parser = argparse.ArgumentParser(
        prog="python -m bench.cluster", description=__doc__.splitlines()[0]
    )
    parser.add_argument(
        "--processes",
        default="1,2",
        help="process counts to measure, e.g. 1,2,4; 2auto: 2 processes with KRIG_SHARDS=auto",
    )
    parser.add_argument(
        "--database",
        default="sqlite",
        help="'sqlite', 'postgres' (a PostgreSQL 15 started for the bench), or a DSN",
    )
    parser.add_argument("--shards", type=int, default=4, help="the bot's shards (all processes)")
    parser.add_argument("--games", type=int, default=200, help="games (channels) flipping at once")
    parser.add_argument("--seconds", type=float, default=10.0, help="length of each run's load")
    parser.add_argument("--runs", type=int, default=3, help="runs per process count")
    parser.add_argument("--images", choices=("on", "off"), default="off", help="table pictures")
    parser.add_argument(
        "--autoplay", type=int, default=100, help="games under autoplay meanwhile (global limit)"
    )
    parser.add_argument(
        "--autoplay-seconds", type=float, default=0.5, help="autoplay's pause between edits"
    )
    parser.add_argument(
        "--fair",
        action="store_true",
        help="run the bots and the database at the stand-in's priority, not below it",
    )
    asyncio.run(run(parser.parse_args()))


if __name__ == "__main__":
    main()
