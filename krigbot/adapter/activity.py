"""What the Activity asks of the bot: who may see a server's channel, and the moves made in it.

The web view serves the Activity's page and knows who a bearer token is (``web/activity.py``);
only the bot knows a server's members and channels, and only its cogs play a round and show it
in the channel. :class:`ActivityDesk` answers the first from the bot's cache (or one REST look
for a member it has not seen), and hands a Flip pressed in the Activity to the handler the play
cog registered, and a Steal War look or choice to the Steal War cog's, which play them as the
channel's buttons are played. A server whose shard another process of the bot holds is asked
of that process (:mod:`krigbot.adapter.forwarding`). :func:`show_below` posts the table such a
move leaves.
"""

from __future__ import annotations

import logging
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Final

import discord
from discord.ext import commands

from krigbot.adapter.forwarding import Forwarding
from krigbot.adapter.replies import NO_MENTIONS
from krigbot.adapter.surfaces import own_token
from krigbot.adapter.tables import Shown, Tables, editor, has_buttons
from krigbot.config import shard_of
from krigbot.i18n import Lang, lang_for
from krigbot.logs import about
from krigbot.sessions import Refusal
from krigbot.storage import GameRow

if TYPE_CHECKING:
    from krigbot.storage.notes import NoteStore

log = logging.getLogger(__name__)

REMEMBER_SECONDS: Final = 60.0
"""How long a member found by a REST look is remembered (the bot has no members' intent, so
its cache holds few): the Activity asks at every move."""
REMEMBERED: Final = 4096

Move = Callable[[int, int], Awaitable[None]]
"""Play a move of a channel's game for a user: (channel id, user id); raises ``Refusal``."""
Look = Callable[[int, int, Lang], Awaitable[dict[str, Any]]]
"""Show a Steal War player their card and choices: (channel id, user id, the page's language)."""
Choose = Callable[[int, int, dict[str, Any], Lang], Awaitable[dict[str, Any]]]
"""Make a Steal War choice the page offered (its ``move``); answer with the look after it."""


