"""Forward-only schema migrations tracked with PRAGMA user_version."""

from __future__ import annotations

import re
import sqlite3
from dataclasses import dataclass
from importlib import resources
from typing import TYPE_CHECKING, Final

from krigbot.storage.base import rollback_quietly, run
from krigbot.storage.errors import (
    MigrationError,
    SchemaTooNewError,
    StorageError,
    translate_error,
)

if TYPE_CHECKING:
    import aiosqlite

_FILE_NAME: Final = re.compile(r"^(\d{4})_[a-z0-9_]+\.sql$")


@dataclass(frozen=True, slots=True)
class Migration:
    """One numbered .sql file from krigbot/storage/migrations/."""

    version: int
    name: str
    sql: str


def load_migrations() -> tuple[Migration, ...]:
    """Read the migration files in version order and check they are numbered 1..N."""
    # The folder is read as package data (not a package itself), so it also works
    # from a wheel or zip.
    folder = resources.files("krigbot.storage").joinpath("migrations")
    found: list[Migration] = []
    for entry in folder.iterdir():
        match = _FILE_NAME.match(entry.name)
        if match is None:
            if entry.name.endswith(".sql"):
                raise MigrationError(f"Badly named migration {entry.name}; use NNNN_name.sql")
            continue
        found.append(Migration(int(match[1]), entry.name, entry.read_text(encoding="utf-8")))
    found.sort(key=lambda m: m.version)
    for expected, migration in enumerate(found, start=1):
        if migration.version != expected:
            raise MigrationError(
                f"Migrations must be numbered 1, 2, 3, ... without gaps or duplicates; "
                f"expected version {expected}, found {migration.name}"
            )
    return tuple(found)


def split_statements(script: str) -> list[str]:
    """Split an SQL script into complete statements."""
    # Python's execute() takes one statement at a time, and executescript() would COMMIT
    # our transaction first, so split with SQLite's own tokenizer: a ';' inside a string
    # or a trigger body does not end a statement.
    statements: list[str] = []
    pending = ""
    for piece in script.split(";"):
        pending += piece + ";"
        if sqlite3.complete_statement(pending):
            if _has_code(pending):
                statements.append(pending.strip())
            pending = ""
    if _has_code(pending[:-1]):
        raise MigrationError(f"Unterminated SQL statement: {pending[:-1].strip()[:80]!r}")
    return statements


def _has_code(text: str) -> bool:
    """Tell whether SQL text contains anything besides whitespace and comments."""
    without_blocks = re.sub(r"/\*.*?\*/", "", text, flags=re.DOTALL)
    return any(line.split("--", 1)[0].strip(" \t;") for line in without_blocks.splitlines())


async def user_version(db: aiosqlite.Connection) -> int:
    """Read the schema version stored in the database header."""
    rows = list(await db.execute_fetchall("PRAGMA user_version"))
    return int(rows[0][0])


async def migrate(db: aiosqlite.Connection, path: str) -> int:
    """Apply every pending migration in one transaction and return the schema version."""
    migrations = load_migrations()
    latest = len(migrations)
    current = await user_version(db)
    if current > latest:
        raise SchemaTooNewError(path, current, latest)
    if current == latest:
        # Up to date: no write, so an up-to-date database opens without a write lock.
        return current
    try:
        await run(db, "BEGIN IMMEDIATE")
        # Read again under the write lock: another process may have migrated meanwhile.
        current = await user_version(db)
        if current > latest:
            raise SchemaTooNewError(path, current, latest)
        for migration in migrations[current:]:
            for statement in split_statements(migration.sql):
                try:
                    await run(db, statement)
                except sqlite3.Error as exc:
                    error = translate_error(exc, path)
                    if type(error) is StorageError:
                        # Not an environment problem (lock, disk, ...): the SQL is at fault.
                        error = MigrationError(
                            f"Migration {migration.name} failed on {path}: {exc}"
                        )
                    raise error from exc
        # PRAGMA user_version is part of the transaction: all or nothing.
        await run(db, f"PRAGMA user_version = {latest:d}")
        await run(db, "COMMIT")
    except BaseException:
        await rollback_quietly(db)
        raise
    return latest
