"""One deadline scheduler for every game: challenge expiry, Steal War choices, the time limit.

Each game has at most one pending deadline of each kind. One task watches them on the service's
clock, never sleeping longer than ``TICK_SECONDS``, so a clock that jumps (a test's, or a
machine woken from sleep) is noticed promptly. When a deadline is due it is dropped and the
handler registered for its kind runs in a task of its own: the edge (a cog) registers one per
kind, so the Discord work stays there and this layer never imports it.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Literal, TypeVar

from krigbot.logs import context
from krigbot.sessions.results import LostWrite, Refusal
from krigbot.storage import StorageError

log = logging.getLogger(__name__)

TICK_SECONDS = 1.0
"""The longest the scheduler sleeps before it looks at the clock again."""
RETRY = timedelta(seconds=5)
"""How soon a deadline whose move could not be saved is tried again."""

T = TypeVar("T")

DeadlineKind = Literal[
    "challenge",
    "choice",
    "time_limit",
    "tournament_signup",
    "tournament_round",
    "tournament_threads",
]
"""A challenge's expiry, the time-out of open Steal War choices, a game's time limit; a
tournament's sign-up closing, its round's end, and another try at opening its round's threads
after Discord refused (keyed by the tournament's id, not a game's)."""


@dataclass(frozen=True, slots=True)
class Deadline:
    """When something happens to a game by itself, unless a player comes first."""

    kind: DeadlineKind
    game_id: int
    channel_id: int
    at: datetime
    message_id: int | None = None
    """The message the deadline changes, where it is not the game's table (a challenge's)."""
    server_id: int | None = None
    """The game's server (None: a chat): whose shard's process makes the move."""

    def moved(self, at: datetime) -> Deadline:
        """Return the same deadline at another time (a retry after a failure)."""
        return dataclasses.replace(self, at=at)


Handler = Callable[[Deadline], Awaitable[None]]


def _tell(level: int, message: str, deadline: Deadline, *, exc_info: bool = False) -> None:
    """Log a line about a deadline: ``message`` takes its kind, then its game's id."""
    log.log(
        level,
        message,
        deadline.kind,
        deadline.game_id,
        exc_info=exc_info,
        stacklevel=2,
        extra=context(game_id=deadline.game_id),
    )


class Deadlines:
    """Keep every game's pending deadlines and call their kind's handler when one is due."""

    def __init__(self, clock: Callable[[], datetime]) -> None:
        self._clock = clock
        self._pending: dict[tuple[int, DeadlineKind], Deadline] = {}
        self._handlers: dict[DeadlineKind, Handler] = {}
        self._changed = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._firing: set[asyncio.Task[None]] = set()
        self._closed = False
        self.owns: Callable[[int | None], bool] = lambda _server: True
        """Whether this process runs a server's shard now: a deadline falls due only there
        (with ``KRIG_SHARDS=auto`` a shard may have moved to another process since it was
        set; that process restored the deadline, and makes the move)."""

    def handle(self, kind: DeadlineKind, handler: Handler | None) -> None:
        """Call ``handler`` with each due deadline of ``kind`` (None: stop calling one)."""
        if handler is None:
            self._handlers.pop(kind, None)
        else:
            self._handlers[kind] = handler

    def set(self, deadline: Deadline) -> None:
        """Replace the game's pending deadline of the same kind with this one."""
        self._pending[deadline.game_id, deadline.kind] = deadline
        self._changed.set()
        if not self._closed and (self._task is None or self._task.done()):
            self._task = asyncio.create_task(self._run(), name="krig-deadlines")

    def cancel(self, game_id: int, kind: DeadlineKind | None = None) -> None:
        """Drop a game's pending deadline of ``kind``, or all of them (a handler running stays)."""
        kinds: tuple[DeadlineKind, ...] = (
            ("challenge", "choice", "time_limit") if kind is None else (kind,)
        )
        for each in kinds:
            self._pending.pop((game_id, each), None)

    async def attempt(self, deadline: Deadline, move: Awaitable[T], doing: str) -> T | None:
        """Make a due deadline's move; if it could not be saved, try it again in ``RETRY``.

        ``doing`` names the move in the log line of a failure ("end the game at its time limit").
        """
        try:
            return await move
        except LostWrite:
            # Another process of the bot (a hand-off of its shard) moved the game on even after
            # it was read again: not a fault. It holds this deadline too; look again later.
            _tell(logging.INFO, "the %s deadline of game %s met another process's move", deadline)
            self.set(deadline.moved(self._clock() + RETRY))
            return None
        except (Refusal, StorageError) as exc:  # the database is unwell: nothing changed
            log.warning(
                "could not %s (game %s): %s",
                doing,
                deadline.game_id,
                exc,
                extra=context(game_id=deadline.game_id),
            )
            self.set(deadline.moved(self._clock() + RETRY))
            return None

    def pending(self, game_id: int, kind: DeadlineKind) -> Deadline | None:
        """Return a game's pending deadline of ``kind``, if any."""
        return self._pending.get((game_id, kind))

    async def close(self) -> None:
        """Stop watching for good, and stop the handlers still running."""
        self._closed = True
        tasks = [task for task in (self._task, *self._firing) if task is not None]
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        self._task = None

    async def _run(self) -> None:
        while True:
            self._changed.clear()
            now = self._clock()
            for key, deadline in list(self._pending.items()):
                if deadline.at <= now:
                    del self._pending[key]
                    self._fire(deadline)
            timeout: float | None = None
            if self._pending:
                soonest = min(deadline.at for deadline in self._pending.values())
                timeout = min(max((soonest - now).total_seconds(), 0.0), TICK_SECONDS)
            # The time left, not a wait for something: a new deadline cuts it short. Not
            # wait_for, which may swallow a cancellation that comes as the event is set.
            changed = asyncio.ensure_future(self._changed.wait())
            try:
                await asyncio.wait({changed}, timeout=timeout)
            finally:
                changed.cancel()

    def _fire(self, deadline: Deadline) -> None:
        if not self.owns(deadline.server_id):
            _tell(logging.INFO, "the %s deadline of game %s is another process's now", deadline)
            return
        handler = self._handlers.get(deadline.kind)
        if handler is None:
            _tell(logging.WARNING, "no handler for the %s deadline of game %s", deadline)
            return
        task = asyncio.create_task(
            self._call(handler, deadline), name=f"krig-{deadline.kind}-{deadline.game_id}"
        )
        self._firing.add(task)
        task.add_done_callback(self._firing.discard)

    @staticmethod
    async def _call(handler: Handler, deadline: Deadline) -> None:
        try:
            await handler(deadline)
        except Exception:
            # A mistake of ours would fail again: leave the game to the players' presses.
            _tell(logging.ERROR, "the %s deadline of game %s failed", deadline, exc_info=True)
