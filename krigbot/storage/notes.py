"""Notes between the bot's processes on PostgreSQL: a round committed, told to every process.

A note is a notification on a channel (``LISTEN``/``NOTIFY``): short text, heard by every
process listening, never stored. SQLite has none: its one process tells its own viewers.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from krigbot.storage.base import Database


class NoteStore:
    """Send notes on a channel, and hear every process's."""

    def __init__(self, database: Database) -> None:
        self._database = database

    @property
    def carried(self) -> bool:
        """Tell whether the database carries notes between processes (PostgreSQL)."""
        return self._database.dialect.name == "postgres"

    async def tell(self, channel: str, note: str) -> None:
        """Send a note to every process listening on ``channel``."""
        await self._database.fetchall("SELECT pg_notify(?, ?)", (channel, note))

    async def hear(
        self, channel: str, heard: Callable[[str], None]
    ) -> Callable[[], Awaitable[None]]:
        """Call ``heard`` with each note any process sends on ``channel``; return what stops it."""
        return await self._database.listen_notes(channel, heard)
