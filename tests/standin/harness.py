"""Running a real discord.py bot in-process against a :class:`DiscordStandIn`."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Iterator
from typing import TYPE_CHECKING, TypeVar

import discord
import discord.gateway
import discord.http
import yarl

from tests.standin.events import BotCrashed, StandInTimeout
from tests.standin.server import format_log

if TYPE_CHECKING:
    from tests.standin.server import DiscordStandIn

ClientT = TypeVar("ClientT", bound=discord.Client)

#: Loggers whose ERROR records count as "the bot failed" (discord.py logs handler exceptions).
ERROR_LOGGERS = ("discord", "krigbot")


@contextlib.contextmanager
def pointed_at(standin: DiscordStandIn) -> Iterator[None]:
    """Point discord.py's REST base and default gateway at ``standin``; restore on exit."""
    old_base = discord.http.Route.BASE
    old_gateway = discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY
    discord.http.Route.BASE = standin.api_base
    discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY = yarl.URL(standin.gateway_url)
    try:
        yield
    finally:
        discord.http.Route.BASE = old_base
        discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY = old_gateway


class _ErrorCapture(logging.Handler):
    def __init__(self, standin: DiscordStandIn) -> None:
        super().__init__(logging.ERROR)
        self.standin = standin

    def emit(self, record: logging.LogRecord) -> None:
        self.standin.bot_errors.append(record)


@contextlib.asynccontextmanager
async def run_bot(
    bot: ClientT,
    standin: DiscordStandIn,
    *,
    token: str = "fake-token",
    ready_timeout: float = 10.0,
    fail_on_bot_errors: bool = True,
    close_timeout: float = 5.0,
) -> AsyncIterator[ClientT]:
    """Run ``bot`` against ``standin`` for the duration of the block.

    Patches ``Route.BASE``/``DEFAULT_GATEWAY`` (restored afterwards), starts ``bot.start(token)``
    in a task and waits for ``on_ready`` (give the bot ``guild_ready_timeout=0.05``, or this
    waits 2 s). If the task dies -- before ready or while a test awaits the stand-in -- the
    test fails with :class:`BotCrashed` carrying the exception. With ``fail_on_bot_errors``,
    ERROR records logged by discord.py/krigbot (e.g. "Ignoring exception in command") also fail
    waits immediately and the block on exit. On exit the bot is closed and any task it left
    running is cancelled, so nothing leaks into the next test.
    """
    capture = _ErrorCapture(standin)
    loggers = [logging.getLogger(name) for name in ERROR_LOGGERS]
    for logger in loggers:
        logger.addHandler(capture)
    errors_before = len(standin.bot_errors)
    previous_fail_fast = standin.fail_fast_on_bot_errors
    standin.fail_fast_on_bot_errors = fail_on_bot_errors
    tasks_before = asyncio.all_tasks()
    task: asyncio.Task[None] | None = None
    try:
        with pointed_at(standin):
            async with bot:
                task = asyncio.create_task(bot.start(token), name="standin-bot")
                ready = asyncio.create_task(bot.wait_until_ready(), name="standin-bot-ready")
                try:
                    done, _ = await asyncio.wait(
                        {task, ready}, timeout=ready_timeout, return_when=asyncio.FIRST_COMPLETED
                    )
                finally:
                    if not ready.done():
                        ready.cancel()
                        with contextlib.suppress(asyncio.CancelledError):
                            await ready
                if task in done:
                    exc = None if task.cancelled() else task.exception()
                    raise BotCrashed(
                        f"the bot stopped before it was ready: {exc!r}\n{standin.diagnostics()}"
                    ) from exc
                if ready not in done:
                    raise StandInTimeout(
                        f"the bot was not ready after {ready_timeout}s "
                        "(guild_ready_timeout too long?)\n"
                        f"{standin.diagnostics()}"
                    )
                standin.watch_task(task)
                try:
                    yield bot
                finally:
                    standin.unwatch_task(task)
                if task.done():
                    exc = None if task.cancelled() else task.exception()
                    if exc is not None or task.cancelled() or not bot.is_closed():
                        # Not a close the test asked for.
                        raise BotCrashed(f"the bot task ended during the test: {exc!r}") from exc
                new_errors = standin.bot_errors.items[
                    max(errors_before, standin.accepted_error_count) :
                ]
                if fail_on_bot_errors and new_errors:
                    raise BotCrashed(
                        "the bot logged errors during the test:\n"
                        + "\n".join(format_log(r) for r in new_errors)
                    )
    finally:
        if task is not None:
            await _stop(bot, task, close_timeout)
        await _cancel_leftovers(tasks_before)
        standin.fail_fast_on_bot_errors = previous_fail_fast
        for logger in loggers:
            logger.removeHandler(capture)


async def _stop(bot: discord.Client, task: asyncio.Task[None], grace: float) -> None:
    if not bot.is_closed():
        await bot.close()
    if not task.done():
        try:
            await asyncio.wait_for(asyncio.shield(task), grace)
        except TimeoutError:
            task.cancel()
    if task.done() and not task.cancelled():
        # Retrieved so asyncio does not warn "exception was never retrieved"; reported above.
        task.exception()
    with contextlib.suppress(asyncio.CancelledError, Exception):
        await task


async def _cancel_leftovers(before: set[asyncio.Task[object]]) -> None:
    """Cancel tasks the bot started (command invokers, view timeouts...) that outlived it.

    The stand-in's own tasks (aiohttp server handlers, gateway writers) are left alone: they
    end with the connection or when the stand-in closes.
    """
    current = asyncio.current_task()
    leftovers = []
    for task in asyncio.all_tasks() - before:
        if task is current or task.done():
            continue
        code = getattr(task.get_coro(), "cr_code", None)
        filename = code.co_filename if code is not None else ""
        if (
            "aiohttp" in filename
            or "/tests/standin/" in filename
            or task.get_name().startswith("standin-gateway")
        ):
            continue
        leftovers.append(task)
    for task in leftovers:
        task.cancel()
    if leftovers:
        await asyncio.wait(leftovers, timeout=2.0)
