"""Checkpoints off the write path: the write-ahead log is copied into the database elsewhere.

In WAL mode every commit appends to the ``-wal`` file; a checkpoint copies those pages into the
database file and syncs it to disk. By default SQLite runs one inside whichever commit takes the
log past 1,000 pages, on that commit's time. For Krigbot that was a flip whose answer waited for
a disk sync, and every flip of every channel behind it (they share one connection): the slowest
answers under load (``python -m bench.soak``: p99 245 ms with them, 47 ms without).

So the bot's own connection never checkpoints; a second connection, on its own thread, runs a
PASSIVE checkpoint every second. PASSIVE takes no lock the writer needs: commits go on while it
copies. If a checkpoint fails, the bot's connection goes back to checkpointing by itself, as
SQLite does by default, so the log can never grow without bound.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sqlite3
from typing import TYPE_CHECKING, Final

import aiosqlite

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

log = logging.getLogger(__name__)

DEFAULT_PAGES: Final = 1000
"""SQLite's own ``wal_autocheckpoint``, restored if our checkpoints fail."""


class Checkpointer:
    """Run PASSIVE checkpoints of one database file from a connection of their own."""

    def __init__(
        self,
        path: str,
        interval: float,
        give_back: Callable[[], Awaitable[None]],
    ) -> None:
        """``give_back`` makes the bot's connection checkpoint by itself again."""
        self._path = path
        self._interval = interval
        self._give_back = give_back
        self._db: aiosqlite.Connection | None = None
        self._task: asyncio.Task[None] | None = None

    @classmethod
    async def start(
        cls, path: str, interval: float, give_back: Callable[[], Awaitable[None]]
    ) -> Checkpointer | None:
        """Open the checkpoint connection and start; None (logged) if it cannot be opened."""
        checkpointer = cls(path, interval, give_back)
        try:
            db = await aiosqlite.connect(path, isolation_level=None)
        except sqlite3.Error as exc:
            log.warning("checkpoints stay with the writes on %s: %s", path, exc)
            return None
        checkpointer._db = db
        try:
            await db.execute_fetchall("PRAGMA busy_timeout = 1000")
        except sqlite3.Error as exc:
            log.warning("checkpoints stay with the writes on %s: %s", path, exc)
            await db.close()
            return None
        checkpointer._task = asyncio.create_task(
            checkpointer._every_interval(), name="krig-checkpoints"
        )
        return checkpointer

    @property
    def active(self) -> bool:
        """Tell whether checkpoints are still ours (not handed back, not closed)."""
        return self._db is not None

    async def checkpoint(self) -> tuple[int, int] | None:
        """Checkpoint once; return (pages in the log, pages copied), None if no longer active.

        If it fails, the checkpoints go back to the writes, and this one stops for good.
        """
        db = self._db
        if db is None:
            return None
        try:
            rows = list(await db.execute_fetchall("PRAGMA wal_checkpoint(PASSIVE)"))
        except sqlite3.Error as exc:
            log.warning(
                "a checkpoint of %s failed (%s); the writes checkpoint by themselves again",
                self._path,
                exc,
            )
            try:
                await self._give_back()
            except Exception as again:  # the storage closing, or failing as well
                log.warning("could not hand the checkpoints back: %s", again)
            await self._close_connection()
            return None
        _busy, in_log, copied = (int(value) for value in rows[0])
        return in_log, copied

    async def _every_interval(self) -> None:
        while self.active:
            await asyncio.sleep(self._interval)
            await self.checkpoint()

    async def close(self) -> None:
        """Stop checkpointing and close the connection; safe to call twice."""
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
        await self._close_connection()

    async def _close_connection(self) -> None:
        db, self._db = self._db, None
        if db is not None:
            await db.close()
