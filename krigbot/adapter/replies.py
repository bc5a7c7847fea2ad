"""Answering interactions: always within Discord's 3 seconds, refusals ephemeral and translated."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass, field
from typing import Any

import discord
from discord import app_commands

from krigbot.adapter.surfaces import reaches
from krigbot.i18n import Lang, lang_for, t
from krigbot.load import Load
from krigbot.logs import context
from krigbot.monitoring import Metrics, Outcome
from krigbot.render.embeds import literal
from krigbot.sessions import Refusal
from krigbot.storage import GameRow, StorageError

log = logging.getLogger(__name__)

NO_MENTIONS = discord.AllowedMentions.none()
DEFER_AFTER = 1.0
"""Seconds of work after which we defer: Discord drops a first response later than 3 s.

Not 2: the deferral is itself work for a busy event loop, and on a loaded machine (two cores,
200 games flipping at once beside other processes) it was seen to reach Discord up to a second
after it was due; 2 s of margin keeps it in time there."""
BACKLOGGED = 0.5
"""An interaction this many seconds old when its command starts waited in a queue: the bot is
busy, its work will wait too, so it defers at once (it may not get another chance in time)."""
READS = frozenset(
    {"krig status", "krig history", "krig replay", "krig stats", "krig leaderboard", "krig rules"}
)
"""The commands that only read: a database out of reach changed nothing, as ever, but saving
was never asked for, so their answer says it cannot read instead."""
UNKNOWN_INTERACTION = 10062
"""Discord's error code for an interaction it no longer knows (answered too late)."""
_BUTTON_KIND = re.compile(r"krig:([a-z]{1,16}):")


def user_lang(interaction: discord.Interaction[Any]) -> Lang:
    """Return the language for what only this user sees."""
    return lang_for(interaction.locale)


def public_lang(interaction: discord.Interaction[Any]) -> Lang:
    """Return the language for what everyone in the server sees (never the user's own).

    A chat outside servers has no locale: its game's language, fixed at its start, stands in.
    """
    if interaction.guild_locale is None:
        tables = getattr(interaction.client, "tables", None)
        fixed: Lang | None = (
            None if tables is None else tables.surfaces.lang_of(interaction.channel_id)
        )
        if fixed is not None:
            return fixed
    return lang_for(interaction.guild_locale or interaction.locale)


RECALL_SECONDS = 0.5
"""How long the language of a chat's game is looked up before an answer: no longer, so that
the answer stays in Discord's time (it is then the reader's, as in a chat with no game)."""


async def recall_lang(interaction: discord.Interaction[Any]) -> None:
    """Read again the language of a game in a chat outside servers, which a restart forgot.

    Every answer there is public in the game's language, chosen before its work begins; the
    language stored with the game is read once here so a restarted bot shows it as before.
    """
    client = interaction.client
    tables, storage = getattr(client, "tables", None), getattr(client, "storage", None)
    if tables is None or storage is None or interaction.guild_locale is not None:
        return
    channel_id = interaction.channel_id
    if channel_id is None or tables.surfaces.lang_of(channel_id) is not None:
        return
    try:
        async with asyncio.timeout(RECALL_SECONDS):
            row = await storage.games.active_game(channel_id)
    except (StorageError, TimeoutError) as exc:
        log.info("the language of chat %s's game stays unknown for now: %s", channel_id, exc)
        return
    if row is not None and row.extra.get("lang"):
        tables.surfaces.fix_lang(channel_id, lang_for(row.extra["lang"]))


def challenger_lang(interaction: discord.Interaction[Any]) -> Lang:
    """Return the language of a new game's public text: the server's, else the challenger's."""
    return public_lang(interaction) if interaction.guild_locale else user_lang(interaction)


