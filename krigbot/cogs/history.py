"""A server's recent games, and replays of ended games round by round.

Both answer privately (they are for the one who asks) and page with buttons whose custom ids
hold everything needed, so they work after a restart too. A replay is rebuilt from the game's
seed and rules with the engine; the last few rebuilt games are kept, since a reader steps
through one game many times.
"""

from __future__ import annotations

import asyncio
import logging
from collections import OrderedDict
from typing import TYPE_CHECKING, Any, Protocol

import discord
from discord import app_commands
from discord.app_commands import locale_str as ls
from discord.ext import commands

from krigbot.adapter.buttons import NUMBER, GameButton, one_of, view_of
from krigbot.adapter.group import subcommand
from krigbot.adapter.parts import HasButtons, HasFaces, HasStorage, HasWeb
from krigbot.adapter.replies import Reply, respond, user_lang
from krigbot.adapter.surfaces import place_of, scope_of
from krigbot.adapter.weblinks import web_button
from krigbot.engine import EngineError, load_game
from krigbot.i18n import Lang, t
from krigbot.logs import context
from krigbot.render.embeds import here_key
from krigbot.render.play import history_embed, replay_embed
from krigbot.render.replays import GameRounds, rebuild
from krigbot.sessions import Refusal

if TYPE_CHECKING:
    from krigbot.storage import GameRow

log = logging.getLogger(__name__)

PAGE_SIZE = 10
KEPT_REPLAYS = 8


class HistoryParts(HasStorage, HasWeb, HasButtons, HasFaces, Protocol):
    """What the history cog uses."""


class HistoryButton(
    GameButton, kind="history", user=NUMBER, page=NUMBER, way=one_of("prev", "next")
):
    """Show another page of the history (user 0: everyone's games)."""

    def __init__(self, user_id: int, page: int, way: str, *, disabled: bool = False) -> None:
        super().__init__(
            user_id,
            page,
            way,
            emoji="◀️" if way == "prev" else "▶️",
            style=discord.ButtonStyle.secondary,
            disabled=disabled,
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
    GameButton, kind="replay", game=NUMBER, round=NUMBER, move=one_of(*REPLAY_MOVES)
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
            game_id,
            number,
            move,
            emoji=emoji,
            label=None if label is None else t(lang, label),
            style=discord.ButtonStyle.danger if move == "war" else discord.ButtonStyle.secondary,
            disabled=disabled,
        )


class HistoryCog(commands.Cog, name="History"):
    """/krig history and /krig replay."""

    def __init__(self, parts: HistoryParts) -> None:
        self.parts = parts
        parts.buttons.handle(
            HistoryButton, lambda pressed, user, page, _: self.show_history(pressed, user, page)
        )
        parts.buttons.handle(
            ReplayButton,
            lambda pressed, game, number, _: self.show_replay(pressed, game, number, update=True),
        )
        self._kept: OrderedDict[int, GameRounds] = OrderedDict()
        """The rounds of the last games replayed, by id (an ended game never changes)."""

    @subcommand
    @app_commands.describe(user=ls("Only the games of this player", key="opt.player.desc"))
    async def history(
        self, interaction: discord.Interaction[Any], user: discord.User | None = None
    ) -> None:
        """This server's recent games"""
        await self.show_history(interaction, user.id if user else 0, 0, first=True)

    @subcommand
    @app_commands.rename(game_id="id")
    @app_commands.describe(game_id="The game's number (see /krig history)")
    async def replay(
        self, interaction: discord.Interaction[Any], game_id: app_commands.Range[int, 1]
    ) -> None:
        """Step through an ended game round by round"""
        await self.show_replay(interaction, game_id, 1, update=False)

    async def show_history(
        self, interaction: discord.Interaction[Any], user_id: int, page: int, *, first: bool = False
    ) -> None:
        """Answer with a page of the server's ended games (only ``user_id``'s unless 0)."""
        guild_id = scope_of(interaction)
        lang = user_lang(interaction)

        async def work() -> Reply:
            rows = await self.parts.storage.stats.recent_games(
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
        not_found = here_key("replay.not_found", place_of(interaction))

        async def work() -> Reply:
            row = await self.parts.storage.games.get_game(game_id)
            if row is None or row.guild_id != scope_of(interaction) or row.state is None:
                raise Refusal(not_found, id=game_id)
            if row.is_active:
                raise Refusal("replay.not_over", id=game_id)
            if row.round == 0:
                raise Refusal("replay.empty", id=game_id)
            try:
                final = load_game(row.state)
                rebuilt = await self._rounds(row)
            except EngineError:
                log.exception("game %s cannot be replayed", game_id, extra=context(game_id=game_id))
                raise Refusal(not_found, id=game_id) from None
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
            url = await self.parts.web.game_url(row.guild_id, row.id)
            if url is not None:
                view.add_item(web_button(url, lang))
            embed = replay_embed(row, rebuilt, shown, final, lang, self.parts.faces)
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
