"""A server's recent games, and replays of ended games round by round.

Both answer privately (they are for the one who asks) and page with buttons whose custom ids
hold everything needed, so they work after a restart too. A replay is rebuilt from the game's
seed and rules with the engine; the last few rebuilt games are kept, since a reader steps
through one game many times.
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections import OrderedDict
from typing import TYPE_CHECKING, Any

import discord
from discord.ext import commands

from krigbot.cogs.buttons import _guarded, view_of
from krigbot.cogs.replies import Reply, respond, user_lang
from krigbot.cogs.weblinks import web_button
from krigbot.engine import EngineError
from krigbot.engine.steal import load_game
from krigbot.i18n import Lang, t
from krigbot.logs import context
from krigbot.render.play import history_embed, replay_embed
from krigbot.render.replays import GameRounds, rebuild
from krigbot.sessions import Refusal

if TYPE_CHECKING:
    from krigbot.bot import KrigBot
    from krigbot.storage import GameRow

log = logging.getLogger(__name__)

PAGE_SIZE = 10
KEPT_REPLAYS = 8


def _cog(interaction: discord.Interaction[Any]) -> HistoryCog:
    cog = interaction.client.get_cog(HistoryCog.__cog_name__)
    assert isinstance(cog, HistoryCog)
    return cog


class HistoryButton(
    discord.ui.DynamicItem[discord.ui.Button[Any]],
    template=r"krig:history:(?P<user>\d+):(?P<page>\d+):(?P<way>prev|next)",
):
    """Show another page of the history (user 0: everyone's games)."""

    def __init__(self, user_id: int, page: int, way: str, *, disabled: bool = False) -> None:
        super().__init__(
            discord.ui.Button(
                emoji="◀️" if way == "prev" else "▶️",
                style=discord.ButtonStyle.secondary,
                custom_id=f"krig:history:{user_id}:{page}:{way}",
                disabled=disabled,
            )
        )
        self.user_id = user_id
        self.page = page

    @classmethod
    async def from_custom_id(
        cls,
        interaction: discord.Interaction[Any],
        item: discord.ui.Item[Any],
        match: re.Match[str],
        /,
    ) -> HistoryButton:
        return cls(int(match["user"]), int(match["page"]), match["way"])

    async def callback(self, interaction: discord.Interaction[Any]) -> None:
        await _guarded(
            interaction, _cog(interaction).show_history(interaction, self.user_id, self.page)
        )


REPLAY_MOVES = {
    "first": ("⏮️", None),
    "prev": ("◀️", None),
    "next": ("▶️", None),
    "war": ("⚔️", "replay.next_war"),
    "last": ("⏭️", None),
}
"""Replay buttons: their emoji, and the catalog key of their label if they have one."""


class ReplayButton(
    discord.ui.DynamicItem[discord.ui.Button[Any]],
    template=r"krig:replay:(?P<game>\d+):(?P<round>\d+):(?P<move>first|prev|next|war|last)",
):
    """Show another round of a replay; the custom id holds the round it goes to."""

    def __init__(
        self,
        game_id: int,
        number: int,
        move: str,
        lang: Lang = "nb",
        *,
        disabled: bool = False,
    ) -> None:
        emoji, label = REPLAY_MOVES[move]
        super().__init__(
            discord.ui.Button(
                emoji=emoji,
                label=None if label is None else t(lang, label),
                style=discord.ButtonStyle.danger
                if move == "war"
                else discord.ButtonStyle.secondary,
                custom_id=f"krig:replay:{game_id}:{number}:{move}",
                disabled=disabled,
            )
        )
        self.game_id = game_id
        self.number = number

    @classmethod
    async def from_custom_id(
        cls,
        interaction: discord.Interaction[Any],
        item: discord.ui.Item[Any],
        match: re.Match[str],
        /,
    ) -> ReplayButton:
        return cls(int(match["game"]), int(match["round"]), match["move"])

    async def callback(self, interaction: discord.Interaction[Any]) -> None:
        await _guarded(
            interaction,
            _cog(interaction).show_replay(interaction, self.game_id, self.number, update=True),
        )


HISTORY_ITEMS: tuple[type[discord.ui.DynamicItem[Any]], ...] = (HistoryButton, ReplayButton)


class HistoryCog(commands.Cog, name="History"):
    """/krig history and /krig replay."""

    def __init__(self, bot: KrigBot) -> None:
        self.bot = bot
        self.storage = bot.storage
        self._kept: OrderedDict[int, GameRounds] = OrderedDict()
        """The rounds of the last games replayed, by id (an ended game never changes)."""

    async def show_history(
        self, interaction: discord.Interaction[Any], user_id: int, page: int, *, first: bool = False
    ) -> None:
        """Answer with a page of the server's ended games (only ``user_id``'s unless 0)."""
        assert interaction.guild_id is not None
        guild_id = interaction.guild_id
        lang = user_lang(interaction)

        async def work() -> Reply:
            rows = await self.storage.recent_games(
                guild_id,
                user_id=user_id or None,
                limit=PAGE_SIZE + 1,
                offset=page * PAGE_SIZE,
            )
            more = len(rows) > PAGE_SIZE
            embed = history_embed(
                rows[:PAGE_SIZE], page, user_id or None, lang, locale=interaction.locale
            )
            view = view_of(
                HistoryButton(user_id, max(page - 1, 0), "prev", disabled=page == 0),
                HistoryButton(user_id, page + 1, "next", disabled=not more),
            )
            return Reply(embed=embed, view=view, ephemeral=first, update=not first)

        await respond(interaction, work(), ephemeral=first, update=not first)

    async def show_replay(
        self, interaction: discord.Interaction[Any], game_id: int, number: int, *, update: bool
    ) -> None:
        """Answer with round ``number`` of an ended game of this server."""
        lang = user_lang(interaction)

        async def work() -> Reply:
            row = await self.storage.get_game(game_id)
            if row is None or row.guild_id != interaction.guild_id or row.state is None:
                raise Refusal("replay.not_found", id=game_id)
            if row.is_active:
                raise Refusal("replay.not_over", id=game_id)
            if row.round == 0:
                raise Refusal("replay.empty", id=game_id)
            try:
                final = load_game(row.state)
                rebuilt = await self._rounds(row)
            except EngineError:
                log.exception("game %s cannot be replayed", game_id, extra=context(game_id=game_id))
                raise Refusal("replay.not_found", id=game_id) from None
            total = len(rebuilt.rounds)
            shown = min(max(number, 1), total)
            war = rebuilt.next_war(shown)
            view = view_of(
                ReplayButton(game_id, 1, "first", lang, disabled=shown == 1),
                ReplayButton(game_id, max(shown - 1, 1), "prev", lang, disabled=shown == 1),
                ReplayButton(game_id, min(shown + 1, total), "next", lang, disabled=shown == total),
                ReplayButton(game_id, war or total, "war", lang, disabled=war is None),
                ReplayButton(game_id, total, "last", lang, disabled=shown == total),
            )
            url = await self.bot.web.game_url(row.guild_id, row.id)
            if url is not None:
                view.add_item(web_button(url, lang))
            embed = replay_embed(row, rebuilt, shown, final, lang)
            return Reply(embed=embed, view=view, ephemeral=not update, update=update)

        await respond(interaction, work(), ephemeral=not update, update=update)

    async def _rounds(self, row: GameRow) -> GameRounds:
        rebuilt = self._kept.get(row.id)
        if rebuilt is None:
            assert row.state is not None
            # A long game takes a moment to replay; the event loop keeps serving meanwhile.
            rebuilt = await asyncio.to_thread(rebuild, row.state)
            self._kept[row.id] = rebuilt
            while len(self._kept) > KEPT_REPLAYS:
                self._kept.popitem(last=False)
        self._kept.move_to_end(row.id)
        return rebuilt
