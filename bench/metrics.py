"""What counting costs a flip: ``python -m bench.metrics``.

A flip through the bot updates five figures: its interaction's outcome, its reply time (by the
HTTP session's middleware), the rounds played, and the write's commit time and batch size. This
times exactly those updates on the bot's own :class:`~krigbot.monitoring.Metrics`, many times
over, and prints the cost per flip beside what a durable flip costs the bot in all
(``python -m bench.bot``).
Nothing here asserts; it prints figures.
"""

from __future__ import annotations

import argparse
import statistics
import timeit

from krigbot.monitoring import Metrics


def one_flip(metrics: Metrics) -> None:
    """Update the figures one /flip updates."""
    metrics.interaction("/flip", "answered")
    metrics.reply_seconds.observe(0.004)
    metrics.rounds.inc(1)
    metrics.commit_seconds.observe(0.0004)
    metrics.batch_size.observe(1)


def main() -> None:
    """Parse the options and run."""
    parser = argparse.ArgumentParser(
        prog="python -m bench.metrics", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--flips", type=int, default=100_000, help="flips per measurement")
    parser.add_argument("--repeats", type=int, default=7, help="measurements")
    args = parser.parse_args()
    metrics = Metrics()
    runs = timeit.repeat(lambda: one_flip(metrics), number=args.flips, repeat=args.repeats)
    per_flip = [run / args.flips * 1e6 for run in runs]
    print(
        f"counting one flip: median {statistics.median(per_flip):.2f} µs "
        f"(range {min(per_flip):.2f}–{max(per_flip):.2f} µs over {args.repeats} runs of "
        f"{args.flips:,} flips)"
    )


if __name__ == "__main__":
    main()
