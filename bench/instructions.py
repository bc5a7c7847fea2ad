"""Engine cost in instructions: ``python -m bench.instructions [--against REV]``.

Timings on a shared machine move by a third from one run to the next; the number of instructions
the interpreter executes for the same games does not. This plays whole games on the fast path
(the path ``stats`` uses) under valgrind's callgrind and prints instructions per round and per
game for ``standard``, ``klassisk`` and 3 down with shuffled pickup, with the interpreter's
start-up and imports taken off (a run of no games). With ``--against REV`` the same is measured
for a git revision (checked out in a temporary worktree) and the change is printed: the way to
compare two versions of the engine.

Needs ``valgrind`` (Debian package ``valgrind``); the games run some 50 times slower under it.
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
from contextlib import ExitStack
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

RULES = {
    "standard": "Rules.preset('standard')",
    "klassisk": "Rules.preset('klassisk')",
    "3 down, shuffled": "Rules.preset('standard', face_down=3, pickup='shuffled')",
}

PLAY = """
import sys
sys.path.insert(0, sys.argv[1])
from krigbot.engine import Game, Rules, run_to_end
rules, games = {rules}, int(sys.argv[2])
rounds = 0
for seed in range(games):
    game = Game.new(rules, seed)
    run_to_end(game)
    rounds += game.round
print(rounds)
"""

_COLLECTED = re.compile(r"Collected\s*:\s*(\d+)")


def count(tree: Path, rules: str, games: int) -> tuple[int, int]:
    """Return (instructions, rounds) for ``games`` whole games of the engine in ``tree``."""
    done = subprocess.run(
        [
            "valgrind",
            "--tool=callgrind",
            "--callgrind-out-file=/dev/null",
            sys.executable,
            "-c",
            PLAY.format(rules=rules),
            str(tree),
            str(games),
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    found = _COLLECTED.search(done.stderr)
    if found is None:
        raise RuntimeError(f"callgrind printed no count:\n{done.stderr[-2000:]}")
    return int(found.group(1)), int(done.stdout)


def measure(tree: Path, games: int) -> dict[str, tuple[float, float]]:
    """Return instructions per round and per game for each set of rules."""
    figures = {}
    for name, rules in RULES.items():
        idle, _ = count(tree, rules, 0)
        total, rounds = count(tree, rules, games)
        spent = total - idle
        figures[name] = (spent / rounds, spent / games)
    return figures


def worktree(stack: ExitStack, rev: str) -> Path:
    """Check ``rev`` out in a temporary worktree, removed when ``stack`` closes."""
    where = Path(stack.enter_context(tempfile.TemporaryDirectory())) / "tree"
    subprocess.run(
        ["git", "-C", str(ROOT), "worktree", "add", "--detach", "--quiet", str(where), rev],
        check=True,
    )
    stack.callback(
        subprocess.run,
        ["git", "-C", str(ROOT), "worktree", "remove", "--force", str(where)],
        check=False,
    )
    return where


def main() -> None:
    """Print every figure."""
    parser = argparse.ArgumentParser(
        prog="python -m bench.instructions", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--games", type=int, default=300, help="games for each set of rules")
    parser.add_argument("--against", metavar="REV", help="a git revision to compare with")
    args = parser.parse_args()
    if shutil.which("valgrind") is None:
        sys.exit("valgrind is not installed (apt-get install valgrind)")
    print(f"instructions for {args.games} whole games each, start-up taken off\n")
    with ExitStack() as stack:
        now = measure(ROOT, args.games)
        before = measure(worktree(stack, args.against), args.games) if args.against else None
    for name, (per_round, per_game) in now.items():
        line = f"{name:<17} {per_round:8,.0f} a round {per_game:12,.0f} a game"
        if before is not None:
            old_round, old_game = before[name]
            line += (
                f"   {args.against}: {old_round:8,.0f} a round {old_game:12,.0f} a game"
                f"   ({per_game / old_game - 1:+.0%})"
            )
        print(line)


if __name__ == "__main__":
    main()
