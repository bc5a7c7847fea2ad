"""Run Krigbot: ``python bot.py`` (settings from the environment or .env; see .env.example)."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import logging
import random
import signal
import socket
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from krigbot import logs
from krigbot.config import ConfigError, Settings, client_secret
from krigbot.render.worker import warm_up_workers

if TYPE_CHECKING:
    import discord

    from krigbot.bot import KrigBot
    from krigbot.storage import Storage
    from krigbot.web.activity import ActivitySignIn

T = TypeVar("T")

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


SET_UP_ERROR = 2
"""The exit status of a start that a person must mend: a missing or rejected token, a bad
setting, a database that cannot be used. ``deploy/krigbot.service`` does not restart it
(``RestartPreventExitStatus=``); any other failure exits 1, which it restarts. Trouble that
passes by itself (Discord or PostgreSQL out of reach) never ends the process: it is retried."""

RETRY_FIRST_SECONDS = 1.0
"""The ceiling of the first pause before trying again; each failed attempt doubles it."""
RETRY_MOST_SECONDS = 60.0
"""The highest ceiling: a long outage costs a try a minute, and the bot is back within one of its
end."""


def fail(message: str) -> int:
    """Print one line saying what to do, and return the exit status for bad set-up."""
    print(f"krigbot: {message}", file=sys.stderr)
    return SET_UP_ERROR


def retry_pause(attempt: int) -> float:
    """Return the pause before try ``attempt + 1``: a random part of a doubling, capped ceiling.

    Random so that many bots (or the processes of one) cut off together do not come back in step.
    """
    ceiling = min(RETRY_MOST_SECONDS, RETRY_FIRST_SECONDS * 2 ** min(attempt, 32))
    return random.uniform(ceiling / 2, ceiling)


class Stop:
    """SIGTERM and SIGINT end the run, at any moment of it: in a pause before trying again,
    while the database is being reached, while a shard is still trying to connect.

    discord.py's ``close()`` ends a bot that is connected, but a shard still making its first
    connection (Discord's gateway out of reach at start) tries again every 5 seconds for ever,
    closed or not, and ``start()`` never returns: after ``STOP_SECONDS`` the start is cancelled.
    """

    def __init__(self) -> None:
        self.requested = asyncio.Event()
        self._bot: discord.Client | None = None
        self._start: asyncio.Task[None] | None = None
        self._stopping: asyncio.Task[None] | None = None

    def install(self) -> None:
        """Take over SIGTERM and SIGINT for the running loop."""
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, self.now)

    def now(self) -> None:
        """Begin the stop (a second signal changes nothing)."""
        self.requested.set()
        if self._bot is not None and self._start is not None and self._stopping is None:
            self._stopping = asyncio.get_running_loop().create_task(
                self._stop(self._bot, self._start)
            )

    @staticmethod
    async def _stop(bot: discord.Client, start: asyncio.Task[None]) -> None:
        await bot.close()
        await asyncio.wait({start}, timeout=STOP_SECONDS)
        start.cancel()

    async def pause(self, seconds: float) -> bool:
        """Wait ``seconds``, or less if a stop comes; tell whether one came."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.requested.wait(), seconds)
        return self.requested.is_set()

    async def until_done(self, work: Awaitable[T]) -> T | None:
        """Return what ``work`` returns, or None (``work`` cancelled) if a stop comes first."""
        task = asyncio.ensure_future(work)
        stopped = asyncio.create_task(self.requested.wait())
        try:
            await asyncio.wait({task, stopped}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            stopped.cancel()
        if task.done():
            return task.result()
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        return None

    async def run(self, bot: discord.Client, start: asyncio.Task[None]) -> None:
        """Wait for the start to end: at a stop, or with the error that ended it."""
        self._bot, self._start, self._stopping = bot, start, None
        if self.requested.is_set():
            self.now()
        try:
            await start
        except asyncio.CancelledError:
            task = asyncio.current_task()
            if self._stopping is None or (task is not None and task.cancelling()):
                raise  # cancelled from outside, not by a stop
        finally:
            self._bot = self._start = None
            if self._stopping is not None:
                # The start ends as soon as the bot is closed, before its close has handed
                # the shards over: the database stays open until that is done too.
                await asyncio.gather(self._stopping, return_exceptions=True)


async def run(settings: Settings) -> int:
    """Open the database and run the bot until it is stopped."""
    stop = Stop()
    stop.install()
    storage = await open_storage(settings, stop)
    if isinstance(storage, int):
        return storage
    if settings.render_processes:
        # Before anything else that is slow: a worker takes a second to start. (Not before
        # the database: a start that fails there would wait for it on the way out.)
        warm_up_workers(settings.render_processes)
    # Logging starts once the database is open: a start that fails before says one line only.
    setup_logging(settings)
    log.info("Krigbot is starting: database %s, %s", settings.database_name, settings.shards)
    log.debug("settings: %r", settings)
    try:
        return await serve(settings, storage, stop)
    finally:
        await storage.close()


async def open_storage(settings: Settings, stop: Stop) -> Storage | int:
    """Open the database, trying again while PostgreSQL is out of reach; or the exit status."""
    from krigbot.storage import Storage, StorageError

    attempt = 0
    while True:
        try:
            storage = await stop.until_done(Storage.open(settings.database))
        except StorageError as exc:
            if not database_away(settings, exc):
                return fail(f"cannot use the database {settings.database_name}: {exc}")
            if attempt == 0:
                setup_logging(settings)  # the retries are logged lines, in the log's format
            pause = retry_pause(attempt)
            log.warning(
                "the database %s is out of reach (%s); trying again in %.1f s",
                settings.database_name,
                exc,
                pause,
            )
            attempt += 1
            if await stop.pause(pause):
                return 0
            continue
        return 0 if storage is None else storage


POSTGRES_AWAY = frozenset({"57P01", "57P02", "57P03", "53300"})
"""PostgreSQL's SQLSTATEs for a server that is shutting down, restarting, starting or full of
connections: it will answer again by itself. (``08…``, the connection errors, are too.)"""


def database_away(settings: Settings, exc: BaseException) -> bool:
    """Tell whether a database that failed at start is only out of reach for now.

    PostgreSQL refusing the connection, its host without a route or a DNS answer, a server
    starting up: as at boot, when the bot may start before it. A wrong password, a database that
    does not exist, one from a newer Krigbot, and every SQLite file's trouble need a person.
    """
    if settings.database_url is None:
        return False
    cause = exc.__cause__
    if isinstance(cause, OSError | TimeoutError):
        return True
    state = getattr(cause, "sqlstate", None)
    return isinstance(state, str) and (state.startswith("08") or state in POSTGRES_AWAY)


class Transient(Exception):
    """A start that failed for a reason that passes by itself; ``str()`` is the line to log."""


async def serve(settings: Settings, storage: Storage, stop: Stop) -> int:
    """Log in and stay connected; return the exit status, with one line for a failed start.

    A start that fails for a passing reason (Discord out of reach, its servers failing) is tried
    again, by a new bot, after a growing pause, with one line a try; until stopped.
    """
    # Imported only now, after run() set the picture workers starting: loading discord.py and
    # the bot takes most of a second, and a worker (which runs this file as its main module,
    # as "spawn" does) must not load them at all.
    import discord

    from krigbot.bot import KrigBot
    from krigbot.monitoring import Health, MonitorServer
    from krigbot.monitoring.server import link

    if settings.rest_proxy is not None:
        # discord.py builds every request's URL from this class attribute, answers included.
        discord.http.Route.BASE = f"{settings.rest_proxy}/api/v{discord.http.INTERNAL_API_VERSION}"
    # The first bot's counters and web links serve every later try: the monitoring endpoint
    # and the web view keep theirs.
    bots = [KrigBot(settings, storage)]
    monitor = None
    if settings.metrics_port is not None:
        monitor = MonitorServer(
            bots[0].metrics,
            Health(discord=lambda: bots[-1].gateway_problem(), database=storage.probe),
            host=settings.metrics_host,
            port=settings.metrics_port,
        )
        try:
            await monitor.start()
        except OSError as exc:
            return fail(
                f"cannot serve metrics on {link(settings.metrics_host, settings.metrics_port)} "
                f"({exc.strerror or exc}): choose another KRIG_METRICS_PORT or unset it."
            )
    web = None
    if settings.web_port is not None:
        from krigbot.render.worker import pool
        from krigbot.web.server import WebView

        web = WebView(
            storage,
            bots[0].web,
            activity=activity_sign_in(
                settings, lambda: bots[-1].application_id, discord.http.Route.BASE
            ),
            games=bots[0].activity_desk,
            clock=lambda: bots[-1].service.registry.clock(),
            live=bots[0].live,
            # The fonts' slices are cut where the pictures are drawn, off the bot's interpreter.
            font_cutter=pool(settings.render_processes) if settings.render_processes else None,
        )
        try:
            await web.start(settings.web_host, settings.web_port)
        except OSError as exc:
            if monitor is not None:
                await monitor.close()
            return fail(
                f"cannot serve the web view on {link(settings.web_host, settings.web_port)}: {exc}"
            )
    gc.set_threshold(*GC_THRESHOLDS)
    try:
        attempt = 0
        while not stop.requested.is_set():
            try:
                return await connect(settings, bots[-1], stop)
            except Transient as exc:
                pause = retry_pause(attempt)
                log.warning("%s; trying again in %.1f s", exc, pause)
                attempt += 1
                if await stop.pause(pause):
                    break
                bots.append(
                    KrigBot(
                        settings,
                        storage,
                        metrics=bots[0].metrics,
                        web=bots[0].web,
                        live=bots[0].live,
                        activity_desk=bots[0].activity_desk,
                    )
                )
                del bots[:-2]  # the first (whose metrics serve) and the one trying now
    finally:
        if web is not None:
            await web.stop()
        if monitor is not None:
            await monitor.close()
    return 0


def activity_sign_in(
    settings: Settings, client_id: Callable[[], int | None], api_base: str
) -> ActivitySignIn | None:
    """Return the Activity's sign-in where the application has one and its secret is given.

    ``api_base``: Discord's API as every request of the bot reaches it (a REST proxy's too).
    """
    if not settings.activity:
        return None
    secret = client_secret()
    if secret is None:
        log.warning(
            "KRIG_ACTIVITY is on but KRIG_CLIENT_SECRET is not in the environment: "
            "the Activity cannot sign anyone in"
        )
        return None
    from krigbot.web.activity import ActivitySignIn

    return ActivitySignIn(client_id=client_id, client_secret=secret, api_base=api_base)


async def connect(settings: Settings, bot: KrigBot, stop: Stop) -> int:
    """Run one bot until it is stopped; the exit status, or Transient for a start to try again."""
    import aiohttp
    import discord

    from krigbot.storage import StorageError

    freezer = asyncio.create_task(freeze_when_ready(bot))
    try:
        async with bot:
            await stop.run(bot, asyncio.create_task(bot.start(settings.token)))
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
        if exc.code in FINAL_CLOSE_CODES:
            return fail(f"Discord closed the connection for good (code {exc.code}: {exc.reason}).")
        raise Transient(f"Discord closed the connection (code {exc.code})") from exc
    except discord.Forbidden as exc:
        if settings.dev_guild is not None:
            return fail(
                f"Discord refused the commands for the server KRIG_DEV_GUILD={settings.dev_guild} "
                f"({exc.text or exc.status}): invite the bot there with the applications.commands "
                "scope, or leave KRIG_DEV_GUILD empty."
            )
        return fail(f"Discord refused the start-up ({exc.status}: {exc.text}).")
    except discord.DiscordServerError as exc:
        raise Transient(f"Discord's servers failed ({exc.status})") from exc
    except discord.HTTPException as exc:
        if exc.status == TOO_MANY_REQUESTS:
            raise Transient("Discord asked the bot to slow down (429)") from exc
        return fail(f"Discord refused the start-up ({exc.status}: {exc.text or 'no reason'}).")
    except (aiohttp.ClientError, ConnectionError, TimeoutError, discord.GatewayNotFound) as exc:
        # aiohttp.ClientError: refused, no route, no DNS (ClientConnectorError and kin).
        raise Transient(f"Discord is out of reach ({reason(exc)})") from exc
    except StorageError as exc:
        if database_away(settings, exc):
            raise Transient(
                f"the database {settings.database_name} is out of reach ({exc})"
            ) from exc
        return fail(f"the database {settings.database_name} failed at start-up: {exc}")
    finally:
        freezer.cancel()
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
FINAL_CLOSE_CODES = frozenset({4001, 4002, 4003, 4005, 4012, 4013, 4014})
"""The gateway's close codes that trying again cannot mend (a client that speaks the protocol
wrong, a refused version or intents); any other (4000 unknown error, 4008 too fast, 4009 session
timed out) is tried again."""
TOO_MANY_REQUESTS = 429
"""What discord.py raises after its own retries of a 429, or at once for Cloudflare's ban."""


STOP_SECONDS = 2.0
"""How long a stop waits for discord.py to end its start after closing the bot."""


def reason(exc: BaseException) -> str:
    """Return an error as a few words for one line (no traceback)."""
    import aiohttp

    if isinstance(exc, aiohttp.ClientConnectorError):
        where = f"{exc.host}:{exc.port}"
        cause = exc.os_error
        if isinstance(cause, socket.gaierror):
            return f"no DNS answer for {exc.host}"
        if isinstance(cause, ConnectionRefusedError):
            return f"{where} refused the connection"
        return f"{where}: {cause.strerror or cause}"
    if isinstance(exc, TimeoutError):
        return "no answer in time"
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
    ("KRIG_CARD_EMOJIS", "on (default) or off: the cards as the application's emojis"),
    ("KRIG_SHARD_COUNT", "the bot's number of shards, the same in all its processes"),
    ("KRIG_SHARDS", "the shards this process runs, e.g. 0-3; auto: claimed in PostgreSQL"),
    ("KRIG_REST_SHARE", "this process's part of Discord's 50 requests a second"),
    ("KRIG_REST_PROXY", "a shared REST proxy for every request to Discord"),
    ("KRIG_IDENTIFY_SECONDS", "the pause between two connections of a start bucket (5)"),
    ("KRIG_WEB_PORT", "serve the web view on this port"),
    ("KRIG_WEB_HOST", "its address (default 127.0.0.1)"),
    ("KRIG_WEB_URL", "its public address, for the links the bot posts"),
    ("KRIG_WEB_SECRET", "at least 16 random characters signing its links (with a port)"),
    ("KRIG_ACTIVITY", "on or off (default): /krig table launches the application's Activity"),
    ("KRIG_CLIENT_SECRET", "the application's OAuth2 secret (environment only, never .env)"),
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
