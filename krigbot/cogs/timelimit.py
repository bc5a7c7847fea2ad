"""The time limit (rules §7 ``time_limit``): when a game's time is up, the bot counts the cards.

The engine has no clock; the session layer keeps every such game's deadline (the deal's time,
stored with the game, plus its minutes) in its one scheduler, so a restarted bot finds them all
again and ends at once those whose time ran out while it was down. This cog is its handler: the
end itself is a move like a flip, under the channel's lock, committed with its results, then
announced in the channel. A flip that comes after the deadline but before this ends the game
the same way (the service checks the clock on every move).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Protocol

import discord
from discord.ext import commands

from krigbot.adapter.endings import ending
from krigbot.adapter.parts import HasDeadlines, HasTimeLimits, TableParts
from krigbot.adapter.replies import NO_MENTIONS
from krigbot.adapter.surfaces import own_token
from krigbot.adapter.tables import Shown, editor
from krigbot.i18n import lang_for, t
from krigbot.logs import about
from krigbot.render.play import time_up_embed

if TYPE_CHECKING:
    from krigbot.sessions import Deadline, FlipResult

log = logging.getLogger(__name__)


class TimeLimitParts(TableParts, HasTimeLimits, HasDeadlines, Protocol):
    """What the time-limit cog uses."""


class TimeLimitCog(commands.Cog, name="TimeLimit"):
    """Ends games by counting the cards when their time limit is up, and says so."""

    def __init__(self, parts: TimeLimitParts) -> None:
        self.parts = parts
        self.parts.deadlines.handle("time_limit", self._time_up)

    async def cog_unload(self) -> None:
        self.parts.deadlines.handle("time_limit", None)

    async def _time_up(self, deadline: Deadline) -> None:
        # The channel's turn, from before the end is committed until its message is out, so
        # nothing that raced it shows up after the end (as for every other end of a game).
        async with self.parts.tables.turn(deadline.channel_id):
            await self._end_in_turn(deadline)

    async def _end_in_turn(self, deadline: Deadline) -> None:
        result = await self.parts.deadlines.attempt(
            deadline,
            self.parts.time_limits.end_in_time(deadline.channel_id, deadline.game_id),
            "end the game at its time limit",
        )
        if result is None:
            return
        if result.outcome is None:
            # Not yet by the clock: watch again. A Steal War battle under way is ended by its
            # last move instead, which checks the time too.
            up = self.parts.time_limits.deadline(result.row)
            if up is not None and self.parts.registry.clock() < up:
                self.parts.time_limits.watch_time_limit(result.row, up)
            return
        await self._announce(result)

    async def _announce(self, result: FlipResult) -> None:
        """Post the end of a game its time ended; its old table loses its buttons and says so."""
        row, game = result.row, result.game
        lang = lang_for(row.extra.get("lang"))
        embed = time_up_embed(row, game, lang)
        over = await ending(self.parts.registry, row, game, lang, embed, self.parts.web)
        tables = self.parts.tables
        try:
            # In a chat out of the bot's reach, as a follow-up of its newest interaction.
            posted = await tables.surfaces.send(
                self.parts.bot,
                row.channel_id,
                own_token(row.extra),
                embed=embed,
                view=over.view,
                allowed_mentions=NO_MENTIONS,
            )
        except discord.HTTPException as exc:
            # The end stays marked as unshown: the next start of the bot shows it.
            log.warning("could not announce the end of game %s: %s", row.id, exc, extra=about(row))
            return
        if posted is None:
            # Nothing reaches the chat now: the next press there shows the result, and why late.
            await self.parts.registry.ending_unreached(row.id)
            return
        message_id = posted.message_id
        table = tables.live(row.channel_id)
        if table is not None:
            # The old table goes grey and points to the result below.
            tables.forget(row.channel_id, table.message_id)
            tables.retire(table, content=t(lang, "time.table_over"))
        elif row.table_message_id is not None:  # not known since a restart: edit it directly
            try:
                await tables.edit(
                    self.parts.bot,
                    row.channel_id,
                    row.table_message_id,
                    own_token(row.extra),
                    content=t(lang, "time.table_over"),
                    view=None,
                )
            except discord.HTTPException as exc:
                log.warning(
                    "could not take the buttons off game %s's table: %s",
                    row.id,
                    exc,
                    extra=about(row),
                )
        edit = editor(self.parts.bot, row.channel_id, message_id, posted.through, original=False)
        tables.show(row.channel_id, Shown(message_id, over.view, edit))
        tables.end_game(row.id)
        await over.sent(message_id)
