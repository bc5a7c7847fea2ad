"""Krigbot's Steal War policy against the default of rules §10 (run: python -m bench.policy).

Every deal is played once with Krigbot in each seat (the seats alternate, the seeds are fixed:
deal ``first_seed + i``), the other seats making every choice by the default. Prints Krigbot's
win rate with a 95 % Wilson interval; ``--policy default`` puts the default in Krigbot's seat
too, the control that shows what the seat alone is worth. Nothing here asserts.
"""

from __future__ import annotations

import argparse
import math
import time
from dataclasses import dataclass

from krigbot.engine import Rules
from krigbot.engine.policy import play_against_default

Z95 = 1.959964
"""The normal quantile of a two-sided 95 % interval."""


@dataclass(frozen=True, slots=True)
class Tally:
    """Krigbot's results over a run of games."""

    games: int
    wins: int
    draws: int

    @property
    def losses(self) -> int:
        """Return the games Krigbot lost."""
        return self.games - self.wins - self.draws


def run(rules: Rules, deals: int, first_seed: int, *, policy: bool = True) -> Tally:
    """Play every deal once with Krigbot in each seat; return Krigbot's tally."""
    wins = draws = 0
    for seed in range(first_seed, first_seed + deals):
        for seat in range(rules.players):
            outcome = play_against_default(rules, seed, seat, krigbot=policy)
            wins += seat in outcome.winners
            draws += seat in outcome.drawn
    return Tally(deals * rules.players, wins, draws)


def wilson(successes: int, trials: int, z: float = Z95) -> tuple[float, float]:
    """Return the Wilson score interval of a proportion."""
    p = successes / trials
    centre = (p + z * z / (2 * trials)) / (1 + z * z / trials)
    half = z / (1 + z * z / trials) * math.sqrt(p * (1 - p) / trials + z * z / (4 * trials**2))
    return centre - half, centre + half


def main(argv: list[str] | None = None) -> None:
    """Run the bench and print Krigbot's win rate."""
    parser = argparse.ArgumentParser(
        prog="python -m bench.policy", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--games", type=int, default=10_000, help="games in all (default 10000)")
    parser.add_argument("--players", type=int, choices=(2, 3, 4), default=2)
    parser.add_argument("--first-seed", type=int, default=0)
    parser.add_argument("--policy", choices=("krigbot", "default"), default="krigbot")
    args = parser.parse_args(argv)
    rules = Rules.preset("stjel", players=args.players)
    deals = max(1, args.games // args.players)
    started = time.perf_counter()
    tally = run(rules, deals, args.first_seed, policy=args.policy == "krigbot")
    elapsed = time.perf_counter() - started
    low, high = wilson(tally.wins, tally.games)
    print(
        f"Steal War, {args.players} players, {args.policy} in one seat against the default: "
        f"{tally.games} games (seeds {args.first_seed}..{args.first_seed + deals - 1}, "
        f"every seat once per deal)"
    )
    print(f"wins {tally.wins}, draws {tally.draws}, losses {tally.losses}")
    print(
        f"win rate {tally.wins / tally.games:.1%}, 95 % interval {low:.1%} to {high:.1%} "
        f"(one seat's fair share: {1 / args.players:.1%}); {elapsed:.1f} s"
    )


if __name__ == "__main__":
    main()
