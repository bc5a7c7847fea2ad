"""Autoplay's runs: each plays a channel's game in its own task, editing one message.

A run plays rounds in one message that it edits, never more often than once per
``Settings.autoplay_seconds`` (Discord allows about five edits per five seconds in a channel),
measured from the end of the previous edit, so an edit that discord.py had to retry after a
429 pushes the next one back as well. Each step is committed through the game service before
the message shows it. If its message is gone, it stops and says so in the channel. It stops
at the end of the game, when someone flips by hand (the round it expects is no longer the
round on the table), or when the game is cancelled. The :class:`Autoplayer` holds the runs of
this process, and cancels them when it closes.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import KW_ONLY, dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

import discord

from krigbot.adapter.buttons import AutoplayButton, view_of
from krigbot.adapter.parts import HasHandsFree, HasPlay, TableParts
from krigbot.adapter.replies import NO_MENTIONS
from krigbot.adapter.surfaces import token_gone
from krigbot.adapter.tables import Edit
from krigbot.adapter.weblinks import table_view, watch_live
from krigbot.i18n import Lang, lang_for, t
from krigbot.logs import context
from krigbot.render.play import add_note, autoplay_text, flip_embed, standing_embed
from krigbot.sessions import Autoplay, FlipResult, LostWrite, Refusal, stopped_by
from krigbot.storage import StorageError

if TYPE_CHECKING:
    from krigbot.engine import Variant
    from krigbot.render.emoji import CardFaces
    from krigbot.storage import GameRow

log = logging.getLogger(__name__)

SPEEDS: dict[str, tuple[int, int]] = {
    "slow": (1, 2),
    "normal": (1, 1),
    "fast": (5, 1),
    "fastest": (20, 1),
}
"""Per speed: rounds played per edit, and how many edit intervals each edit waits."""

LEAD = 3
"""Where only interactions reach the chat, autoplay pauses this many steps before the token of
its message's interaction expires, so that its last edit still gets through."""

_STOP_NOTES = {
    "flip.raced": "auto.hand_flip",
    "err.game_over": "auto.ended",
    "err.not_running": "auto.ended",
    "err.storage": "auto.failed",
}
"""Why a step of autoplay was refused -> what its message says."""

_UNTOLD = {"token_lost": "auto.token_lost_untold", "restart": "auto.restart_untold"}
"""Why the bot paused autoplay where nothing could tell the chat -> what its next answer says."""

End = Callable[
    ["GameRow", "Variant", Lang, discord.Embed],
    Awaitable[tuple[discord.ui.View, Callable[[int], Awaitable[None]]]],
]
"""Add a finished game's end to its embed; return its buttons and what to do once shown."""


def running_view(game_id: int, lang: Lang, *links: discord.ui.Item[Any]) -> discord.ui.View:
    """Return the buttons of a table that autoplay is playing (``links``: Watch live, if any)."""
    return view_of(
        AutoplayButton(game_id, "pause", lang), AutoplayButton(game_id, "stop", lang), *links
    )


def paused_view(game_id: int, lang: Lang, *links: discord.ui.Item[Any]) -> discord.ui.View:
    """Return the buttons of a table whose autoplay is paused (``links``: Watch live, if any)."""
    return view_of(
        AutoplayButton(game_id, "resume", lang), AutoplayButton(game_id, "stop", lang), *links
    )


def with_autoplay_line(embed: discord.Embed, text: str, lang: Lang) -> discord.Embed:
    """Return a table whose autoplay line is replaced by ``text``."""
    heading = t(lang, "auto.heading")
    table = embed.copy()
    table.clear_fields()
    for line in embed.fields:
        if line.name != heading:
            table.add_field(name=line.name, value=line.value, inline=line.inline)
    return add_note(table, text, lang)


class AutoplayerParts(TableParts, HasPlay, HasHandsFree, Protocol):
    """What the autoplayer loop uses."""


@dataclass(eq=False)
class Run:
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


