"""/flip, the Flip button and /krig status, and the game ends shown at start-up."""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any, Protocol

import discord
from discord import app_commands
from discord.ext import commands

from krigbot.adapter.activity import show_below
from krigbot.adapter.buttons import FinishButton, FlipButton, view_of
from krigbot.adapter.endings import ending, too_late, unseen_end
from krigbot.adapter.group import anywhere, subcommand
from krigbot.adapter.parts import (
    HasActivity,
    HasChoices,
    HasPictures,
    HasRecovery,
    HasTimeLimits,
    RoundParts,
)
from krigbot.adapter.players import channel_of, pressed_message
from krigbot.adapter.races import lost_flip
from krigbot.adapter.replies import NO_MENTIONS, Reply, public_lang, respond, user_lang
from krigbot.adapter.surfaces import own_token, reaches
from krigbot.adapter.tables import Shown, editor, respond_in_turn
from krigbot.adapter.weblinks import table_view
from krigbot.engine import Variant
from krigbot.i18n import Lang, lang_for, t
from krigbot.logs import about
from krigbot.render.embeds import status_embed
from krigbot.render.notices import current_table_embed, late_end_embed
from krigbot.render.play import add_status_lines, autoplay_text, finish_request_embed, flip_embed
from krigbot.sessions import MAX_FLIPS, Autoplay, FinishRequest, FlipResult, Refusal
from krigbot.storage import StorageError

if TYPE_CHECKING:
    from krigbot.config import Shards
    from krigbot.storage import GameRow

log = logging.getLogger(__name__)


class PlayParts(
    RoundParts, HasTimeLimits, HasChoices, HasRecovery, HasPictures, HasActivity, Protocol
):
    """What the play cog uses."""


class Battles(Protocol):
    """What plays a round of a game whose battles are made of choices (Steal War)."""

    async def plays_here(self, channel_id: int) -> bool:
        """Tell whether the channel's game is played by battles."""
        ...

    async def flip(
        self,
        interaction: discord.Interaction[Any],
        *,
        game_id: int | None = None,
        round_shown: int | None = None,
    ) -> None:
        """Begin a battle from /flip or from a Flip button."""
        ...

    async def flip_in_activity(self, channel_id: int, user_id: int) -> None:
        """Begin a battle from the Activity's Flip."""
        ...


