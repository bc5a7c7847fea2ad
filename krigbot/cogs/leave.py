"""/krig forfeit and /krig cancel: a game left before its end."""

from __future__ import annotations

import contextlib
import logging
from typing import TYPE_CHECKING, Any, Protocol

import discord
from discord.ext import commands

from krigbot.adapter.buttons import FinishButton, ForfeitButton, view_of
from krigbot.adapter.endings import Ending, ending, too_late
from krigbot.adapter.group import subcommand
from krigbot.adapter.parts import HasButtons, HasPlay, HasTimeLimits, TableParts
from krigbot.adapter.players import actor_of, channel_of, display_name
from krigbot.adapter.replies import NO_MENTIONS, Reply, public_lang, refuse, respond, user_lang
from krigbot.adapter.surfaces import own_token
from krigbot.adapter.tables import Shown, editor, respond_in_turn
from krigbot.adapter.weblinks import table_view
from krigbot.engine import EngineError, Variant, load_game
from krigbot.i18n import Lang, lang_for, t
from krigbot.logs import about
from krigbot.render.embeds import challenge_embed, safe_name
from krigbot.render.notices import forfeit_embed
from krigbot.render.play import finish_request_embed, standing_embed, time_up_embed
from krigbot.sessions import FinishRequest, FlipResult, Refusal

if TYPE_CHECKING:
    from krigbot.storage import GameRow

log = logging.getLogger(__name__)


class LeaveParts(TableParts, HasTimeLimits, HasPlay, HasButtons, Protocol):
    """What the leave cog uses."""


