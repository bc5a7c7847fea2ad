"""Pictures on the table: the round as an image, the game's story as a chart, per server.

Pictures are drawn in worker processes by default (``KRIG_RENDER_PROCESSES``): a round's picture
costs about 10 ms of CPU, which in the bot's own process would compete with the event loop for
the interpreter lock and slow every reply; in a worker it uses another core. With 0 workers
they are drawn in threads. A server can turn pictures off with ``/krig settings``.
"""

from __future__ import annotations

import asyncio
import functools
import io
import logging
import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, TypeVar

import discord

from krigbot.i18n import Lang, t
from krigbot.render.chart import render_chart
from krigbot.render.story import story_of
from krigbot.render.table import render_round
from krigbot.render.worker import pool, warm_up_workers

if TYPE_CHECKING:
    from krigbot.engine import Round, Variant
    from krigbot.monitoring import Metrics
    from krigbot.storage import GameRow, Storage

log = logging.getLogger(__name__)

SETTING = "images"
ROUND_FILE = "round.png"
STORY_FILE = "story.png"
BACKLOG_PER_WORKER = 6
"""Pictures waiting per worker before a round goes out as text only (~100 ms of drawing)."""
RENDER_TIMEOUT = 1.0
"""Seconds a picture may take; past that the round goes out without it, well inside 3 s."""
T = TypeVar("T")


class Pictures:
    """Render pictures for messages, and remember each server's choice to show them."""

    def __init__(
        self, storage: Storage, *, processes: int = 1, metrics: Metrics | None = None
    ) -> None:
        self.storage = storage
        self._processes = processes
        self._metrics = metrics
        self._enabled: dict[int, bool] = {}
        self._in_flight = 0
        if metrics is not None:
            metrics.watch_render_backlog(lambda: self._in_flight)
        self._warming: asyncio.Future[bool] | None = None
        self.skipped = 0
        """Pictures left out because drawing was backlogged (a busy moment, not an error)."""

    async def start(self) -> None:
        """Start the drawing worker warming up, without waiting for it.

        Spawning it takes about a second; the bot connects meanwhile (a restart is ready to
        answer sooner), and a picture asked for before the worker is ready is drawn in a thread.
        """
        if self._processes and self._warming is None:
            self._warming = asyncio.wrap_future(warm_up_workers(self._processes))

    async def _render(self, draw: Callable[..., T], *args: object, **kwargs: object) -> T | None:
        """Draw in a worker; return None (text only) when drawing is backlogged or slow."""
        if self._in_flight >= BACKLOG_PER_WORKER * max(1, self._processes):
            self.skipped += 1
            return None
        call = functools.partial(draw, *args, **kwargs)
        self._in_flight += 1
        started = time.perf_counter()
        try:
            work: Awaitable[T]
            starting = self._warming is not None and not self._warming.done()
            if self._processes == 0 or starting:
                # Until the worker is ready (a second or so after a start) pictures are drawn
                # here, so the first answers after a restart wait for neither.
                work = asyncio.to_thread(call)
            else:
                work = asyncio.get_running_loop().run_in_executor(pool(self._processes), call)
            drawn = await asyncio.wait_for(work, RENDER_TIMEOUT)
        except TimeoutError:
            self.skipped += 1
            log.warning("a picture took over %.1f s; the round is shown as text", RENDER_TIMEOUT)
            return None
        finally:
            self._in_flight -= 1
        if self._metrics is not None:
            self._metrics.render_seconds.observe(time.perf_counter() - started)
        return drawn

    async def enabled(self, guild_id: int) -> bool:
        """Tell whether a server shows pictures (on unless a moderator turned them off)."""
        known = self._enabled.get(guild_id)
        if known is None:
            known = await self.storage.get_setting(guild_id, SETTING) != "off"
            self._enabled[guild_id] = known
        return known

    async def set_enabled(self, guild_id: int, on: bool) -> None:
        """Store a server's choice."""
        await self.storage.set_setting(guild_id, SETTING, "on" if on else "off")
        self._enabled[guild_id] = on

    async def round_picture(
        self, row: GameRow, game: Variant, played: Round, lang: Lang, embed: discord.Embed
    ) -> discord.File | None:
        """Return the table picture of a round and show it in the embed (None: text only)."""
        png = await self._render(
            render_round,
            played,
            list(row.names),
            lang,
            total_cards=sum(game.counts) or 1,
            teams=game.rules.teams,
        )
        if png is None:
            return None
        embed.set_image(url=f"attachment://{ROUND_FILE}")
        return discord.File(io.BytesIO(png), filename=ROUND_FILE)

    async def story_picture(
        self, row: GameRow, game: Variant, lang: Lang
    ) -> tuple[discord.Embed, discord.File] | None:
        """Return an embed with the chart of the game so far and its picture (None: none)."""
        drawn = await self._render(
            draw_story,
            game.to_dict(),
            list(row.names),
            lang,
            (t(lang, "chart.title"), t(lang, "chart.x_label"), t(lang, "chart.y_label")),
        )
        if drawn is None:
            return None
        png, lead_changes = drawn
        embed = discord.Embed(
            title=t(lang, "chart.title"),
            description=t(lang, "chart.lead_changes", count=lead_changes, n=lead_changes),
            colour=discord.Colour.dark_green(),
        )
        embed.set_image(url=f"attachment://{STORY_FILE}")
        return embed, discord.File(io.BytesIO(png), filename=STORY_FILE)


def draw_story(
    saved: dict[str, Any], names: list[str], lang: Lang, labels: tuple[str, str, str]
) -> tuple[bytes, int]:
    """Replay a saved game and draw its chart; return the PNG and the number of lead changes.

    A module-level function, so a worker process can run all of it: the replay of a long game
    is tens of milliseconds that the event loop does not have to spend.
    """
    story = story_of(saved)
    title, x_label, y_label = labels
    png = render_chart(
        story.counts, names, lang, wars=story.wars, title=title, x_label=x_label, y_label=y_label
    )
    return png, story.lead_changes