@dataclass(eq=False)
class Autoplayer:
    """The autoplay runs of this process, by channel, each in a task of its own."""

    parts: AutoplayerParts
    _: KW_ONLY
    end: End
    interval: float
    """Seconds between two edits of an autoplay message (``Settings.autoplay_seconds``)."""
    faces: CardFaces
    """The card emojis the steps' tables show."""
    rest_turn: Callable[[], float] = lambda: 0.0
    """Take a turn under Discord's global limit for the next edit (0.0), or say how many
    seconds to wait for one."""
    runs: dict[int, Run] = field(default_factory=dict, init=False)
    """Autoplay running in this process, by channel."""
    embeds: dict[int, discord.Embed] = field(default_factory=dict, init=False)
    """Per autoplay message, the table it shows: a stop rewrites its autoplay line."""

    def close(self) -> None:
        """Cancel every run (not halt it: its stored state still says "running", so a restart
        resumes it)."""
        for run in self.runs.values():
            if run.task is not None:
                run.task.cancel()
        self.runs.clear()

    def playing(self, channel_id: int) -> bool:
        """Tell whether autoplay is playing in a channel in this process."""
        return channel_id in self.runs

    def task(self, channel_id: int) -> asyncio.Task[None] | None:
        """Return the task playing autoplay in a channel in this process, if one plays."""
        run = self.runs.get(channel_id)
        return None if run is None else run.task

    def start(self, channel_id: int, run: Run) -> None:
        """Start playing ``run`` in its own task."""
        if not run.own:
            live = self.parts.tables.live(channel_id)
            if live is not None and live.message_id == run.message_id:
                run.via, run.until = live.edit, live.until
            else:
                run.until = 0.0  # nothing reaches its message: it pauses at once
        self.runs[channel_id] = run
        run.task = asyncio.create_task(
            self._play(channel_id, run), name=f"krig-autoplay-{run.game_id}"
        )

    async def halt(self, channel_id: int, game_id: int) -> None:
        """Stop the channel's autoplay task after the step it is in (its edit included)."""
        run = self.runs.get(channel_id)
        if run is None or run.game_id != game_id:
            return
        run.halt.set()
        if run.task is not None and run.task is not asyncio.current_task():
            await asyncio.wait({run.task})
        if self.runs.get(channel_id) is run:
            del self.runs[channel_id]

    async def _wait_turn(self, run: Run, pause: float) -> bool:
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

    async def _play(self, channel_id: int, run: Run) -> None:
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
                    result = await self.parts.play.play_on(
                        channel_id,
                        run.game_id,
                        expected_round=expected,
                        count=per_edit,
                        autoplay=run.message_id,
                    )
                except LostWrite:
                    if await self._played_elsewhere(channel_id, run):
                        return
                    await self.stopped(channel_id, run, "auto.hand_flip")
                    return
                except Refusal as refusal:
                    await self.stopped(channel_id, run, _STOP_NOTES.get(refusal.key, "auto.ended"))
                    return
                expected = result.row.round
                if result.outcome is not None:
                    await self.parts.hands_free.stop_autoplay(channel_id, run.game_id)
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
            await self.stopped(channel_id, run, "auto.failed")
        finally:
            if self.runs.get(channel_id) is run and not run.halt.is_set():
                del self.runs[channel_id]

    async def _played_elsewhere(self, channel_id: int, run: Run) -> bool:
        """Tell whether the other process of a hand-off took the game of ``run`` over.

        During a hand-off both processes of a shard restore the same autoplay; the one whose
        step lost leaves the game, its state and its message to the other, saying nothing. It
        leaves too when the other recorded a Pause or Stop pressed there, and then shows the
        press's table once more (:meth:`_show_halted`). A hand's flip elsewhere showed its
        round in a table of its own: then this one stops, and says why.
        """
        found = await self.parts.registry.game_in(channel_id)  # read again: the copy was dropped
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
            self.embeds.pop(run.message_id, None)
        return played_on

    async def _show_halted(
        self, channel_id: int, run: Run, row: GameRow, game: Variant, paused: Autoplay | None
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
            view = paused_view(row.id, lang, *await watch_live(self.parts.web, row, lang))
        else:
            name = stopped_by(row.extra, run.message_id)
            if name is None:
                return  # not a Stop press: whoever stopped it said why
            embed = standing_embed(row, game, lang, t(lang, "table.current"))
            add_note(embed, t(lang, "auto.stopped", name=name), lang)
            view = await table_view(self.parts.web, row, lang)
        try:
            await self.edit(channel_id, run.message_id, run.own, run.via, embed=embed, view=view)
        except discord.HTTPException as exc:
            run.warn("could not show that autoplay of game %s was halted elsewhere", exc)

    async def _show(self, channel_id: int, run: Run, result: FlipResult) -> bool:
        """Edit the autoplay message to show a step; False if the message is gone."""
        row, lang = result.row, run.lang
        embed = flip_embed(result, lang, faces=self.faces)
        if result.outcome is None:
            add_note(embed, autoplay_text("running", run.speed, run.by, lang), lang)
            view = running_view(row.id, lang, *await watch_live(self.parts.web, row, lang))
            shown = None
            self.embeds[run.message_id] = embed
        else:
            self.embeds.pop(run.message_id, None)
            add_note(embed, t(lang, "auto.done"), lang)
            view, shown = await self.end(row, result.game, lang, embed)
        try:
            await self.edit(channel_id, run.message_id, run.own, run.via, embed=embed, view=view)
        except discord.NotFound:
            await self.stopped(channel_id, run, "auto.gone", post=True)
            return False
        except discord.Forbidden as exc:
            run.warn("autoplay of game %s may not edit its message", exc)
            await self.stopped(channel_id, run, "auto.failed", post=True)
            return False
        except discord.HTTPException as exc:
            if token_gone(exc):
                # Discord ended the message's token early: nothing shows the steps any more.
                run.warn("autoplay of game %s lost its message's token", exc)
                if result.outcome is not None:
                    await self.parts.registry.ending_unreached(row.id)
                await self._token_ran_out(channel_id, run, gone=True)
                return False
            # Discord failed even after discord.py's retries. The rounds are saved: the next
            # edit shows the table as it then stands, and the end of the game goes out anew.
            run.warn("autoplay of game %s could not show a step", exc)
            if result.outcome is None:
                return True
            try:
                posted = await self.parts.tables.surfaces.send(
                    self.parts.bot,
                    channel_id,
                    run.own,
                    embed=embed,
                    view=view,
                    allowed_mentions=NO_MENTIONS,
                )
            except discord.HTTPException as again:
                run.warn("could not show the end of game %s either", again)
                return False
            if posted is None:
                await self.parts.registry.ending_unreached(row.id)
            elif shown is not None:
                await shown(posted.message_id)
            return False
        if shown is not None:
            await shown(run.message_id)
        return True

    async def edit(
        self, channel_id: int, message_id: int, own: bool, via: Edit | None = None, **changes: Any
    ) -> None:
        """Edit a message of the channel outside an answer: with the bot's own token (it
        outlives interactions) where that reaches, else through ``via``, its interaction's."""
        if via is not None and not own:
            await via(**changes)
        elif not await self.parts.tables.edit(
            self.parts.bot, channel_id, message_id, own, **changes
        ):
            return
        if "view" in changes:
            self.parts.tables.changed(channel_id, message_id, changes["view"])

    async def _token_ran_out(self, channel_id: int, run: Run, *, gone: bool = False) -> None:
        """Pause where the message's interaction is about to expire: a Resume press is a new one.

        ``gone``: Discord has ended the token already. The pause is stored as a Pause press's
        is, and said where something still reaches: the channel (the bot's own token), or a
        newer interaction of the chat; else ``/krig status`` says it.
        """
        why = "token_lost" if gone else "token"
        try:
            await self.parts.hands_free.pause_autoplay(
                channel_id, run.game_id, run.message_id, run.by, why=why
            )
            found = await self.parts.registry.game_in(channel_id)
        except (Refusal, StorageError):
            return  # the game moved on meanwhile (a hand's flip, its end): that answer shows it
        if found is None or found[0].id != run.game_id:
            return
        row, game = found
        if game is None:
            return
        lang = run.lang
        if gone:
            self.embeds.pop(run.message_id, None)
            posted = None
            try:
                posted = await self.parts.tables.surfaces.send(
                    self.parts.bot,
                    channel_id,
                    run.own,
                    content=t(lang, "auto.token_lost"),
                    allowed_mentions=NO_MENTIONS,
                )
            except discord.HTTPException as exc:
                run.warn("could not tell that autoplay of game %s paused", exc)
            if posted is None:
                untold = self._still_paused(channel_id, run.game_id, lang, "token_lost")
                self.parts.tables.owe(channel_id, untold)
            return
        embed = standing_embed(row, game, lang, t(lang, "auto.paused_table"))
        add_note(embed, t(lang, "auto.token_paused"), lang)
        self.embeds.pop(run.message_id, None)
        try:
            await self.edit(
                channel_id,
                run.message_id,
                run.own,
                embed=embed,
                view=paused_view(run.game_id, lang, *await watch_live(self.parts.web, row, lang)),
            )
        except discord.HTTPException as exc:
            run.warn("could not show that autoplay of game %s paused", exc)

    async def pause_out_of_reach(self, row: GameRow, state: Autoplay) -> None:
        """Pause the autoplay a restart found running in a chat only interactions reach.

        None of them is left to play it with: it is stored as paused by the bot, so
        ``/krig status`` and a press on its message say so (not that it plays), a Resume press
        plays on, and the chat's next answer says it once.
        """
        try:
            await self.parts.hands_free.pause_autoplay(
                row.channel_id, row.id, state.message, state.by, why="restart"
            )
        except (Refusal, StorageError) as exc:
            log.info("could not record that autoplay of game %s paused: %s", row.id, exc)
            return
        lang = lang_for(row.extra.get("lang"))
        untold = self._still_paused(row.channel_id, row.id, lang, "restart")
        self.parts.tables.owe(row.channel_id, untold)

    def _still_paused(
        self, channel_id: int, game_id: int, lang: Lang, why: str
    ) -> Callable[[], Awaitable[str | None]]:
        """Return what the chat's next answer says of a pause nothing could tell it, if it still
        holds then (no Resume, Pause press or end since); ``why`` the bot paused it."""

        async def note() -> str | None:
            found = await self.parts.registry.game_in(channel_id)
            if found is None or found[0].id != game_id:
                return None
            state = Autoplay.of(found[0].extra)
            if state is None or state.state != "paused" or state.why != why:
                return None
            return t(lang, _UNTOLD[why])

        return note

    async def stopped(self, channel_id: int, run: Run, key: str, *, post: bool = False) -> None:
        """Forget autoplay's state and say why it stopped: on its message, or in the channel."""
        with contextlib.suppress(Refusal, StorageError):
            # If this cannot be saved, a restart resumes autoplay: still never silently lost.
            await self.parts.hands_free.stop_autoplay(channel_id, run.game_id)
        text = t(run.lang, key)
        table = self.embeds.pop(run.message_id, None)
        try:
            if post:
                await self.parts.tables.surfaces.send(
                    self.parts.bot, channel_id, run.own, content=text, allowed_mentions=NO_MENTIONS
                )
            elif table is not None:
                # Its autoplay line says it stopped, and why: nothing claims the bot plays on.
                embed = with_autoplay_line(table, text, run.lang)
                await self.edit(
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
                await self.edit(
                    channel_id, run.message_id, run.own, run.via, content=text, embeds=[], view=None
                )
        except discord.HTTPException as exc:
            run.warn("could not tell that autoplay of game %s stopped", exc)