class LeaveCog(commands.Cog, name="Leave"):
    """Leaving a game early: give it up, or cancel it without a result."""

    def __init__(self, parts: LeaveParts) -> None:
        self.parts = parts
        parts.buttons.handle(ForfeitButton, self.on_forfeit_button)

    @subcommand
    async def forfeit(self, interaction: discord.Interaction[Any]) -> None:
        """Give up your game"""
        channel_id = channel_of(interaction)
        lang = user_lang(interaction)
        user_id = interaction.user.id

        async def work() -> Reply:
            # Refused before the confirmation, as the forfeit itself would be refused after it.
            try:
                row = await self.parts.play.may_forfeit(channel_id, user_id)
            except Refusal as refusal:
                if refusal.key == "err.no_game":
                    await too_late(
                        self.parts.time_limits, interaction, refusal, key="time.forfeit_too_late"
                    )
                raise
            view = view_of(
                ForfeitButton(row.id, user_id, True, lang),
                ForfeitButton(row.id, user_id, False, lang),
            )

            async def sent(message_id: int) -> None:
                edit = editor(self.parts.bot, channel_id, message_id, interaction)
                ended = {"content": t(lang, "forfeit.game_ended")}
                self.parts.tables.add_aside(row.id, Shown(message_id, view, edit, lambda: ended))

            return Reply(content=t(lang, "forfeit.confirm"), view=view, ephemeral=True, sent=sent)

        await respond(interaction, work(), ephemeral=True)

    async def on_forfeit_button(
        self, interaction: discord.Interaction[Any], game_id: int, user_id: int, confirm: bool
    ) -> None:
        """Handle the confirmation of /krig forfeit."""
        channel_id = channel_of(interaction)
        if interaction.user.id != user_id:
            await refuse(interaction, "err.not_player")
            return
        mine = user_lang(interaction)
        public = public_lang(interaction)
        if interaction.message is not None:
            self.parts.tables.drop_aside(game_id, interaction.message.id)
        if not confirm:
            await Reply(content=t(mine, "forfeit.kept"), view=None, update=True).send(interaction)
            return

        async def work() -> Reply:
            result = await self.parts.play.forfeit(channel_id, user_id, game_id)
            if result.outcome is not None and result.outcome.reason == "time_limit":
                return await self._counted_instead(interaction, result, mine, public)
            row = result.row
            seat = row.players.index(user_id)
            ended = result.outcome is not None
            embed = forfeit_embed(row, result.game, seat, public, over=ended)
            over: Ending | None = None
            if ended:
                over = await ending(
                    self.parts.registry, row, result.game, public, embed, self.parts.web
                )
            else:
                await self._request_without(row, result.game)

            # The game goes on (three or four players): the message is its table now, at the
            # bottom, with the Flip button; the one above goes grey.
            view = over.view if over is not None else await table_view(self.parts.web, row, public)

            async def sent(_: int) -> None:
                message = await interaction.followup.send(
                    embed=embed, view=view, allowed_mentions=NO_MENTIONS, wait=True
                )
                edit = editor(self.parts.bot, channel_id, message.id, interaction, original=False)
                self.parts.tables.show(channel_id, Shown(message.id, view, edit))
                if over is not None:
                    await over.sent(message.id)
                    return
                self.parts.tables.rounds[row.id] = row.round
                await self.parts.registry.show_table(channel_id, row.id, row.round, message.id)

            return Reply(content=t(mine, "forfeit.confirmed"), view=None, update=True, sent=sent)

        await respond_in_turn(interaction, self.parts.tables, work(), update=True)

    async def _request_without(self, row: GameRow, game: Variant) -> None:
        """Let an open finish request stop waiting for a player who gave up."""
        request = FinishRequest.of(row.extra)
        if request is None:
            return
        lang = lang_for(row.extra.get("lang"))
        embed = finish_request_embed(row, request.by, request.waiting(row, game), lang)
        for shown in self.parts.tables.asides(row.id, FinishButton):
            try:
                await shown.edit(embed=embed)
            except discord.HTTPException as exc:
                log.warning(
                    "could not update the finish request of game %s: %s",
                    row.id,
                    exc,
                    extra=about(row),
                )

    async def _counted_instead(
        self, interaction: discord.Interaction[Any], result: FlipResult, mine: Lang, public: Lang
    ) -> Reply:
        """Answer a forfeit that came after the deadline: the cards were counted instead."""
        row = result.row
        embed = time_up_embed(row, result.game, public)
        over = await ending(self.parts.registry, row, result.game, public, embed, self.parts.web)

        async def sent(_: int) -> None:
            message = await interaction.followup.send(
                embed=embed, view=over.view, allowed_mentions=NO_MENTIONS, wait=True
            )
            edit = editor(self.parts.bot, row.channel_id, message.id, interaction, original=False)
            self.parts.tables.show(row.channel_id, Shown(message.id, over.view, edit))
            self.parts.tables.end_game(row.id)
            await over.sent(message.id)

        return Reply(content=t(mine, "time.forfeit_too_late"), view=None, update=True, sent=sent)

    @subcommand
    async def cancel(self, interaction: discord.Interaction[Any]) -> None:
        """Cancel the game in this channel without a result"""
        channel_id = channel_of(interaction)
        lang = public_lang(interaction)
        actor = actor_of(interaction)

        async def work() -> Reply:
            row = await self.parts.play.cancel(
                channel_id, actor.user_id, moderator=actor.moderator, in_server=actor.in_server
            )
            name = safe_name(display_name(interaction.user))
            # A challenge is no game yet: its challenger withdraws it, a moderator calls it off.
            withdrawn = row.status == "challenge" and interaction.user.id == row.challenger_id
            if row.status == "challenge" and row.challenge_message_id is not None:
                note = (
                    t(lang, "challenge.cancelled")
                    if withdrawn
                    else t(lang, "challenge.cancelled_by", name=name)
                )
                with contextlib.suppress(discord.HTTPException):
                    await self.parts.tables.edit(
                        self.parts.bot,
                        channel_id,
                        row.challenge_message_id,
                        own_token(row.extra),
                        embed=challenge_embed(row, lang, note=note),
                        view=None,
                    )
            live = self.parts.tables.live(channel_id)
            if row.status == "challenge" and row.challenge_message_id is not None:
                self.parts.tables.forget(channel_id, row.challenge_message_id)
            elif live is not None:
                # The game's table can do nothing any more, and says who ended it (named, not
                # pinged: the edit allows no mentions).
                self.parts.tables.forget(channel_id, live.message_id)
                self.parts.tables.retire(live, **_cancelled_table(row, lang, name))
            self.parts.tables.end_game(row.id)
            if row.status == "challenge":
                key = "cancel.withdrawn" if withdrawn else "cancel.challenge"
                return Reply(content=t(lang, key, name=name))
            return Reply(content=t(lang, "cancel.done", name=name))

        await respond_in_turn(interaction, self.parts.tables, work())


def _cancelled_table(row: GameRow, lang: Lang, name: str) -> dict[str, Any]:
    """Return what a cancelled game's table shows instead: where it stood, and who cancelled."""
    note = t(lang, "cancel.done", name=name)
    try:
        game = load_game(row.state or {})
    except EngineError:
        return {"content": note}
    return {"embed": standing_embed(row, game, lang, note)}
