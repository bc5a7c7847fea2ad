"""A database filled by played games, migrated to a chosen version."""

from __future__ import annotations

import asyncio
import sys
from asyncio.subprocess import PIPE
from pathlib import Path

from krigbot.storage import Storage
from tests.support.stored_games import at, new_game, pr, record_game, running_game

REPO = Path(__file__).resolve().parents[2]


async def migrate_to(url: str, source: Path) -> tuple[int, str, str]:
    """Run the command as a user would; return its status, output and errors."""
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "krigbot.storage.migrate_to",
        url,
        "--from",
        str(source),
        stdout=PIPE,
        stderr=PIPE,
        cwd=REPO,
    )
    out, err = await asyncio.wait_for(process.communicate(), timeout=60)
    assert process.returncode is not None
    return process.returncode, out.decode(), err.decode()


async def a_played_database(path: Path) -> list[int]:
    """Fill an SQLite database with games in every state, results and settings."""
    async with await Storage.open(path) as sqlite:
        await new_game(sqlite, channel_id=1)
        playing = await running_game(sqlite, channel_id=2)
        await sqlite.games.save_round(
            playing.id,
            expected_round=0,
            state={"piles": [[3, 1], [2]], "ø": "å"},
            round=1,
            now=at(1),
        )
        await record_game(sqlite, [pr(10, "win", pot=9), pr(20, "loss")], channel_id=3)
        await sqlite.settings.set_setting(1, "lang", "nb")
        return [row.id for row in await sqlite.stats.recent_games(1, statuses=("finished",))]
