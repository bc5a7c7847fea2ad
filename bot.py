"""Run Krigbot: ``python bot.py`` (settings from the environment or .env; see .env.example)."""

from __future__ import annotations

import argparse
import asyncio
import gc
import logging
import signal
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from krigbot import logs
from krigbot.config import ConfigError, Settings
from krigbot.render.worker import warm_up_workers

if TYPE_CHECKING:
    import discord

    from krigbot.storage import Storage

log = logging.getLogger("krigbot")

GC_THRESHOLDS = (10_000, 10, 10)
"""CPython's cyclic garbage collector, tuned for a long-running server (defaults: 700, 10, 10).

Nearly everything one interaction allocates in discord.py ends in reference cycles (the
interaction and its response point at each other), so it is freed only by the collector. In a
run of ``python -m bench.bot --images off --idle-games 200 --seconds 6`` the default thresholds
made 690 collections taking 1.3 s in all; these make 25, taking 0.6 s. Larger thresholds save
little more and make each pause longer (50,000: 100-130 ms, against 15-25 ms here), which the
slowest replies feel (``python -m bench.soak``).
"""


def fail(message: str) -> int:
    """Print one line saying what to do, and return the exit status for bad set-up."""
    print(f"krigbot: {message}", file=sys.stderr)
    return 2


async def run(settings: Settings) -> int:
    """Open the database and run the bot until it is stopped."""
    from krigbot.storage import Storage, StorageError

    try:
        storage = await Storage.open(settings.database)
    except StorageError as exc:
        return fail(f"cannot use the database {settings.database_name}: {exc}")
    if settings.render_processes:
        # Before anything else that is slow: a worker takes a second to start. (Not before
        # the database: a start that fails there would wait for it on the way out.)
        warm_up_workers(settings.render_processes)
    # Logging starts once the database is open: a start that fails before says one line only.
    setup_logging(settings)
    log.info("starting %s with the database %s", settings.shards, settings.database_name)
    log.info("starting with %r", settings)
    try:
        return await serve(settings, storage)
    finally:
        await storage.close()


