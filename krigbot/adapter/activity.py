"""What the Activity asks of the bot: who may see a server's channel, and the moves made in it.

The web view serves the Activity's page and knows who a bearer token is (``web/activity.py``);
only the bot knows a server's members and channels, and only its cogs play a round and show it
in the channel. :class:`ActivityDesk` answers the first from the bot's cache (or one REST look
for a member it has not seen), and hands a Flip pressed in the Activity to the handler the play
cog registered, which plays it as a press of the channel's Flip button is played.
"""

from __future__ import annotations

import logging
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from typing import Final

import discord
from discord.ext import commands

from krigbot.sessions import Refusal

log = logging.getLogger(__name__)

REMEMBER_SECONDS: Final = 60.0
"""How long a member found by a REST look is remembered (the bot has no members' intent, so
its cache holds few): the Activity asks at every move."""
REMEMBERED: Final = 4096

Move = Callable[[int, int], Awaitable[None]]
"""Play a move of a channel's game for a user: (channel id, user id); raises ``Refusal``."""


class ActivityDesk:
    """The bot's side of the Activity: members, channels, and the cogs' handlers of its moves."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.bot: commands.AutoShardedBot | None = None
        """The bot serving now (a start that failed is followed by a new one)."""
        self.clock = clock
        self._flip: Move | None = None
        self._members: OrderedDict[tuple[int, int], float] = OrderedDict()
        """(server, user) -> until when they are known to be a member."""

    def serve(self, bot: commands.AutoShardedBot) -> None:
        """Answer for ``bot`` from now on (its cogs register their handlers anew)."""
        self.bot = bot

    def handle_flip(self, flip: Move) -> None:
        """Play the Activity's Flip presses with ``flip``."""
        self._flip = flip

    async def member(self, guild_id: int, channel_id: int, user_id: int) -> bool:
        """Tell whether ``user_id`` is a member of the server and the channel is the server's.

        A server the bot is not in (or whose shard this process does not hold) has no member:
        nothing one server owns is shown to someone who came from another.
        """
        guild = None if self.bot is None else self.bot.get_guild(guild_id)
        if guild is None or guild.get_channel_or_thread(channel_id) is None:
            return False
        key, now = (guild_id, user_id), self.clock()
        if guild.get_member(user_id) is not None or self._members.get(key, now) > now:
            return True
        try:
            await guild.fetch_member(user_id)
        except discord.NotFound:
            return False
        except discord.HTTPException as exc:
            log.warning("could not look up a member of server %s: %s", guild_id, exc)
            return False
        self._members[key] = now + REMEMBER_SECONDS
        self._members.move_to_end(key)
        while len(self._members) > REMEMBERED:
            self._members.popitem(last=False)
        return True

    async def flip(self, channel_id: int, user_id: int) -> None:
        """Play a round of the channel's game for a player, as their Flip button would."""
        if self._flip is None:
            raise Refusal("err.no_game")
        await self._flip(channel_id, user_id)
