"""Command line over the engine: play one deal, or simulate many games.

    python -m krigbot.sim play --deal deal.json --variant klassisk --set pickup=table --trace
    python -m krigbot.sim play --seed 42 --variant standard --players 3
    python -m krigbot.sim stats --variant klassisk --games 10000 --seed 1 --jobs 2
    python -m krigbot.sim pairings --format knockout --players 5 --seed 7

Output is one JSON object on stdout. Bad input prints one line on stderr and exits with 2.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn

from .engine import (
    OPTIONS,
    RULE_OPTION_KEYS,
    EngineError,
    Round,
    Rules,
    Variant,
    card_code,
    new_game,
    parse_cards,
)
from .engine.tournament import FORMATS, TournamentError, next_round, start


class UsageError(Exception):
    """Bad input on the command line: reported as one line, exit status 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise UsageError(message)


def build_rules(variant: str, players: int | None, settings: Sequence[str]) -> Rules:
    """Return the rules of a variant with ``KEY=VALUE`` settings applied."""
    overrides: dict[str, Any] = {}
    settable = {option.key: option for option in OPTIONS if not option.chosen_apart}
    for item in settings:
        key, sep, value = item.partition("=")
        key = key.strip()
        if not sep:
            raise UsageError(f"--set takes KEY=VALUE, not {item!r}")
        option = settable.get(key)
        if option is None:
            raise UsageError(f"unknown option {key!r} (known: {', '.join(settable)})")
        if option.needs_clock:
            # rules §7: only whoever runs the game with a clock can end it when the time is up.
            raise UsageError(
                f"{key} needs a clock and sim has none: use max_rounds=N to count the cards"
                " after N rounds"
            )
        overrides[key] = option.parse(value)
    return Rules.preset(variant, players=players, **overrides)


def play_command(rules: Rules, seed: int) -> str:
    """Return the command line that deals and plays a game of these rules from this seed.

    The inverse of :func:`build_rules`: anyone can run it and get the bot's result.

    >>> play_command(Rules.preset("klassisk"), 42)
    'python -m krigbot.sim play --seed 42 --variant klassisk'
    >>> play_command(Rules.preset("standard", players=3, max_rounds=100, pickup="table"), 7)
    '... --variant standard --players 3 --set pickup=table --set max_rounds=100'
    """
    name = rules.preset_name
    words = ["python", "-m", "krigbot.sim", "play", "--seed", str(seed), "--variant", name]
    if rules.players != Rules.preset(name).players:
        words += ["--players", str(rules.players)]
    base = Rules.preset(name, players=rules.players)
    for key in RULE_OPTION_KEYS:
        value = getattr(rules, key)
        if value != getattr(base, key):
            text = "none" if value is None else str(value).lower()
            words += ["--set", f"{key}={text}"]
    return " ".join(words)


