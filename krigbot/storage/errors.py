"""Exceptions raised by the storage layer, and the mapping from sqlite3 and PostgreSQL errors."""

from __future__ import annotations

import sqlite3


class StorageError(Exception):
    """Base class of every failure the storage layer reports."""


class StorageClosedError(StorageError):
    """The storage was used after `close()`."""


class CannotOpenDatabaseError(StorageError):
    """The database file or its folder cannot be created or opened."""


class NotADatabaseError(StorageError):
    """The file exists but is not a SQLite database."""


class DatabaseCorruptError(StorageError):
    """The file is a SQLite database whose contents are damaged."""


class DatabaseLockedError(StorageError):
    """Another connection held the database lock for longer than the busy timeout."""


class DatabaseReadOnlyError(StorageError):
    """The database (or its folder) cannot be written."""


class DiskFullError(StorageError):
    """The disk holding the database is full."""


class MigrationError(StorageError):
    """A schema migration is malformed or failed to apply."""


class SchemaTooNewError(StorageError):
    """The database was written by a newer Krigbot than this one."""

    def __init__(self, path: str, found: int, supported: int) -> None:
        super().__init__(
            f"The database {path} has schema version {found}, but this Krigbot only knows "
            f"versions up to {supported}; upgrade Krigbot instead of downgrading the database."
        )
        self.path = path
        self.found = found
        self.supported = supported


class ChannelBusyError(StorageError):
    """The channel already has a game in the challenge or running state."""

    def __init__(self, channel_id: int, game_id: int) -> None:
        super().__init__(f"Channel {channel_id} already has an active game (#{game_id}).")
        self.channel_id = channel_id
        self.game_id = game_id


class RoundConflictError(StorageError):
    """A round or finish was not saved: the game is no longer running at the expected round.

    Another writer moved it first (another process holding the same channel, or a stale copy
    in memory), or it ended, or it is gone. Nothing was written. ``round`` and ``status`` are
    what the database holds now (None if the game is gone): whoever holds a cached copy of
    the game should drop it, read the game again and decide anew.
    """

    def __init__(
        self, game_id: int, expected_round: int, round: int | None, status: str | None
    ) -> None:
        now = "is gone" if status is None else f"is {status} at round {round}"
        super().__init__(
            f"Game {game_id} was not saved: expected running at round {expected_round}, "
            f"but it {now}."
        )
        self.game_id = game_id
        self.expected_round = expected_round
        self.round = round
        self.status = status


_SQLITE_ERRORS: tuple[tuple[tuple[int, ...], str, type[StorageError], str], ...] = (
    (
        (sqlite3.SQLITE_NOTADB,),
        "file is not a database",
        NotADatabaseError,
        "{path} is not a SQLite database (or it is encrypted); refusing to use it. "
        "Point Krigbot at another file or move this one away.",
    ),
    (
        (sqlite3.SQLITE_CORRUPT,),
        "malformed",
        DatabaseCorruptError,
        "The database {path} is corrupt ({message}); restore it from a backup.",
    ),
    (
        (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED),
        "is locked",
        DatabaseLockedError,
        "The database {path} is locked by another connection ({message}); "
        "is a second copy of the bot or a long-running tool using it?",
    ),
    (
        (sqlite3.SQLITE_READONLY,),
        "readonly database",
        DatabaseReadOnlyError,
        "The database {path} is read-only ({message}); check the permissions "
        "of the file and of its folder (SQLite also writes -wal and -shm files there).",
    ),
    (
        (sqlite3.SQLITE_FULL,),
        "disk is full",
        DiskFullError,
        "The disk holding the database {path} is full ({message}).",
    ),
    (
        (sqlite3.SQLITE_CANTOPEN,),
        "unable to open database",
        CannotOpenDatabaseError,
        "Cannot open the database {path} ({message}); check that the path is a file "
        "and that its folder exists and is writable.",
    ),
)
"""SQLite's primary result codes (or, where a code path sets none, words of the message) that
say more than "database error", and what they mean here; the first that matches counts."""


def translate_error(exc: sqlite3.Error, path: str) -> StorageError:
    """Turn a sqlite3 error into the StorageError subclass that explains it."""
    # Python 3.11 exposes the (extended) result code; the low byte is the primary code.
    # The message is checked too because not every code path sets the attribute.
    code = getattr(exc, "sqlite_errorcode", None)
    primary = code & 0xFF if isinstance(code, int) else None
    message = str(exc)
    lowered = message.lower()
    for codes, words, kind, text in _SQLITE_ERRORS:
        if primary in codes or words in lowered:
            return kind(text.format(path=path, message=message))
    return StorageError(f"Database error on {path}: {message}")


_POSTGRES_STATES: dict[str, tuple[type[StorageError], str]] = {
    "53100": (DiskFullError, "The disk holding the database {where} is full ({message})."),
    "53200": (DiskFullError, "The database server {where} is out of memory ({message})."),
    "25006": (
        DatabaseReadOnlyError,
        "The database {where} is read-only ({message}); is it a standby?",
    ),
    "55P03": (
        DatabaseLockedError,
        "The database {where} is locked by another connection ({message}).",
    ),
    "40P01": (DatabaseLockedError, "The database {where} found a deadlock ({message}); try again."),
    "57014": (DatabaseLockedError, "A statement on {where} took too long ({message})."),
    "XX001": (
        DatabaseCorruptError,
        "The database {where} is corrupt ({message}); restore it from a backup.",
    ),
    "XX002": (
        DatabaseCorruptError,
        "An index of the database {where} is corrupt ({message}); REINDEX it.",
    ),
    "3D000": (
        CannotOpenDatabaseError,
        "The database {where} does not exist ({message}); create it first (createdb).",
    ),
    "28P01": (CannotOpenDatabaseError, "PostgreSQL refused the password for {where} ({message})."),
    "28000": (
        CannotOpenDatabaseError,
        "PostgreSQL refused the user of {where} ({message}); check pg_hba.conf.",
    ),
    "57P01": (
        CannotOpenDatabaseError,
        "The PostgreSQL server of {where} is shutting down ({message}).",
    ),
    "57P03": (
        CannotOpenDatabaseError,
        "The PostgreSQL server of {where} is not accepting connections yet ({message}).",
    ),
}
"""PostgreSQL's SQLSTATE codes that say more than "database error", and what they mean here."""


def translate_postgres_error(exc: Exception, where: str) -> StorageError:
    """Turn an asyncpg or connection error into the StorageError subclass that explains it."""
    message = str(exc) or type(exc).__name__
    state = getattr(exc, "sqlstate", None)
    if isinstance(state, str):
        if state in _POSTGRES_STATES:
            kind, text = _POSTGRES_STATES[state]
            return kind(text.format(where=where, message=message))
        if state.startswith("08"):  # connection exceptions
            return CannotOpenDatabaseError(f"Lost the connection to {where} ({message}).")
    if isinstance(exc, OSError):
        return CannotOpenDatabaseError(
            f"Cannot reach the PostgreSQL server of {where} ({message}); is it running, and is "
            "the host (or the socket folder) in KRIG_DATABASE_URL right?"
        )
    return StorageError(f"Database error on {where}: {message}")
