"""Krigbot beside bare discord.py, in turn: ``python -m bench.compare``.

Runs ``python -m bench.bot --images off`` and ``python -m bench.floor`` one after the other,
``--rounds`` times, so that a machine whose load moves slows both alike, and prints each
round's figures and their ratio (Krigbot's durable flips a second as a share of the bare bot's
replies a second, and the bare bot's CPU a reply as a share of Krigbot's a flip), then the
median and range of each over the rounds.

Nothing here asserts; it prints figures.
"""

from __future__ import annotations

import argparse
import re
import statistics
import subprocess
import sys
from dataclasses import dataclass

from bench.bot import ROOT

FLIPS = re.compile(r"(\d+) durable flips/s")
REPLIES = re.compile(r"(\d+) replies/s")
CPU = re.compile(r"\(([\d.]+) ms per (?:flip|reply)\)")
IDLE = re.compile(r"idle running game: ([\d.]+) KiB")


@dataclass(frozen=True, slots=True)
class Run:
    """One run's figures: answers a second and the bot's CPU an answer."""

    per_second: float
    cpu_ms: float
    idle_kib: float | None


def run(command: list[str]) -> Run:
    """Run a bench and read its figures from what it prints."""
    printed = subprocess.run(
        [sys.executable, "-m", *command], cwd=ROOT, capture_output=True, text=True, check=False
    )
    out = printed.stdout
    rate = FLIPS.search(out) or REPLIES.search(out)
    cpu = CPU.search(out)
    if printed.returncode or rate is None or cpu is None:
        raise SystemExit(f"{' '.join(command)} failed:\n{out}\n{printed.stderr[-3000:]}")
    idle = IDLE.search(out)
    return Run(float(rate[1]), float(cpu[1]), float(idle[1]) if idle else None)


def spread(values: list[float], digits: int = 2) -> str:
    """Return the median and, in brackets, the range of some figures."""
    return (
        f"{statistics.median(values):.{digits}f} "
        f"({min(values):.{digits}f}–{max(values):.{digits}f})"
    )


def main() -> None:
    """Parse the options and run the rounds."""
    parser = argparse.ArgumentParser(
        prog="python -m bench.compare", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--rounds", type=int, default=5, help="runs of each, in turn")
    parser.add_argument("--seconds", type=float, default=10.0, help="length of each load phase")
    parser.add_argument("--games", type=int, default=200, help="channels flipping at once")
    parser.add_argument(
        "--idle-games",
        type=int,
        default=1000,
        help="bench.bot's games for the memory figure (at least --games: they flip later)",
    )
    args = parser.parse_args()
    common = ["--seconds", str(args.seconds), "--games", str(args.games)]
    bot = [
        "bench.bot",
        "--images",
        "off",
        "--flips",
        "100",
        "--idle-games",
        str(max(args.idle_games, args.games)),
        *common,
    ]
    floor = ["bench.floor", *common]
    print(f"{args.rounds} rounds of: python -m {' '.join(bot)}; python -m {' '.join(floor)}")
    shares: list[float] = []
    cpu_shares: list[float] = []
    bots: list[Run] = []
    floors: list[Run] = []
    for number in range(1, args.rounds + 1):
        ours = run(bot)
        bare = run(floor)
        bots.append(ours)
        floors.append(bare)
        shares.append(ours.per_second / bare.per_second)
        cpu_shares.append(bare.cpu_ms / ours.cpu_ms)
        print(
            f"round {number}: Krigbot {ours.per_second:.0f} flips/s ({ours.cpu_ms:.2f} ms a "
            f"flip, idle game {ours.idle_kib} KiB), bare discord.py {bare.per_second:.0f} "
            f"replies/s ({bare.cpu_ms:.2f} ms a reply): {shares[-1]:.0%} of its rate, "
            f"{cpu_shares[-1]:.0%} of its CPU cost",
            flush=True,
        )
    print(f"Krigbot, durable flips/s:       {spread([r.per_second for r in bots], 0)}")
    print(f"bare discord.py, replies/s:     {spread([r.per_second for r in floors], 0)}")
    print(f"Krigbot's rate ÷ the bare bot's, round by round: {spread(shares)}   (target ≥ 0.75)")
    print(f"Krigbot, bot CPU a flip (ms):   {spread([r.cpu_ms for r in bots])}")
    print(f"bare discord.py, CPU a reply:   {spread([r.cpu_ms for r in floors])}")
    print(f"the bare bot's CPU ÷ Krigbot's, round by round: {spread(cpu_shares)}")
    idle = [r.idle_kib for r in bots if r.idle_kib is not None]
    if idle:
        print(f"Krigbot, idle running game (KiB): {spread(idle, 1)}   (target ≤ 20)")


if __name__ == "__main__":
    main()
