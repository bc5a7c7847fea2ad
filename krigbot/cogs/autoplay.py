"""Hands-free play: autoplay (the bot flips by itself) and finishing a game at once.

``/krig auto`` and the Pause, Resume and Stop buttons start and halt autoplay; its runs play in
tasks of their own (``adapter.autoplayer``). Its state (running or paused, the message, the
speed) is kept in the game's ``extra``, so a restarted bot carries on where it played.

``/krig finish`` asks every other player still in the game to agree with a button; when the
last one does, the game is played to its end at once and the message tells its whole story.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Protocol

import discord
from discord import app_commands
from discord.app_commands import locale_str as ls
from discord.ext import commands

from krigbot.adapter.autoplayer import (
    SPEEDS,
    Autoplayer,
    Run,
    paused_view,
    running_view,
    with_autoplay_line,
)
from krigbot.adapter.buttons import AutoAction, AutoplayButton, FinishButton, view_of
from krigbot.adapter.endings import ending, unseen_end
from krigbot.adapter.group import subcommand
from krigbot.adapter.parts import HasHandsFree, HasPictures, HasRecovery, RoundParts
from krigbot.adapter.players import channel_of, pressed_message
from krigbot.adapter.replies import Reply, discord_lost, public_lang, respond
from krigbot.adapter.surfaces import own_token, reaches
from krigbot.adapter.tables import Shown, editor, greyed, respond_in_turn
from krigbot.adapter.weblinks import table_view, watch_live
from krigbot.i18n import Lang, lang_for, t
from krigbot.render.embeds import safe_name
from krigbot.render.play import (
    add_note,
    autoplay_text,
    finish_embed,
    finish_request_embed,
    standing_embed,
)
from krigbot.render.replays import rebuild
from krigbot.sessions import (
    Autoplay,
    FinishRequest,
    FlipResult,
    Refusal,
    authorize,
)
from krigbot.storage import StorageError

if TYPE_CHECKING:
    from krigbot.config import Shards
    from krigbot.engine import Variant
    from krigbot.storage import GameRow

log = logging.getLogger(__name__)

SPEED_CHOICES = [
    app_commands.Choice(name=ls(value, key=f"speed.{value}"), value=value) for value in SPEEDS
]

CLAIM_SECONDS = 15.0
"""How long a /krig auto whose answer never reached Discord keeps others from starting one."""


class AutoplayParts(RoundParts, HasHandsFree, HasRecovery, HasPictures, Protocol):
    """What the autoplay cog uses."""


class AutoplayCog(commands.Cog, name="Autoplay"):
    """/krig auto and /krig finish: the bot plays the rounds."""

    def __init__(
        self,
        parts: AutoplayParts,
        *,
        interval: float,
        rest_turn: Callable[[], float] = lambda: 0.0,
    ) -> None:
        self.parts = parts
        parts.buttons.handle(AutoplayButton, self.on_autoplay_button)
        parts.buttons.handle(FinishButton, self.on_finish_button)
        self.player = Autoplayer(
            parts, end=self._end, interval=interval, faces=parts.faces, rest_turn=rest_turn
        )
        """Autoplay's runs in this process."""
        self._claims: dict[int, float] = {}
        """Channels whose /krig auto answer is on its way (loop time), so a second one waits."""

    async def cog_unload(self) -> None:
        self.player.close()

    def playing(self, channel_id: int) -> bool:
        """Tell whether autoplay is playing in a channel in this process."""
        return self.player.playing(channel_id)

    def task(self, channel_id: int) -> asyncio.Task[None] | None:
        """Return the task playing autoplay in a channel in this process, if one plays."""
        return self.player.task(channel_id)

    async def _end(
        self, row: GameRow, game: Variant, lang: Lang, embed: discord.Embed
    ) -> tuple[discord.ui.View, Callable[[int], Awaitable[None]]]:
        over = await ending(self.parts.registry, row, game, lang, embed, self.parts.web)
        return over.view, over.sent

    async def _player_game(
        self, channel_id: int, user_id: int, game_id: int | None = None
    ) -> tuple[GameRow, Variant]:
        """Return the channel's running game, refusing anyone who is not playing it."""
        seated = authorize(await self.parts.registry.game_in(channel_id), user_id, game_id=game_id)
        return seated.row, seated.game

    # ---------------------------------------------------------------------- autoplay

    @subcommand
    @app_commands.describe(speed="How fast the rounds go")
    @app_commands.choices(speed=SPEED_CHOICES)
    async def auto(self, interaction: discord.Interaction[Any], speed: str = "normal") -> None:
        """Let the bot play the rounds by itself"""
        channel_id = channel_of(interaction)
        lang = public_lang(interaction)
        if speed not in SPEEDS:
            raise Refusal("err.bad_option", reason=speed)
        name = names_of_user(interaction)

        async def work() -> Reply:
            row, game = await self._player_game(channel_id, interaction.user.id)
            if not game.autoplayable:
                # Its choices are the game, and its own cog drives the table message.
                raise Refusal("auto.steal")
            self._claim(channel_id, row)
            embed = standing_embed(row, game, lang, t(lang, "auto.starting"))
            add_note(embed, autoplay_text("running", speed, name, lang), lang)

            own = own_token(row.extra)

            async def sent(message_id: int) -> None:
                self.player.embeds[message_id] = embed
                try:
                    await self._begin(channel_id, row.id, message_id, speed, name, lang, own)
                finally:
                    self._claims.pop(channel_id, None)

            live = await watch_live(self.parts.web, row, lang)
            return Reply(embed=embed, view=running_view(row.id, lang, *live), sent=sent)

        await respond_in_turn(interaction, self.parts.tables, work())

    def _claim(self, channel_id: int, row: GameRow) -> None:
        """Refuse a second autoplay in a channel, and hold the channel until this one starts."""
        now = asyncio.get_running_loop().time()
        claimed = self._claims.get(channel_id)
        if (
            self.player.playing(channel_id)
            or (claimed is not None and now - claimed < CLAIM_SECONDS)
            or Autoplay.of(row.extra) is not None
        ):
            raise Refusal("auto.already")
        # No await since the checks: nothing else can claim the channel in between.
        self._claims[channel_id] = now

    async def _begin(
        self,
        channel_id: int,
        game_id: int,
        message_id: int,
        speed: str,
        by: str,
        lang: Lang,
        own: bool,
    ) -> None:
        """Store autoplay as running in its message, make it the table, and start playing."""
        try:
            await self.parts.hands_free.start_autoplay(
                channel_id, game_id, Autoplay("running", message_id, speed, by)
            )
        except Refusal as refusal:
            # Two /krig auto at once: the other one plays; this message says it does not.
            text = t(lang, refusal.key)
            table = self.player.embeds.pop(message_id, None)
            if table is None:
                await self.player.edit(
                    channel_id, message_id, own, content=text, embeds=[], view=None
                )
            else:
                embed = with_autoplay_line(table, text, lang)
                await self.player.edit(channel_id, message_id, own, embed=embed, view=None)
            return
        found = await self.parts.registry.game_in(channel_id)
        if found is None or found[0].id != game_id:
            return
        await self.parts.registry.show_table(channel_id, game_id, found[0].round, message_id)
        self.player.start(
            channel_id, Run(game_id, message_id, speed, by, lang, found[0].round, own)
        )

    async def on_autoplay_button(
        self, interaction: discord.Interaction[Any], game_id: int, action: AutoAction
    ) -> None:
        """Handle Pause, Resume and Stop (players only, on the autoplay message)."""
        channel_id = channel_of(interaction)
        lang = public_lang(interaction)
        pressed = pressed_message(interaction)
        name = names_of_user(interaction)

        async def work() -> Reply:
            try:
                row, game = await self._player_game(channel_id, interaction.user.id, game_id)
            except Refusal as refusal:
                if refusal.key != "err.game_over" or reaches(interaction):
                    raise
                # It ended while nothing reached the chat: its message still says it plays.
                parts = self.parts
                return await unseen_end(
                    parts.registry, parts.recovery, game_id, lang, refusal, parts.web
                )
            state = Autoplay.of(row.extra)
            if state is None or state.message != pressed:
                raise Refusal("err.stale_button")
            if action == "resume":
                return await self._resume(channel_id, game_id, name, lang, own_token(row.extra))
            if action == "pause" and state.state == "paused":
                # Paused already, where its message could not show it (its token ended): the
                # press shows it now.
                embed = standing_embed(row, game, lang, t(lang, "auto.paused_table"))
                note = autoplay_text("paused", state.speed, state.by, lang, reason=state.why or "")
                add_note(embed, note, lang)
                live = await watch_live(self.parts.web, row, lang)
                return Reply(embed=embed, view=paused_view(game_id, lang, *live), update=True)
            # The task finishes the step it is in (and shows it) before this answer goes out.
            await self.player.halt(channel_id, game_id)
            if action == "pause":
                await self.parts.hands_free.pause_autoplay(channel_id, game_id, pressed, name)
            else:
                await self.parts.hands_free.stop_autoplay(channel_id, game_id, pressed, name)
            row, game = await self._player_game(channel_id, interaction.user.id, game_id)
            if action == "pause":
                embed = standing_embed(row, game, lang, t(lang, "auto.paused_table"))
                add_note(embed, autoplay_text("paused", state.speed, name, lang), lang)
                live = await watch_live(self.parts.web, row, lang)
                return Reply(embed=embed, view=paused_view(game_id, lang, *live), update=True)
            embed = standing_embed(row, game, lang, t(lang, "table.current"))
            add_note(embed, t(lang, "auto.stopped", name=name), lang)
            view = await table_view(self.parts.web, row, lang)
            return Reply(embed=embed, view=view, update=True, durable=True)

        await respond_in_turn(interaction, self.parts.tables, work(), update=True)

    async def _resume(
        self, channel_id: int, game_id: int, name: str, lang: Lang, own: bool
    ) -> Reply:
        resumed = await self.parts.hands_free.resume_autoplay(channel_id, game_id, name)
        found = await self.parts.registry.game_in(channel_id)
        if found is None or found[0].id != game_id:
            raise Refusal("err.game_over")
        row, game = found
        if game is None:
            raise Refusal("err.game_over")
        speed = resumed.speed
        embed = standing_embed(row, game, lang, t(lang, "auto.starting"))
        add_note(embed, autoplay_text("running", speed, name, lang), lang)

        async def sent(message_id: int) -> None:
            self.player.embeds[message_id] = embed
            self.player.start(
                channel_id, Run(game_id, message_id, speed, name, lang, row.round, own)
            )

        view = running_view(game_id, lang, *await watch_live(self.parts.web, row, lang))
        return Reply(embed=embed, view=view, update=True, sent=sent)

    async def restore(self, shards: Shards | None = None) -> int:
        """Carry on the autoplay that was running when the bot stopped; return how many.

        ``shards``: only in the games of these, taken over from another process.
        """
        resumed = 0
        held = [
            (row, game)
            for row, game in self.parts.registry.running()
            if shards is None or shards.owns(row.server_id)
        ]
        for row, _ in held:
            if row.extra.get("lang") and not own_token(row.extra):
                self.parts.tables.surfaces.fix_lang(row.channel_id, lang_for(row.extra["lang"]))
        for row, game in held:
            state = Autoplay.of(row.extra)
            if state is None or state.state != "running" or game.finished:
                continue
            message, speed = state.message, state.speed
            if not own_token(row.extra):
                # Out of the bot's reach no interaction is left after a restart: a press on its
                # message is a new one, and a Resume press plays on.
                await self.player.pause_out_of_reach(row, state)
                continue
            if message is None or speed not in SPEEDS:
                continue
            lang = lang_for(row.extra.get("lang"))
            run = Run(row.id, message, speed, state.by, lang, row.round)
            self.player.start(row.channel_id, run)
            resumed += 1
        return resumed

    # ------------------------------------------------------------------------ finish

    @subcommand
    async def finish(self, interaction: discord.Interaction[Any]) -> None:
        """Play the game to its end at once (all must agree)"""
        channel_id = channel_of(interaction)
        lang = public_lang(interaction)
        user_id = interaction.user.id

        async def work() -> Reply:
            seated = authorize(await self.parts.registry.game_in(channel_id), user_id).still_in()
            row, game = seated.row, seated.game
            replaced = FinishRequest.of(row.extra)
            request = await self.parts.hands_free.ask_finish(channel_id, row.id, user_id)
            waiting = request.waiting(row, game)
            if not waiting:
                # Nobody else to ask (Krigbot agrees at once): the end goes out as the answer.
                story = await self._play_to_end(channel_id, row, lang)
                story.update = False
                return story
            view = _finish_view(row.id, lang)

            async def sent(message_id: int) -> None:
                tables = self.parts.tables
                greyed_now: set[int] = set()
                for older in tables.drop_asides(row.id, FinishButton):
                    tables.retire(older, embed=finish_note(row, user_id, "finish.replaced", lang))
                    greyed_now.add(older.message_id)
                if (
                    replaced is not None
                    and replaced.message is not None
                    and replaced.message not in greyed_now
                    and own_token(row.extra)
                ):
                    # Asked before a restart: this process never held it, the game's row did.
                    stored = replaced.message
                    note = finish_note(row, replaced.by, "finish.replaced", lang)
                    edit = editor(self.parts.bot, channel_id, stored)
                    tables.retire(Shown(stored, _finish_view(row.id, lang), edit), embed=note)
                edit = editor(self.parts.bot, channel_id, message_id, interaction)
                ended = {"embed": finish_note(row, user_id, "finish.game_ended", lang)}
                tables.add_aside(row.id, Shown(message_id, view, edit, lambda: ended))
                with contextlib.suppress(Refusal, StorageError):
                    # Kept with the request, so a bot stopped before it was answered greys it.
                    await self.parts.hands_free.finish_request_shown(
                        channel_id, row.id, user_id, message_id
                    )

            # Named, not pinged: only a challenge pings anyone (README).
            return Reply(
                embed=finish_request_embed(row, user_id, waiting, lang), view=view, sent=sent
            )

        await respond(interaction, work())

    async def on_finish_button(
        self, interaction: discord.Interaction[Any], game_id: int, agree: bool
    ) -> None:
        """Handle an answer to /krig finish; the last agreement plays the game to its end."""
        channel_id = channel_of(interaction)
        lang = public_lang(interaction)
        user_id = interaction.user.id
        pressed = pressed_message(interaction)
        tables = self.parts.tables

        async def work() -> Reply:
            row, game = await self._player_game(channel_id, user_id, game_id)
            request = await self.parts.hands_free.answer_finish(channel_id, game_id, user_id, agree)
            asked = FinishRequest.of(row.extra)
            asker = user_id if asked is None else asked.by
            if request is None:
                if pressed is not None:
                    tables.drop_aside(game_id, pressed)
                note = t(lang, "finish.declined", name=names_of_user(interaction))
                return Reply(
                    embed=finish_request_embed(row, asker, [], lang, note=note),
                    view=None,
                    update=True,
                )
            waiting = request.waiting(row, game)
            if waiting:
                embed = finish_request_embed(row, request.by, waiting, lang)
                view = _finish_view(game_id, lang)
                return Reply(embed=embed, view=view, update=True, aside=True)
            if pressed is not None:
                tables.drop_aside(game_id, pressed)  # it shows the end itself, or points to it
            story = await self._play_to_end(channel_id, row, lang)
            live = tables.live(channel_id)
            if pressed is None or live is None or live.message_id < pressed:
                return story  # the request is the newest message: the end is shown in it
            # Tables came after the request: the end goes below them, where players look.
            story.update = False
            after = story.sent

            async def shown(message_id: int) -> None:
                edit = editor(self.parts.bot, channel_id, message_id, interaction, original=False)
                tables.show(channel_id, Shown(message_id, story.view or view_of(), edit))
                if after is not None:
                    await after(message_id)

            story.sent = shown

            async def below(_: int) -> None:
                try:
                    await story.follow_up(interaction)
                except discord.HTTPException as exc:
                    if not discord_lost(exc):
                        raise
                    await story.post(interaction)  # the end must be seen

            return Reply(
                embed=finish_note(row, asker, "finish.agreed", lang),
                view=greyed(_finish_view(game_id, lang)),
                update=True,
                durable=True,
                sent=below,
            )

        await respond_in_turn(interaction, self.parts.tables, work(), update=True)

    async def _play_to_end(self, channel_id: int, row: GameRow, lang: Lang) -> Reply:
        """Play an agreed game to its end at once (its autoplay stops); return its story."""
        autoplay = Autoplay.of(row.extra)
        await self.player.halt(channel_id, row.id)
        result = await self.parts.play.play_on(channel_id, row.id, to_end=True)
        if autoplay is not None and autoplay.message is not None:
            # Its message would otherwise offer Pause or Resume for a game that is over.
            own = own_token(row.extra)
            ended = Run(row.id, autoplay.message, "normal", "", lang, result.row.round, own)
            await self.player.stopped(channel_id, ended, "auto.ended")
        return await self._finished(result, lang)

    async def _finished(self, result: FlipResult, lang: Lang) -> Reply:
        """Return the story of a game just played to its end, with its chart if pictures are on."""
        row, game = result.row, result.game
        assert row.state is not None
        # A long game takes a moment to replay; the event loop keeps serving meanwhile.
        rebuilt = await asyncio.to_thread(rebuild, row.state)
        embed = finish_embed(row, game, rebuilt, lang)
        over = await ending(self.parts.registry, row, game, lang, embed, self.parts.web)
        reply = Reply(embed=embed, view=over.view, update=True, sent=over.sent, durable=True)
        if await self.parts.pictures.enabled(row.guild_id):
            story = await self.parts.pictures.story_picture(row, game, lang)
            if story is not None:  # None: the drawing worker is busy; the text says it all
                reply.more_embeds.append(story[0])
                reply.files.append(story[1])
        return reply


def names_of_user(interaction: discord.Interaction[Any]) -> str:
    """Return the user's display name, safe to show."""
    return safe_name(interaction.user.display_name)


def finish_note(row: GameRow, asker: int, key: str, lang: Lang) -> discord.Embed:
    """Return a finish request that is over, saying why (``key``)."""
    return finish_request_embed(row, asker, [], lang, note=t(lang, key))


def _finish_view(game_id: int, lang: Lang) -> discord.ui.View:
    return view_of(FinishButton(game_id, True, lang), FinishButton(game_id, False, lang))
