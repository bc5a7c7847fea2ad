"""How busy the bot's event loop is: what decides that a command defers before its work starts.

Every command competes for the one event loop. A command waits for its deferral timer (a second,
``adapter.replies.DEFER_AFTER``); behind a backlog every timer fires late by however long a turn of
the loop takes, and a deferral sent late misses Discord's 3 seconds. Deferring first avoids that
but costs a request and a follow-up: on a loop that keeps up, nearly twice the bot's work for a
flip. So a command defers first only when more commands are in progress than the bot has
answered in the last ``BACKLOG_SECONDS`` (and at least ``BUSY``). A burst that arrives at a
quiet bot is such a backlog; a bot that answers 1,000 flips a second with 200 in progress at a
time, each waiting a fifth of a second, is not, and deferring there would only halve how many
it can answer.

How late the loop runs its timers is measured too (a probe falls due every ``PROBE_SECONDS``)
and served as a metric, but it does not make commands defer: a loop held up a moment ago, by a
step that is over, leaves no backlog for the next command, and deferring on it turned a
refusal of bad input into a public "thinking" message on a loaded machine. An interaction the
bot reads late is caught by its age (``adapter.replies.BACKLOGGED``).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque
from typing import Final

PROBE_SECONDS: Final = 0.05
"""How often the probe falls due: 20 timers a second, nothing next to a flip's work."""
MEMORY_SECONDS: Final = 1.0
"""How long a late probe, and an answered command, are remembered."""
BUSY: Final = 32
"""Commands in progress below which none defers first for their number alone."""
BACKLOG_SECONDS: Final = 1.0
"""A new command defers first when the commands in progress are more than the bot answered in
this long, lately: the last of them would wait that long for its turn, past its deferral timer
(``DEFER_AFTER``), which would then fire late. Not less: a bot short of CPU answers slowly and
so defers more, which makes it slower still. At half a second, four processes sharing two cores
(``python -m bench.cluster --processes 4``) deferred 13-34 % of their flips, not 6-8 %, and
answered 855 a second, not 1,022 (medians of 5 runs)."""


class Load:
    """The commands in progress and answered lately, and the event loop's lateness."""

    def __init__(self) -> None:
        self._loop: asyncio.AbstractEventLoop | None = None
        self._handle: asyncio.TimerHandle | None = None
        self._due = 0.0
        slots = round(MEMORY_SECONDS / PROBE_SECONDS)
        self._late: deque[float] = deque(maxlen=slots)
        self._answered: deque[tuple[float, int]] = deque(maxlen=slots)
        """For each of the last probes: when its interval began, and the commands answered in it."""
        self._interval = 0.0
        self._answering = 0
        """Commands answered since the last probe."""
        self.in_progress = 0
        """Commands being answered now."""
        self._counting = _Counting(self)

    def start(self) -> None:
        """Start probing the running loop (again, after :meth:`stop`)."""
        self.stop()
        self._loop = asyncio.get_running_loop()
        self._interval = self._loop.time()
        self._probe_at(self._interval)

    def stop(self) -> None:
        """Stop probing; :meth:`lag` reads 0 from now on."""
        if self._handle is not None:
            self._handle.cancel()
        self._handle = None
        self._loop = None
        self._late.clear()
        self._answered.clear()

    def lag(self) -> float:
        """Return the worst lateness lately: of the recent probes, or of the one overdue now.

        The overdue one counts at once: a command started in the middle of a long turn of the
        loop learns of that turn before the probe gets to run.
        """
        if self._loop is None:
            return 0.0
        overdue = self._loop.time() - self._due
        return max(overdue, max(self._late, default=0.0), 0.0)

    def answered_per_second(self) -> float:
        """Return the commands answered a second, over about the last ``MEMORY_SECONDS``."""
        if self._loop is None:
            return 0.0
        since = self._answered[0][0] if self._answered else self._interval
        answered = sum(count for _, count in self._answered) + self._answering
        return answered / max(self._loop.time() - since, MEMORY_SECONDS)

    def backlogged(self) -> bool:
        """Tell whether a command starting now should defer before its work starts."""
        waiting = self.in_progress
        return waiting >= BUSY and waiting > self.answered_per_second() * BACKLOG_SECONDS

    def command(self) -> contextlib.AbstractContextManager[None]:
        """Count one command as in progress, then as answered (in the block, then after it)."""
        return self._counting

    def _probe_at(self, now: float) -> None:
        assert self._loop is not None
        self._due = now + PROBE_SECONDS
        self._handle = self._loop.call_at(self._due, self._probed)

    def _probed(self) -> None:
        assert self._loop is not None
        now = self._loop.time()
        self._late.append(now - self._due)
        self._answered.append((self._interval, self._answering))
        self._interval, self._answering = now, 0
        self._probe_at(now)


class _Counting(contextlib.AbstractContextManager[None]):
    """What :meth:`Load.command` returns: counters moved on entry and exit, one object for
    every command (it runs for each; a generator would be made for each)."""

    __slots__ = ("_load",)

    def __init__(self, load: Load) -> None:
        self._load = load

    def __enter__(self) -> None:
        self._load.in_progress += 1

    def __exit__(self, *_: object) -> None:
        load = self._load
        load.in_progress -= 1
        load._answering += 1
