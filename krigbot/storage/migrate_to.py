"""Copy an SQLite database into an empty PostgreSQL one, then check that everything arrived.

    python -m krigbot.storage.migrate_to [URL] [--from data/krig.db] [--env-file FILE]

Without ``--from`` the SQLite file is the bot's own (``KRIG_DB``), and without a URL the target
is the bot's ``KRIG_DATABASE_URL``: both read as the bot reads them, from the environment first,
then from the checkout's ``.env``, or from ``--env-file`` instead (a service's settings file;
``-`` reads it from standard input, for a file only root may read). Stop the bot first: rounds
played while copying would not be copied. The target
must hold no Krigbot data (it is migrated first if it is new); everything is copied in one
transaction, so a failed copy leaves it as it was. Afterwards every table's row count and
every game, saved state included, are compared between the two databases.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Final

from dotenv import dotenv_values

from krigbot.config import PROJECT, sqlite_file
from krigbot.storage.database import Storage, is_postgres_url
from krigbot.storage.errors import StorageError
from krigbot.storage.models import GAME_COLUMNS, game_from_row
from krigbot.storage.postgres import PostgresDatabase, redacted

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from krigbot.storage.base import Database

TABLES: Final = (
    "games",
    "results",
    "krigbot_results",
    "guild_settings",
    "matches",
    "match_results",
    "tournaments",
    "tournament_players",
)
"""Every table of games and settings, parents before the tables that refer to them.

PostgreSQL's ``identify_turns``, ``shard_claims`` and ``shard_members`` are not among them:
SQLite has none, and they hold only when the bot last connected and who held which shard (the
new database's first turn then waits for nothing, and its processes claim the shards afresh).
"""
PAGE: Final = 1000
"""Games read, copied and compared at a time (their saved states are most of the database)."""

_GAME_PAGE: Final = f"SELECT {GAME_COLUMNS} FROM games WHERE id > ? ORDER BY id LIMIT {PAGE}"


class MigrateError(Exception):
    """The copy cannot start, or did not arrive whole; the message says why."""


async def counts(database: Database) -> dict[str, int]:
    """Count the rows of every table."""
    found = {}
    for table in TABLES:
        row = await database.fetchone(f"SELECT COUNT(*) FROM {table}")
        assert row is not None
        found[table] = int(row[0])
    return found


async def copy(source: Database, target: PostgresDatabase, say: Callable[[str], None]) -> None:
    """Copy every row of every table from source to target, in one transaction."""
    async with target.importing() as load:
        for table in TABLES:
            columns = [
                str(row["name"])
                for row in await source.fetchall(
                    f"SELECT name FROM pragma_table_info('{table}') ORDER BY cid"
                )
            ]
            listed = ", ".join(columns)
            if table == "games":
                last, copied = 0, 0
                while rows := await source.fetchall(
                    f"SELECT {listed} FROM games WHERE id > ? ORDER BY id LIMIT {PAGE}", (last,)
                ):
                    await load(table, columns, rows)
                    last, copied = int(rows[-1]["id"]), copied + len(rows)
                say(f"  games: {copied}")
                continue
            rows = await source.fetchall(f"SELECT {listed} FROM {table}")
            await load(table, columns, rows)
            say(f"  {table}: {len(rows)}")


async def verify(source: Database, target: Database) -> int:
    """Compare row counts and every game; return how many games were compared."""
    before, after = await counts(source), await counts(target)
    if before != after:
        wrong = [f"{t} {before[t]} -> {after[t]}" for t in TABLES if before[t] != after[t]]
        raise MigrateError(f"row counts differ after copying: {', '.join(wrong)}")
    last, compared = 0, 0
    while rows := await source.fetchall(_GAME_PAGE, (last,)):
        there = [game_from_row(row) for row in await target.fetchall(_GAME_PAGE, (last,))]
        here = [game_from_row(row) for row in rows]
        for mine, theirs in zip(here, there, strict=False):
            if mine != theirs:
                raise MigrateError(f"game {mine.id} differs after copying")
        if len(here) != len(there):
            raise MigrateError(f"games after id {last} differ after copying")
        last, compared = here[-1].id, compared + len(here)
    return compared


async def migrate_to(url: str, path: Path, say: Callable[[str], None] = print) -> None:
    """Copy the SQLite database at ``path`` into the empty PostgreSQL database at ``url``."""
    async with await Storage.open(path) as source:
        target = await PostgresDatabase.connect(url)
        async with Storage(target):
            present = {table: n for table, n in (await counts(target)).items() if n}
            if present:
                listed = ", ".join(f"{table} ({n} rows)" for table, n in present.items())
                raise MigrateError(
                    f"{redacted(url)} already holds Krigbot data: {listed}; "
                    "copy only into an empty database"
                )
            say(f"copying {path} into {redacted(url)}:")
            await copy(source.database, target, say)
            games = await verify(source.database, target)
    say(f"done: every table's row count matches, and all {games} games are the same there.")


def settings_from(env_file: str | None) -> dict[str, str | None]:
    """Return the settings the bot would see: the environment over ``env_file`` (or ``.env``)."""
    if env_file is None:
        path = PROJECT / ".env"
        values = dict(dotenv_values(path)) if path.is_file() else {}
    elif env_file == "-":
        values = dict(dotenv_values(stream=sys.stdin))
    else:
        if not Path(env_file).is_file():
            raise MigrateError(f"there is no settings file at {env_file} (--env-file)")
        try:
            values = dict(dotenv_values(env_file))
        except OSError as exc:
            raise MigrateError(f"cannot read the settings file {env_file}: {exc.strerror}") from exc
    return {**values, **os.environ}


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit status."""
    parser = argparse.ArgumentParser(
        prog="python -m krigbot.storage.migrate_to",
        description="Copy Krigbot's SQLite database into an empty PostgreSQL database.",
    )
    parser.add_argument(
        "url",
        nargs="?",
        help="the PostgreSQL database, e.g. postgresql:///krigbot?host=/var/run/postgresql "
        "(default: KRIG_DATABASE_URL, as the bot reads it)",
    )
    parser.add_argument(
        "--from",
        dest="source",
        type=Path,
        help="the SQLite file (default: KRIG_DB, as the bot reads it)",
    )
    parser.add_argument(
        "--env-file",
        metavar="FILE",
        help="read KRIG_DB and KRIG_DATABASE_URL from this settings file instead of the "
        "checkout's .env, e.g. /etc/krigbot/krigbot.env (- : from standard input); "
        "the environment still comes first, as for the bot",
    )
    args = parser.parse_args(argv)
    try:
        settings = settings_from(args.env_file)
        # KRIG_DB is always given, so a settings file without it means the default, as for the
        # service, never the checkout's .env.
        source = args.source or sqlite_file({"KRIG_DB": None, **settings})
        url = args.url or (settings.get("KRIG_DATABASE_URL") or "").strip()
        if not url:
            raise MigrateError(
                "name the PostgreSQL database: pass its URL, or set KRIG_DATABASE_URL "
                "(in the environment, .env or the --env-file)"
            )
        if not is_postgres_url(url):
            raise MigrateError(f"the target must be a postgresql:// URL, not {redacted(url)!r}")
        if not source.is_file():
            raise MigrateError(f"there is no SQLite database at {source} (pass --from PATH)")
        asyncio.run(migrate_to(url, source))
    except (MigrateError, StorageError) as exc:
        print(f"migrate_to: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
