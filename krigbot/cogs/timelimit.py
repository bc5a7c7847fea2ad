"""The time limit (RULES §7 ``time_limit``): when a game's time is up, the bot counts the cards.

The engine has no clock; this cog is the one deadline scheduler of games with a time limit. It
keeps every such game's deadline (the deal's time, stored with the game, plus its minutes), so
a restarted bot finds them all again and ends at once those whose time ran out while it was
down. One task looks at the service's clock, never longer than ``TICK_SECONDS`` apart, so a
clock that jumps (a test's, or a machine woken from sleep) is noticed promptly. The end itself
is a move like a flip: under the channel's lock, committed with its results, then announced in
the channel. A flip that comes after the deadline but before this timer ends the game the same
way (the service checks the clock on every move).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

import discord
from discord.ext import commands

from krigbot.cogs.matches import ending
from krigbot.cogs.replies import NO_MENTIONS
from krigbot.cogs.tables import Shown, Tables, editor
from krigbot.i18n import lang_for, t
from krigbot.logs import about, context
from krigbot.render.play import time_up_embed
from krigbot.sessions import Refusal
from krigbot.storage import StorageError

if TYPE_CHECKING:
    from krigbot.sessions import AnyGame, FlipResult, GameService
    from krigbot.storage import GameRow
    from krigbot.web.access import WebAccess

log = logging.getLogger(__name__)

TICK_SECONDS = 1.0
"""The longest the scheduler sleeps before it looks at the clock again."""
RETRY = timedelta(seconds=5)
"""How soon an end that could not be saved is tried again."""


class TimeLimitCog(commands.Cog, name="TimeLimit"):
    """Ends games by counting the cards when their time limit is up, and says so."""

    def __init__(
        self, bot: commands.Bot, *, service: GameService, tables: Tables, web: WebAccess
    ) -> None:
        self.bot = bot
        self.service = service
        self.tables = tables
        self.web = web
        self._deadlines: dict[int, tuple[datetime, int]] = {}
        """Game id -> (when its time is up, its channel)."""
        self._changed = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._ending: set[asyncio.Task[None]] = set()
        self.service.on_deal.append(self.watch)
        self.service.on_finish.append(self._finished)

    async def cog_load(self) -> None:
        self._task = asyncio.create_task(self._run(), name="krig-time-limits")

    async def cog_unload(self) -> None:
        self.service.on_deal.remove(self.watch)
        self.service.on_finish.remove(self._finished)
        for task in (self._task, *self._ending):
            if task is not None:
                task.cancel()
        self._task = None

    def watch(self, row: GameRow) -> None:
        """Remember a running game's deadline, if it has a time limit."""
        deadline = self.service.deadline(row)
        if deadline is None:
            return
        self._deadlines[row.id] = (deadline, row.channel_id)
        self._changed.set()

    def restore(self) -> int:
        """Watch the time-limited games that were running when the bot stopped; return how many.

        Those whose time ran out meanwhile are ended at once by the scheduler.
        """
        for row, game in self.service.running():
            if not game.finished:
                self.watch(row)
        return len(self._deadlines)

    async def _finished(self, row: GameRow, game: AnyGame) -> None:
        # However the game ended, its time limit has nothing left to do.
        self._deadlines.pop(row.id, None)

    # --------------------------------------------------------------------- scheduler

    async def _run(self) -> None:
        while True:
            self._changed.clear()
            now = self.service.clock()
            for game_id, (deadline, channel_id) in list(self._deadlines.items()):
                if deadline <= now:
                    del self._deadlines[game_id]
                    task = asyncio.create_task(
                        self._time_up(game_id, channel_id), name=f"krig-time-up-{game_id}"
                    )
                    self._ending.add(task)
                    task.add_done_callback(self._ending.discard)
            timeout: float | None = None
            if self._deadlines:
                soonest = min(deadline for deadline, _ in self._deadlines.values())
                timeout = min(max((soonest - now).total_seconds(), 0.0), TICK_SECONDS)
            with contextlib.suppress(TimeoutError):
                # The time left, not a wait for something: a new deadline cuts it short.
                await asyncio.wait_for(self._changed.wait(), timeout)

    async def _time_up(self, game_id: int, channel_id: int) -> None:
        # The channel's turn, from before the end is committed until its message is out, so
        # nothing that raced it shows up after the end (as for every other end of a game).
        async with self.tables.turn(channel_id):
            await self._end_in_turn(game_id, channel_id)

    async def _end_in_turn(self, game_id: int, channel_id: int) -> None:
        try:
            result = await self.service.end_in_time(channel_id, game_id)
        except (Refusal, StorageError) as exc:  # the database is unwell: nothing changed
            log.warning(
                "could not end game %s at its time limit: %s",
                game_id,
                exc,
                extra=context(game_id=game_id),
            )
            self._deadlines[game_id] = (self.service.clock() + RETRY, channel_id)
            self._changed.set()
            return
        except Exception:
            log.exception(
                "could not end game %s at its time limit", game_id, extra=context(game_id=game_id)
            )
            return
        if result is None:
            return
        if result.outcome is None:
            # Not yet by the clock: watch again. A Steal War battle under way is ended by its
            # last move instead, which checks the time too.
            deadline = self.service.deadline(result.row)
            if deadline is not None and self.service.clock() < deadline:
                self.watch(result.row)
            return
        await self._announce(result)

    async def _announce(self, result: FlipResult) -> None:
        """Post the end of a game its time ended; its old table loses its buttons and says so."""
        row, game = result.row, result.game
        lang = lang_for(row.extra.get("lang"))
        embed = time_up_embed(row, game, lang)
        over = await ending(self.service, row, game, lang, embed, self.web)
        channel = self.bot.get_partial_messageable(row.channel_id)
        try:
            message = await channel.send(embed=embed, view=over.view, allowed_mentions=NO_MENTIONS)
        except discord.HTTPException as exc:
            # The end stays marked as unshown: the next start of the bot shows it.
            log.warning("could not announce the end of game %s: %s", row.id, exc, extra=about(row))
            return
        tables = self.tables
        table = tables.live(row.channel_id)
        if table is not None:
            # The old table goes grey and points to the result below.
            tables.forget(row.channel_id, table.message_id)
            tables.retire(table, content=t(lang, "time.table_over"))
        elif row.table_message_id is not None:  # not known since a restart: edit it directly
            old = channel.get_partial_message(row.table_message_id)
            try:
                await old.edit(
                    content=t(lang, "time.table_over"), view=None, allowed_mentions=NO_MENTIONS
                )
            except discord.HTTPException as exc:
                log.warning(
                    "could not take the buttons off game %s's table: %s",
                    row.id,
                    exc,
                    extra=about(row),
                )
        edit = editor(self.bot, row.channel_id, message.id)
        tables.show(row.channel_id, Shown(message.id, over.view, edit))
        tables.end_game(row.id)
        await over.sent(message.id)