async def serve(settings: Settings, storage: Storage) -> int:
    """Log in and stay connected; return the exit status, with one line for a failed start."""
    # Imported only now, after run() set the picture workers starting: loading discord.py and
    # the bot takes most of a second, and a worker (which runs this file as its main module,
    # as "spawn" does) must not load them at all.
    import aiohttp
    import discord

    from krigbot.bot import KrigBot
    from krigbot.monitoring import Health, MonitorServer
    from krigbot.storage import StorageError

    if settings.rest_proxy is not None:
        # discord.py builds every request's URL from this class attribute, answers included.
        discord.http.Route.BASE = f"{settings.rest_proxy}/api/v{discord.http.INTERNAL_API_VERSION}"
    bot = KrigBot(settings, storage)
    monitor = None
    if settings.metrics_port is not None:
        monitor = MonitorServer(
            bot.metrics,
            Health(discord=bot.gateway_problem, database=storage.probe),
            host=settings.metrics_host,
            port=settings.metrics_port,
        )
        try:
            await monitor.start()
        except OSError as exc:
            return fail(
                f"cannot serve metrics on {settings.metrics_host}:{settings.metrics_port} "
                f"({exc.strerror or exc}): choose another KRIG_METRICS_PORT or unset it."
            )
    web = None
    if settings.web_port is not None:
        from krigbot.web.server import WebView

        web = WebView(storage, bot.web, clock=lambda: bot.service.clock())
        try:
            await web.start(settings.web_host, settings.web_port)
        except OSError as exc:
            if monitor is not None:
                await monitor.close()
            return fail(
                f"cannot serve the web view on {settings.web_host}:{settings.web_port}: {exc}"
            )
    gc.set_threshold(*GC_THRESHOLDS)
    freezer = asyncio.create_task(freeze_when_ready(bot))
    loop = asyncio.get_running_loop()
    try:
        async with bot:
            start = asyncio.create_task(bot.start(settings.token))
            stop = Stop(bot, start)
            for sig in (signal.SIGTERM, signal.SIGINT):
                loop.add_signal_handler(sig, stop.now)
            await stop.started()
    except discord.LoginFailure:
        return fail(BAD_TOKEN)
    except discord.PrivilegedIntentsRequired:
        return fail("Discord refused the gateway intents; Krigbot needs no privileged intents.")
    except discord.ConnectionClosed as exc:
        if exc.code == AUTHENTICATION_FAILED:
            return fail(BAD_TOKEN)
        if exc.code == SHARDING_REQUIRED:
            return fail(
                "Discord requires more shards for this many servers: unset KRIG_SHARD_COUNT "
                "(Discord then chooses) or raise it, and start every process with the new count."
            )
        if exc.code == INVALID_SHARD:
            return fail(
                f"Discord refused the shards ({settings.shards}): check that KRIG_SHARD_COUNT "
                "is the same in every process of the bot and KRIG_SHARDS names shards below it."
            )
        return fail(f"Discord closed the connection for good (code {exc.code}: {exc.reason}).")
    except discord.Forbidden as exc:
        if settings.dev_guild is not None:
            return fail(
                f"Discord refused the commands for the server KRIG_DEV_GUILD={settings.dev_guild} "
                f"({exc.text or exc.status}): invite the bot there with the applications.commands "
                "scope, or leave KRIG_DEV_GUILD empty."
            )
        return fail(f"Discord refused the start-up ({exc.status}: {exc.text}).")
    except discord.DiscordServerError as exc:
        return fail(f"Discord's servers failed ({exc.status}); start again in a few minutes.")
    except discord.HTTPException as exc:
        return fail(f"Discord refused the start-up ({exc.status}: {exc.text or 'no reason'}).")
    except (aiohttp.ClientError, ConnectionError, TimeoutError, discord.GatewayNotFound) as exc:
        # aiohttp.ClientError: refused, no route, no DNS (ClientConnectorError and kin).
        return fail(
            f"cannot reach Discord ({reason(exc)}): check this machine's internet connection "
            "and DNS, then start again."
        )
    except StorageError as exc:
        return fail(f"the database {settings.database_name} failed at start-up: {exc}")
    finally:
        freezer.cancel()
        if web is not None:
            await web.stop()
        if monitor is not None:
            await monitor.close()
    return 0


BAD_TOKEN = (
    "Discord rejected the token in DISCORD_TOKEN. Copy it again from the Developer "
    "Portal (your application → Bot → Reset Token) into .env."
)
AUTHENTICATION_FAILED = 4004
"""The gateway's close code for a token it does not accept."""
INVALID_SHARD = 4010
"""The gateway's close code for a shard id that is not below the shard count."""
SHARDING_REQUIRED = 4011
"""The gateway's close code for a shard with more servers than Discord allows one."""


STOP_SECONDS = 2.0
"""How long a stop waits for discord.py to end its start after closing the bot."""


class Stop:
    """Stop the bot on a signal, even while a shard is still trying to connect.

    discord.py's ``close()`` ends a bot that is connected, but a shard still making its first
    connection (Discord out of reach at start) tries again every 5 seconds for ever, closed or
    not, and ``start()`` never returns: after ``STOP_SECONDS`` the start is cancelled.
    """

    def __init__(self, bot: discord.Client, start: asyncio.Task[None]) -> None:
        self.bot = bot
        self.start = start
        self._stopping: asyncio.Task[None] | None = None

    def now(self) -> None:
        """Begin the stop (a second signal changes nothing)."""
        if self._stopping is None:
            self._stopping = asyncio.get_running_loop().create_task(self._stop())

    async def _stop(self) -> None:
        await self.bot.close()
        await asyncio.wait({self.start}, timeout=STOP_SECONDS)
        self.start.cancel()

    async def started(self) -> None:
        """Wait for the start to end: at a stop, or with the error that ended it."""
        try:
            await self.start
        except asyncio.CancelledError:
            task = asyncio.current_task()
            if self._stopping is None or (task is not None and task.cancelling()):
                raise  # cancelled from outside, not by a stop


