"""Append-only event logs that tests can await (futures resolved on append, never polling)."""

# The public waits take ``timeout=`` (``await rec.response(timeout=5)``) on purpose: tests
# read better that way than wrapped in ``asyncio.timeout``, and the guard needs the value.
# ruff: noqa: ASYNC109

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Generic, TypeVar

T = TypeVar("T")


class StandInTimeout(AssertionError):
    """A wait on the stand-in ran out of time (an ``AssertionError``: pytest shows a failure)."""


class BotCrashed(AssertionError):
    """The task running the bot ended (with an exception, or at all) while a test waited on it."""


Guard = Callable[[asyncio.Future[int], float, str], Awaitable[int]]


class EventLog(Generic[T]):
    """A list of items that also wakes the coroutines waiting for a matching item.

    ``guard`` is how a wait is performed; the stand-in supplies one that also stops waiting
    when a watched bot task dies, so a crash fails fast instead of running into the timeout.
    """

    def __init__(self, guard: Guard | None = None) -> None:
        self.items: list[T] = []
        self._waiters: list[tuple[int, Callable[[T], bool], asyncio.Future[int]]] = []
        self._guard = guard

    def __len__(self) -> int:
        return len(self.items)

    def append(self, item: T) -> None:
        index = len(self.items)
        self.items.append(item)
        still: list[tuple[int, Callable[[T], bool], asyncio.Future[int]]] = []
        for start, predicate, future in self._waiters:
            if future.done():
                continue
            if index >= start and predicate(item):
                future.set_result(index)
            else:
                still.append((start, predicate, future))
        self._waiters = still

    def find(self, start: int, predicate: Callable[[T], bool]) -> int | None:
        """Index of the first item at/after ``start`` matching ``predicate`` (None if none yet)."""
        for index in range(start, len(self.items)):
            if predicate(self.items[index]):
                return index
        return None

    def future(self, start: int, predicate: Callable[[T], bool]) -> asyncio.Future[int]:
        """A future resolved with the index of the first matching item at or after ``start``.

        Cancel it when no longer interested; cancelled futures are dropped on the next append.
        """
        future: asyncio.Future[int] = asyncio.get_running_loop().create_future()
        found = self.find(start, predicate)
        if found is not None:
            future.set_result(found)
        else:
            self._waiters.append((start, predicate, future))
        return future

    async def wait_index(
        self, start: int, predicate: Callable[[T], bool], timeout: float, what: str
    ) -> int:
        """Wait until an item at or after ``start`` matches; return its index.

        Raises :class:`StandInTimeout` (mentioning ``what``) after ``timeout`` seconds.
        """
        future = self.future(start, predicate)
        if future.done():
            return future.result()
        try:
            if self._guard is not None:
                return await self._guard(future, timeout, what)
            try:
                return await asyncio.wait_for(future, timeout)
            except TimeoutError:
                raise StandInTimeout(f"timed out after {timeout}s waiting for {what}") from None
        finally:
            if not future.done():
                future.cancel()

    async def wait(
        self,
        predicate: Callable[[T], bool] | None = None,
        *,
        start: int = 0,
        timeout: float = 5.0,
        what: str = "an event",
    ) -> T:
        """Wait for (or return at once) the first item at/after ``start`` matching ``predicate``."""
        index = await self.wait_index(start, predicate or (lambda _item: True), timeout, what)
        return self.items[index]

    def cursor(self) -> Cursor[T]:
        """A cursor positioned at the end: its ``next()`` only sees items appended from now on."""
        return Cursor(self, len(self.items))


class Cursor(Generic[T]):
    """Reads an :class:`EventLog` in order from a position; each ``next()`` moves past its item.

    Create it *before* triggering the action whose effect you want to await, so nothing that
    happens in between can be missed.
    """

    def __init__(self, log: EventLog[T], position: int) -> None:
        self._log = log
        self.position = position

    async def next(
        self,
        predicate: Callable[[T], bool] | None = None,
        *,
        timeout: float = 5.0,
        what: str = "the next event",
    ) -> T:
        """The next item (matching ``predicate``, skipping others) after the cursor position."""
        index = await self._log.wait_index(
            self.position, predicate or (lambda _item: True), timeout, what
        )
        self.position = index + 1
        return self._log.items[index]

    def pending(self) -> list[T]:
        """Items appended since the cursor position, without moving it."""
        return self._log.items[self.position :]