@dataclass(slots=True)
class Reply:
    """One answer to an interaction, sent as a new message or as an edit of the pressed one."""

    content: str | None = None
    embed: discord.Embed | None = None
    more_embeds: list[discord.Embed] = field(default_factory=list)
    files: list[discord.File] = field(default_factory=list)
    """Attachments (pictures); on an update they replace the message's old ones."""
    view: discord.ui.View | None = None
    ephemeral: bool = False
    update: bool = False
    """Edit the message whose button was pressed instead of sending a new one."""
    mentions: discord.AllowedMentions = field(default_factory=lambda: NO_MENTIONS)
    sent: Callable[[int], Awaitable[None]] | None = None
    """Called with the message's id once it is on Discord."""
    silent: bool = False
    """Acknowledge a button press and change nothing."""
    aside: bool = False
    """The message is no table (a finish request): its buttons never make it the live one."""
    durable: bool = False
    """The reply reports a change already committed (a played round, a dealt table): if Discord
    will not take it as the interaction's answer, it is shown in the channel instead."""

    @property
    def embeds(self) -> list[discord.Embed]:
        """Return every embed of the reply, the main one first."""
        return ([self.embed] if self.embed is not None else []) + self.more_embeds

    async def send(self, interaction: discord.Interaction[Any]) -> None:
        """Send as the interaction's first response."""
        response = interaction.response
        if self.silent:
            await response.defer()
            return
        if self.update:
            await response.edit_message(
                content=self.content,
                embeds=self.embeds,
                attachments=self.files,
                view=self.view,
                allowed_mentions=self.mentions,
            )
            message_id = interaction.message.id if interaction.message else None
        else:
            callback = await response.send_message(
                self.content,
                embeds=self.embeds,
                files=self.files,
                view=self.view if self.view is not None else discord.utils.MISSING,
                ephemeral=self.ephemeral,
                allowed_mentions=self.mentions,
            )
            message_id = callback.message_id
        if self.sent is not None and message_id is not None:
            await self.sent(message_id)

    async def follow_up(self, interaction: discord.Interaction[Any]) -> None:
        """Send after the interaction was deferred."""
        if self.silent:
            return
        message: discord.Message
        if self.update:
            message = await interaction.edit_original_response(
                content=self.content,
                embeds=self.embeds,
                attachments=self.files,
                view=self.view,
                allowed_mentions=self.mentions,
            )
        else:
            message = await interaction.followup.send(
                self.content or discord.utils.MISSING,
                embeds=self.embeds,
                files=self.files,
                view=self.view if self.view is not None else discord.utils.MISSING,
                ephemeral=self.ephemeral,
                allowed_mentions=self.mentions,
                wait=True,
            )
        if self.sent is not None:
            await self.sent(message.id)

    async def post(self, interaction: discord.Interaction[Any]) -> None:
        """Show the reply in the channel with the bot's own token, outside the interaction."""
        if self.silent or self.ephemeral or interaction.channel_id is None:
            return
        if not reaches(interaction):
            # Nothing but the interaction reaches this chat: the next press shows the game.
            log.info("an answer Discord did not take cannot be shown in a chat out of reach")
            return
        # The failed attempt read the pictures to their end; a file discord.py opened itself
        # from a path is closed by now and is left out rather than sent empty.
        files = [file for file in self.files if not file.fp.closed]
        for file in files:
            file.reset()
        if self.update:
            if interaction.message is None:
                return
            message = await interaction.message.edit(
                content=self.content,
                embeds=self.embeds,
                attachments=files,
                view=self.view,
                allowed_mentions=self.mentions,
            )
        else:
            channel = interaction.client.get_partial_messageable(
                interaction.channel_id, guild_id=interaction.guild_id
            )
            message = await channel.send(
                self.content,
                embeds=self.embeds,
                files=files,
                view=self.view if self.view is not None else discord.utils.MISSING,
                allowed_mentions=self.mentions,
            )
        if self.sent is not None:
            await self.sent(message.id)


def discord_lost(error: BaseException) -> bool:
    """Tell whether Discord could not take an answer: the interaction expired, or it failed.

    discord.py has already waited and retried (5xx after 1, 3, 5 s; 429 after ``retry_after``);
    none of these is a mistake of ours, and the interaction cannot be answered any more.
    """
    if isinstance(error, discord.NotFound):
        return error.code == UNKNOWN_INTERACTION
    return isinstance(error, discord.DiscordServerError) or (
        isinstance(error, discord.HTTPException) and error.status == 429
    )


async def _deliver(
    interaction: discord.Interaction[Any],
    reply: Reply,
    send: Callable[[discord.Interaction[Any]], Awaitable[None]],
) -> None:
    """Send a reply; if Discord will not take it, show a committed change in the channel."""
    try:
        await send(interaction)
    except discord.HTTPException as exc:
        if not (reply.durable and discord_lost(exc)):
            raise
        await _salvage(interaction, reply, exc)
        return
    count(interaction, "answered")


