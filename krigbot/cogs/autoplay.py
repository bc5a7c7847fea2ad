"""Hands-free play: autoplay (the bot flips by itself) and finishing a game at once.

Autoplay plays rounds in one message that it edits, never more often than once per
``Settings.autoplay_seconds`` (Discord allows about five edits per five seconds in a channel),
measured from the end of the previous edit, so an edit that discord.py had to retry after a
429 pushes the next one back as well. Each step is committed through the game service before
the message shows it. Its state (running or paused, the message, the speed) is kept in the
game's ``extra``, so a restarted bot carries on; if its message is gone, it stops and says so
in the channel. It stops at the end of the game, when someone flips by hand (the round it
expects is no longer the round on the table), or when the game is cancelled.

``/krig finish`` asks every other player still in the game to agree with a button; when the
last one does, the game is played to its end at once and the message tells its whole story.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import discord
from discord import app_commands
from discord.app_commands import locale_str as ls
from discord.ext import commands

from krigbot.adapter.buttons import NUMBER, YES_NO, Buttons, FlipButton, GameButton, one_of, view_of
from krigbot.adapter.group import subcommand
from krigbot.adapter.replies import NO_MENTIONS, Reply, discord_lost, public_lang, respond
from krigbot.adapter.surfaces import own_token, token_gone
from krigbot.adapter.tables import Edit, Shown, Tables, editor, greyed, respond_in_turn
from krigbot.cogs.matches import ending
from krigbot.i18n import Lang, lang_for, t
from krigbot.logs import context
from krigbot.render.embeds import round_embed, safe_name
from krigbot.render.play import (
    add_note,
    autoplay_text,
    finish_embed,
    finish_request_embed,
    standing_embed,
    time_up_embed,
)
from krigbot.render.replays import rebuild
from krigbot.sessions import (
    Autoplay,
    FinishRequest,
    FlipResult,
    LostWrite,
    Refusal,
    authorize,
    stopped_by,
)
from krigbot.storage import StorageError

if TYPE_CHECKING:
    from krigbot.adapter.pictures import Pictures
    from krigbot.engine import Variant
    from krigbot.sessions import GameService
    from krigbot.storage import GameRow
    from krigbot.web.access import WebAccess

log = logging.getLogger(__name__)

SPEEDS: dict[str, tuple[int, int]] = {
    "slow": (1, 2),
    "normal": (1, 1),
    "fast": (5, 1),
    "fastest": (20, 1),
}
"""Per speed: rounds played per edit, and how many edit intervals each edit waits."""
SPEED_CHOICES = [
    app_commands.Choice(name=ls(value, key=f"speed.{value}"), value=value) for value in SPEEDS
]

LEAD = 3
"""Where only interactions reach the chat, autoplay pauses this many steps before the token of
its message's interaction expires, so that its last edit still gets through."""

CLAIM_SECONDS = 15.0
"""How long a /krig auto whose answer never reached Discord keeps others from starting one."""

AutoAction = str
"""``pause``, ``resume`` or ``stop``."""


# ------------------------------------------------------------------------------ buttons


_AUTO_STYLES = {
    "pause": ("⏸️", discord.ButtonStyle.secondary),
    "resume": ("▶️", discord.ButtonStyle.success),
    "stop": ("⏹️", discord.ButtonStyle.danger),
}


class AutoplayButton(GameButton, kind="auto", game=NUMBER, action=one_of(*_AUTO_STYLES)):
    """Pause, resume or stop autoplay (players only)."""

    def __init__(self, game_id: int, action: AutoAction, lang: Lang = "nb") -> None:
        emoji, style = _AUTO_STYLES[action]
        super().__init__(game_id, action, label=t(lang, f"auto.{action}"), emoji=emoji, style=style)


class FinishButton(GameButton, kind="finish", game=NUMBER, choice=YES_NO):
    """Agree to play the game to its end at once, or keep playing (the other players)."""

    def __init__(self, game_id: int, agree: bool, lang: Lang = "nb") -> None:
        super().__init__(
            game_id,
            agree,
            label=t(lang, "finish.yes" if agree else "finish.no"),
            style=discord.ButtonStyle.success if agree else discord.ButtonStyle.secondary,
        )


