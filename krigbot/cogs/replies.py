"""Answering interactions: always within Discord's 3 seconds, refusals ephemeral and translated."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass, field
from typing import Any

import discord

from krigbot.i18n import Lang, lang_for, t
from krigbot.sessions import Refusal
from krigbot.storage import GameRow

log = logging.getLogger(__name__)

NO_MENTIONS = discord.AllowedMentions.none()
DEFER_AFTER = 2.0
"""Seconds of work after which we defer: Discord drops a first response later than 3 s."""


def user_lang(interaction: discord.Interaction[Any]) -> Lang:
    """Return the language for what only this user sees."""
    return lang_for(interaction.locale)


def public_lang(interaction: discord.Interaction[Any]) -> Lang:
    """Return the language for what everyone in the server sees (never the user's own)."""
    return lang_for(interaction.guild_locale or interaction.locale)


@dataclass(slots=True)
class Reply:
    """One answer to an interaction, sent as a new message or as an edit of the pressed one."""

    content: str | None = None
    embed: discord.Embed | None = None
    view: discord.ui.View | None = None
    ephemeral: bool = False
    update: bool = False
    """Edit the message whose button was pressed instead of sending a new one."""
    mentions: discord.AllowedMentions = field(default_factory=lambda: NO_MENTIONS)
    sent: Callable[[int], Awaitable[None]] | None = None
    """Called with the message's id once it is on Discord."""
    silent: bool = False
    """Acknowledge a button press and change nothing."""

    async def send(self, interaction: discord.Interaction[Any]) -> None:
        """Send as the interaction's first response."""
        response = interaction.response
        if self.silent:
            await response.defer()
            return
        if self.update:
            await response.edit_message(
                content=self.content,
                embed=self.embed,
                view=self.view,
                allowed_mentions=self.mentions,
            )
            message_id = interaction.message.id if interaction.message else None
        else:
            callback = await response.send_message(
                self.content,
                embed=self.embed if self.embed is not None else discord.utils.MISSING,
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
        if self.update:
            message = await interaction.edit_original_response(
                content=self.content,
                embed=self.embed,
                view=self.view,
                allowed_mentions=self.mentions,
            )
        else:
            message = await interaction.followup.send(
                self.content or discord.utils.MISSING,
                embed=self.embed if self.embed is not None else discord.utils.MISSING,
                view=self.view if self.view is not None else discord.utils.MISSING,
                ephemeral=self.ephemeral,
                allowed_mentions=self.mentions,
                wait=True,
            )
        if self.sent is not None:
            await self.sent(message.id)


def jump_link(row: GameRow) -> str:
    """Return a link to the game's newest message (or its channel)."""
    message = row.table_message_id or row.challenge_message_id
    base = f"https://discord.com/channels/{row.guild_id}/{row.channel_id}"
    return f"{base}/{message}" if message else base


async def refuse(interaction: discord.Interaction[Any], key: str, **fields: Any) -> None:
    """Tell only the sender, in their language, why nothing happened."""
    game = fields.pop("game", None)
    if game is not None:
        fields["link"] = jump_link(game)
    text = t(user_lang(interaction), key, **fields)
    if interaction.response.is_done():
        await interaction.followup.send(text, ephemeral=True, allowed_mentions=NO_MENTIONS)
    else:
        await interaction.response.send_message(text, ephemeral=True, allowed_mentions=NO_MENTIONS)


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
    """
    task: asyncio.Task[Reply] = asyncio.ensure_future(work)
    done, _ = await asyncio.wait({task}, timeout=DEFER_AFTER)
    if task in done:
        try:
            reply = task.result()
        except Refusal as refusal:
            await refuse(interaction, refusal.key, **refusal.fields)
            return
        await reply.send(interaction)
        return
    if update:
        await interaction.response.defer()
    else:
        await interaction.response.defer(thinking=True, ephemeral=ephemeral)
    try:
        reply = await task
    except Refusal as refusal:
        if not update and not ephemeral:
            # A public "thinking" message would show the refusal to everyone: remove it.
            await interaction.delete_original_response()
        await refuse(interaction, refusal.key, **refusal.fields)
        return
    await reply.follow_up(interaction)
