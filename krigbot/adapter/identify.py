"""Gateway identifies paced across processes: one ``max_concurrency`` bucket's turns."""

from __future__ import annotations

import asyncio
import fcntl
import logging
import math
import time
from pathlib import Path
from typing import IO

from krigbot.storage import Storage, StorageError

log = logging.getLogger(__name__)

IDENTIFY_MARGIN = 0.25
"""Seconds added to each identify's pause: the identify leaves a moment after its turn is taken."""
LOCK_POLL_SECONDS = 0.05
"""How often a process waiting for a bucket's lock file (another process holds it) looks again."""


class IdentifyPacer:
    """Space the identifies of one ``max_concurrency`` bucket by Discord's pause, across processes.

    discord.py spaces them only inside one process. On PostgreSQL the turns are the database's
    (``Storage.take_identify_turn``): processes on any number of machines that share it take
    turns. On SQLite, or while the database is out of reach, each bucket's turn is a lock file
    in ``folder`` holding the time of its last identify: processes on one machine that share
    the folder (the database's) wait for each other. Without a folder, only this process's
    shards are paced.
    """

    def __init__(
        self, folder: Path | None, interval: float, storage: Storage | None = None
    ) -> None:
        self.folder = folder
        self.interval = interval
        self.storage = storage
        self._locks: dict[int, asyncio.Lock] = {}
        self._last: dict[int, float] = {}

    async def wait_turn(self, bucket: int) -> None:
        """Return when a shard of ``bucket`` may identify, and take that turn."""
        lock = self._locks.setdefault(bucket, asyncio.Lock())
        async with lock:
            if not await self._database_turn(bucket):
                await self._local_turn(bucket)
            self._last[bucket] = time.time()

    async def _database_turn(self, bucket: int) -> bool:
        """Take the turn through the database; False where it keeps none, or is out of reach."""
        if self.storage is None:
            return False
        try:
            return await self.storage.take_identify_turn(bucket, self.interval + IDENTIFY_MARGIN)
        except StorageError as exc:
            # Tried again at the next identify: the turns go back to the database once it answers.
            log.warning("cannot take identify turns through the database (%s); pacing here", exc)
            return False

    async def _local_turn(self, bucket: int) -> None:
        """Take the turn through the bucket's lock file, or within this process alone."""
        handle = None
        if self.folder is not None:
            path = self.folder / f".krig-identify-{bucket}.lock"
            try:
                # Polled, not waited for in a thread: a thread blocked on the lock cannot be
                # cancelled, and a stop (SIGTERM) would wait for it, a turn per shard ahead.
                # The lock is another process's: no event of this one can say it is free.
                while (handle := _try_lock(path)) is None:  # noqa: ASYNC110
                    await asyncio.sleep(LOCK_POLL_SECONDS)
            except OSError as exc:
                # A read-only folder: this process's own shards are still paced.
                log.warning("cannot take turns through %s (%s); pacing alone", path, exc)
                self.folder = None
        own = self._last.get(bucket)
        if handle is None:
            await self._pause_after(own)
            return
        try:
            # After this process's own last turn too: it may have been the database's.
            stamps = [t for t in (_stamp(handle.read()), own) if t is not None]
            await self._pause_after(max(stamps, default=None))
            handle.seek(0)
            handle.truncate()
            handle.write(repr(time.time()))
            handle.flush()
        finally:
            handle.close()  # and with it the lock

    async def _pause_after(self, last: float | None) -> None:
        if last is None:
            return
        now = time.time()
        # Pacing, not waiting for something: Discord refuses an identify before its turn. (A
        # time ahead of now, from a clock set back, waits one pause, not until then.)
        wait = min(last, now) + self.interval + IDENTIFY_MARGIN - now
        if wait > 0:
            await asyncio.sleep(wait)


def _stamp(text: str) -> float | None:
    """Return the time a lock file holds (None: new, or not a time: no turn to wait for)."""
    try:
        stamp = float(text)
    except ValueError:
        return None
    return stamp if math.isfinite(stamp) else None


def _try_lock(path: Path) -> IO[str] | None:
    """Open ``path`` holding an exclusive lock on it; None while another process holds it."""
    handle = path.open("a+", encoding="ascii")
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        handle.close()
        return None
    except BaseException:
        handle.close()
        raise
    handle.seek(0)
    return handle
