"""Print how long the pictures take to render and how big they are.

    python -m bench.render

Table pictures are measured on rounds not drawn before (as in a game: the title and the footer
are new text each round) after a warm-up that fills the card cache; the first picture of a fresh
process, which draws every card it shows, is reported apart.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable, Sequence

from krigbot.engine import Game, Round, Rules
from krigbot.render.chart import render_chart
from krigbot.render.table import render_round

NAMES = ("Ingrid", "Bjørn", "Åsa", "Dag")
TABLE_SAMPLES = 300
CHART_REPEATS = 15


def rounds_of(rules: Rules, count: int, wanted: Callable[[Round], bool]) -> list[Round]:
    """Return the first ``count`` wanted rounds of seeded games."""
    found: list[Round] = []
    seed = 0
    while len(found) < count:
        game = Game.new(rules, seed)
        while not game.finished and len(found) < count:
            played = game.play_round()
            if wanted(played):
                found.append(played)
        seed += 1
    return found


def game_history(rules: Rules, *, at_least: int) -> tuple[list[tuple[int, ...]], list[int]]:
    """Return the counts and war rounds of the first seeded game at least this long."""
    seed = 0
    while True:
        game = Game.new(rules, seed)
        history = [game.counts]
        wars = []
        while not game.finished:
            played = game.play_round()
            history.append(played.counts)
            if played.is_war:
                wars.append(played.number)
        if len(history) > at_least:
            return history, wars
        seed += 1


def measure(render: Callable[[], bytes], repeats: int) -> tuple[float, float, float]:
    """Return the median and 90th percentile in ms and the median size in KB."""
    times, sizes = [], []
    for _ in range(repeats):
        start = time.perf_counter()
        png = render()
        times.append((time.perf_counter() - start) * 1000)
        sizes.append(len(png) / 1024)
    times.sort()
    return statistics.median(times), times[int(len(times) * 0.9)], statistics.median(sizes)


def bench_rounds(label: str, rounds: Sequence[Round], players: int, teams: bool = False) -> None:
    """Print the figures for drawing each round once."""
    names = NAMES[:players]
    total = sum(rounds[0].counts)
    warm, measured = rounds[:40], list(rounds[40:])
    for played in warm:
        render_round(played, names, "nb", total_cards=total, teams=teams)
    queue = iter(measured)

    def next_round() -> bytes:
        return render_round(next(queue), names, "nb", total_cards=total, teams=teams)

    median, p90, size = measure(next_round, len(measured))
    print(f"{label:<34} median {median:6.1f} ms   p90 {p90:6.1f} ms   {size:5.1f} KB")


def bench_chart(history: Sequence[Sequence[int]], wars: Sequence[int]) -> None:
    """Print the figures for a game's chart."""
    label = f"chart, {len(history) - 1} rounds, {len(wars)} wars"
    median, p90, size = measure(
        lambda: render_chart(history, NAMES[:2], "nb", wars=wars, title="#1"), CHART_REPEATS
    )
    print(f"{label:<34} median {median:6.1f} ms   p90 {p90:6.1f} ms   {size:5.1f} KB")


def main(argv: Sequence[str] | None = None) -> None:
    """Run every measurement and print the figures."""
    argparse.ArgumentParser(
        prog="python -m bench.render", description=__doc__.splitlines()[0]
    ).parse_args(argv)
    standard = Rules.preset("standard")
    plain = rounds_of(standard, TABLE_SAMPLES, lambda r: not r.is_war)
    start = time.perf_counter()
    render_round(plain[0], NAMES[:2], "nb", total_cards=52)
    print(f"{'first picture (cold caches)':<34} {((time.perf_counter() - start) * 1000):6.1f} ms")
    bench_rounds("round, 2 players, no war", plain, 2)
    bench_rounds("round, 2 players, war", rounds_of(standard, TABLE_SAMPLES, lambda r: r.is_war), 2)
    bench_rounds(
        "round, 4 players (any)",
        rounds_of(Rules.preset("standard", players=4), TABLE_SAMPLES, lambda r: True),
        4,
    )
    bench_rounds(
        "round, teams (any)", rounds_of(Rules.preset("lag"), TABLE_SAMPLES, lambda r: True), 4, True
    )
    history, wars = game_history(standard, at_least=1000)
    bench_chart(history, wars)
    # A 2,000-round game is rare; the same game twice over measures the same work.
    offset = len(history) - 1
    bench_chart(history + history[1:], wars + [w + offset for w in wars])


if __name__ == "__main__":
    main()
