"""The optional monitoring endpoint: ``/metrics`` for Prometheus and ``/healthz`` for a supervisor.

Served by the bot's own process with aiohttp (which discord.py already uses), on 127.0.0.1 unless
told otherwise: the metrics are for the host, not for the world.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass

from aiohttp import web
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from yarl import URL

from krigbot.monitoring.metrics import Metrics

log = logging.getLogger(__name__)

PROBE_SECONDS = 2.0
"""How long the database may take to answer a health check before the bot counts as unwell."""


def served_at(addresses: Iterable[object]) -> str:
    """Return the addresses a server's sockets listen on (``runner.addresses``) as links.

    >>> served_at([("127.0.0.1", 8080), ("::1", 8080, 0, 0), ("0.0.0.0", 80)])
    'http://127.0.0.1:8080/, http://[::1]:8080/, http://0.0.0.0/'
    """
    return ", ".join(
        link(str(address[0]), int(address[1]))
        if isinstance(address, tuple)
        else str(address)  # a Unix socket's path
        for address in addresses
    )


def link(host: str, port: int) -> str:
    """Return ``host`` and ``port`` as the link a server there would have.

    >>> link("::1", 9090), link("localhost", 80), link("no such host", 9090)
    ('http://[::1]:9090/', 'http://localhost/', 'no such host:9090')
    """
    try:
        return str(URL.build(scheme="http", host=host, port=port, path="/"))
    except ValueError:
        # A host no URL can hold (a mistyped setting) is shown as it was written.
        return f"{host}:{port}"


@dataclass(frozen=True, slots=True)
class Health:
    """What the health check asks: is Discord connected, does the database answer?"""

    discord: Callable[[], str | None]
    """Return None when every shard of this process is connected, or why not."""
    database: Callable[[], Awaitable[str | None]]
    """Return None when the database takes a write, or why not."""

    async def check(self) -> str | None:
        """Return None when the bot is healthy, or a one-line reason why it is not."""
        problem = self.discord()
        if problem is not None:
            return problem
        try:
            return await asyncio.wait_for(self.database(), PROBE_SECONDS)
        except TimeoutError:
            return f"the database did not answer within {PROBE_SECONDS:g} s"


class MonitorServer:
    """Serve ``/metrics`` and ``/healthz`` on one address until closed."""

    def __init__(self, metrics: Metrics, health: Health, *, host: str, port: int) -> None:
        self._metrics = metrics
        self._health = health
        self._host = host
        self._port = port
        self._runner: web.AppRunner | None = None
        self.port: int | None = None
        """The port it listens on once started (the one asked for, or the one given for 0)."""

    async def start(self) -> None:
        """Start listening; raises OSError if the address cannot be used."""
        app = web.Application()
        app.router.add_get("/metrics", self._serve_metrics)
        app.router.add_get("/healthz", self._serve_health)
        runner = web.AppRunner(app, access_log=None, handle_signals=False)
        await runner.setup()
        site = web.TCPSite(runner, self._host, self._port)
        try:
            await site.start()
        except OSError:
            await runner.cleanup()
            raise
        self._runner = runner
        self.port = int(runner.addresses[0][1])
        log.info("monitoring on %s (/metrics, /healthz)", served_at(runner.addresses))

    async def close(self) -> None:
        """Stop serving. Safe to call twice."""
        runner, self._runner = self._runner, None
        if runner is not None:
            await runner.cleanup()

    async def _serve_metrics(self, request: web.Request) -> web.Response:
        body = generate_latest(self._metrics.registry)
        return web.Response(body=body, headers={"Content-Type": CONTENT_TYPE_LATEST})

    async def _serve_health(self, request: web.Request) -> web.Response:
        problem = await self._health.check()
        if problem is None:
            return web.Response(text="ok\n")
        return web.Response(status=503, text=f"{problem}\n")
