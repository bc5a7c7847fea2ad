"""The Storage facade: every query, and opening the database a location names."""

from __future__ import annotations

from abc import abstractmethod
from pathlib import Path
from typing import TYPE_CHECKING, Final, Literal, Self

from krigbot.storage.games import GameStore
from krigbot.storage.matches import MatchStore
from krigbot.storage.records import RecordStore
from krigbot.storage.settings import SettingsStore
from krigbot.storage.stats import StatsStore

if TYPE_CHECKING:
    from types import TracebackType

POSTGRES_SCHEMES: Final = ("postgresql://", "postgres://")


def is_postgres_url(location: str | Path) -> bool:
    """Tell whether a database location is a PostgreSQL URL rather than an SQLite file."""
    return isinstance(location, str) and location.startswith(POSTGRES_SCHEMES)


class Storage(GameStore, StatsStore, SettingsStore, MatchStore, RecordStore):
    """Krigbot's database; one instance is shared by every coroutine of the bot.

    ``Storage.open`` returns the backend the location names: ``storage.sqlite.SqliteStorage``
    for a file path (or ``':memory:'``), ``storage.postgres.PostgresStorage`` for a
    ``postgresql://`` URL. Both answer every query the same way.
    """

    @classmethod
    async def open(
        cls,
        location: str | Path,
        *,
        busy_timeout_ms: int = 5000,
        synchronous: Literal["NORMAL", "FULL"] = "NORMAL",
        checkpoint_every: float = 1.0,
    ) -> Storage:
        """Open (creating or migrating as needed) the database at a path or URL.

        The keyword options are SQLite's (see ``SqliteStorage.connect``).
        """
        if is_postgres_url(location):
            from krigbot.storage.postgres import PostgresStorage

            return await PostgresStorage.connect(str(location))
        from krigbot.storage.sqlite import SqliteStorage

        return await SqliteStorage.connect(
            location,
            busy_timeout_ms=busy_timeout_ms,
            synchronous=synchronous,
            checkpoint_every=checkpoint_every,
        )

    @abstractmethod
    async def checkpoint(self) -> tuple[int, int] | None:
        """Checkpoint SQLite's write-ahead log now; None where the database does it itself."""

    @abstractmethod
    async def probe(self) -> str | None:
        """Return None if the database would take a write now, or one line saying why not."""

    async def take_identify_turn(self, bucket: int, pause: float) -> bool:
        """Wait for ``bucket``'s turn to identify among all processes on the database; take it.

        True once taken; False, at once, where the database keeps no turns: SQLite's processes
        share one machine, and take their turns through lock files
        (``adapter.identify.IdentifyPacer``).
        """
        return False

    @abstractmethod
    async def close(self) -> None:
        """Close the database; waits for the operation in progress. Safe to call twice."""

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
