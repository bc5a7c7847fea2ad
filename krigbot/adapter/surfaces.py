"""Where the bot can write: with its own token where it is a member, else only through interactions.

In a group DM, a DM between users, or a server that never added the bot (reached through a
member's user install) the bot is no member: Discord refuses every channel call of its own token
there (403, Missing Access). What reaches such a chat is the interaction that caused a change: its
response, its follow-ups (at most ``FOLLOWUPS`` for a user install) and edits through its webhook
while the token lives (15 minutes). A game remembers at its start which kind of chat it is in
(``extra["reach"]``), so a restarted bot knows it too. Every path that writes outside an answer
asks here how; where nothing reaches, it writes nothing, and the next press shows the game as it
stands.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import discord

from krigbot.i18n import Lang
from krigbot.render.embeds import Place

log = logging.getLogger(__name__)

REACH = "reach"
"""The key of a game's ``extra`` that says its chat is reached only through interactions."""
BY_INTERACTION = "interaction"

TOKEN_SECONDS = 14 * 60
"""How long an interaction's token is used (Discord keeps it 15 minutes; one is kept in hand)."""

INVALID_TOKEN = 50027
"""Discord's code for an interaction token it no longer takes (401), which it may end early."""


def token_gone(error: BaseException) -> bool:
    """Tell whether Discord refused a call because the interaction's token is no longer valid."""
    return isinstance(error, discord.HTTPException) and error.code == INVALID_TOKEN


FOLLOWUPS = 5
"""Follow-ups Discord takes per interaction of a user install where the bot is no member."""
SPARE_FOLLOWUPS = 2
"""Of those, how many are left to the answer itself (a deferral filled, a second message)."""


def reaches(interaction: discord.Interaction[Any]) -> bool:
    """Tell whether the bot's own token reaches the interaction's channel."""
    if interaction.context.dm_channel:
        return True  # the bot's own DM with the user
    guild_id = interaction.guild_id
    if guild_id is None:
        return False
    # Discord's word first: a process that holds a shard with another (a hand-off) may not have
    # been sent the server, and is in it all the same.
    return interaction.is_guild_integration() or interaction.client.get_guild(guild_id) is not None


def scope_of(interaction: discord.Interaction[Any]) -> int:
    """Return what a game's records belong to: its server, or outside servers its chat."""
    scope = interaction.guild_id or interaction.channel_id
    assert scope is not None
    return scope


def place_of(interaction: discord.Interaction[Any]) -> Place:
    """Return where the interaction's records are kept: a server, a group DM, or a DM."""
    if in_server(interaction):
        return "server"
    return "chat" if isinstance(interaction.channel, discord.GroupChannel) else "dm"


def in_server(interaction: discord.Interaction[Any]) -> bool:
    """Tell whether the interaction comes from a server (with or without the bot in it)."""
    return interaction.guild_id is not None


def hidden_here(interaction: discord.Interaction[Any]) -> bool:
    """Tell whether Discord shows the bot's answers to the user alone (external apps denied).

    In a server that did not add the bot, a member's user install answers only as the member
    may "Use External Apps" in the channel; where they may not, every answer is ephemeral.
    """
    if not in_server(interaction) or reaches(interaction):
        return False
    return not interaction.permissions.use_external_apps


def reach_extra(interaction: discord.Interaction[Any]) -> dict[str, str]:
    """Return what a new game stores about how its chat is reached."""
    return {} if reaches(interaction) else {REACH: BY_INTERACTION}


def own_token(extra: Mapping[str, Any]) -> bool:
    """Tell whether the bot's own token reaches the chat of a game (by its ``extra``)."""
    return extra.get(REACH) != BY_INTERACTION


@dataclass(eq=False, slots=True)
class _Held:
    interaction: discord.Interaction[Any]
    since: float
    sent: int = 0


class Surfaces:
    """The interactions of the chats the bot's own token does not reach, while their tokens live,
    and the language of those chats' games (a chat has no server locale).

    Only those: an interaction from a server that added the bot is never kept. Each is dropped
    once its token is past ``TOKEN_SECONDS``; none is ever logged.
    """

    def __init__(self) -> None:
        self._held: dict[int, _Held] = {}
        self._langs: dict[int, Lang] = {}

    def fix_lang(self, channel_id: int, lang: Lang) -> None:
        """Show a chat outside servers its game in one language: the challenger's at its start."""
        self._langs[channel_id] = lang

    def new_game(self, interaction: discord.Interaction[Any], lang: Lang) -> None:
        """Fix the language of a game challenged by ``interaction`` if its chat has no locale."""
        if interaction.guild_locale is None and interaction.channel_id is not None:
            self.fix_lang(interaction.channel_id, lang)

    def lang_of(self, channel_id: int | None) -> Lang | None:
        """Return the language fixed for a chat outside servers, if a game there fixed one."""
        return None if channel_id is None else self._langs.get(channel_id)

    def hold(self, interaction: discord.Interaction[Any]) -> None:
        """Keep the newest interaction of a chat out of the bot's reach, for follow-ups."""
        channel_id = interaction.channel_id
        if channel_id is None or reaches(interaction):
            return
        held = self._held[channel_id] = _Held(interaction, time.monotonic())
        # Let go of it when its token expires, even if nothing asks for the chat again.
        asyncio.get_running_loop().call_later(TOKEN_SECONDS, self._drop, channel_id, held)

    def _drop(self, channel_id: int, held: _Held) -> None:
        if self._held.get(channel_id) is held:
            del self._held[channel_id]

    def _fresh(self, channel_id: int) -> _Held | None:
        held = self._held.get(channel_id)
        if held is None:
            return None
        if time.monotonic() - held.since >= TOKEN_SECONDS:
            del self._held[channel_id]
            return None
        return held

    async def send(
        self, client: discord.Client, channel_id: int, own: bool, **message: Any
    ) -> Posted | None:
        """Post a message outside an answer; return where it went, or None where nothing reaches.

        ``own``: the bot's own token reaches the chat (see :func:`own_token`).
        """
        if own:
            posted = await client.get_partial_messageable(channel_id).send(**message)
            return Posted(posted.id, None)
        held = self._fresh(channel_id)
        if held is None or held.sent >= FOLLOWUPS - SPARE_FOLLOWUPS:
            log.info("nothing reaches chat %s now; its next press shows the game", channel_id)
            return None
        held.sent += 1
        try:
            followed = await held.interaction.followup.send(wait=True, **message)
        except discord.HTTPException as exc:
            if not token_gone(exc):
                raise
            # Discord ended the token early: nothing reaches the chat until its next press.
            self._drop(channel_id, held)
            log.info("the newest interaction of chat %s lost its token early", channel_id)
            return None
        return Posted(followed.id, held.interaction)


@dataclass(frozen=True, slots=True)
class Posted:
    """A message posted outside an answer, and the interaction it is a follow-up of (if any):
    only that one can edit it where the bot's own token does not reach."""

    message_id: int
    through: discord.Interaction[Any] | None
