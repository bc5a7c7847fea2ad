"""``python -m krigbot.storage.migrate_to``: an SQLite database copied whole into PostgreSQL."""

from __future__ import annotations

import asyncio
import os
import sys
from asyncio.subprocess import PIPE
from pathlib import Path

from krigbot.storage import Storage
from tests.support.migrations import REPO, a_played_database, migrate_to
from tests.support.stored_games import new_game


async def test_a_database_arrives_whole_and_new_games_go_on_after_it(
    tmp_path: Path, pg_empty_dsn: str
) -> None:
    source = tmp_path / "krig.db"
    finished = await a_played_database(source)
    status, out, err = await migrate_to(pg_empty_dsn, source)
    assert (status, err) == (0, "")
    assert "all 3 games are the same there" in out
    async with await Storage.open(source) as sqlite, await Storage.open(pg_empty_dsn) as pg:
        for game_id in (1, 2, 3):
            assert await pg.games.get_game(game_id) == await sqlite.games.get_game(game_id)
        assert await pg.stats.leaderboard(1) == await sqlite.stats.leaderboard(1)
        assert [
            row.id for row in await pg.stats.recent_games(1, statuses=("finished",))
        ] == finished
        assert await pg.settings.get_settings(1) == {"lang": "nb"}
        # The ids of new games go on from the copied ones.
        fresh = await new_game(pg, channel_id=4)
        assert fresh.id == 4


async def test_a_target_with_games_is_refused_and_left_alone(tmp_path: Path, pg_dsn: str) -> None:
    source = tmp_path / "krig.db"
    await a_played_database(source)
    async with await Storage.open(pg_dsn) as pg:
        there = await new_game(pg, channel_id=99)
    status, _, err = await migrate_to(pg_dsn, source)
    assert status == 2
    assert "already holds Krigbot data: games (1 rows)" in err
    async with await Storage.open(pg_dsn) as pg:
        assert await pg.games.game_count() == 1
        assert await pg.games.get_game(there.id) == there


async def test_a_missing_source_is_named(tmp_path: Path, pg_dsn: str) -> None:
    status, _, err = await migrate_to(pg_dsn, tmp_path / "nothing.db")
    assert status == 2
    assert f"there is no SQLite database at {tmp_path / 'nothing.db'}" in err


async def run_command(*args: str, stdin: bytes = b"") -> tuple[int, str, str]:
    """Run the command with these arguments from the checkout; return status, output, errors."""
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "krigbot.storage.migrate_to",
        *args,
        stdin=PIPE,
        stdout=PIPE,
        stderr=PIPE,
        cwd=REPO,
        env={key: value for key, value in os.environ.items() if not key.startswith("KRIG_")},
    )
    out, err = await asyncio.wait_for(process.communicate(stdin), timeout=60)
    assert process.returncode is not None
    return process.returncode, out.decode(), err.decode()


async def test_a_services_settings_file_names_both_databases(
    tmp_path: Path, pg_empty_dsn: str
) -> None:
    # A service keeps KRIG_DB and KRIG_DATABASE_URL in its own settings file, not in .env.
    source = tmp_path / "state" / "krig.db"
    source.parent.mkdir()
    await a_played_database(source)
    settings = tmp_path / "krigbot.env"
    settings.write_text(
        f"DISCORD_TOKEN=x\nKRIG_DB={source}\nKRIG_DATABASE_URL={pg_empty_dsn}\n", encoding="utf-8"
    )
    status, out, err = await run_command("--env-file", str(settings))
    assert (status, err) == (0, "")
    assert f"copying {source} into" in out
    assert "all 3 games are the same there" in out


async def test_the_settings_file_may_come_on_standard_input(
    tmp_path: Path, pg_empty_dsn: str
) -> None:
    source = tmp_path / "krig.db"
    await a_played_database(source)
    text = f"KRIG_DB={source}\n".encode()
    status, out, err = await run_command(pg_empty_dsn, "--env-file", "-", stdin=text)
    assert (status, err) == (0, "")
    assert "all 3 games are the same there" in out


async def test_a_missing_settings_file_or_target_is_named(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere.env"
    status, _, err = await run_command("--env-file", str(missing))
    assert status == 2
    assert err == f"migrate_to: there is no settings file at {missing} (--env-file)\n"
    empty = tmp_path / "empty.env"
    empty.write_text(f"KRIG_DB={tmp_path / 'krig.db'}\n", encoding="utf-8")
    status, _, err = await run_command("--env-file", str(empty))
    assert status == 2
    assert "name the PostgreSQL database" in err
