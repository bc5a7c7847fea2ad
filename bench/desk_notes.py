"""Print what the Activity's answers weigh when another process of the bot sends them back.

    python -m bench.desk_notes [--seeds N]

Every look of every seat after every battle of N 4-player Steal War deals, in every language,
with display names as long as Discord's (32 characters of four bytes each) and room for a
choice's line of what was done: the heaviest and the median answer note, beside PostgreSQL's
limit on a notification (under 8000 bytes; the bot sends at most ``NOTE_BYTES``).
"""

from __future__ import annotations

import argparse
import statistics

from krigbot.adapter.forwarding import NOTE_BYTES
from tests.support.desk_notes import steal_war_answers


def main() -> None:
    parser = argparse.ArgumentParser(
        prog="python -m bench.desk_notes", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--seeds", type=int, default=20)
    seeds = parser.parse_args().seeds
    notes = list(steal_war_answers(seeds))
    sizes = [len(note.encode()) for note in notes if note is not None]
    print(f"{len(notes)} answers of {seeds} deals")
    print(f"heaviest {max(sizes)} bytes, median {statistics.median(sizes):.0f} bytes")
    print(f"too heavy for a note: {len(notes) - len(sizes)} (the most sent: {NOTE_BYTES} bytes)")


if __name__ == "__main__":
    main()
