"""What the bot counts while it runs, as Prometheus metrics (``prometheus-client``).

One :class:`Metrics` per bot, with a registry of its own, so two bots in one process (the tests
run many) never share a counter. Counting is always on, whether or not the endpoint serves it:
an increment is a lock and an addition, far below what a flip costs, and nothing branches on it.
"""

from __future__ import annotations

import math
import re
import time
from collections import deque
from collections.abc import Callable
from typing import Final, Literal

import aiohttp
import discord
from aiohttp.client_middlewares import ClientHandlerType
from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

Outcome = Literal["answered", "refused", "failed", "late"]
"""How an interaction ended for the person who sent it.

``answered``: they got the bot's answer; ``refused``: a translated line saying why nothing
happened (not their game, bad input, a stale button, the database refused the write);
``failed``: an error of ours, logged with its traceback; ``late``: Discord no longer took the
answer (its 3 seconds passed, or it kept failing).
"""

GatewayState = Literal["connected", "resuming", "disconnected"]
GATEWAY_STATES: Final[tuple[GatewayState, ...]] = ("connected", "resuming", "disconnected")

# Reply times that matter to a player are milliseconds to Discord's 3-second deadline.
REPLY_BUCKETS: Final = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.0, 3.0, 5.0)
COMMIT_BUCKETS: Final = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.5, 1.0, 5.0)
BATCH_BUCKETS: Final = (1, 2, 4, 8, 16, 32, 64)
RENDER_BUCKETS: Final = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5)


class Metrics:
    """The bot's counters, histograms and gauges, in a registry of their own."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        r = self.registry
        self.interactions = Counter(
            "krig_interactions",
            "Interactions (slash commands and button presses) by command and outcome.",
            ["command", "outcome"],
            registry=r,
        )
        self.reply_seconds = Histogram(
            "krig_reply_seconds",
            "Time from Discord creating an interaction to the bot's first response to it.",
            buckets=REPLY_BUCKETS,
            registry=r,
        )
        self.rounds = Counter("krig_rounds", "Rounds played, in every game.", registry=r)
        self.games_started = Counter(
            "krig_games_started",
            "Games dealt (every player accepted), by variant.",
            ["variant"],
            registry=r,
        )
        self.games_finished = Counter(
            "krig_games_finished",
            "Games that ended with a result, by variant and why they ended.",
            ["variant", "reason"],
            registry=r,
        )
        self.games_abandoned = Counter(
            "krig_games_abandoned",
            "Games that ended without a result (cancelled, idle, unreadable), by variant.",
            ["variant"],
            registry=r,
        )
        self.running_games = Gauge(
            "krig_running_games", "Games being played now, in this process.", registry=r
        )
        self.commit_seconds = Histogram(
            "krig_db_commit_seconds",
            "Time of one database write, from sending it to its commit.",
            buckets=COMMIT_BUCKETS,
            registry=r,
        )
        self.batch_size = Histogram(
            "krig_db_batch_size",
            "Writes that went to the database together as one statement.",
            buckets=BATCH_BUCKETS,
            registry=r,
        )
        self.render_seconds = Histogram(
            "krig_render_seconds",
            "Time to draw one picture (a table or a chart), including the worker's round trip.",
            buckets=RENDER_BUCKETS,
            registry=r,
        )
        self.render_backlog = Gauge(
            "krig_render_backlog", "Pictures asked for and not yet drawn.", registry=r
        )
        self.event_loop_lag = Gauge(
            "krig_event_loop_lag_seconds",
            "How late the event loop ran its timers, at worst over the last second.",
            registry=r,
        )
        self.discord_errors = Counter(
            "krig_discord_http_errors",
            "Answers from Discord's REST API that were 429 (rate limited) or 5xx, by status.",
            ["status"],
            registry=r,
        )
        self.write_conflicts = Counter(
            "krig_db_write_conflicts",
            "Writes the database refused because another process had moved the game first.",
            registry=r,
        )
        self.rest = RestRate()
        """This process's requests against Discord's global limit, over the last second."""
        self.rest_requests = Counter(
            "krig_discord_requests",
            "Requests to Discord's REST API, by kind: 'interaction' (answers, follow-ups and "
            "their edits: exempt from the global limit) or 'global' (everything else).",
            ["kind"],
            registry=r,
        )
        self.rest_rate = Gauge(
            "krig_discord_global_requests_per_second",
            "Requests that count against Discord's global limit, over the last second.",
            registry=r,
        )
        self.rest_rate.set_function(self.rest.per_second)
        self.gateway = Gauge(
            "krig_gateway_state",
            "1 for the state each shard's gateway connection is in, 0 for the others.",
            ["shard", "state"],
            registry=r,
        )

    def interaction(self, command: str, outcome: Outcome) -> None:
        """Count one interaction's outcome."""
        self.interactions.labels(command, outcome).inc()

    def gateway_state(self, shard: int, state: GatewayState) -> None:
        """Record the state a shard's gateway connection is now in."""
        for name in GATEWAY_STATES:
            self.gateway.labels(str(shard), name).set(1 if name == state else 0)

    def watch_running_games(self, count: Callable[[], int]) -> None:
        """Read the number of running games from ``count`` whenever the metrics are scraped."""
        self.running_games.set_function(count)

    def watch_event_loop(self, lag: Callable[[], float]) -> None:
        """Read the event loop's lag from ``lag`` whenever the metrics are scraped."""
        self.event_loop_lag.set_function(lag)

    def watch_render_backlog(self, count: Callable[[], int]) -> None:
        """Read the picture backlog from ``count`` whenever the metrics are scraped."""
        self.render_backlog.set_function(count)


