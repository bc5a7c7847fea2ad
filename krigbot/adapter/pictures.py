"""Pictures on the table: the round as an image, the game's story as a chart, per server.

Pictures are drawn in worker processes by default (``KRIG_RENDER_PROCESSES``): a round's picture
costs about 4 ms of CPU (``python -m bench.pictures``), which in the bot's own process would
compete with the event loop for the interpreter lock and slow every reply; in a worker it uses
another core. With 0 workers they are drawn in threads. A server can turn pictures off with
``/krig settings``.

Outside games with choices the next round is fixed by the position, so once a round is shown its
successor is drawn ahead in an idle worker; the next ``/flip`` then sends it without waiting for
the worker. A picture drawn ahead is used only for the very round it was drawn from: same game,
same number of moves made, and the same arguments to :func:`render_round`, which is a pure
function of them, so the bytes are those a live drawing would give.
"""

from __future__ import annotations

import asyncio
import functools
import io
import logging
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

import discord

from krigbot.i18n import Lang, t
from krigbot.render.bracket import draw_bracket
from krigbot.render.chart import render_chart
from krigbot.render.story import story_of
from krigbot.render.table import render_round
from krigbot.render.tournament import Shown
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
AHEAD_MOST = 128
"""Games whose next picture is kept drawn ahead at once (about 60 KB each); the oldest go first."""
AHEAD_IDLE = 300.0
"""Seconds a picture drawn ahead is kept for a game nobody flips."""
T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class RoundArgs:
    """Everything a round's picture is drawn from: equal arguments, equal bytes."""

    played: Round
    names: tuple[str, ...]
    lang: Lang
    total_cards: int
    teams: bool

    @classmethod
    def of(cls, row: GameRow, game: Variant, played: Round, lang: Lang) -> RoundArgs:
        """Return the arguments of a round just played in a game."""
        return cls(played, tuple(row.names), lang, sum(game.counts) or 1, game.rules.teams)

    def drawing(self) -> Callable[[], bytes]:
        """Return the call that draws the picture; only the renderer's module goes to a worker."""
        return functools.partial(
            render_round,
            self.played,
            self.names,
            self.lang,
            total_cards=self.total_cards,
            teams=self.teams,
        )


@dataclass(frozen=True, slots=True)
class DrawnAhead:
    """The picture of a game's next round, drawn (or being drawn) before anyone flipped."""

    moves_made: int
    """The game's moves made once that round is played: a picture for this position only."""
    args: RoundArgs
    png: asyncio.Future[bytes]
    since: float