def load_deal(path: str) -> list[list[int]]:
    """Read a deal file: JSON ``{"piles": [["KS", "4D", ...], ...]}``, top card first."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise UsageError(f"cannot read deal file {path}: {exc.strerror or exc}") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise UsageError(f"deal file {path} is not valid JSON: {exc}") from None
    piles = data.get("piles") if isinstance(data, dict) else None
    if not isinstance(piles, list) or not all(
        isinstance(pile, list) and all(isinstance(code, str) for code in pile) for pile in piles
    ):
        raise UsageError(f'deal file {path} must hold {{"piles": [["KS", "4D", ...], ...]}}')
    return [parse_cards(pile) for pile in piles]


def summary(game: Variant) -> dict[str, Any]:
    """Return the result of a finished game as the `play` command prints it."""
    outcome = game.outcome
    assert outcome is not None
    return {
        "result": "draw" if outcome.is_draw else "win",
        "winner": outcome.winners[0] if outcome.winners else None,
        "winners": list(outcome.winners),
        "reason": outcome.reason,
        "rounds": outcome.rounds,
        "war_rounds": game.war_rounds,
        "war_steps": game.war_steps,
        "counts": list(game.counts),
        "seed": game.seed,
        "rules": game.rules.to_dict(),
    }


def trace_entry(played: Round) -> dict[str, Any]:
    """Return one round of ``--trace``."""
    return {
        "round": played.number,
        "winner": played.winner,
        "cards": played.taken,
        "war_steps": len(played.war_steps),
        "counts": list(played.counts),
        "battle": [card_code(card) for _, card in played.battle],
    }


def play(args: argparse.Namespace) -> dict[str, Any]:
    """Play one game from a deal file or a seed and return its summary."""
    if (args.deal is None) == (args.seed is None):
        raise UsageError("play needs exactly one of --deal FILE or --seed N")
    if args.deal is not None:
        piles = load_deal(args.deal)
        if not 2 <= len(piles) <= 4:
            raise UsageError(f"a deal has 2 to 4 piles, not {len(piles)}")
        rules = build_rules(args.variant, len(piles), args.set)
        game = new_game(rules, 0, piles=piles)
    else:
        rules = build_rules(args.variant, args.players, args.set)
        game = new_game(rules, args.seed)
    trace: list[dict[str, Any]] = []
    if args.trace:
        while game.outcome is None:
            trace.append(trace_entry(game.play_round()))
    else:
        game.play_to_end()
    result = summary(game)
    if args.trace:
        result["trace"] = trace
    return result


@dataclass(frozen=True, slots=True)
class _GameStats:
    rounds: int
    war_rounds: int
    eternal: bool
    winners: tuple[int, ...]


def _simulate(rules: Rules, seeds: range) -> list[_GameStats]:
    results = []
    for seed in seeds:
        game = new_game(rules, seed)
        outcome = game.play_to_end()
        results.append(
            _GameStats(
                outcome.rounds, game.war_rounds, outcome.reason == "eternal", outcome.winners
            )
        )
    return results


def _percentile(sorted_values: list[int], fraction: float) -> float:
    if len(sorted_values) == 1:
        return float(sorted_values[0])
    return statistics.quantiles(sorted_values, n=100, method="inclusive")[round(fraction * 100) - 1]


def stats(args: argparse.Namespace) -> dict[str, Any]:
    """Simulate many games (game ``i`` uses seed ``S + i``) and summarise them."""
    if args.games < 1:
        raise UsageError("--games must be at least 1")
    jobs = args.jobs or 1
    if jobs < 1:
        raise UsageError("--jobs must be at least 1")
    rules = build_rules(args.variant, args.players, args.set)
    chunk = max(1, min(2000, args.games // (jobs * 8) or 1))
    chunks = [
        range(start, min(start + chunk, args.seed + args.games))
        for start in range(args.seed, args.seed + args.games, chunk)
    ]
    results: list[_GameStats] = []
    started = time.perf_counter()
    progress = _progress(args.games)
    if jobs == 1:
        for seeds in chunks:
            results.extend(_simulate(rules, seeds))
            progress(len(seeds))
    else:
        with ProcessPoolExecutor(max_workers=jobs) as pool:
            for part in pool.map(_simulate, [rules] * len(chunks), chunks):
                results.extend(part)
                progress(len(part))
    progress(0, close=True)
    elapsed = time.perf_counter() - started
    rounds = sorted(r.rounds for r in results)
    wins = [0] * rules.players
    draws = 0
    for r in results:
        if not r.winners:
            draws += 1
        for seat in r.winners:
            wins[seat] += 1
    return {
        "games": len(results),
        "rules": rules.to_dict(),
        "mean_rounds": round(statistics.fmean(rounds), 2),
        "median_rounds": statistics.median(rounds),
        "p90_rounds": _percentile(rounds, 0.90),
        "p99_rounds": _percentile(rounds, 0.99),
        "max_rounds": rounds[-1],
        "war_rounds_per_game": round(statistics.fmean(r.war_rounds for r in results), 3),
        "eternal_fraction": round(sum(r.eternal for r in results) / len(results), 4),
        "wins": wins,
        "draws": draws,
        "games_per_second": round(len(results) / elapsed, 1) if elapsed > 0 else None,
    }


class _Progress:
    """A tqdm bar on a terminal that shows itself only when the run takes more than a moment."""

    def __init__(self, total: int) -> None:
        self._bar: Any = None
        if sys.stderr.isatty():
            from tqdm import tqdm

            self._bar = tqdm(total=total, unit="game", delay=0.5, file=sys.stderr)

    def __call__(self, done: int, *, close: bool = False) -> None:
        if self._bar is None:
            return
        self._bar.update(done)
        if close:
            self._bar.close()


def _progress(total: int) -> _Progress:
    return _Progress(total)


def make_parser() -> argparse.ArgumentParser:
    """Return the command-line parser."""
    parser = _Parser(prog="python -m krigbot.sim", description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    def common(sub: argparse.ArgumentParser) -> None:
        sub.add_argument("--variant", default="standard", help="a preset of rules §11")
        sub.add_argument(
            "--set", action="append", default=[], metavar="KEY=VALUE", help="change an option"
        )
        sub.add_argument("--players", type=int, default=None, help="2, 3 or 4 seats")

    play_parser = commands.add_parser("play", help="play one game and print its result")
    play_parser.add_argument("--deal", help='JSON file {"piles": [[...], ...]}, top card first')
    play_parser.add_argument("--seed", type=int, help="deal from this seed instead")
    play_parser.add_argument("--trace", action="store_true", help="add every round")
    common(play_parser)

    stats_parser = commands.add_parser("stats", help="simulate many games")
    stats_parser.add_argument("--games", type=int, required=True)
    stats_parser.add_argument("--seed", type=int, required=True, help="game i uses seed+i")
    stats_parser.add_argument(
        "--jobs", type=int, default=1, help=f"processes to use (this machine: {os.cpu_count()})"
    )
    common(stats_parser)

    pairings_parser = commands.add_parser(
        "pairings", help="a tournament's seeding and first round, from its seed"
    )
    pairings_parser.add_argument("--format", choices=FORMATS, default="knockout")
    pairings_parser.add_argument(
        "--players", type=int, required=True, help="how many signed up (numbered 1, 2, ...)"
    )
    pairings_parser.add_argument("--seed", type=int, required=True, help="the bracket's seed")
    return parser


def pairings(args: argparse.Namespace) -> dict[str, Any]:
    """Return a tournament's seeding and first round; players are their sign-up places."""
    try:
        bracket = next_round(start(args.format, range(1, args.players + 1), args.seed))
    except TournamentError as exc:
        raise UsageError(str(exc)) from None
    return {
        "format": bracket.format,
        "seed": bracket.seed,
        "rounds": bracket.total_rounds,
        "seeding": list(bracket.players),
        "round_1": [[pairing.a, pairing.b] for pairing in bracket.current],
    }


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit status."""
    try:
        args = make_parser().parse_args(argv)
        run = {"play": play, "stats": stats, "pairings": pairings}[args.command]
        result = run(args)
    except (UsageError, EngineError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    json.dump(result, sys.stdout, ensure_ascii=False)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
