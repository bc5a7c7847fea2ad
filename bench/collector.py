"""A bot with its garbage collector timed: ``python -m bench.collector FILE bot.py``.

``python -m bench.bot --collector`` starts the bot this way, and ``bench.floor --collector``
times its bare bot the same way: every collection's generation and the CPU time it took are
added up and written to FILE (JSON) after each one, so that the bench reads the totals before
and after its load phase. Nothing here asserts; the bench prints the figures.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import runpy
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass(slots=True)
class Collections:
    """Collections made so far, and their CPU seconds, by generation."""

    made: list[int] = field(default_factory=lambda: [0, 0, 0])
    seconds: list[float] = field(default_factory=lambda: [0.0, 0.0, 0.0])

    @classmethod
    def read(cls, path: Path) -> Collections:
        """Read the totals a timed process wrote (none yet: all zero)."""
        try:
            saved = json.loads(path.read_text())
        except FileNotFoundError:
            return cls()
        return cls(saved["made"], saved["seconds"])

    def since(self, before: Collections) -> Collections:
        """Return the collections made after ``before``."""
        return Collections(
            [a - b for a, b in zip(self.made, before.made, strict=True)],
            [a - b for a, b in zip(self.seconds, before.seconds, strict=True)],
        )


def time_collections(path: Path) -> None:
    """Time every collection of this process from now on, writing the totals to ``path``."""
    totals = Collections()
    started = 0.0
    scratch = path.with_suffix(".writing")

    def timed(phase: str, info: dict[str, Any]) -> None:
        nonlocal started
        if phase == "start":
            started = time.thread_time()  # the collector runs in the thread that triggered it
            return
        totals.made[info["generation"]] += 1
        totals.seconds[info["generation"]] += time.thread_time() - started
        scratch.write_text(json.dumps({"made": totals.made, "seconds": totals.seconds}))
        os.replace(scratch, path)  # whole, for a reader at any moment

    gc.callbacks.append(timed)


def describe(collected: Collections, answers: int, cpu_per_answer_ms: float) -> str:
    """Say what the collector cost over a load phase of ``answers`` answers."""
    per_answer = sum(collected.seconds) / max(answers, 1) * 1000
    made = ", ".join(f"{n} of generation {g}" for g, n in enumerate(collected.made))
    share = per_answer / cpu_per_answer_ms if cpu_per_answer_ms else 0.0
    return (
        f"garbage collector: {made}; {per_answer:.3f} ms of CPU an answer "
        f"({share:.0%} of the bot's)"
    )


def main() -> None:
    """Time the collections of the script named after the file, then run it as __main__."""
    parser = argparse.ArgumentParser(
        prog="python -m bench.collector", description=__doc__.splitlines()[0]
    )
    parser.add_argument("file", type=Path, help="where the totals are written (JSON)")
    parser.add_argument("script", help="the program to run, such as bot.py")
    parser.add_argument("arguments", nargs=argparse.REMAINDER, help="the program's own")
    args = parser.parse_args()
    time_collections(args.file)
    sys.argv = [args.script, *args.arguments]
    runpy.run_path(args.script, run_name="__main__")


if __name__ == "__main__":
    main()
