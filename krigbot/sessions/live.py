"""Who is watching which game, and telling them that a round was committed.

The registry tells the hub of every round it commits (a war, a Steal War choice, the end); the
web view's live pages wait on it. What a viewer is told is only that the game moved on, with
its round: the page reads the rounds themselves from the storage, so a viewer on another
process (told through the database) and a viewer who reconnects read the same.

Each viewer has a small queue of its own. One that does not keep up (its browser reads too
slowly) fills it, and is dropped: nothing is ever buffered for it without bound.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
from collections import deque
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from krigbot.storage import Storage

log = logging.getLogger(__name__)

CHANNEL: Final = "krig_live_{bot}"
"""The notifications' channel of one bot (its user id): games of another bot on the same
database are never heard."""
QUEUE_SIZE: Final = 16
"""The rounds a viewer may have waiting; one more and it is dropped."""


class Viewer:
    """One watcher of one game: the rounds told to it and not yet taken."""

    __slots__ = ("_pending", "_size", "_wake", "dropped", "game_id", "on_drop")

    def __init__(self, game_id: int, size: int = QUEUE_SIZE) -> None:
        self.game_id = game_id
        self._pending: deque[int] = deque()
        self._size = size
        self._wake = asyncio.Event()
        self.dropped = False
        """Set when the viewer fell too far behind: it is told nothing more."""
        self.on_drop: Callable[[], None] | None = None
        """Called once when the viewer is dropped (the web view ends its stream there)."""

    def offer(self, round_: int) -> bool:
        """Queue a round for the viewer; False (and the viewer dropped) when its queue is full."""
        if self.dropped:
            return False
        if len(self._pending) >= self._size:
            self.dropped = True
            self._wake.set()
            if self.on_drop is not None:
                self.on_drop()
            return False
        self._pending.append(round_)
        self._wake.set()
        return True

    async def next(self) -> int | None:
        """Wait for the next round told; None once the viewer is dropped."""
        while not self._pending and not self.dropped:
            self._wake.clear()
            await self._wake.wait()
        if self.dropped:
            return None
        return self._pending.popleft()

    def taken(self, up_to: int) -> None:
        """Forget the rounds waiting up to ``up_to``: the viewer read the game that far."""
        while self._pending and self._pending[0] <= up_to:
            self._pending.popleft()


class LiveHub:
    """The viewers of each game in this process, told of each round committed."""

    def __init__(self, queue_size: int = QUEUE_SIZE) -> None:
        self._queue_size = queue_size
        self._viewers: dict[int, set[Viewer]] = {}
        self.relay: Callable[[int, int], None] | None = None
        """Where a round committed here is told to the bot's other processes (PostgreSQL's
        notifications); None on SQLite, where one process holds every game."""

    def watch(self, game_id: int) -> Viewer:
        """Start watching a game; :meth:`leave` ends it."""
        viewer = Viewer(game_id, self._queue_size)
        self._viewers.setdefault(game_id, set()).add(viewer)
        return viewer

    def leave(self, viewer: Viewer) -> None:
        """Stop telling a viewer anything."""
        viewers = self._viewers.get(viewer.game_id)
        if viewers is not None:
            viewers.discard(viewer)
            if not viewers:
                del self._viewers[viewer.game_id]

    def watching(self, game_id: int) -> int:
        """Return how many viewers in this process watch a game."""
        return len(self._viewers.get(game_id, ()))

    def committed(self, game_id: int, round_: int) -> None:
        """Tell of a round committed by this process: to its viewers, and to the others."""
        self.heard(game_id, round_)
        if self.relay is not None:
            try:
                self.relay(game_id, round_)
            except Exception:
                # The round is committed and shown in Discord; only other processes' viewers
                # miss this one note, and they catch up from the storage at the next.
                log.exception("could not tell the other processes of game %s", game_id)

    def heard(self, game_id: int, round_: int) -> None:
        """Tell this process's viewers of a game that it reached a round."""
        viewers = self._viewers.get(game_id)
        if not viewers:
            return
        for viewer in list(viewers):
            if not viewer.offer(round_):
                viewers.discard(viewer)
        if not viewers:
            del self._viewers[game_id]


async def across_processes(
    hub: LiveHub, storage: Storage, bot_id: int
) -> Callable[[], Awaitable[None]] | None:
    """Tell the rounds committed here to the bot's other processes, and theirs to this one's
    viewers, through the database (PostgreSQL); return what stops it (None: SQLite, one
    process, nothing to tell).

    A note is ``process:game:round``; a process skips its own, which its viewers were told.
    """
    notes = storage.notes
    if not notes.carried:
        return None
    channel = CHANNEL.format(bot=bot_id)
    me = secrets.token_hex(6)
    sending: set[asyncio.Task[None]] = set()

    def heard(note: str) -> None:
        sender, _, rest = note.partition(":")
        game, _, round_ = rest.partition(":")
        if sender != me and game.isdigit() and round_.isdigit():
            hub.heard(int(game), int(round_))

    def relay(game_id: int, round_: int) -> None:
        task = asyncio.create_task(notes.tell(channel, f"{me}:{game_id}:{round_}"))
        sending.add(task)
        task.add_done_callback(_sent(sending))

    stop = await notes.hear(channel, heard)
    hub.relay = relay

    async def stopped() -> None:
        hub.relay = None
        await stop()

    return stopped


def _sent(sending: set[asyncio.Task[None]]) -> Callable[[asyncio.Task[None]], None]:
    def done(task: asyncio.Task[None]) -> None:
        sending.discard(task)
        if not task.cancelled() and task.exception() is not None:
            # Only viewers on other processes miss this note; the next round's brings them up.
            log.warning("could not tell the other processes of a round: %s", task.exception())

    return done
