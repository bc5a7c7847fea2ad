"""Restart with many running games in the database: ``python -m bench.restart``.

Fills a database with N running games (valid engine states, a few rounds in, spread over many
servers and channels, as a busy bot leaves them), starts ``--processes`` ``python bot.py``
processes at once against the Discord stand-in, each with its share of ``--shards`` shards,
and prints for each process, from the moment the processes are started:

- when every shard of the process is READY (it can receive interactions),
- when the first ``/flip`` is answered (a game restored from the database, in a server on the
  process's shards), and when the first ``/krig status`` is;

then the slowest process, the CPU each process and its picture worker spent until its first
``/flip`` was answered, and how long flips in games nobody has touched since the restart take
to answer. ``--logs FOLDER`` keeps each process's log (at INFO) to see where the time went.

The database is SQLite (a file, the default) or, with ``--database postgres``, a PostgreSQL 15
started for the run with fsync on. Several shards identify one after the other, as Discord
has them do: ``--identify-seconds`` apart per ``max_concurrency`` bucket (Discord's 5 s
would dominate every figure here). ``--max-concurrency`` is the number of buckets, as
``GET /gateway/bot`` tells it: 1 for most bots, 16 and more for large ones.

Targets: one process ready to answer within 2 seconds with 10,000 running games (SQLite);
with 100,000 games in PostgreSQL over 16 shards in 4 processes (``--max-concurrency 16``: with
1, Discord's pause alone keeps 16 shards 80 s from all being connected), each process ready and
answering its first ``/flip`` within 3 seconds.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import random
import sqlite3
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import asyncpg  # type: ignore[import-untyped]  # asyncpg ships no type hints

from bench.bot import cluster_cpu_seconds, cpu_seconds
from bench.cluster import split
from krigbot.engine import Game, Rules
from krigbot.storage import Storage
from krigbot.storage.models import encode_json, encode_time
from tests.standin import BotCrashed, Channel, DiscordStandIn, GatewayEvent, User
from tests.support.postgres import cluster_running

ROOT = Path(__file__).resolve().parent.parent
CHANNELS_PER_GUILD = 100
COLUMNS = (
    "guild_id",
    "channel_id",
    "challenger_id",
    "status",
    "variant",
    "rules",
    "seed",
    "players",
    "names",
    "accepted",
    "state",
    "round",
    "created_at",
    "updated_at",
    "last_activity_at",
)
"""The columns :func:`game_rows` fills, in its order."""


@dataclass
class Table:
    """One channel with a running game, its two players and the shard its server is on."""

    channel: Channel
    alice: User
    bob: User
    shard: int


@dataclass
class Process:
    """One bot process, its shards and when it answered what."""

    shards: range
    proc: asyncio.subprocess.Process | None = None
    identified: list[float] = field(default_factory=list)
    """When each of its shards identified (the first: the bot had started and restored)."""
    ready: float | None = None
    flip: float | None = None
    status: float | None = None
    cpu: tuple[float, float] = (0.0, 0.0)
    """CPU seconds until the first /flip was answered: the bot's and its picture workers'."""
    tables: list[Table] = field(default_factory=list)


def game_rows(tables: list[Table], seed: int) -> list[tuple[Any, ...]]:
    """Return one running game per table, as rows of :data:`COLUMNS`."""
    rules = Rules.preset("standard")
    rules_json = encode_json(rules.to_dict())
    now = encode_time(datetime.now(UTC))
    rng = random.Random(seed)
    rows = []
    for table in tables:
        game_seed = rng.getrandbits(63)
        game = Game.new(rules, game_seed)
        for _ in range(rng.randrange(0, 40)):
            if game.outcome is not None:
                break
            game.play_round()
        if game.outcome is not None:  # rare; start that one afresh
            game = Game.new(rules, game_seed)
        guild = table.channel.guild
        assert guild is not None
        players = json.dumps([table.alice.id, table.bob.id])
        rows.append(
            (
                guild.id,
                table.channel.id,
                table.alice.id,
                "running",
                "standard",
                rules_json,
                game_seed,
                players,
                json.dumps([table.alice.display_name, table.bob.display_name]),
                players,
                encode_json(game.to_dict()),
                game.round,
                now,
                now,
                now,
            )
        )
    return rows


async def fill_sqlite(db: Path, rows: list[tuple[Any, ...]]) -> str:
    """Write the games straight into a new SQLite database (one transaction); describe it."""
    storage = await Storage.open(db)
    await storage.close()
    return insert_sqlite(db, rows)


def insert_sqlite(db: Path, rows: list[tuple[Any, ...]]) -> str:
    """Insert the games into a migrated SQLite database; return its size."""
    marks = ", ".join("?" * len(COLUMNS))
    with contextlib.closing(sqlite3.connect(db)) as conn, conn:
        conn.executemany(f"INSERT INTO games ({', '.join(COLUMNS)}) VALUES ({marks})", rows)
    return f"{db.stat().st_size / 2**20:.1f} MiB"


async def fill_postgres(url: str, rows: list[tuple[Any, ...]]) -> str:
    """Copy the games into a new PostgreSQL database (COPY, one transaction); describe it."""
    storage = await Storage.open(url)
    await storage.close()
    # Without their ids: the identity column numbers them, so new games go on after them.
    conn = await asyncpg.connect(url)
    try:
        async with conn.transaction():
            await conn.copy_records_to_table("games", records=rows, columns=COLUMNS)
        size = await conn.fetchval("SELECT pg_database_size(current_database())")
    finally:
        await conn.close()
    return f"{int(size) / 2**20:.1f} MiB"


def seat(standin: DiscordStandIn, games: int, shards: int) -> list[Table]:
    """Add servers, players and channels, one table per game; deal the servers round the shards."""
    # Servers of 100 channels, each with a game between two of its 10 regulars (a player may
    # play in several channels at once): the size of what Discord sends at start-up stays
    # realistic, and every game is in a channel of its own.
    tables: list[Table] = []
    for g in range(-(-games // CHANNELS_PER_GUILD)):
        shard = g % shards
        guild = standin.add_guild(f"Server {g}", locale="nb", shard=shard)
        regulars = [
            standin.add_user(f"p{g}-{n}", f"Player {g}-{n}", locale="nb") for n in range(10)
        ]
        for user in regulars:
            standin.add_member(guild, user)
        for n in range(min(CHANNELS_PER_GUILD, games - len(tables))):
            alice, bob = regulars[n % 10], regulars[(n + 1 + n // 10 % 9) % 10]
            tables.append(Table(standin.add_channel(guild, f"krig-{n}"), alice, bob, shard))
    return tables


async def answered_at(record: Any, started: float, *, played: bool = False) -> float:
    """Return seconds from the start to the interaction's answer (``played``: the round shown).

    A bot still busy starting defers ("thinking") and sends the round as the follow-up: then
    the round's arrival counts, not the deferral's.
    """
    response = await record.response(timeout=60)
    if played and response.deferred:
        message = await record.followup(0, timeout=60)
        assert message.embeds, message.content
        return time.perf_counter() - started
    assert response.embeds or not played, response.content
    return response.received_at - started  # type: ignore[no-any-return]


async def first_answers(
    standin: DiscordStandIn, process: Process, started: float, rng: random.Random
) -> None:
    """Wait for each of the process's shards' READY, then time its first /flip and /krig status."""
    for shard in process.shards:

        def ready(event: GatewayEvent, shard: int = shard) -> bool:
            return event.kind == "ready" and event.shard[0] == shard

        event = await standin.gateway_events.wait(
            ready,
            timeout=120,
            what=f"shard {shard}",
        )
        process.ready = max(process.ready or 0.0, event.at - started)
        process.identified += [
            e.at - started
            for e in standin.gateway_events.items
            if e.kind == "identify" and e.shard[0] == shard
        ][-1:]
    # Commands live at Discord across restarts; here the stand-in is new, so the first sync
    # (shard 0's process, before it identifies) must be in before any command can be used.
    await standin.wait_for_sync(timeout=120)
    first, second = rng.choice(process.tables), rng.choice(process.tables)
    flip = await standin.slash("flip", user=first.alice, channel=first.channel)
    status = await standin.slash("krig status", user=second.bob, channel=second.channel)
    process.flip = await answered_at(flip, started, played=True)
    if process.proc is not None:
        bot = cpu_seconds(process.proc.pid)
        process.cpu = (bot, cluster_cpu_seconds(process.proc.pid) - bot)
    process.status = await answered_at(status, started)


async def run(args: argparse.Namespace) -> None:
    if args.shards % args.processes:
        raise SystemExit("--shards must be a multiple of --processes")
    postgres = cluster_running(durable=True) if args.database == "postgres" else None
    with tempfile.TemporaryDirectory() as tmp, postgres or contextlib.nullcontext() as cluster:
        workdir = Path(tmp)
        db = workdir / "krig.db"
        # Bodies are checked against Discord's schema in the tests; here it would take the
        # stand-in's core from the figures (about 0.8 ms of CPU a flip).
        async with DiscordStandIn(
            check_bodies=False,
            shard_count=args.shards,
            identify_interval=args.identify_seconds,
            max_concurrency=args.max_concurrency,
        ) as standin:
            tables = seat(standin, args.games, args.shards)
            begun = time.perf_counter()
            rows = game_rows(tables, args.seed)
            dealt = time.perf_counter() - begun
            begun = time.perf_counter()
            # The bots share the work folder, where their identifies take turns (KRIG_DB's).
            env = standin.subprocess_env() | {
                "DISCORD_TOKEN": "bench-token",
                "KRIG_DB": str(db),
                "KRIG_IDENTIFY_SECONDS": str(args.identify_seconds),
                "LOG_LEVEL": "INFO" if args.logs else "WARNING",
            }
            if cluster is None:
                size = await fill_sqlite(db, rows)
            else:
                env["KRIG_DATABASE_URL"] = cluster.create_database()
                size = await fill_postgres(env["KRIG_DATABASE_URL"], rows)
            filled = time.perf_counter() - begun
            del rows
            print(
                f"{args.games} running games in {len(standin.guilds)} servers over "
                f"{args.shards} shard{'s' if args.shards > 1 else ''} in {args.database}, "
                f"{size}: games played in {dealt:.1f} s, written in {filled:.1f} s"
            )
            print(
                f"{args.processes} bot process{'es' if args.processes > 1 else ''} started; "
                f"max_concurrency {args.max_concurrency}: the shards of each bucket identify "
                f"one at a time, {args.identify_seconds:g} s apart "
                "(KRIG_IDENTIFY_SECONDS; Discord's pause is 5 s)"
            )
            if args.shards > 1:
                # One shard: the bot picks Discord's recommended count itself, as it did before.
                env["KRIG_SHARD_COUNT"] = str(args.shards)
            env.update(args.env or {})
            processes = [
                Process(range(int(low), int(high) + 1))
                for low, _, high in (
                    part.partition("-") for part in split(args.shards, args.processes)
                )
            ]
            for table in tables:
                processes[table.shard // (args.shards // args.processes)].tables.append(table)
            if not all(process.tables for process in processes):
                raise SystemExit("too few games: every process needs a server on its shards")
            rng = random.Random(args.seed + 1)
            started = time.perf_counter()
            for process in processes:
                shards = f"{process.shards[0]}-{process.shards[-1]}"
                process.proc = await asyncio.create_subprocess_exec(
                    sys.executable,
                    str(ROOT / "bot.py"),
                    env=env | {"KRIG_SHARDS": shards} if args.shards > 1 else env,
                    cwd=workdir,
                    stdout=asyncio.subprocess.DEVNULL,
                    stderr=(args.logs / f"bot-{shards}.log").open("wb")
                    if args.logs
                    else asyncio.subprocess.DEVNULL,
                )
            watchers = [
                asyncio.create_task(process.proc.wait())
                for process in processes
                if process.proc is not None
            ]
            for watcher in watchers:
                standin.watch_task(watcher)
            try:
                await asyncio.gather(
                    *(first_answers(standin, process, started, rng) for process in processes)
                )
                # Games nobody touched since the restart, one at a time.
                cold = []
                for table in rng.sample(tables, min(200, args.games)):
                    record = await standin.slash("flip", user=table.alice, channel=table.channel)
                    dispatched = record.dispatched_at
                    cold.append(await answered_at(record, dispatched, played=True))
            except BotCrashed as exc:
                raise SystemExit(f"a bot process did not start: {exc}") from None
            finally:
                for watcher in watchers:
                    standin.unwatch_task(watcher)
                    watcher.cancel()
                for process in processes:
                    if process.proc is not None and process.proc.returncode is None:
                        process.proc.terminate()
                        try:
                            await asyncio.wait_for(process.proc.wait(), 10)
                        except TimeoutError:
                            # A bot still starting its shards may not heed SIGTERM.
                            process.proc.kill()
                            await process.proc.wait()
    report(processes, cold, args)


def report(processes: list[Process], cold: list[float], args: argparse.Namespace) -> None:
    """Print each process's times, the slowest, and the flips in untouched games."""
    print("seconds from the start of the processes:")
    print("  shards   games  1st IDENTIFY  last IDENTIFY  all READY  1st /flip  1st /krig status")
    rows = [
        (
            f"{process.shards[0]}-{process.shards[-1]}",
            str(len(process.tables)),
            [min(process.identified), max(process.identified)],
            [process.ready or 0.0, process.flip or 0.0, process.status or 0.0],
        )
        for process in processes
    ]
    if len(processes) > 1:
        rows.append(
            (
                "slowest",
                "",
                [max(row[2][n] for row in rows) for n in range(2)],
                [max(row[3][n] for row in rows) for n in range(3)],
            )
        )
    for shards, games, identified, answered in rows:
        print(
            f"  {shards:<8} {games:>6}  {identified[0]:>12.2f}  {identified[1]:>13.2f}"
            f"  {answered[0]:>9.2f}  {answered[1]:>9.2f}  {answered[2]:>16.2f}"
        )
    print("CPU seconds until the 1st /flip was answered (on 2 cores, half their sum is a floor):")
    for process in processes:
        bot, workers = process.cpu
        print(
            f"  {process.shards[0]}-{process.shards[-1]:<6} bot {bot:.2f}, "
            f"picture worker {workers:.2f}"
        )
    target = 3 if args.processes > 1 else 2
    print(f"  (target: every process ready and answering its first /flip within {target} s)")
    cold.sort()
    print(
        f"first flip in a game untouched since the restart ({len(cold)} games): "
        f"median {statistics.median(cold) * 1000:.1f} ms, max {cold[-1] * 1000:.1f} ms"
    )


