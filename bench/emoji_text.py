"""Print how long the tables' text gets with card emojis, and what the emoji set costs.

    python -m bench.emoji_text [--seeds N]

Every preset is played with 2, 3 and 4 players for N seeds; each war is rendered as the table
after its round with an emoji for every card (ids as long as Discord's), and the longest
description and whole embed are printed beside Discord's limits (4,096 and 6,000 characters),
with the same table's length in labels. Then the emoji set: how long it takes to draw, its
version, and the size of its PNGs (Discord takes at most 256 KiB each).
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Sequence
from datetime import UTC, datetime

from krigbot.engine import PRESETS, Rules, RulesError, new_game
from krigbot.render.embeds import round_embed
from krigbot.render.emoji import EMOJI_CARDS, CardFaces, emoji_set
from tests.support.rows import stored_row

NAMES = ("Ingrid", "Bjørn", "Åsa", "Dag")


def every_face() -> CardFaces:
    faces = CardFaces()
    faces.use("0a1b2c", {card: 1_234_567_890_123_456_789 + i for i, card in enumerate(EMOJI_CARDS)})
    return faces


def longest_tables(seeds: int) -> None:
    faces = every_face()
    found: tuple[int, int, int, str] | None = None
    for preset in PRESETS:
        for players in (2, 3, 4):
            try:
                rules = Rules.preset(preset, players=players)
            except RulesError:
                continue
            row = stored_row(rules, range(1, players + 1), NAMES[:players], at=datetime.now(UTC))
            for seed in range(seeds):
                game = new_game(rules, seed)
                while not game.finished and game.round < 2000:
                    played = game.play_round()
                    if not played.war_steps:
                        continue
                    embed = round_embed(row, game, played, "nb", faces=faces)
                    if found is None or len(embed) > found[0]:
                        labels = len(round_embed(row, game, played, "nb"))
                        where = f"{preset}, {players} players, seed {seed}, round {played.number}"
                        found = (len(embed), len(embed.description or ""), labels, where)
    if found is None:
        print("no war in these games")
        return
    total, description, labels, where = found
    print(f"longest table with card emojis: {where}")
    print(f"  description {description:,} of 4,096 characters")
    print(f"  whole embed {total:,} of 6,000 characters ({labels:,} with labels alone)")


def emoji_figures() -> None:
    started = time.perf_counter()
    version, images = emoji_set()
    drawn = time.perf_counter() - started
    sizes = sorted(len(png) for png in images.values())
    print(f"emoji set {version}: {len(images)} emojis drawn in {drawn:.2f} s")
    print(f"  PNG sizes {sizes[0]:,} to {sizes[-1]:,} bytes, {sum(sizes):,} in all")


def main(argv: Sequence[str] | None = None) -> int:
    """Print the figures."""
    parser = argparse.ArgumentParser(
        prog="python -m bench.emoji_text", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--seeds", type=int, default=40, help="seeds per preset and player count")
    args = parser.parse_args(argv)
    emoji_figures()
    longest_tables(args.seeds)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