async def _salvage(
    interaction: discord.Interaction[Any], reply: Reply, error: discord.HTTPException
) -> None:
    """Show a reply Discord refused in the channel, so a committed change is never unseen."""
    count(interaction, "late")
    log.warning(
        "Discord did not take the answer to %s (%s %s); showing it in the channel instead",
        _source(interaction),
        error.status,
        error.code,
        extra=_where(interaction),
    )
    try:
        await reply.post(interaction)
    except discord.HTTPException as again:
        log.warning("could not show it in the channel either: %s", again)


def jump_link(row: GameRow) -> str:
    """Return a link to the game's newest message (or its channel)."""
    message = row.table_message_id or row.challenge_message_id
    # Outside servers a game's scope is its chat, which Discord links under @me.
    place = "@me" if row.guild_id == row.channel_id else row.guild_id
    base = f"https://discord.com/channels/{place}/{row.channel_id}"
    return f"{base}/{message}" if message else base


async def refuse(interaction: discord.Interaction[Any], key: str, **fields: Any) -> None:
    """Tell only the sender, in their language, why nothing happened.

    ``game`` becomes a link to the game, ``variant`` (a preset) its name; any other text field
    may be a display name or something typed, so it is shown literally.
    """
    await _tell(interaction, "refused", key, fields)


async def _tell(
    interaction: discord.Interaction[Any], outcome: Outcome, key: str, fields: dict[str, Any]
) -> None:
    """Send the sender alone one translated line, and count the interaction as ``outcome``."""
    lang = user_lang(interaction)
    game = fields.pop("game", None)
    variant = fields.pop("variant", None)
    fields = {name: literal(v) if isinstance(v, str) else v for name, v in fields.items()}
    if game is not None:
        fields["link"] = jump_link(game)
    if variant is not None:
        fields["variant"] = t(lang, f"variant.{variant}.name")
    text = t(lang, key, **fields)
    if interaction.response.is_done():
        await interaction.followup.send(text, ephemeral=True, allowed_mentions=NO_MENTIONS)
    else:
        await interaction.response.send_message(text, ephemeral=True, allowed_mentions=NO_MENTIONS)
    count(interaction, outcome)


def count(interaction: discord.Interaction[Any], outcome: Outcome) -> None:
    """Count how an interaction ended, once, under its command or its kind of button."""
    metrics: Metrics | None = getattr(interaction.client, "metrics", None)
    if metrics is not None:
        metrics.interaction(command_label(interaction), outcome)


def command_label(interaction: discord.Interaction[Any]) -> str:
    """Return a short name for what the interaction was: ``/krig start``, ``button:flip``."""
    if interaction.command is not None:
        return f"/{interaction.command.qualified_name}"
    if interaction.type is discord.InteractionType.component:
        data: dict[str, Any] = dict(interaction.data or {})
        kind = _BUTTON_KIND.match(str(data.get("custom_id", "")))
        # The presser writes the id: only kinds the bot defines become labels, or every forged
        # id would be another series in the metrics.
        if kind is not None and kind[1] in _button_kinds(interaction.client):
            return f"button:{kind[1]}"
        return "button:unknown"
    return "other"


def _button_kinds(client: discord.Client) -> set[str]:
    """Return the kinds of the bot's own buttons (``flip``, ``accept`` …)."""
    buttons = getattr(client, "buttons", None)
    return set() if buttons is None else {button.kind for button in buttons.kinds()}


async def respond(
    interaction: discord.Interaction[Any],
    work: Coroutine[Any, Any, Reply],
    *,
    ephemeral: bool = False,
    update: bool = False,
) -> None:
    """Run ``work`` and send its reply; defer first if it takes close to Discord's deadline.

    ``ephemeral`` and ``update`` say how a deferral must look, since Discord fixes that at the
    time of deferring: a thinking message only the sender sees, or an edit of the message.
    An interaction that already waited long to be read, or that comes while more commands are
    in progress than the bot has lately been answering (``krigbot.load``), defers before its
    work even starts.
    """
    wait = defer_in(interaction)
    with commands_of(interaction):
        await _respond(interaction, work, wait, ephemeral=ephemeral, update=update)


def commands_of(interaction: discord.Interaction[Any]) -> contextlib.AbstractContextManager[None]:
    """Count the interaction's command in progress in the bot's :class:`~krigbot.load.Load`."""
    load: Load | None = getattr(interaction.client, "load", None)
    return contextlib.nullcontext() if load is None else load.command()


