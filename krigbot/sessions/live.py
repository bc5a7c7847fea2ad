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
WATCH_SECONDS: Final = 20.0
"""How often a process tells the others again which games its viewers watch."""
WATCH_KEPT_SECONDS: Final = 3 * WATCH_SECONDS
"""How long a game told as watched elsewhere has its rounds told (a process that stopped
telling, because its viewers left or it died, is forgotten then)."""
LOOK: Final = 0
"""The round of a note that asks a game's viewers to read it again from the storage."""


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
        self.on_first: Callable[[int], None] | None = None
        """Called when a game gets its first viewer in this process (the other processes are
        told that its rounds are wanted here)."""

    def watch(self, game_id: int, viewer: Viewer | None = None) -> Viewer:
        """Start watching a game (with ``viewer``, one made to pass the rounds on elsewhere, or
        a new queue); :meth:`leave` ends it."""
        if viewer is None:
            viewer = Viewer(game_id, self._queue_size)
        viewers = self._viewers.setdefault(game_id, set())
        viewers.add(viewer)
        if len(viewers) == 1 and self.on_first is not None:
            self.on_first(game_id)
        return viewer

    def games(self) -> list[int]:
        """Return the games this process's viewers watch."""
        return list(self._viewers)

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

    Only the rounds of games watched on another process are told: a process tells the others
    ``w:process:game`` when a game gets its first viewer there, and again every
    ``WATCH_SECONDS`` while it has one, and each round of such a game goes out as
    ``r:process:game:round``. A process that hears of a game newly watched answers with a
    ``LOOK`` round, so the viewer reads again what was committed before the watch was heard.
    A process skips its own notes, whose rounds its viewers were told.
    """
    notes = storage.notes
    if not notes.carried:
        return None
    channel = CHANNEL.format(bot=bot_id)
    me = secrets.token_hex(6)
    loop = asyncio.get_running_loop()
    sending: set[asyncio.Task[None]] = set()
    elsewhere: dict[int, float] = {}
    """The games watched on other processes, and until when their rounds are told."""

    def tell(note: str) -> None:
        task = asyncio.create_task(notes.tell(channel, note))
        sending.add(task)
        task.add_done_callback(_sent(sending))

    def heard(note: str) -> None:
        kind, sender, game, *rest = note.split(":")
        if sender == me or not game.isdigit():
            return
        if kind == "w":
            until = elsewhere.get(int(game))
            elsewhere[int(game)] = loop.time() + WATCH_KEPT_SECONDS
            if until is None or until < loop.time():
                tell(f"r:{me}:{game}:{LOOK}")
        elif kind == "r" and rest and rest[0].isdigit():
            hub.heard(int(game), int(rest[0]))

    def relay(game_id: int, round_: int) -> None:
        until = elsewhere.get(game_id)
        if until is None:
            return
        if until < loop.time():
            del elsewhere[game_id]
            return
        tell(f"r:{me}:{game_id}:{round_}")

    async def remind() -> None:
        while True:
            await asyncio.sleep(WATCH_SECONDS)
            for game_id in hub.games():
                tell(f"w:{me}:{game_id}")

    stop = await notes.hear(channel, heard)
    hub.relay = relay
    hub.on_first = lambda game_id: tell(f"w:{me}:{game_id}")
    reminding = asyncio.create_task(remind(), name="krig-live-watches")

    async def stopped() -> None:
        hub.relay = hub.on_first = None
        reminding.cancel()
        await asyncio.gather(reminding, return_exceptions=True)
        await stop()

    return stopped


def _sent(sending: set[asyncio.Task[None]]) -> Callable[[asyncio.Task[None]], None]:
    def done(task: asyncio.Task[None]) -> None:
        sending.discard(task)
        if not task.cancelled() and task.exception() is not None:
            # Only viewers on other processes miss this note; the next round's brings them up.
            log.warning("could not tell the other processes of a round: %s", task.exception())

    return done