def running_view(game_id: int, lang: Lang) -> discord.ui.View:
    """Return the buttons of a table that autoplay is playing."""
    return view_of(AutoplayButton(game_id, "pause", lang), AutoplayButton(game_id, "stop", lang))


def paused_view(game_id: int, lang: Lang) -> discord.ui.View:
    """Return the buttons of a table whose autoplay is paused."""
    return view_of(AutoplayButton(game_id, "resume", lang), AutoplayButton(game_id, "stop", lang))


# ------------------------------------------------------------------------------ the cog


@dataclass(eq=False)
class _Run:
    """One channel's autoplay while it plays: its game, message and task."""

    game_id: int
    message_id: int
    speed: str
    by: str
    lang: Lang
    expected: int
    """The round on the table when it started: another round played meanwhile was a hand's."""
    own: bool = True
    """The bot's own token reaches the chat (see ``surfaces``); else only interactions do."""
    via: Edit | None = None
    """Where only interactions reach it: the edit through the one that showed its message."""
    until: float | None = None
    """And when that one expires (``time.monotonic()``)."""
    halt: asyncio.Event = field(default_factory=asyncio.Event)
    task: asyncio.Task[None] | None = None

    def warn(self, problem: str, exc: Exception) -> None:
        """Log a Discord error the run met; ``problem`` has a ``%s`` for the game id."""
        log.warning(problem + ": %s", self.game_id, exc, extra=context(game_id=self.game_id))