class ActivityDesk:
    """The bot's side of the Activity: members, channels, and the cogs' handlers of its moves.

    A server whose shard another process holds is answered by that process, through the
    database (:mod:`krigbot.adapter.forwarding`), once :meth:`across_processes` is on.
    """

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.bot: commands.AutoShardedBot | None = None
        """The bot serving now (a start that failed is followed by a new one)."""
        self.clock = clock
        self.holds: Callable[[int], bool] = lambda _: True
        """Tell whether this process holds a server's shard now."""
        self.forwarding: Forwarding | None = None
        """Where a server of another process's shard is asked (PostgreSQL), once on."""
        self._flip: Move | None = None
        self._look: Look | None = None
        self._choose: Choose | None = None
        self._members: OrderedDict[tuple[int, int], float] = OrderedDict()
        """(server, user) -> until when they are known to be a member."""

    def serve(
        self, bot: commands.AutoShardedBot, holds: Callable[[int], bool] | None = None
    ) -> None:
        """Answer for ``bot`` from now on (its cogs register their handlers anew), for the
        servers whose shards ``holds`` (every one where not given)."""
        self.bot = bot
        self.holds = holds if holds is not None else lambda _: True
        self.forwarding = None

    async def across_processes(
        self, notes: NoteStore, bot_id: int
    ) -> Callable[[], Awaitable[None]] | None:
        """Ask the bot's other processes for the servers of their shards, and answer theirs for
        this one's; return what stops it (None: SQLite, one process holds every server)."""
        if not notes.carried:
            return None
        forwarding = Forwarding(notes, bot_id, self._answers_for, self._answer)
        stop = await forwarding.start()
        self.forwarding = forwarding

        async def stopped() -> None:
            if self.forwarding is forwarding:
                self.forwarding = None
            await stop()

        return stopped

    def handle_flip(self, flip: Move) -> None:
        """Play the Activity's Flip presses with ``flip``."""
        self._flip = flip

    def handle_choices(self, look: Look, choose: Choose) -> None:
        """Show Steal War's looks with ``look`` and make its choices with ``choose``."""
        self._look, self._choose = look, choose

    def _elsewhere(self, guild_id: int) -> Forwarding | None:
        """Return where to ask for a server another process holds (None: answer here)."""
        if self.forwarding is None or self.holds(guild_id):
            return None
        return self.forwarding

    def _shard(self, guild_id: int) -> int:
        count = None if self.bot is None else self.bot.shard_count
        return shard_of(guild_id, count or 1)

    async def member(self, guild_id: int, channel_id: int, user_id: int) -> bool:
        """Tell whether ``user_id`` is a member of the server and the channel is the server's.

        A server the bot is not in has no member: nothing one server owns is shown to someone
        who came from another.
        """
        elsewhere = self._elsewhere(guild_id)
        if elsewhere is not None:
            shard = self._shard(guild_id)
            answer = await elsewhere.ask(
                shard, guild_id, "member", channel=channel_id, user=user_id
            )
            return answer is True
        return await self._member(guild_id, channel_id, user_id)

    async def _member(self, guild_id: int, channel_id: int, user_id: int) -> bool:
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

    async def flip(self, guild_id: int, channel_id: int, user_id: int) -> None:
        """Play a round of the channel's game for a player, as their Flip button would."""
        elsewhere = self._elsewhere(guild_id)
        if elsewhere is not None:
            shard = self._shard(guild_id)
            await elsewhere.ask(shard, guild_id, "flip", channel=channel_id, user=user_id)
            return
        if self._flip is None:
            raise Refusal("err.no_game")
        await self._flip(channel_id, user_id)

    async def look(
        self, guild_id: int, channel_id: int, user_id: int, lang: Lang
    ) -> dict[str, Any]:
        """Return a Steal War player's next card and the choices open to them."""
        elsewhere = self._elsewhere(guild_id)
        if elsewhere is not None:
            shard = self._shard(guild_id)
            answer = await elsewhere.ask(
                shard, guild_id, "look", channel=channel_id, user=user_id, lang=lang
            )
            return dict(answer)
        if self._look is None:
            raise Refusal("err.no_game")
        return await self._look(channel_id, user_id, lang)

    async def choose(
        self, guild_id: int, channel_id: int, user_id: int, move: dict[str, Any], lang: Lang
    ) -> dict[str, Any]:
        """Make a Steal War choice the Activity offered, as its button would."""
        elsewhere = self._elsewhere(guild_id)
        if elsewhere is not None:
            shard = self._shard(guild_id)
            answer = await elsewhere.ask(
                shard, guild_id, "choose", channel=channel_id, user=user_id, move=move, lang=lang
            )
            return dict(answer)
        if self._choose is None:
            raise Refusal("err.no_game")
        return await self._choose(channel_id, user_id, move, lang)

    def _answers_for(self, guild_id: int) -> bool:
        """Tell whether this process answers another's calls for a server: it holds its shard,
        and knows the server or has the shard connected (one taken over just now that is still
        connecting answers nothing: the page is told to try again)."""
        if self.bot is None or not self.holds(guild_id):
            return False
        return self.bot.get_guild(guild_id) is not None or self._shard_ready(guild_id)

    async def _answer(self, call: str, guild_id: int, args: dict[str, Any]) -> Any:
        """Make a call another process forwarded, for a server whose shard this one holds."""
        channel_id, user_id = int(args["channel"]), int(args["user"])
        if call == "member":
            return await self._member(guild_id, channel_id, user_id)
        lang = lang_for(args.get("lang"))
        if call == "flip":
            await self.flip(guild_id, channel_id, user_id)
            return None
        if call == "look":
            return await self.look(guild_id, channel_id, user_id, lang)
        if call == "choose":
            return await self.choose(guild_id, channel_id, user_id, dict(args["move"]), lang)
        raise ValueError(f"no such call of the Activity: {call!r}")

    def _shard_ready(self, guild_id: int) -> bool:
        """Tell whether the shard of a server is connected here (its servers are known)."""
        if self.bot is None:
            return False
        shard = self.bot.get_shard(self._shard(guild_id))
        return shard is not None and not shard.is_closed() and self.bot.is_ready()


async def show_below(
    bot: commands.AutoShardedBot,
    tables: Tables,
    row: GameRow,
    *,
    view: discord.ui.View | None,
    **message: Any,
) -> int | None:
    """Post a table a move outside an interaction left (in the channel's turn, which the caller
    holds); it becomes the live one and the one before it goes grey. Return its id, or None
    where nothing reached the chat or Discord failed (the move is saved: the next press shows
    it)."""
    try:
        posted = await tables.surfaces.send(
            bot,
            row.channel_id,
            own_token(row.extra),
            view=view if view is not None else discord.utils.MISSING,
            allowed_mentions=NO_MENTIONS,
            **message,
        )
    except discord.HTTPException as exc:
        log.warning("could not show game %s's table: %s", row.id, exc, extra=about(row))
        return None
    if posted is None:
        return None
    if has_buttons(view):
        assert view is not None
        edit = editor(bot, row.channel_id, posted.message_id, posted.through, original=False)
        tables.show(row.channel_id, Shown(posted.message_id, view, edit))
    return posted.message_id