def main() -> None:
    """Parse the options and run."""
    parser = argparse.ArgumentParser(
        prog="python -m bench.restart", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--games", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--database",
        choices=("sqlite", "postgres"),
        default="sqlite",
        help="the bot's database (postgres: a PostgreSQL 15 started for the run, fsync on)",
    )
    parser.add_argument("--shards", type=int, default=1, help="the bot's shards (KRIG_SHARD_COUNT)")
    parser.add_argument(
        "--processes", type=int, default=1, help="bot processes, each with its share of the shards"
    )
    parser.add_argument(
        "--identify-seconds",
        type=float,
        default=0.2,
        help="the pause between identifies in one bucket, the stand-in's and the bots' "
        "(KRIG_IDENTIFY_SECONDS; Discord's is 5)",
    )
    parser.add_argument(
        "--max-concurrency",
        type=int,
        default=1,
        help="identify buckets, as GET /gateway/bot says (Discord gives 16 and more to large bots)",
    )
    parser.add_argument(
        "--logs",
        type=Path,
        help="a folder for each process's log (bot-SHARDS.log, at INFO), to see where time goes",
    )
    parser.add_argument(
        "--env",
        type=lambda text: dict([text.split("=", 1)]),
        help="one more setting for the bot, e.g. KRIG_RENDER_PROCESSES=0",
    )
    asyncio.run(run(parser.parse_args()))


if __name__ == "__main__":
    main()