class Pictures:
    """Render pictures for messages, and remember each server's choice to show them."""

    def __init__(
        self,
        storage: Storage,
        *,
        processes: int = 1,
        metrics: Metrics | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.storage = storage
        self.clock = clock
        self._processes = processes
        self._metrics = metrics
        self._enabled: dict[int, bool] = {}
        self._in_flight = 0
        if metrics is not None:
            metrics.watch_render_backlog(lambda: self._in_flight)
        self._warming: asyncio.Future[bool] | None = None
        self.skipped = 0
        """Pictures left out because drawing was backlogged (a busy moment, not an error)."""
        self._ahead: OrderedDict[int, DrawnAhead] = OrderedDict()
        """Each game's next picture by game id, the least recently drawn first."""
        self._drawing_ahead = 0
        self._owed: set[int] = set()
        """Games whose last round went out without its picture: their next round waits for its.

        So that when the workers cannot draw every round (many games flipping at once), each
        game still shows at least every other round's picture, and flips slow down to what the
        workers draw instead of outrunning them; a game whose next round is not flipped keeps
        its id here until it is.
        """
        self.ahead_used = 0
        """Rounds shown with the picture drawn ahead for them."""

    async def start(self) -> None:
        """Start the drawing worker warming up, without waiting for it.

        Spawning it takes about a second; the bot connects meanwhile (a restart is ready to
        answer sooner), and a picture asked for before the worker is ready is drawn in a thread.
        """
        if self._processes and self._warming is None:
            self._warming = asyncio.wrap_future(warm_up_workers(self._processes))

    async def warmed_up(self) -> None:
        """Wait until the drawing workers are ready (at once where there are none)."""
        if self._warming is not None:
            await asyncio.shield(self._warming)

    def _in_threads(self) -> bool:
        """Tell whether pictures are drawn in this process's threads now (no worker is ready)."""
        starting = self._warming is not None and not self._warming.done()
        return self._processes == 0 or starting

    def _submit(self, call: Callable[[], T]) -> asyncio.Future[T]:
        """Hand a drawing to a worker (or, with none ready, to a thread)."""
        if self._in_threads():
            # Until the worker is ready (a second or so after a start) pictures are drawn here,
            # so the first answers after a restart wait for neither.
            return asyncio.ensure_future(asyncio.to_thread(call))
        return asyncio.wrap_future(pool(self._processes).submit(call))

    async def _render(
        self, draw: Callable[..., T], *args: object, owed: bool = False, **kwargs: object
    ) -> T | None:
        """Draw in a worker; return None (text only) when drawing is backlogged or slow.

        ``owed``: the picture is drawn and waited for (at most ``RENDER_TIMEOUT``) however
        backlogged the workers are.
        """
        if not owed and self._in_flight >= BACKLOG_PER_WORKER * max(1, self._processes):
            self.skipped += 1
            return None
        return await self._wait(self._submit(functools.partial(draw, *args, **kwargs)))

    async def _wait(self, work: Awaitable[T], *, timed: bool = True) -> T | None:
        """Wait for a drawing for a reply; return None (text only) when it is slow.

        ``timed``: count the wait as the drawing's time (a drawing ahead counts its own).
        """
        self._in_flight += 1
        started = time.perf_counter()
        try:
            drawn = await asyncio.wait_for(work, RENDER_TIMEOUT)
        except TimeoutError:
            self.skipped += 1
            log.warning("a picture took over %.1f s; the round is shown as text", RENDER_TIMEOUT)
            return None
        finally:
            self._in_flight -= 1
        if timed and self._metrics is not None:
            self._metrics.render_seconds.observe(time.perf_counter() - started)
        return drawn

    async def enabled(self, guild_id: int) -> bool:
        """Tell whether a server shows pictures (on unless a moderator turned them off)."""
        known = self._enabled.get(guild_id)
        if known is None:
            known = await self.storage.settings.get_setting(guild_id, SETTING) != "off"
            self._enabled[guild_id] = known
        return known

    async def set_enabled(self, guild_id: int, on: bool) -> None:
        """Store a server's choice."""
        await self.storage.settings.set_setting(guild_id, SETTING, "on" if on else "off")
        self._enabled[guild_id] = on

    async def round_picture(
        self, row: GameRow, game: Variant, played: Round, lang: Lang, embed: discord.Embed
    ) -> discord.File | None:
        """Return the table picture of a round and show it in the embed (None: text only).

        The next round's picture is then drawn ahead, for the next flip.
        """
        args = RoundArgs.of(row, game, played, lang)
        ahead = self._ahead.pop(row.id, None)
        png: bytes | None = None
        slow = False
        if ahead is not None and ahead.moves_made == game.moves_made and ahead.args == args:
            png = await self._drawn_ahead(ahead)
            # Still drawing: it was slow (the round goes as text, and the drawing is dropped if
            # a worker has not started it), not failed (drawn again).
            slow = png is None and not ahead.png.done()
            if slow:
                ahead.png.cancel()
        if png is None and not slow:
            png = await self._render(args.drawing(), owed=row.id in self._owed)
        if png is None and not game.finished:
            self._owed.add(row.id)
        else:
            self._owed.discard(row.id)
        self._draw_ahead(row, game, lang)
        if png is None:
            return None
        embed.set_image(url=f"attachment://{ROUND_FILE}")
        return discord.File(io.BytesIO(png), filename=ROUND_FILE)

    def draw_ahead(self, row: GameRow, game: Variant, lang: Lang) -> None:
        """Draw a new deal's first round before anyone flips, where pictures are known to be on.

        Known from an earlier flip or setting in the server: an accept does not wait for the
        database to ask (behind slow writes that could cost it Discord's 3 seconds).
        """
        if self._enabled.get(row.guild_id, False):
            self._draw_ahead(row, game, lang)

    async def _drawn_ahead(self, ahead: DrawnAhead) -> bytes | None:
        """Wait for a picture drawn ahead, as for a live one; None if it failed or is slow."""
        try:
            if ahead.png.done():  # drawn before the flip: the reply waits for nothing
                png: bytes | None = ahead.png.result()
            else:
                png = await self._wait(asyncio.shield(ahead.png), timed=False)
        except Exception:  # a worker that died drawing it: draw it again, live
            log.exception("a picture drawn ahead failed; drawing it again")
            return None
        if png is not None:
            self.ahead_used += 1
        return png

    def _draw_ahead(self, row: GameRow, game: Variant, lang: Lang) -> None:
        """Start drawing the next round's picture, if a worker is idle and the round is fixed.

        Never in front of a reply: only while no picture is waited for and a worker is free,
        and never in a thread (that would take the event loop's interpreter lock). A game
        owed its next picture is the exception: that picture will be waited for anyway, and
        drawn while the players look at the round it follows, it is ready sooner.
        """
        now = self.clock()
        while self._ahead:
            oldest = next(iter(self._ahead.values()))
            if now - oldest.since < AHEAD_IDLE:
                break
            self._ahead.popitem(last=False)
        if game.has_choices or game.finished:
            return
        busy = self._in_flight or self._drawing_ahead >= self._processes
        if (busy and row.id not in self._owed) or self._in_threads():
            return
        peek = game.copy()
        played = peek.play_round()
        args = RoundArgs.of(row, peek, played, lang)
        png = self._submit(args.drawing())
        self._drawing_ahead += 1
        png.add_done_callback(functools.partial(self._ahead_done, time.perf_counter()))
        self._ahead[row.id] = DrawnAhead(peek.moves_made, args, png, now)
        self._ahead.move_to_end(row.id)
        while len(self._ahead) > AHEAD_MOST:
            self._ahead.popitem(last=False)

    def _ahead_done(self, started: float, png: asyncio.Future[bytes]) -> None:
        """Count a drawing ahead as done, however it ended, and its time."""
        self._drawing_ahead -= 1
        if png.cancelled() or png.exception() is not None:
            return  # retrieved: a picture nobody uses fails quietly, one used fails at the flip
        if self._metrics is not None:
            self._metrics.render_seconds.observe(time.perf_counter() - started)

    def ahead_for(self, game_id: int) -> Awaitable[bytes] | None:
        """Return the picture drawn ahead for a game's next round, if one is kept."""
        ahead = self._ahead.get(game_id)
        return None if ahead is None else asyncio.shield(ahead.png)

    async def bracket_picture(self, shown: Shown, lang: Lang) -> bytes | None:
        """Return the PNG of a tournament's bracket or standings (None: text only this time)."""
        return await self._render(draw_bracket, shown, lang)

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
        story.counts,
        names,
        lang,
        wars=story.wars,
        winners=story.winners,
        title=title,
        x_label=x_label,
        y_label=y_label,
        teams=story.teams,
    )
    return png, story.lead_changes
