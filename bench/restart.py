"""Restart with many running games in the database: ``python -m bench.restart``.

Fills a database with N running games (valid engine states, a few rounds in, spread over many
servers and channels, as a busy bot leaves them), starts ``python bot.py`` against the Discord
stand-in and prints, from the moment the process is started:

- when the gateway session is READY (the bot can receive interactions),
- when the first ``/flip`` is answered, and when the first ``/krig status`` is,
- how long flips in games nobody has touched since the restart take to answer.

Target: ready to answer within 2 seconds with 10,000 running games.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import sqlite3
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

from krigbot.engine import Game, Rules
from krigbot.storage import Storage
from krigbot.storage.models import encode_json, encode_time
from tests.standin import BotCrashed, Channel, DiscordStandIn, User

ROOT = Path(__file__).resolve().parent.parent
CHANNELS_PER_GUILD = 100


def fill(db: Path, tables: list[tuple[Channel, User, User]], seed: int) -> None:
    """Write one running game per table straight into the database (one transaction)."""
    rules = Rules.preset("standard")
    rules_json = encode_json(rules.to_dict())
    now = encode_time(datetime.now(UTC))
    rng = random.Random(seed)
    rows = []
    for channel, alice, bob in tables:
        game_seed = rng.getrandbits(63)
        game = Game.new(rules, game_seed)
        for _ in range(rng.randrange(0, 40)):
            if game.outcome is not None:
                break
            game.play_round()
        if game.outcome is not None:  # rare; start that one afresh
            game = Game.new(rules, game_seed)
        assert channel.guild is not None
        players = [alice.id, bob.id]
        rows.append(
            (
                channel.guild.id,
                channel.id,
                alice.id,
                rules_json,
                game_seed,
                json.dumps(players),
                json.dumps([alice.display_name, bob.display_name]),
                json.dumps(players),
                encode_json(game.to_dict()),
                game.round,
                now,
                now,
                now,
            )
        )
    with sqlite3.connect(db) as conn:
        conn.executemany(
            "INSERT INTO games (guild_id, channel_id, challenger_id, status, variant, rules, seed, "
            "players, names, accepted, state, round, created_at, updated_at, last_activity_at) "
            "VALUES (?, ?, ?, 'running', 'standard', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            rows,
        )


async def answered_at(record: object, started: float) -> float:
    """Return seconds from process start to the interaction's first response."""
    response = await record.response(timeout=60)  # type: ignore[attr-defined]
    return response.received_at - started  # type: ignore[no-any-return]


async def run(args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        db = workdir / "krig.db"
        async with DiscordStandIn() as standin:
            # Servers of 100 channels, each with a game between two of its 10 regulars (a player
            # may play in several channels at once): the size of what Discord sends at start-up
            # stays realistic, and every game is in a channel of its own.
            tables: list[tuple[Channel, User, User]] = []
            for g in range(-(-args.games // CHANNELS_PER_GUILD)):
                guild = standin.add_guild(f"Server {g}", locale="nb")
                regulars = [
                    standin.add_user(f"p{g}-{n}", f"Player {g}-{n}", locale="nb") for n in range(10)
                ]
                for user in regulars:
                    standin.add_member(guild, user)
                for n in range(min(CHANNELS_PER_GUILD, args.games - len(tables))):
                    alice, bob = regulars[n % 10], regulars[(n + 1 + n // 10 % 9) % 10]
                    tables.append((standin.add_channel(guild, f"krig-{n}"), alice, bob))
            storage = await Storage.open(db)
            await storage.close()
            fill(db, tables, args.seed)
            print(
                f"{args.games} running games in {len(standin.guilds)} servers, "
                f"{db.stat().st_size / 2**20:.1f} MiB"
            )

            env = standin.subprocess_env()
            env.update(DISCORD_TOKEN="bench-token", KRIG_DB=str(db), LOG_LEVEL="WARNING")
            env.update(args.env or {})
            started = time.perf_counter()
            proc = await asyncio.create_subprocess_exec(
                sys.executable,
                str(ROOT / "bot.py"),
                env=env,
                cwd=workdir,
                stdout=asyncio.subprocess.DEVNULL,
                stderr=asyncio.subprocess.DEVNULL,
            )
            watcher = asyncio.create_task(proc.wait())
            standin.watch_task(watcher)
            try:
                await standin.wait_for_ready(timeout=120)
                ready_after = time.perf_counter() - started
                rng = random.Random(args.seed + 1)
                first, second = rng.sample(tables, 2)
                flip = await standin.slash("flip", user=first[1], channel=first[0])
                status = await standin.slash("krig status", user=second[2], channel=second[0])
                flip_after = await answered_at(flip, started)
                status_after = await answered_at(status, started)
                # Games nobody touched since the restart, one at a time.
                cold = []
                for channel, alice, _ in rng.sample(tables, min(200, args.games)):
                    record = await standin.slash("flip", user=alice, channel=channel)
                    response = await record.response(timeout=30)
                    assert response.embeds, response.content
                    cold.append(response.latency)
            except BotCrashed as exc:
                raise SystemExit(f"the bot did not start: {exc}") from None
            finally:
                standin.unwatch_task(watcher)
                watcher.cancel()
                if proc.returncode is None:
                    proc.terminate()
                    await proc.wait()
    cold.sort()
    print(f"from process start: gateway READY after {ready_after:.2f} s")
    print(
        f"  first /flip answered after {flip_after:.2f} s, "
        f"first /krig status after {status_after:.2f} s"
    )
    print("  (target: ready to answer within 2 s)")
    print(
        f"first flip in a game untouched since the restart ({len(cold)} games): "
        f"median {statistics.median(cold) * 1000:.1f} ms, max {cold[-1] * 1000:.1f} ms"
    )


def main() -> None:
    """Parse the options and run."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--env",
        type=lambda text: dict([text.split("=", 1)]),
        help="one more setting for the bot, e.g. KRIG_RENDER_PROCESSES=0",
    )
    asyncio.run(run(parser.parse_args()))


if __name__ == "__main__":
    main()
