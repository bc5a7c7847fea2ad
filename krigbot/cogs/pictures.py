"""Pictures on the table: the round as an image, the game's story as a chart, per server.

Rendering runs in a worker thread (the renderers' ``*_async``), so a picture never holds up
the event loop; a server can turn pictures off with ``/krig settings``.
"""

from __future__ import annotations

import io
import logging
from typing import TYPE_CHECKING

import discord

from krigbot.i18n import Lang, t
from krigbot.render.chart import render_chart_async
from krigbot.render.story import story_of
from krigbot.render.table import render_round_async

if TYPE_CHECKING:
    from krigbot.engine import Round
    from krigbot.sessions import AnyGame
    from krigbot.storage import GameRow, Storage

log = logging.getLogger(__name__)

SETTING = "images"
ROUND_FILE = "round.png"
STORY_FILE = "story.png"


class Pictures:
    """Render pictures for messages, and remember each server's choice to show them."""

    def __init__(self, storage: Storage) -> None:
        self.storage = storage
        self._enabled: dict[int, bool] = {}

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
    ) -> discord.File:
        """Return the table picture of a round and show it in the embed."""
        png = await render_round_async(
            played,
            list(row.names),
            lang,
            total_cards=sum(game.counts) or 1,
            teams=game.rules.teams,
        )
        embed.set_image(url=f"attachment://{ROUND_FILE}")
        return discord.File(io.BytesIO(png), filename=ROUND_FILE)

    async def story_picture(
        self, row: GameRow, game: AnyGame, lang: Lang
    ) -> tuple[discord.Embed, discord.File]:
        """Return an embed with the chart of the game so far, and its picture."""
        story = story_of(game.to_dict())
        png = await render_chart_async(
            story.counts,
            list(row.names),
            lang,
            wars=story.wars,
            title=t(lang, "chart.title"),
            x_label=t(lang, "chart.x_label"),
            y_label=t(lang, "chart.y_label"),
        )
        embed = discord.Embed(
            title=t(lang, "chart.title"),
            description=t(
                lang, "chart.lead_changes", count=story.lead_changes, n=story.lead_changes
            ),
            colour=discord.Colour.dark_green(),
        )
        embed.set_image(url=f"attachment://{STORY_FILE}")
        return embed, discord.File(io.BytesIO(png), filename=STORY_FILE)