def reason(exc: BaseException) -> str:
    """Return an error as a few words for one line (no traceback)."""
    return str(exc) or type(exc).__name__


def setup_logging(settings: Settings) -> None:
    """Log one line an event to stderr, secrets hidden (the bot leaves out what concerns voice)."""
    logs.setup(settings.log_level, settings.log_format, secrets=[settings.token])


async def freeze_when_ready(bot: discord.Client) -> None:
    """Once connected, set aside what start-up built so the collector never walks it again.

    Modules, Discord's caches of servers and channels, the restored games: objects that live as
    long as the bot. gc.freeze() moves them out of the collector's generations for good, at once.
    (No collection first: with 10,000 restored games it would hold up the first answers.)
    """
    await bot.wait_until_ready()
    gc.freeze()


SETTINGS = (
    ("DISCORD_TOKEN", "the bot's token (required)"),
    ("KRIG_DB", "the SQLite file (default data/krig.db, inside this folder)"),
    ("KRIG_DATABASE_URL", "a postgresql:// URL to use instead of KRIG_DB"),
    ("KRIG_DEV_GUILD", "a server id to sync the commands to at once"),
    ("LOG_LEVEL", "DEBUG, INFO (default), WARNING, ERROR or CRITICAL"),
    ("KRIG_LOG_FORMAT", "text (default) or json"),
    ("KRIG_METRICS_PORT", "serve /metrics and /healthz on this port"),
    ("KRIG_METRICS_HOST", "their address (default 127.0.0.1)"),
    ("KRIG_IDLE_HOURS", "hours without a flip before a game may be abandoned (24)"),
    ("KRIG_CHALLENGE_SECONDS", "how long a challenge waits (300)"),
    ("KRIG_CHOICE_SECONDS", "Steal War: time for a choice (60)"),
    ("KRIG_AUTOPLAY_SECONDS", "autoplay edits at most once per this many seconds (1.2)"),
    ("KRIG_RENDER_PROCESSES", "processes drawing the pictures (1; 0: threads)"),
    ("KRIG_SHARD_COUNT", "the bot's number of shards, the same in all its processes"),
    ("KRIG_SHARDS", "the shards this process runs, e.g. 0-3"),
    ("KRIG_REST_SHARE", "this process's part of Discord's 50 requests a second"),
    ("KRIG_REST_PROXY", "a shared REST proxy for every request to Discord"),
    ("KRIG_IDENTIFY_SECONDS", "the pause between two connections of a start bucket (5)"),
    ("KRIG_WEB_PORT", "serve the web view on this port"),
    ("KRIG_WEB_HOST", "its address (default 127.0.0.1)"),
    ("KRIG_WEB_URL", "its public address, for the links the bot posts"),
    ("KRIG_WEB_SECRET", "at least 16 random characters signing its links (with a port)"),
)
"""What ``--help`` lists: every setting ``Settings.load`` reads."""


def arguments(folder: Path) -> argparse.ArgumentParser:
    """Return the command line: no arguments, and a ``--help`` saying where settings come from."""
    width = max(len(name) for name, _ in SETTINGS)
    listed = "\n".join(f"  {name:<{width}}  {meaning}" for name, meaning in SETTINGS)
    return argparse.ArgumentParser(
        prog="python bot.py",
        description="Run Krigbot until it is stopped (Ctrl-C or SIGTERM stop it safely).",
        epilog=(
            f"It takes its settings from the environment, and from {folder / '.env'}\nfor what "
            f"the environment does not set (see .env.example and the README's Configuration):"
            f"\n{listed}"
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )


def main(argv: list[str] | None = None) -> int:
    """Read the settings and run."""
    # The settings and the database are this file's folder's, wherever it is started from.
    folder = Path(__file__).resolve().parent
    arguments(folder).parse_args(argv)
    try:
        settings = Settings.load(folder=folder)
    except ConfigError as exc:
        return fail(str(exc))
    return asyncio.run(run(settings))


if __name__ == "__main__":
    raise SystemExit(main())
