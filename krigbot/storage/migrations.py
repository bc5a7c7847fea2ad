"""Forward-only numbered schema migrations, one folder per dialect.

``migrations/sqlite/`` and ``migrations/postgres/`` each hold ``NNNN_name.sql`` files numbered
1..N; a change to the schema adds the same number to both folders. Each backend applies its
own (``storage.sqlite.migrate``: ``PRAGMA user_version``; ``storage.postgres.migrate``: a
version table, under an advisory lock).
"""

from __future__ import annotations

import re
import sqlite3
from dataclasses import dataclass
from importlib import resources
from typing import Final

from krigbot.storage.errors import MigrationError, SchemaTooNewError

_FILE_NAME: Final = re.compile(r"^(\d{4})_[a-z0-9_]+\.sql$")


@dataclass(frozen=True, slots=True)
class Migration:
    """One numbered .sql file from a folder of krigbot/storage/migrations/."""

    version: int
    name: str
    sql: str


def load_migrations(dialect: str) -> tuple[Migration, ...]:
    """Read a dialect's migration files in version order and check they are numbered 1..N."""
    # The folder is read as package data (not a package itself), so it also works
    # from a wheel or zip.
    folder = resources.files("krigbot.storage").joinpath("migrations", dialect)
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


def missing(pending: tuple[Migration, ...], current: int, where: str) -> tuple[Migration, ...]:
    """Return the migrations a database at schema version ``current`` lacks (none: up to date).

    A database of a newer version than the files know was written by a newer Krigbot: refused.
    """
    if current > len(pending):
        raise SchemaTooNewError(where, current, len(pending))
    return pending[current:]


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
