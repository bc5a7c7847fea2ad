"""The Storage facade: the database a location names, and its parts that ask it the queries."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Final, Literal, Self

from krigbot.storage.claims import ClaimStore
from krigbot.storage.games import GameStore
from krigbot.storage.matches import MatchStore
from krigbot.storage.notes import NoteStore
from krigbot.storage.records import RecordStore
from krigbot.storage.settings import SettingsStore
from krigbot.storage.stats import StatsStore
from krigbot.storage.tournaments import TournamentStore

if TYPE_CHECKING:
    from types import TracebackType

    from krigbot.storage.base import Database

POSTGRES_SCHEMES: Final = ("postgresql://", "postgres://")


def is_postgres_url(location: str | Path) -> bool:
    """Tell whether a database location is a PostgreSQL URL rather than an SQLite file."""
    return isinstance(location, str) and location.startswith(POSTGRES_SCHEMES)


class Storage:
    """Krigbot's database; one instance is shared by every coroutine of the bot.

    ``Storage.open`` opens the backend the location names: ``storage.sqlite.SqliteDatabase``
    for a file path (or ``':memory:'``), ``storage.postgres.PostgresDatabase`` for a
    ``postgresql://`` URL. Both answer every query the same way. The queries are its parts',
    each asking the one shared database: ``games`` (a game's life), ``stats`` (leaderboard,
    player stats, history), ``settings`` (per guild), ``matches`` (best-of matches) and
    ``records`` (a player's page).
    """

    def __init__(self, database: Database) -> None:
        """Hold an open, migrated database and the parts that query it."""
        self.database = database
        self.games = GameStore(database)
        self.stats = StatsStore(database)
        self.settings = SettingsStore(database)
        self.matches = MatchStore(database)
        self.records = RecordStore(database)
        self.tournaments = TournamentStore(database)
        self.claims = ClaimStore(database)
        self.notes = NoteStore(database)

    @classmethod
    async def open(
        cls,
        location: str | Path,
        *,
        busy_timeout_ms: int = 5000,
        synchronous: Literal["NORMAL", "FULL"] = "NORMAL",
        checkpoint_every: float = 1.0,
    ) -> Self:
        """Open (creating or migrating as needed) the database at a path or URL.

        The keyword options are SQLite's (see ``SqliteDatabase.connect``).
        """
        if is_postgres_url(location):
            from krigbot.storage.postgres import PostgresDatabase

            return cls(await PostgresDatabase.connect(str(location)))
        from krigbot.storage.sqlite import SqliteDatabase

        return cls(
            await SqliteDatabase.connect(
                location,
                busy_timeout_ms=busy_timeout_ms,
                synchronous=synchronous,
                checkpoint_every=checkpoint_every,
            )
        )

    @property
    def path(self) -> str:
        """Return the database location this storage was opened with (no password)."""
        return self.database.path

    async def checkpoint(self) -> tuple[int, int] | None:
        """Checkpoint SQLite's write-ahead log now; None where the database does it itself."""
        return await self.database.checkpoint()

    async def probe(self) -> str | None:
        """Return None if the database would take a write now, or one line saying why not."""
        return await self.database.probe()

    async def take_identify_turn(self, bucket: int, pause: float) -> bool:
        """Wait for ``bucket``'s turn to identify among all processes on the database; take it.

        True once taken; False, at once, where the database keeps no turns (SQLite).
        """
        return await self.database.take_identify_turn(bucket, pause)

    async def close(self) -> None:
        """Close the database; waits for the operation in progress. Safe to call twice."""
        await self.database.close()

    async def __aenter__(self) -> Self:
        """Use the storage as an async context manager that closes it."""
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        """Close the storage."""
        await self.close()
