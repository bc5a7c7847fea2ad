"""What discord.py alone costs per interaction here: ``python -m bench.floor``.

Runs a bare discord.py bot (no game, no database, no translation: ``/flip`` answers with one
fixed embed and one button, about the size of Krigbot's table) against the same stand-in, with
the same load as ``bench.bot``: many channels each sending ``/flip`` as soon as its previous
reply arrived. Prints the replies per second and the CPU each side used, so Krigbot's own
figure can be read as a share of what the library allows on this machine.

``python -m bench.floor --serve`` is the bare bot itself (started by the benchmark).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
from pathlib import Path

import discord
from discord import app_commands

from bench.bot import ROOT, Bench, measured, ms
from bench.collector import Collections, describe, time_collections
from tests.standin import BotCrashed, Channel, DiscordStandIn, User


def serve(collections: Path | None) -> None:
    """Run the bare bot: one /flip command answering with a fixed table-sized embed."""
    if collections is not None:
        time_collections(collections)
    client = discord.Client(intents=discord.Intents.default())
    tree = app_commands.CommandTree(client)
    embed = discord.Embed(title="Round 12", description="Alice ♠K vs Bob ♥7\nAlice takes 2 cards")
    embed.add_field(name="Alice", value="██████████░░░░ 30", inline=False)
    embed.add_field(name="Bob", value="██████░░░░░░░░ 22", inline=False)
    allowed = discord.AllowedMentions.none()

    @tree.command(name="flip", description="Flip")
    async def flip(interaction: discord.Interaction) -> None:
        view = discord.ui.View(timeout=None)
        view.add_item(discord.ui.Button(label="Flip", custom_id=f"krig:flip:1:{time.time_ns()}"))
        await interaction.response.send_message(embed=embed, view=view, allowed_mentions=allowed)

    async def setup_hook() -> None:
        await tree.sync()

    client.setup_hook = setup_hook  # type: ignore[method-assign]
    client.run(os.environ["DISCORD_TOKEN"], log_handler=None)


async def run(args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        # Bodies are checked against Discord's schema in the tests; here it would take the
        # stand-in's core from the figures (about 0.8 ms of CPU a flip).
        async with DiscordStandIn(check_bodies=False) as standin:
            bench = Bench(standin, Path(tmp), images=False)
            env = standin.subprocess_env()
            env.update(DISCORD_TOKEN="bench-token", PYTHONPATH=f"{ROOT}:{env['PYTHONPATH']}")
            if args.collector is not None:
                bench.collections = Path(tmp) / "collections.json"
            timed = [] if bench.collections is None else ["--collector", str(bench.collections)]
            bench.proc = await asyncio.create_subprocess_exec(
                sys.executable,
                "-m",
                "bench.floor",
                "--serve",
                *timed,
                env=env,
                cwd=ROOT,
                stdout=asyncio.subprocess.DEVNULL,
                stderr=asyncio.subprocess.DEVNULL,
            )
            try:
                try:
                    await standin.wait_for_ready(timeout=60)
                except BotCrashed as exc:
                    raise SystemExit(f"the bare bot did not start: {exc}") from None
                await measure(bench, args)
            finally:
                await bench.stop_bot()


async def measure(bench: Bench, args: argparse.Namespace) -> None:
    assert bench.proc is not None
    tables = [bench.pair(i) for i in range(args.games)]
    answered = 0
    latencies: list[float] = []
    deadline = time.perf_counter() + args.warm_up  # every channel flips, as in bench.bot

    async def player(channel: Channel, alice: User) -> None:
        nonlocal answered
        while time.perf_counter() < deadline:
            latency, ok = await bench.flip(channel, alice)
            if not ok:
                raise SystemExit("the bare bot did not answer with an embed")
            answered += 1
            latencies.append(latency)

    if args.warm_up:
        await asyncio.gather(*(player(channel, alice) for channel, alice, _ in tables))
    answered = 0
    latencies.clear()
    deadline = time.perf_counter() + args.seconds
    collected = None if bench.collections is None else Collections.read(bench.collections)
    phase = await measured(
        bench.proc.pid, asyncio.gather(*(player(channel, alice) for channel, alice, _ in tables))
    )
    if bench.collections is not None and collected is not None:
        collected = Collections.read(bench.collections).since(collected)
    latencies.sort()
    print(
        f"bare discord.py bot, {args.games} channels at once: {answered / phase.elapsed:.0f} "
        f"replies/s over {phase.elapsed:.1f} s (median reply {ms(latencies, 0.5):.1f} ms, "
        f"p99 {ms(latencies, 0.99):.1f} ms)"
    )
    per_reply = phase.elapsed / answered * 1000
    print(
        f"   CPU busy: bot process {phase.bot_share:.0%} "
        f"({phase.bot_share * per_reply:.2f} ms per reply), "
        f"stand-in and driver {phase.own_share:.0%} ({phase.own_share * per_reply:.2f} ms)"
    )
    if collected is not None:
        print(f"   {describe(collected, answered, phase.bot_share * per_reply)}")


def main() -> None:
    """Parse the options and run (or serve the bare bot)."""
    parser = argparse.ArgumentParser(
        prog="python -m bench.floor", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--serve", action="store_true", help="run the bare bot (internal)")
    parser.add_argument(
        "--collector",
        nargs="?",
        const="",
        metavar="FILE",
        help="time the bare bot's garbage collector and print its cost a reply (bench.collector)",
    )
    parser.add_argument("--games", type=int, default=200, help="channels flipping at once")
    parser.add_argument("--seconds", type=float, default=10.0, help="length of the load phase")
    parser.add_argument(
        "--warm-up",
        type=float,
        default=1.0,
        metavar="SECONDS",
        help="seconds every channel flips before the load phase's clocks start",
    )
    args = parser.parse_args()
    if args.serve:
        serve(Path(args.collector) if args.collector else None)
    else:
        asyncio.run(run(args))


if __name__ == "__main__":
    main()