_CALLBACK: Final = re.compile(r"/interactions/(\d+)/[^/]+/callback$")
_EXEMPT: Final = re.compile(r"/(interactions/\d+/[^/]+/callback|webhooks/\d+/[^/]+)(/|$)")
"""An interaction's answer, or its follow-ups and their edits (the interaction's webhook):
what Discord's global limit of requests a second leaves out."""
WINDOW: Final = 1.0
"""Seconds over which the global request rate is counted."""
SLOW_AT: Final = 0.8
"""The part of its share of the global limit at which a process's autoplay starts slowing."""


class RestRate:
    """Count this process's requests against Discord's global limit over the last second."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._times: deque[float] = deque()
        self._turns: deque[float] = deque()
        """Turns taken (:meth:`take_turn`) whose request has not been counted yet."""

    def count(self) -> None:
        """Count one request sent now (or the one a turn was taken for)."""
        now = self._clock()
        while self._turns and self._turns[0] <= now - WINDOW:
            self._turns.popleft()  # a turn never used: the step sent nothing
        if self._turns:
            self._turns.popleft()  # already counted when the turn was taken
        else:
            self._times.append(now)
        self._drop_before(now - WINDOW)

    def take_turn(self, budget: float) -> float:
        """Take a turn for one request if there is room (0.0), else return the seconds to wait.

        The turn counts at once, so many callers waking together cannot all take the same room.
        """
        wait = self.room_in(budget)
        if wait == 0.0:
            now = self._clock()
            self._times.append(now)
            self._turns.append(now)
        return wait

    def per_second(self) -> float:
        """Return the requests of the last second."""
        self._drop_before(self._clock() - WINDOW)
        return len(self._times) / WINDOW

    def room_in(self, budget: float) -> float:
        """Return the seconds until one more request keeps the last second under ``SLOW_AT``
        of ``budget`` requests a second (0.0: now)."""
        allowed = max(1, math.floor(budget * SLOW_AT))
        now = self._clock()
        self._drop_before(now - WINDOW)
        if len(self._times) < allowed:
            return 0.0
        return max(0.0, self._times[len(self._times) - allowed] + WINDOW - now)

    def _drop_before(self, start: float) -> None:
        while self._times and self._times[0] <= start:
            self._times.popleft()


def is_exempt(path: str) -> bool:
    """Tell whether a request to ``path`` is left out of Discord's global limit."""
    return _EXEMPT.search(path) is not None


def is_rest(path: str) -> bool:
    """Tell a REST request (``/api/v10/…``) from the gateway's websocket."""
    return "/api/v" in path


def count_rest(session: aiohttp.ClientSession, metrics: Metrics) -> None:
    """Have discord.py's HTTP session feed the REST figures, from its next request on.

    Every first response to an interaction is a POST to its callback URL, whichever code path
    sent it, and the interaction's id in that URL holds when Discord created it: so the reply
    time is measured here, once, for every kind of answer. Each request is counted as it
    starts, as exempt from Discord's global limit or not (:class:`RestRate`). Rate limits
    (429) and Discord's own failures (5xx) are counted for every request. Nothing of the URL
    is kept: it holds the interaction's token.

    A middleware of the session, not an ``aiohttp.TraceConfig``: a trace makes aiohttp build
    and send seven signals a request whatever listens, about 11 µs of each reply's CPU (3 %
    of a flip's), where the middleware is one call around the request. discord.py makes the
    session itself, so it is added to the session's own middlewares.
    """
    # Each request counts; the labelled children are looked up once, not per request.
    interaction_requests = metrics.rest_requests.labels("interaction")
    global_requests = metrics.rest_requests.labels("global")

    async def counted(
        request: aiohttp.ClientRequest, handler: ClientHandlerType
    ) -> aiohttp.ClientResponse:
        path = request.url.path
        if is_rest(path):
            if is_exempt(path):
                interaction_requests.inc()
            else:
                global_requests.inc()
                metrics.rest.count()
        response = await handler(request)
        status = response.status
        if status == 429 or status >= 500:
            metrics.discord_errors.labels(str(status)).inc()
        if request.method == "POST" and status < 300:
            match = _CALLBACK.search(path)
            if match is not None:
                created = discord.utils.snowflake_time(int(match[1]))
                age = (discord.utils.utcnow() - created).total_seconds()
                metrics.reply_seconds.observe(max(0.0, age))
        return response

    session._middlewares = (*session._middlewares, counted)
