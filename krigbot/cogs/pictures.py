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
import multiprocessing
import os
import threading
import time
from collections.abc import Callable
from concurrent.futures import Executor, ProcessPoolExecutor
from typing import TYPE_CHECKING, Any, TypeVar

import discord

from krigbot.engine import Game, Rules, parse_cards
from krigbot.i18n import Lang, t
from krigbot.render.chart import render_chart
from krigbot.render.story import story_of
from krigbot.render.table import render_round

if TYPE_CHECKING:
    from krigbot.engine import Round
    from krigbot.sessions import AnyGame
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


def _exit_with_parent(parent: int) -> None:
    # A worker whose bot was killed (SIGKILL runs no clean-up) would wait for work forever;
    # it leaves as soon as it is adopted by another parent.
    while os.getppid() == parent:
        time.sleep(1.0)
    os._exit(0)


def _warm_up() -> None:
    """Watch the bot, and load fonts and caches, in a new worker."""
    threading.Thread(target=_exit_with_parent, args=(os.getppid(),), daemon=True).start()
    game = Game.from_piles(Rules.preset("standard"), [parse_cards(["KS"]), parse_cards(["2H"])])
    render_round(game.play_round(), ["Ada", "Bo"], "nb", total_cards=2)


def _ready() -> bool:
    """Answer from a worker once its warm-up is done (the pool runs it first)."""
    return True


@functools.cache
def _pool(processes: int) -> Executor:
    """Return the process pool with this many workers, shared by every bot in the process."""
    # "spawn": a fork of a process running discord.py's threads and event loop is not safe.
    return ProcessPoolExecutor(
        max_workers=processes,
        mp_context=multiprocessing.get_context("spawn"),
        initializer=_warm_up,
    )


class Pictures:
    """Render pictures for messages, and remember each server's choice to show them."""

    def __init__(self, storage: Storage, *, processes: int = 1) -> None:
        self.storage = storage
        self._processes = processes
        self._enabled: dict[int, bool] = {}
        self._in_flight = 0
        self.skipped = 0
        """Pictures left out because drawing was backlogged (a busy moment, not an error)."""

    async def start(self) -> None:
        """Start the drawing worker and let it warm up before the first round needs it."""
        if self._processes:
            await asyncio.get_running_loop().run_in_executor(_pool(self._processes), _ready)

    async def _render(self, draw: Callable[..., T], *args: object, **kwargs: object) -> T | None:
        """Draw in a worker; return None (text only) when drawing is backlogged or slow."""
        if self._in_flight >= BACKLOG_PER_WORKER * max(1, self._processes):
            self.skipped += 1
            return None
        call = functools.partial(draw, *args, **kwargs)
        self._in_flight += 1
        try:
            if self._processes == 0:
                work = asyncio.to_thread(call)
            else:
                work = asyncio.get_running_loop().run_in_executor(_pool(self._processes), call)
            return await asyncio.wait_for(work, RENDER_TIMEOUT)
        except TimeoutError:
            self.skipped += 1
            log.warning("a picture took over %.1f s; the round is shown as text", RENDER_TIMEOUT)
            return None
        finally:
            self._in_flight -= 1

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
        self, row: GameRow, game: AnyGame, played: Round, lang: Lang, embed: discord.Embed
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
        self, row: GameRow, game: AnyGame, lang: Lang
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
