"""Engine speed: prints the medians docs/performance.md quotes (run: python -m bench.engine).

Each figure is the median of several repetitions on one core of this machine; nothing here
asserts, it only measures.
"""

from __future__ import annotations

import argparse
import platform
import statistics
import time
from collections.abc import Callable

from krigbot.engine import Game, Rules, run_to_end

REFERENCE_GAMES_PER_SECOND = 1_100
"""A widely shared pure-Python War simulator, measured here (3 down, shuffled pickup)."""

ETERNAL_DEAL = (Rules.preset("standard", pickup="table", decks=2), 171)
"""Two decks, table pickup, seed 171: the first repeated position comes after 34,852 rounds."""


def median_of(repeats: int, measure: Callable[[], float]) -> float:
    """Return the median of ``repeats`` measurements."""
    return statistics.median(measure() for _ in range(repeats))


def whole_games(rules: Rules, games: int, first_seed: int = 0) -> tuple[float, float]:
    """Play whole games on the fast path; return (rounds per second, games per second)."""
    rounds = 0
    started = time.perf_counter()
    for seed in range(first_seed, first_seed + games):
        game = Game.new(rules, seed)
        run_to_end(game)
        rounds += game.round
    elapsed = time.perf_counter() - started
    return rounds / elapsed, games / elapsed


def round_api_us(rules: Rules, games: int) -> float:
    """Return the median time of one ``play_round`` call with its value object, in µs."""
    samples: list[int] = []
    clock = time.perf_counter_ns
    for seed in range(games):
        game = Game.new(rules, seed)
        game.play_round()  # the first round looks ahead for `eternal` once; time the rest
        while not game.finished:
            start = clock()
            game.play_round()
            samples.append(clock() - start)
    return statistics.median(samples) / 1000


def save_restore_us(rules: Rules, games: int) -> float:
    """Return the median time of ``to_dict`` plus ``from_dict`` of a mid-game position, in µs."""
    samples: list[int] = []
    clock = time.perf_counter_ns
    for seed in range(games):
        game = Game.new(rules, seed)
        for _ in range(60):
            if not game.finished:
                game.play_round()
        for _ in range(20):
            start = clock()
            Game.from_dict(game.to_dict())
            samples.append(clock() - start)
    return statistics.median(samples) / 1000


def eternal_ms() -> tuple[float, int]:
    """Return the time to play the eternal deal to its exact end, in ms, and its rounds."""
    rules, seed = ETERNAL_DEAL
    game = Game.new(rules, seed)
    started = time.perf_counter()
    outcome = run_to_end(game)
    elapsed = time.perf_counter() - started
    assert outcome.reason == "eternal"
    return elapsed * 1000, outcome.rounds


def main() -> None:
    """Print every figure."""
    parser = argparse.ArgumentParser(
        prog="python -m bench.engine", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--games", type=int, default=2000, help="games per repetition")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    print(
        f"machine: {platform.processor() or platform.machine()}, Python {platform.python_version()}"
    )
    print(f"median of {args.repeats} repetitions, {args.games} games each, one core\n")

    for name in ("standard", "klassisk"):
        rules = Rules.preset(name)

        def rate(rules: Rules = rules) -> float:
            return whole_games(rules, args.games)[0]

        rounds_per_s = median_of(args.repeats, rate)
        print(f"whole games, {name:<9} {rounds_per_s / 1e6:6.2f} M rounds/s   (target ≥ 1.00)")

    reference = Rules.preset("standard", face_down=3, pickup="shuffled")
    games_per_s = median_of(args.repeats, lambda: whole_games(reference, args.games)[1])
    print(
        f"3 down, shuffled pickup {games_per_s:8.0f} games/s   "
        f"= {games_per_s / REFERENCE_GAMES_PER_SECOND:.1f} × the reference simulator (target ≥ 4)"
    )

    standard = Rules.preset("standard")
    per_round = median_of(args.repeats, lambda: round_api_us(standard, max(20, args.games // 50)))
    print(f"one round, full API        {per_round:6.2f} µs median   (target ≤ 20)")
    save = median_of(args.repeats, lambda: save_restore_us(standard, max(20, args.games // 50)))
    print(f"save + restore, mid-game   {save:6.2f} µs median   (target ≤ 50)")
    eternal = [eternal_ms() for _ in range(args.repeats)]
    print(
        f"eternal deal ({eternal[0][1]:,} rounds) "
        f"{statistics.median(t for t, _ in eternal):6.1f} ms median"
        "   (target ≤ 100)"
    )


if __name__ == "__main__":
    main()