class AutoplayCog(commands.Cog, name="Autoplay"):
    """/krig auto and /krig finish: the bot plays the rounds."""

    def __init__(
        self,
        bot: commands.AutoShardedBot,
        *,
        service: GameService,
        tables: Tables,
        web: WebAccess,
        pictures: Pictures,
        buttons: Buttons,
        interval: float,
        rest_turn: Callable[[], float] = lambda: 0.0,
    ) -> None:
        self.bot = bot
        self.service = service
        self.tables = tables
        self.web = web
        self.pictures = pictures
        self.interval = interval
        """Seconds between two edits of an autoplay message (``Settings.autoplay_seconds``)."""
        self.rest_turn = rest_turn
        """Take a turn under Discord's global limit for the next edit (0.0), or say how many
        seconds to wait for one."""
        buttons.handle(AutoplayButton, self.on_autoplay_button)
        buttons.handle(FinishButton, self.on_finish_button)
        self._runs: dict[int, _Run] = {}
        """Autoplay running in this process, by channel."""
        self._claims: dict[int, float] = {}
        """Channels whose /krig auto answer is on its way (loop time), so a second one waits."""
        self._embeds: dict[int, discord.Embed] = {}
        """Per autoplay message, the table it shows: a stop rewrites its autoplay line."""

    async def cog_unload(self) -> None:
        # Cancelled, not halted: the stored state still says "running", so a restart resumes.
        for run in self._runs.values():
            if run.task is not None:
                run.task.cancel()
        self._runs.clear()

    def playing(self, channel_id: int) -> bool:
        """Tell whether autoplay is playing in a channel in this process."""
        return channel_id in self._runs

    def task(self, channel_id: int) -> asyncio.Task[None] | None:
        """Return the task playing autoplay in a channel in this process, if one plays."""
        run = self._runs.get(channel_id)
        return None if run is None else run.task

    async def _player_game(
        self, channel_id: int, user_id: int, game_id: int | None = None
    ) -> tuple[GameRow, Variant]:
        """Return the channel's running game, refusing anyone who is not playing it."""
        seated = authorize(
            await self.service.registry.game_in(channel_id), user_id, game_id=game_id
        )
        return seated.row, seated.game

    # ---------------------------------------------------------------------- autoplay

    @subcommand
    @app_commands.describe(speed="How fast the rounds go")
    @app_commands.choices(speed=SPEED_CHOICES)
    async def auto(self, interaction: discord.Interaction[Any], speed: str = "normal") -> None:
        """Let the bot play the rounds by itself"""
        assert interaction.channel_id is not None
        channel_id = interaction.channel_id
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
                self._embeds[message_id] = embed
                try:
                    await self._begin(channel_id, row.id, message_id, speed, name, lang, own)
                finally:
                    self._claims.pop(channel_id, None)

            return Reply(embed=embed, view=running_view(row.id, lang), sent=sent)

        await respond_in_turn(interaction, self.tables, work())

    def _claim(self, channel_id: int, row: GameRow) -> None:
        """Refuse a second autoplay in a channel, and hold the channel until this one starts."""
        now = asyncio.get_running_loop().time()
        claimed = self._claims.get(channel_id)
        if (
            channel_id in self._runs
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
            await self.service.hands_free.start_autoplay(
                channel_id, game_id, Autoplay("running", message_id, speed, by)
            )
        except Refusal as refusal:
            # Two /krig auto at once: the other one plays; this message says it does not.
            text = t(lang, refusal.key)
            table = self._embeds.pop(message_id, None)
            if table is None:
                await self._edit(channel_id, message_id, own, content=text, embeds=[], view=None)
            else:
                embed = with_autoplay_line(table, text, lang)
                await self._edit(channel_id, message_id, own, embed=embed, view=None)
            return
        found = await self.service.registry.game_in(channel_id)
        if found is None or found[0].id != game_id:
            return
        await self.service.registry.show_table(channel_id, game_id, found[0].round, message_id)
        self._start(channel_id, _Run(game_id, message_id, speed, by, lang, found[0].round, own))

    def _start(self, channel_id: int, run: _Run) -> None:
        if not run.own:
            live = self.tables.live(channel_id)
            if live is not None and live.message_id == run.message_id:
                run.via, run.until = live.edit, live.until
            else:
                run.until = 0.0  # nothing reaches its message: it pauses at once
        self._runs[channel_id] = run
        run.task = asyncio.create_task(
            self._play(channel_id, run), name=f"krig-autoplay-{run.game_id}"
        )

    async def _halt(self, channel_id: int, game_id: int) -> None:
        """Stop the channel's autoplay task after the step it is in (its edit included)."""
        run = self._runs.get(channel_id)
        if run is None or run.game_id != game_id:
            return
        run.halt.set()
        if run.task is not None and run.task is not asyncio.current_task():
            await asyncio.wait({run.task})
        if self._runs.get(channel_id) is run:
            del self._runs[channel_id]

    async def _wait_turn(self, run: _Run, pause: float) -> bool:
        """Wait out the channel's pause, then a turn under the global limit; False if halted."""
        while pause > 0 or (pause := self.rest_turn()) > 0:
            # Pacing, not waiting for something: Discord's channel limit, then its global one
            # near this process's share. The halt event cuts either short.
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(run.halt.wait(), pause)
            if run.halt.is_set():
                return False
            pause = 0.0
        return not run.halt.is_set()

    async def _play(self, channel_id: int, run: _Run) -> None:
        """Play and show rounds until the game ends, a hand flips, or autoplay is halted."""
        loop = asyncio.get_running_loop()
        per_edit, intervals = SPEEDS[run.speed]
        gap = self.interval * intervals
        expected = run.expected
        # The message that started (or resumed) autoplay was just edited or sent.
        last_edit = loop.time()
        try:
            while not run.halt.is_set():
                if not await self._wait_turn(run, last_edit + gap - loop.time()):
                    return
                if run.until is not None and time.monotonic() >= run.until - LEAD * gap:
                    await self._token_ran_out(channel_id, run)
                    return
                try:
                    result = await self.service.play.play_on(
                        channel_id,
                        run.game_id,
                        expected_round=expected,
                        count=per_edit,
                        autoplay=run.message_id,
                    )
                except LostWrite:
                    if await self._played_elsewhere(channel_id, run):
                        return
                    await self._stopped(channel_id, run, "auto.hand_flip")
                    return
                except Refusal as refusal:
                    await self._stopped(channel_id, run, _STOP_NOTES.get(refusal.key, "auto.ended"))
                    return
                expected = result.row.round
                if result.outcome is not None:
                    await self.service.hands_free.stop_autoplay(channel_id, run.game_id)
                if not await self._show(channel_id, run, result):
                    return
                last_edit = loop.time()
                if result.outcome is not None:
                    return
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception(
                "autoplay of game %s failed", run.game_id, extra=context(game_id=run.game_id)
            )
            await self._stopped(channel_id, run, "auto.failed")
        finally:
            if self._runs.get(channel_id) is run and not run.halt.is_set():
                del self._runs[channel_id]

    async def _played_elsewhere(self, channel_id: int, run: _Run) -> bool:
        """Tell whether the other process of a hand-off took the game of ``run`` over.

        During a hand-off both processes of a shard restore the same autoplay; the one whose
        step lost leaves the game, its state and its message to the other, saying nothing. It
        leaves too when the other recorded a Pause or Stop pressed there, and then shows the
        press's table once more (:meth:`_show_halted`). A hand's flip elsewhere showed its
        round in a table of its own: then this one stops, and says why.
        """
        found = await self.service.registry.game_in(channel_id)  # read again: the copy was dropped
        row, game = found if found is not None else (None, None)
        if row is None or row.id != run.game_id or game is None:
            played_on = True  # its end is shown by whoever ended it
        else:
            state = Autoplay.of(row.extra)
            played_on = row.table_message_id == run.message_id and (
                state is None or state.message == run.message_id
            )
            if played_on and (state is None or state.state == "paused"):
                await self._show_halted(channel_id, run, row, game, state)
        if played_on:
            self._embeds.pop(run.message_id, None)
        return played_on

    async def _show_halted(
        self, channel_id: int, run: _Run, row: GameRow, game: Variant, paused: Autoplay | None
    ) -> None:
        """Show on its message that the other process paused or stopped this autoplay.

        That process answered the press with the same table. Only a step of this one that was
        saved before the press, and shown after the answer, could leave the message telling
        that the bot plays on: this edit is the last word.
        """
        lang = run.lang
        if paused is not None:
            embed = standing_embed(row, game, lang, t(lang, "auto.paused_table"))
            note = autoplay_text("paused", paused.speed, paused.by, lang, reason=paused.why or "")
            add_note(embed, note, lang)
            view = paused_view(row.id, lang)
        else:
            name = stopped_by(row.extra, run.message_id)
            if name is None:
                return  # not a Stop press: whoever stopped it said why
            embed = standing_embed(row, game, lang, t(lang, "table.current"))
            add_note(embed, t(lang, "auto.stopped", name=name), lang)
            view = view_of(FlipButton(row.id, row.round, lang))
        try:
            await self._edit(channel_id, run.message_id, run.own, run.via, embed=embed, view=view)
        except discord.HTTPException as exc:
            run.warn("could not show that autoplay of game %s was halted elsewhere", exc)

    async def _show(self, channel_id: int, run: _Run, result: FlipResult) -> bool:
        """Edit the autoplay message to show a step; False if the message is gone."""
        row, lang = result.row, run.lang
        if result.last is None:
            # The time limit was up before this step: the cards were counted instead.
            embed = time_up_embed(row, result.game, lang)
        else:
            embed = round_embed(
                row, result.game, result.last, lang, played=result.played, wars=result.wars
            )
        if result.outcome is None:
            add_note(embed, autoplay_text("running", run.speed, run.by, lang), lang)
            view = running_view(row.id, lang)
            shown = None
            self._embeds[run.message_id] = embed
        else:
            self._embeds.pop(run.message_id, None)
            add_note(embed, t(lang, "auto.done"), lang)
            over = await ending(self.service, row, result.game, lang, embed, self.web)
            view, shown = over.view, over.sent
        try:
            await self._edit(channel_id, run.message_id, run.own, run.via, embed=embed, view=view)
        except discord.NotFound:
            await self._stopped(channel_id, run, "auto.gone", post=True)
            return False
        except discord.Forbidden as exc:
            run.warn("autoplay of game %s may not edit its message", exc)
            await self._stopped(channel_id, run, "auto.failed", post=True)
            return False
        except discord.HTTPException as exc:
            if token_gone(exc):
                # Discord ended the message's token early: nothing shows the steps any more.
                run.warn("autoplay of game %s lost its message's token", exc)
                await self._token_ran_out(channel_id, run, gone=True)
                return False
            # Discord failed even after discord.py's retries. The rounds are saved: the next
            # edit shows the table as it then stands, and the end of the game goes out anew.
            run.warn("autoplay of game %s could not show a step", exc)
            if result.outcome is None:
                return True
            try:
                posted = await self.tables.surfaces.send(
                    self.bot,
                    channel_id,
                    run.own,
                    embed=embed,
                    view=view,
                    allowed_mentions=NO_MENTIONS,
                )
            except discord.HTTPException as again:
                run.warn("could not show the end of game %s either", again)
                return False
            if shown is not None and posted is not None:
                await shown(posted.message_id)
            return False
        if shown is not None:
            await shown(run.message_id)
        return True

    async def _edit(
        self, channel_id: int, message_id: int, own: bool, via: Edit | None = None, **changes: Any
    ) -> None:
        """Edit a message of the channel outside an answer: with the bot's own token (it
        outlives interactions) where that reaches, else through ``via``, its interaction's."""
        if via is not None and not own:
            await via(**changes)
        elif not await self.tables.edit(self.bot, channel_id, message_id, own, **changes):
            return
        if "view" in changes:
            self.tables.changed(channel_id, message_id, changes["view"])

    async def _token_ran_out(self, channel_id: int, run: _Run, *, gone: bool = False) -> None:
        """Pause where the message's interaction is about to expire: a Resume press is a new one.

        ``gone``: Discord has ended the token already. The pause is stored as a Pause press's
        is, and said where something still reaches: the channel (the bot's own token), or a
        newer interaction of the chat; else ``/krig status`` says it.
        """
        why = "token_lost" if gone else "token"
        try:
            await self.service.hands_free.pause_autoplay(
                channel_id, run.game_id, run.message_id, run.by, why=why
            )
            found = await self.service.registry.game_in(channel_id)
        except (Refusal, StorageError):
            return  # the game moved on meanwhile (a hand's flip, its end): that answer shows it
        if found is None or found[0].id != run.game_id:
            return
        row, game = found
        if game is None:
            return
        lang = run.lang
        if gone:
            self._embeds.pop(run.message_id, None)
            posted = None
            try:
                posted = await self.tables.surfaces.send(
                    self.bot,
                    channel_id,
                    run.own,
                    content=t(lang, "auto.token_lost"),
                    allowed_mentions=NO_MENTIONS,
                )
            except discord.HTTPException as exc:
                run.warn("could not tell that autoplay of game %s paused", exc)
            if posted is None:
                self.tables.owe(channel_id, self._still_paused(channel_id, run.game_id, lang))
            return
        embed = standing_embed(row, game, lang, t(lang, "auto.paused_table"))
        add_note(embed, t(lang, "auto.token_paused"), lang)
        self._embeds.pop(run.message_id, None)
        try:
            await self._edit(
                channel_id,
                run.message_id,
                run.own,
                embed=embed,
                view=paused_view(run.game_id, lang),
            )
        except discord.HTTPException as exc:
            run.warn("could not show that autoplay of game %s paused", exc)

    def _still_paused(
        self, channel_id: int, game_id: int, lang: Lang
    ) -> Callable[[], Awaitable[str | None]]:
        """Return what the chat's next answer says of a pause nothing could tell it, if it still
        holds then (no Resume, Pause press or end since)."""

        async def note() -> str | None:
            found = await self.service.registry.game_in(channel_id)
            if found is None or found[0].id != game_id:
                return None
            state = Autoplay.of(found[0].extra)
            if state is None or state.state != "paused" or state.why != "token_lost":
                return None
            return t(lang, "auto.token_lost_untold")

        return note

    async def _stopped(self, channel_id: int, run: _Run, key: str, *, post: bool = False) -> None:
        """Forget autoplay's state and say why it stopped: on its message, or in the channel."""
        with contextlib.suppress(Refusal, StorageError):
            # If this cannot be saved, a restart resumes autoplay: still never silently lost.
            await self.service.hands_free.stop_autoplay(channel_id, run.game_id)
        text = t(run.lang, key)
        table = self._embeds.pop(run.message_id, None)
        try:
            if post:
                await self.tables.surfaces.send(
                    self.bot, channel_id, run.own, content=text, allowed_mentions=NO_MENTIONS
                )
            elif table is not None:
                # Its autoplay line says it stopped, and why: nothing claims the bot plays on.
                embed = with_autoplay_line(table, text, run.lang)
                await self._edit(
                    channel_id,
                    run.message_id,
                    run.own,
                    run.via,
                    content=None,
                    embed=embed,
                    view=None,
                )
            else:
                # Not known what it shows (a restart came in between): it says only why.
                await self._edit(
                    channel_id, run.message_id, run.own, run.via, content=text, embeds=[], view=None
                )
        except discord.HTTPException as exc:
            run.warn("could not tell that autoplay of game %s stopped", exc)

    async def on_autoplay_button(
        self, interaction: discord.Interaction[Any], game_id: int, action: AutoAction
    ) -> None:
        """Handle Pause, Resume and Stop (players only, on the autoplay message)."""
        assert interaction.channel_id is not None
        channel_id = interaction.channel_id
        lang = public_lang(interaction)
        pressed = interaction.message.id if interaction.message else None
        name = names_of_user(interaction)

        async def work() -> Reply:
            row, game = await self._player_game(channel_id, interaction.user.id, game_id)
            state = Autoplay.of(row.extra)
            if state is None or state.message != pressed:
                raise Refusal("err.stale_button")
            if action == "resume":
                return await self._resume(channel_id, game_id, name, lang, own_token(row.extra))
            if action == "pause" and state.state == "paused":
                # Paused already, where its message could not show it (its token ended): the
                # press shows it now.
                embed = standing_embed(row, game, lang, t(lang, "auto.paused_table"))
                add_note(embed, autoplay_text("paused", state.speed, state.by, lang), lang)
                return Reply(embed=embed, view=paused_view(game_id, lang), update=True)
            # The task finishes the step it is in (and shows it) before this answer goes out.
            await self._halt(channel_id, game_id)
            if action == "pause":
                await self.service.hands_free.pause_autoplay(channel_id, game_id, pressed, name)
            else:
                await self.service.hands_free.stop_autoplay(channel_id, game_id, pressed, name)
            row, game = await self._player_game(channel_id, interaction.user.id, game_id)
            if action == "pause":
                embed = standing_embed(row, game, lang, t(lang, "auto.paused_table"))
                add_note(embed, autoplay_text("paused", state.speed, name, lang), lang)
                return Reply(embed=embed, view=paused_view(game_id, lang), update=True)
            embed = standing_embed(row, game, lang, t(lang, "table.current"))
            add_note(embed, t(lang, "auto.stopped", name=name), lang)
            view = view_of(FlipButton(game_id, row.round, lang))
            return Reply(embed=embed, view=view, update=True, durable=True)

        await respond_in_turn(interaction, self.tables, work(), update=True)

    async def _resume(
        self, channel_id: int, game_id: int, name: str, lang: Lang, own: bool
    ) -> Reply:
        resumed = await self.service.hands_free.resume_autoplay(channel_id, game_id, name)
        found = await self.service.registry.game_in(channel_id)
        if found is None or found[0].id != game_id:
            raise Refusal("err.game_over")
        row, game = found
        if game is None:
            raise Refusal("err.game_over")
        speed = resumed.speed
        embed = standing_embed(row, game, lang, t(lang, "auto.starting"))
        add_note(embed, autoplay_text("running", speed, name, lang), lang)

        async def sent(message_id: int) -> None:
            self._embeds[message_id] = embed
            self._start(channel_id, _Run(game_id, message_id, speed, name, lang, row.round, own))

        return Reply(embed=embed, view=running_view(game_id, lang), update=True, sent=sent)

    def restore(self) -> int:
        """Carry on the autoplay that was running when the bot stopped; return how many."""
        resumed = 0
        for row, _ in self.service.registry.running():
            if row.extra.get("lang") and not own_token(row.extra):
                self.tables.surfaces.fix_lang(row.channel_id, lang_for(row.extra["lang"]))
        for row, game in self.service.registry.running():
            state = Autoplay.of(row.extra)
            if state is None or state.state != "running" or game.finished:
                continue
            message, speed = state.message, state.speed
            if message is None or speed not in SPEEDS or not own_token(row.extra):
                # Out of the bot's reach no interaction is left after a restart: a press on its
                # message (Pause, Stop) is a new one, and shows the game as it stands.
                continue
            lang = lang_for(row.extra.get("lang"))
            run = _Run(row.id, message, speed, state.by, lang, row.round)
            self._start(row.channel_id, run)
            resumed += 1
        return resumed

    # ------------------------------------------------------------------------ finish

    @subcommand
    async def finish(self, interaction: discord.Interaction[Any]) -> None:
        """Play the game to its end at once (all must agree)"""
        assert interaction.channel_id is not None
        channel_id = interaction.channel_id
        lang = public_lang(interaction)
        user_id = interaction.user.id

        async def work() -> Reply:
            seated = authorize(await self.service.registry.game_in(channel_id), user_id).still_in()
            row, game = seated.row, seated.game
            replaced = FinishRequest.of(row.extra)
            request = await self.service.hands_free.ask_finish(channel_id, row.id, user_id)
            waiting = request.waiting(row, game)
            if not waiting:
                # Nobody else to ask (Krigbot agrees at once): the end goes out as the answer.
                story = await self._play_to_end(channel_id, row, lang)
                story.update = False
                return story
            view = _finish_view(row.id, lang)

            async def sent(message_id: int) -> None:
                tables = self.tables
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
                    edit = editor(self.bot, channel_id, stored)
                    tables.retire(Shown(stored, _finish_view(row.id, lang), edit), embed=note)
                edit = editor(self.bot, channel_id, message_id, interaction)
                ended = {"embed": finish_note(row, user_id, "finish.game_ended", lang)}
                tables.add_aside(row.id, Shown(message_id, view, edit, lambda: ended))
                with contextlib.suppress(Refusal, StorageError):
                    # Kept with the request, so a bot stopped before it was answered greys it.
                    await self.service.hands_free.finish_request_shown(
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
        assert interaction.channel_id is not None
        channel_id = interaction.channel_id
        lang = public_lang(interaction)
        user_id = interaction.user.id
        pressed = interaction.message.id if interaction.message else None
        tables = self.tables

        async def work() -> Reply:
            row, game = await self._player_game(channel_id, user_id, game_id)
            request = await self.service.hands_free.answer_finish(
                channel_id, game_id, user_id, agree
            )
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
                edit = editor(self.bot, channel_id, message_id, interaction, original=False)
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

        await respond_in_turn(interaction, self.tables, work(), update=True)

    async def _play_to_end(self, channel_id: int, row: GameRow, lang: Lang) -> Reply:
        """Play an agreed game to its end at once (its autoplay stops); return its story."""
        autoplay = Autoplay.of(row.extra)
        await self._halt(channel_id, row.id)
        result = await self.service.play.play_on(channel_id, row.id, to_end=True)
        if autoplay is not None and autoplay.message is not None:
            # Its message would otherwise offer Pause or Resume for a game that is over.
            own = own_token(row.extra)
            ended = _Run(row.id, autoplay.message, "normal", "", lang, result.row.round, own)
            await self._stopped(channel_id, ended, "auto.ended")
        return await self._finished(result, lang)

    async def _finished(self, result: FlipResult, lang: Lang) -> Reply:
        """Return the story of a game just played to its end, with its chart if pictures are on."""
        row, game = result.row, result.game
        assert row.state is not None
        # A long game takes a moment to replay; the event loop keeps serving meanwhile.
        rebuilt = await asyncio.to_thread(rebuild, row.state)
        embed = finish_embed(row, game, rebuilt, lang)
        over = await ending(self.service, row, game, lang, embed, self.web)
        reply = Reply(embed=embed, view=over.view, update=True, sent=over.sent, durable=True)
        if await self.pictures.enabled(row.guild_id):
            story = await self.pictures.story_picture(row, game, lang)
            if story is not None:  # None: the drawing worker is busy; the text says it all
                reply.more_embeds.append(story[0])
                reply.files.append(story[1])
        return reply


_STOP_NOTES = {
    "flip.raced": "auto.hand_flip",
    "err.game_over": "auto.ended",
    "err.not_running": "auto.ended",
    "err.storage": "auto.failed",
}
"""Why a step of autoplay was refused -> what its message says."""


def names_of_user(interaction: discord.Interaction[Any]) -> str:
    """Return the user's display name, safe to show."""
    return safe_name(interaction.user.display_name)


def with_autoplay_line(embed: discord.Embed, text: str, lang: Lang) -> discord.Embed:
    """Return a table whose autoplay line is replaced by ``text``."""
    heading = t(lang, "auto.heading")
    table = embed.copy()
    table.clear_fields()
    for line in embed.fields:
        if line.name != heading:
            table.add_field(name=line.name, value=line.value, inline=line.inline)
    return add_note(table, text, lang)


def finish_note(row: GameRow, asker: int, key: str, lang: Lang) -> discord.Embed:
    """Return a finish request that is over, saying why (``key``)."""
    return finish_request_embed(row, asker, [], lang, note=t(lang, key))


def _finish_view(game_id: int, lang: Lang) -> discord.ui.View:
    return view_of(FinishButton(game_id, True, lang), FinishButton(game_id, False, lang))