async def _respond(
    interaction: discord.Interaction[Any],
    work: Coroutine[Any, Any, Reply],
    wait: float,
    *,
    ephemeral: bool,
    update: bool,
) -> None:
    task: asyncio.Task[Reply] | None = None
    if wait > 0:
        task = asyncio.ensure_future(work)
        done, _ = await asyncio.wait({task}, timeout=wait)
        if task in done:
            try:
                reply = task.result()
            except Refusal as refusal:
                await refuse(interaction, refusal.key, **refusal.fields)
                return
            await _deliver(interaction, reply, reply.send)
            return
    try:
        if update:
            await interaction.response.defer()
        else:
            await interaction.response.defer(thinking=True, ephemeral=ephemeral)
    except discord.HTTPException as exc:
        if not discord_lost(exc):
            if task is None:
                work.close()
            else:
                task.cancel()
            raise
        # Too late to answer anyone, but the work goes on: what it commits must still be seen.
        try:
            reply = await (task or work)
        except Refusal:
            log.info(
                "%s was refused after Discord forgot it",
                _source(interaction),
                extra=_where(interaction),
            )
            count(interaction, "late")
            return
        if reply.durable:
            await _salvage(interaction, reply, exc)
            return
        raise
    try:
        reply = await (task or work)
    except Exception as exc:
        if not update and not ephemeral:
            # The first follow-up would fill the public "thinking" message and show the refusal
            # or the error line to everyone: remove it, so the answer goes to the sender alone.
            with contextlib.suppress(discord.HTTPException):
                await interaction.delete_original_response()
        if isinstance(exc, Refusal):
            await refuse(interaction, exc.key, **exc.fields)
            return
        raise
    await _deliver(interaction, reply, reply.follow_up)


def defer_in(interaction: discord.Interaction[Any]) -> float:
    """Return the seconds of work to wait for before deferring.

    Discord's 3 seconds run from when it created the interaction, not from when the command
    started: under load an interaction can wait a while to be read and to get its channel's
    turn. The id tells when it was made (a clock running ahead makes the bot defer early, which
    costs nothing; one running behind is not trusted past ``DEFER_AFTER``). A bot with a backlog
    of commands (``krigbot.load``) defers at once: behind it, its timer would fire late too.
    """
    age = (discord.utils.utcnow() - interaction.created_at).total_seconds()
    load: Load | None = getattr(interaction.client, "load", None)
    if age >= BACKLOGGED or (load is not None and load.backlogged()):
        return 0.0
    return min(DEFER_AFTER, max(0.0, DEFER_AFTER - age))


async def answer_error(interaction: discord.Interaction[Any], error: Exception) -> None:
    """Answer whatever a command or a button raised: the one error handler of the bot.

    Refusals and bad input get their own line; anything else is logged with its traceback and
    the user gets one short, translated line.
    """
    cause = error.original if isinstance(error, app_commands.CommandInvokeError) else error
    if isinstance(cause, Refusal):
        await refuse(interaction, cause.key, **cause.fields)
        return
    if isinstance(cause, app_commands.NoPrivateMessage):
        await refuse(interaction, "err.dm_only")
        return
    if isinstance(cause, app_commands.TransformerError | app_commands.CheckFailure):
        await refuse(interaction, "err.bad_input")
        return
    if isinstance(cause, StorageError):
        # Expected in bad weather (locked, read-only, full disk): one line saying which, and the
        # user is told that nothing changed. Every write is one transaction, so that is true.
        log.error(
            "%s: the database failed: %s",
            _source(interaction),
            cause,
            extra=_where(interaction),
        )
        command = interaction.command
        reading = command is not None and command.qualified_name in READS
        await _tell(interaction, "failed", "err.storage_read" if reading else "err.storage", {})
        return
    if discord_lost(cause):
        log.warning(
            "%s: Discord did not take the answer: %s",
            _source(interaction),
            cause,
            extra=_where(interaction),
        )
        count(interaction, "late")
        return
    log.error(
        "error in %s",
        _source(interaction),
        exc_info=cause,
        extra=_where(interaction),
    )
    try:
        await _tell(interaction, "failed", "err.unknown", {})
    except discord.HTTPException:
        log.warning("could not tell the user about the error")
        count(interaction, "failed")


def _where(interaction: discord.Interaction[Any]) -> dict[str, int]:
    """Return the ``extra`` of a log line about an interaction: its server and channel."""
    return context(guild_id=interaction.guild_id, channel_id=interaction.channel_id)


def _source(interaction: discord.Interaction[Any]) -> str:
    if interaction.command is not None:
        return f"/{interaction.command.qualified_name}"
    custom_id = interaction.data.get("custom_id") if interaction.data else None
    return f"button {custom_id}"