class PlayCog(commands.Cog, name="Play"):
    """Playing a game's rounds: flips, the table's state, and the ends the bot owes a channel."""

    def __init__(
        self,
        parts: PlayParts,
        *,
        battles: Battles,
    ) -> None:
        self.parts = parts
        self.battles = battles
        parts.buttons.handle(FlipButton, self.on_flip_button)
        parts.activity.handle_flip(self.on_activity_flip)
        self.parts.registry.on_finish.append(self._finished)
        self._endings: asyncio.Task[None] | None = None

    async def _finished(self, row: GameRow, game: Variant) -> None:
        self._end_request_unknown(row, game)
        self.parts.tables.end_game(row.id)

    def _end_request_unknown(self, row: GameRow, game: Variant) -> None:
        """Grey an open finish request this process does not hold (asked before a restart)."""
        request = FinishRequest.of(row.extra)
        if request is None or request.message is None or not own_token(row.extra):
            return
        if not request.waiting(row, game):
            return  # agreed: the last answer shows the end in it, or points below
        if any(
            s.message_id == request.message for s in self.parts.tables.asides(row.id, FinishButton)
        ):
            return  # end_game greys it
        lang = lang_for(row.extra.get("lang"))
        note = t(lang, "finish.game_ended")
        view = view_of(FinishButton(row.id, True, lang), FinishButton(row.id, False, lang))
        edit = editor(self.parts.bot, row.channel_id, request.message)
        embed = finish_request_embed(row, request.by, [], lang, note=note)
        self.parts.tables.retire(Shown(request.message, view, edit), embed=embed)

    async def cog_load(self) -> None:
        self._endings = asyncio.create_task(self.show_endings(), name="krig-tell-endings")

    async def show_endings(self, shards: Shards | None = None) -> None:
        """Show the ends of games that finished just before the bot stopped, as it does rounds
        (``shards``: those of shards taken over from a process that died).

        The end was committed, but the bot stopped before its message went out: without this,
        the channel would never learn the result.
        """
        await self.parts.bot.wait_until_ready()
        try:
            endings = await self.parts.recovery.unshown_endings(shards)
        except StorageError as exc:
            log.warning("could not look for game ends never shown: %s", exc)
            return
        for row, game in endings:
            if not own_token(row.extra):
                continue  # no interaction reaches its chat after a restart: /krig status tells
            lang = lang_for(row.extra.get("lang"))
            embed = late_end_embed(row, game, lang)
            async with self.parts.tables.turn(row.channel_id):
                over = await ending(self.parts.registry, row, game, lang, embed)
                channel = self.parts.bot.get_partial_messageable(row.channel_id)
                try:
                    message = await channel.send(
                        embed=embed, view=over.view, allowed_mentions=NO_MENTIONS
                    )
                except discord.HTTPException as exc:
                    log.warning(
                        "could not show the end of game %s: %s", row.id, exc, extra=about(row)
                    )
                    continue
                edit = editor(self.parts.bot, row.channel_id, message.id)
                self.parts.tables.show(row.channel_id, Shown(message.id, over.view, edit))
                await over.sent(message.id)
                await self._grey_left_over(row, lang)

    async def _grey_left_over(self, row: GameRow, lang: Lang) -> None:
        """Grey the messages of a game that ended while the bot was down, each saying why.

        Its last table, its finish request and its autoplay's message kept the buttons they
        had when the bot stopped; a press on them would only answer that the game is over.
        """
        changes: dict[int, dict[str, Any]] = {}
        if row.table_message_id is not None:
            changes[row.table_message_id] = {"content": t(lang, "end.shown_below")}
        auto = Autoplay.of(row.extra)
        if auto is not None and auto.message is not None:
            changes[auto.message] = {"content": t(lang, "auto.ended")}
        request = FinishRequest.of(row.extra)
        if request is not None and request.message is not None:
            note = t(lang, "finish.game_ended")
            changes[request.message] = {
                "embed": finish_request_embed(row, request.by, [], lang, note=note)
            }
        for message_id, change in changes.items():
            try:
                await self.parts.tables.edit(
                    self.parts.bot, row.channel_id, message_id, True, **change, view=None
                )
            except discord.HTTPException as exc:
                log.info("could not grey message %s of game %s: %s", message_id, row.id, exc)

    async def cog_unload(self) -> None:
        if self._endings is not None:
            self._endings.cancel()
        await self.parts.tables.close()

    async def _table_reply(self, result: FlipResult, lang: Lang, *, update: bool) -> Reply:
        row = result.row
        # Before anything is awaited: a press racing this flip must see a table is on its way.
        if result.outcome is None:
            self.parts.tables.rounds[row.id] = row.round
        else:
            self.parts.tables.rounds.pop(row.id, None)
        embed = flip_embed(result, lang, faces=self.parts.faces)
        files: list[discord.File] = []
        more: list[discord.Embed] = []
        if await self.parts.pictures.enabled(row.guild_id):
            if result.last is not None:
                picture = await self.parts.pictures.round_picture(
                    row, result.game, result.last, lang, embed
                )
                if picture is not None:
                    files.append(picture)
            if result.outcome is not None:
                story = await self.parts.pictures.story_picture(row, result.game, lang)
                if story is not None:
                    more.append(story[0])
                    files.append(story[1])
        if result.outcome is not None:
            over = await ending(self.parts.registry, row, result.game, lang, embed, self.parts.web)
            return Reply(
                embed=embed,
                more_embeds=more,
                files=files,
                view=over.view,
                update=update,
                sent=over.sent,
                durable=True,
            )
        view = await table_view(self.parts.web, row, lang)

        async def sent(message_id: int) -> None:
            if not update:  # else flip() recorded the pressed message as the table
                await self.parts.registry.show_table(row.channel_id, row.id, row.round, message_id)
            # The live table keeps its buttons as values (Tables.show), and discord.py keeps
            # nothing of a view of dynamic buttons. Emptied, its buttons no longer point at it
            # and back: it is freed now, not left to the garbage collector.
            view.clear_items()

        return Reply(embed=embed, files=files, view=view, update=update, sent=sent, durable=True)

    async def _current_table(self, channel_id: int, game_id: int, lang: Lang) -> Reply:
        """Return the table as it stands now, for a table message that shows an older round."""
        found = await self.parts.registry.game_in(channel_id)
        if found is None:
            raise Refusal("err.game_over")
        row, game = found
        if row.id != game_id or game is None:
            raise Refusal("err.game_over")
        embed = current_table_embed(row, game, lang)
        self.parts.tables.rounds[row.id] = row.round
        view = await table_view(self.parts.web, row, lang)

        async def sent(message_id: int) -> None:
            await self.parts.registry.show_table(channel_id, row.id, row.round, message_id)

        return Reply(embed=embed, view=view, update=True, durable=True, sent=sent)

    @app_commands.command()
    @anywhere
    @app_commands.describe(count="Play several rounds at once (up to 50)")
    async def flip(
        self,
        interaction: discord.Interaction[Any],
        count: app_commands.Range[int, 1, MAX_FLIPS] = 1,
    ) -> None:
        """Flip the next card (play one round)"""
        channel_id = channel_of(interaction)
        lang = public_lang(interaction)
        if await self.battles.plays_here(channel_id):
            await self.battles.flip(interaction)  # a battle of choices, one at a time
            return

        async def work() -> Reply:
            try:
                result = await self.parts.play.flip(channel_id, interaction.user.id, count)
            except Refusal as refusal:
                if refusal.key == "err.no_game":
                    await too_late(self.parts.time_limits, interaction, refusal)
                raise
            return await self._table_reply(result, lang, update=False)

        await respond_in_turn(interaction, self.parts.tables, work())

    async def on_flip_button(
        self, interaction: discord.Interaction[Any], game_id: int, round_shown: int
    ) -> None:
        """Handle a Flip press: plays only if the button shows the round on the table."""
        channel_id = channel_of(interaction)
        if await self.battles.plays_here(channel_id):
            await self.battles.flip(interaction, game_id=game_id, round_shown=round_shown)
            return
        lang = public_lang(interaction)
        pressed = pressed_message(interaction)

        async def work() -> Reply:
            try:
                result = await self.parts.play.flip(
                    channel_id,
                    interaction.user.id,
                    1,
                    game_id=game_id,
                    expected_round=round_shown,
                    table_message_id=pressed,
                )
            except Refusal as refusal:
                if refusal.key == "err.game_over" and not reaches(interaction):
                    return await unseen_end(
                        self.parts.registry,
                        self.parts.recovery,
                        game_id,
                        lang,
                        refusal,
                        self.parts.web,
                    )
                if refusal.key == "err.game_over":
                    await too_late(self.parts.time_limits, interaction, refusal, game_id)
                return await lost_flip(
                    self.parts.play,
                    refusal,
                    game_id,
                    pressed,
                    round_shown=round_shown,
                    answering=self.parts.tables.rounds.get(game_id),
                    current=lambda: self._current_table(channel_id, game_id, lang),
                )
            return await self._table_reply(result, lang, update=True)

        await respond_in_turn(interaction, self.parts.tables, work(), update=True)

    async def on_activity_flip(self, channel_id: int, user_id: int) -> None:
        """Play a round a player flipped in the Activity, with the checks of a Flip press.

        No interaction answers it: the channel's table follows as it follows a round a time
        limit plays, a new table at the bottom and the one before it grey.
        """
        if await self.battles.plays_here(channel_id):
            await self.battles.flip_in_activity(channel_id, user_id)
            return
        tables = self.parts.tables
        async with tables.turn(channel_id):
            with tables.answering():
                result = await self.parts.play.flip(channel_id, user_id, 1)
                row = result.row
                lang = lang_for(row.extra.get("lang"))
                reply = await self._table_reply(result, lang, update=False)
                message_id = await show_below(
                    self.parts.bot,
                    tables,
                    row,
                    view=reply.view,
                    embeds=reply.embeds,
                    files=reply.files,
                )
                if message_id is None:
                    if result.outcome is not None:
                        await self.parts.registry.ending_unreached(row.id)
                elif reply.sent is not None:
                    await reply.sent(message_id)

    @subcommand
    async def status(self, interaction: discord.Interaction[Any]) -> None:
        """Show the game in this channel"""
        channel_id = channel_of(interaction)
        lang = user_lang(interaction)

        async def work() -> Reply:
            try:
                found, unreachable = await self.parts.registry.stored_game(channel_id)
            except StorageError as exc:
                # Nothing held here to show: a read changed nothing, so no "could not save".
                log.warning("/krig status: the database failed: %s", exc)
                return Reply(content=t(lang, "status.unreachable_none"), ephemeral=True)
            if found is None:
                return Reply(content=t(lang, "status.none"), ephemeral=True)
            row, game = found
            left = self.parts.time_limits.time_left(row)
            embed = status_embed(row, game, lang, deadline=left)
            deadline = self.parts.choices.choice_deadline(row) if row.status == "running" else None
            auto = Autoplay.of(row.extra)
            note = (
                None
                if auto is None
                else autoplay_text(auto.state, auto.speed, auto.by, lang, reason=auto.why or "")
            )
            request = FinishRequest.of(row.extra)
            waiting = () if request is None or game is None else request.waiting(row, game)
            add_status_lines(
                embed, row, game, lang, deadline=deadline, autoplay=note, finish_waiting=waiting
            )
            # A read needs no write: the table held here, saying the database is out of reach.
            note = t(lang, "status.unreachable") if unreachable else None
            reply = Reply(content=note, embed=embed, ephemeral=True)
            if unreachable:
                return reply  # whether pictures are on is stored there too
            if game is not None and game.round and await self.parts.pictures.enabled(row.guild_id):
                story = await self.parts.pictures.story_picture(row, game, lang)
                if story is not None:
                    reply.more_embeds.append(story[0])
                    reply.files.append(story[1])
            return reply

        await respond(interaction, work(), ephemeral=True)
