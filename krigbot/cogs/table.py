"""``/krig table``: open the channel's running game at its table, in Discord or in a browser.

Where the application has an Activity (``KRIG_ACTIVITY=on``), Discord opens it in the channel
(the interaction callback ``LAUNCH_ACTIVITY``); elsewhere the answer is the game's page of the web
view, shown to the one who asked.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any, Protocol

import discord
from discord.ext import commands

from krigbot.adapter.group import subcommand
from krigbot.adapter.parts import HasRegistry, HasWeb
from krigbot.adapter.players import channel_of
from krigbot.adapter.replies import Reply, defer_in, respond, user_lang
from krigbot.adapter.weblinks import web_button
from krigbot.i18n import Lang, t
from krigbot.storage import GameRow, StorageError

log = logging.getLogger(__name__)


class TableCogParts(HasRegistry, HasWeb, Protocol):
    """What the table cog uses."""


class TableCog(commands.Cog, name="Table"):
    """/krig table: the Activity where the application has one, else the game's page."""

    def __init__(self, parts: TableCogParts, *, activity: bool) -> None:
        self.parts = parts
        self.activity = activity
        """Whether the application has an Activity that Discord can launch."""

    async def _running(self, channel_id: int) -> GameRow | None:
        """Return the channel's running game, or None (a challenge is no game yet)."""
        found, _ = await self.parts.registry.stored_game(channel_id)
        if found is None or found[0].status != "running":
            return None
        return found[0]

    @subcommand
    async def table(self, interaction: discord.Interaction[Any]) -> None:
        """Open this channel's game at its table"""
        lang = user_lang(interaction)
        looking = asyncio.ensure_future(self._running(channel_of(interaction)))
        if self.activity:
            # A launch cannot follow a deferral: it waits for the game only as long as Discord
            # waits for the answer, and a slower look-up answers with the link instead.
            done, _ = await asyncio.wait({looking}, timeout=defer_in(interaction))
            if looking in done and looking.exception() is None and looking.result() is not None:
                try:
                    await interaction.response.launch_activity()
                except discord.HTTPException as exc:
                    log.warning("Discord did not launch the Activity: %s", exc)
                else:
                    return
        await respond(interaction, self._link(looking, lang), ephemeral=True)

    async def _link(self, looking: asyncio.Future[GameRow | None], lang: Lang) -> Reply:
        """Answer with the running game's page, or say why there is none."""
        try:
            row = await looking
        except StorageError as exc:
            log.warning("/krig table: the database failed: %s", exc)
            return Reply(content=t(lang, "status.unreachable_none"), ephemeral=True)
        if row is None:
            return Reply(content=t(lang, "table.none"), ephemeral=True)
        if self.parts.web.base_url is None:
            return Reply(content=t(lang, "table.no_pages"), ephemeral=True)
        url = await self.parts.web.game_url(row.guild_id, row.id)
        if url is None:
            return Reply(content=t(lang, "table.web_off"), ephemeral=True)
        view = discord.ui.View(timeout=None)
        view.add_item(web_button(url, lang, "web.watch_live"))
        return Reply(content=t(lang, "table.link", url=url), view=view, ephemeral=True)
