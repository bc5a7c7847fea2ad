"""A tournament on Discord: the sign-up's buttons, the shown values, its matches' threads.

A match's thread is opened where Discord lets it; where Discord fails (unwell, rate limiting,
the network, a permission taken away) the round's threads are tried again through the deadlines
and the channel is told, and a thread made but never heard of is found by its name, not opened
twice (:class:`MatchThreads`). A channel Discord says was deleted cancels its tournament.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

import aiohttp
import discord

from krigbot.adapter.buttons import NUMBER, GameButton, view_of
from krigbot.adapter.replies import NO_MENTIONS
from krigbot.i18n import Lang, lang_for, t
from krigbot.render.embeds import safe_name
from krigbot.render.tournament import Shown, champion_text, thread_name
from krigbot.sessions import Deadline, Deadlines, LostWrite, Refusal
from krigbot.sessions.tournaments import Tournament, Tournaments
from krigbot.storage import GameRow, StorageError

log = logging.getLogger(__name__)

RETRY = timedelta(seconds=5)
"""How soon a round's threads are tried again after Discord failed to open one; doubled after
each failure in a row, up to ``RETRY_MOST``."""
RETRY_MOST = timedelta(minutes=5)
TELL_AFTER = 3
"""Failures in a row after which the channel is told that the threads keep failing."""
UNREACHABLE = (discord.HTTPException, discord.RateLimited, aiohttp.ClientError, OSError)
"""What an unwell Discord (5xx, a 429 beyond discord.py's retries) or network raises."""
UNKNOWN_CHANNEL = 10003
UNKNOWN_MESSAGE = 10008


def channel_deleted(error: discord.HTTPException) -> bool:
    """Tell whether Discord answered that the channel asked of is gone (deleted)."""
    return isinstance(error, discord.NotFound) and error.code == UNKNOWN_CHANNEL


async def edited(message: discord.PartialMessage, **fields: Any) -> bool:
    """Edit a message; False if it was deleted (Discord's Unknown Message): nothing to edit."""
    try:
        await message.edit(**fields)
    except discord.NotFound as exc:
        if exc.code != UNKNOWN_MESSAGE:
            raise
        return False
    return True


class ChannelGone(Exception):
    """The tournament's channel was deleted: its threads cannot be opened, nor anything shown."""


class JoinButton(GameButton, kind="tjoin", tournament=NUMBER):
    """Sign up for a tournament."""

    def __init__(self, tournament_id: int, lang: Lang = "nb") -> None:
        super().__init__(
            tournament_id, label=t(lang, "tournament.join"), style=discord.ButtonStyle.success
        )


class LeaveButton(GameButton, kind="tleave", tournament=NUMBER):
    """Take one's name off a tournament's list."""

    def __init__(self, tournament_id: int, lang: Lang = "nb") -> None:
        super().__init__(
            tournament_id, label=t(lang, "tournament.leave"), style=discord.ButtonStyle.secondary
        )


def shown_of(tournament: Tournament) -> Shown:
    """Return what the messages show of a tournament."""
    return Shown(
        name=tournament.name,
        format=tournament.format,
        variant=tournament.variant,
        best_of=tournament.best_of,
        size=tournament.size,
        seed=tournament.seed,
        status=tournament.status,
        players=[(entrant.user_id, entrant.name) for entrant in tournament.players],
        closes_at=tournament.closes_at,
        round_ends_at=tournament.round_ends_at,
        bracket=tournament.bracket,
        champion=tournament.champion,
        reason=tournament.reason,
    )


def signup_view(tournament: Tournament, lang: Lang) -> discord.ui.View | None:
    """Return the sign-up's buttons while it is open."""
    if tournament.status != "signup":
        return None
    return view_of(JoinButton(tournament.id, lang), LeaveButton(tournament.id, lang))


async def crown(bot: discord.Client, tournament: Tournament, champion: int, lang: Lang) -> None:
    """Announce the champion in the tournament's channel, and give the role where there is one."""
    channel = bot.get_partial_messageable(tournament.channel_id)
    await channel.send(
        champion_text(shown_of(tournament), champion, lang),
        allowed_mentions=discord.AllowedMentions(
            everyone=False, roles=False, users=[discord.Object(champion)]
        ),
    )
    if tournament.role_id is not None:
        try:
            await bot.http.add_role(
                tournament.guild_id, champion, tournament.role_id, reason=tournament.name
            )
        except discord.HTTPException as exc:
            # Allowed at creation; the server changed since (the role moved, or was taken).
            log.warning("could not give tournament %s's role: %s", tournament.id, exc)


async def open_thread(
    parent: discord.TextChannel,
    name: str,
    players: Sequence[int],
    paced: Callable[[], Awaitable[None]],
) -> int:
    """Open a match's public thread under the tournament's channel, add its players; its id.

    Each request waits for ``paced`` first.
    """
    await paced()
    thread = await parent.create_thread(name=name, type=discord.ChannelType.public_thread)
    await add_players(thread, players, paced)
    return thread.id


async def add_players(
    thread: discord.Thread, players: Sequence[int], paced: Callable[[], Awaitable[None]]
) -> None:
    """Add a match's players to its thread (again, where they are in: nothing changes).

    A player who cannot be added is still let in: the table's first message mentions them,
    which adds them to the thread, and the match is not held up (nor its thread opened twice)
    for it.
    """
    for player in players:
        await paced()
        try:
            await thread.add_user(discord.Object(player))
        except discord.HTTPException as exc:
            log.warning("thread %s: could not add %s: %s", thread.id, player, exc)


async def made_before(
    parent: discord.TextChannel, name: str, after: int, paced: Callable[[], Awaitable[None]]
) -> discord.Thread | None:
    """Return the bot's active thread of this name under ``parent`` newer than ``after``.

    A thread made just before a restart, whose id the tournament could not remember: found
    among the server's active threads by its parent and name (``after``, an id of the
    tournament's own messages, keeps an earlier tournament's threads of the same name out).
    """
    await paced()
    me = parent.guild.me
    for thread in await parent.guild.active_threads():
        if (
            thread.parent_id == parent.id
            and thread.name == name
            and thread.id > after
            and (me is None or thread.owner_id == me.id)
        ):
            return thread
    return None


@dataclass(eq=False)
class MatchThreads:
    """Open each match's thread of a tournament's round and deal its game there.

    Where Discord does not open one (unwell, the network, a permission taken away), the round's
    threads are tried again later through the deadlines, and the channel is told.
    """

    bot: discord.Client
    tournaments: Tournaments
    deadlines: Deadlines
    clock: Callable[[], datetime]
    paced: Callable[[], Awaitable[None]]
    """Wait for a turn under the process's share of Discord's global limit."""
    show_table: Callable[[Tournament, GameRow, Any, Lang], Awaitable[None]]
    """Post a match game's first table in its thread."""
    _failures: dict[int, int] = field(default_factory=dict, init=False)
    """By tournament: how many tries in a row at opening its round's threads failed."""

    async def open_matches(self, tournament: Tournament) -> None:
        """Open a thread for each match of the round still to play, and deal its game there.

        One request after the other, each taking its turn under the process's share of Discord's
        global limit (as autoplay's edits do), and discord.py waits out each route's bucket.
        Where Discord does not open a thread, the round's threads are tried again later through
        the deadlines (see :meth:`_failed`).
        """
        if tournament.bracket is None:
            return
        try:
            for number, pairing in enumerate(tournament.bracket.current):
                if not pairing.done and pairing.b is not None:
                    tournament = await self._open_match(tournament, number)
            if tournament.told_forbidden:
                # Threads open again: a later refusal is told again.
                await self.tournaments.note_told_forbidden(tournament.id, False)
        except LostWrite:
            return  # its shard is another process's now: that one opens them
        except ChannelGone:
            await self.channel_gone(tournament)
            return
        except discord.Forbidden as exc:
            await self._failed(tournament, exc, forbidden=True)
            return
        except (*UNREACHABLE, Refusal, StorageError) as exc:
            await self._failed(tournament, exc, forbidden=False)
            return
        self._failures.pop(tournament.id, None)

    async def _open_match(self, tournament: Tournament, number: int) -> Tournament:
        """Open one match's thread (or find the one made before a restart) and deal its game.

        The thread's name is stored before the thread is made, so a restart between the two
        finds that thread rather than open a second one.
        """
        assert tournament.bracket is not None
        pairing = tournament.bracket.current[number]
        lang = lang_for(tournament.lang)
        thread_id = tournament.threads[number]
        if thread_id is None:
            parent = await self._parent(tournament)
            if parent is None:
                return tournament
            # A thread's name shows no markdown: the names as they are, spaces tidied.
            names = [" ".join(tournament.name_of(p).split()) for p in pairing.players]
            name = thread_name(len(tournament.bracket.rounds), names[0], names[1], lang)
            found = None
            if tournament.intent(number) == name:
                after = max(tournament.signup_message_id or 0, tournament.board_message_id or 0)
                found = await made_before(parent, name, after, self.paced)
            if found is not None:
                await add_players(found, pairing.players, self.paced)
                thread_id = found.id
            else:
                if tournament.intent(number) != name:
                    tournament = await self.tournaments.intend(tournament.id, number, name)
                try:
                    thread_id = await open_thread(parent, name, pairing.players, self.paced)
                except discord.NotFound as exc:
                    raise ChannelGone from exc  # nothing else of the parent's is asked for
        dealt = await self.tournaments.open_match(tournament.id, number, thread_id)
        if dealt is not None and dealt[0].table_message_id is None:
            await self.paced()
            try:
                await self.show_table(tournament, dealt[0], dealt[1], lang)
            except discord.NotFound as exc:
                if channel_deleted(exc):
                    # Someone deleted the thread already: the match gets a new one, next try.
                    await self.tournaments.thread_gone(tournament.id, number, thread_id)
                raise
        return await self.tournaments.get(tournament.id) or tournament

    async def _parent(self, tournament: Tournament) -> discord.TextChannel | None:
        """Return the tournament's channel, asked of Discord where it is not known here.

        Raises ChannelGone if Discord says it was deleted.
        """
        parent = self.bot.get_channel(tournament.channel_id)
        if parent is None:
            await self.paced()
            try:
                parent = await self.bot.fetch_channel(tournament.channel_id)
            except discord.NotFound as exc:
                raise ChannelGone from exc
        if not isinstance(parent, discord.TextChannel):
            log.warning("tournament %s: its channel is no text channel", tournament.id)
            return None
        return parent

    async def still_there(self, tournament: Tournament) -> bool:
        """Tell whether the tournament's channel is still there; cancel it if it was deleted."""
        try:
            await self._parent(tournament)
        except ChannelGone:
            await self.channel_gone(tournament)
            return False
        except UNREACHABLE as exc:
            log.warning("tournament %s: could not look at its channel: %s", tournament.id, exc)
        return True

    async def channel_gone(self, tournament: Tournament) -> None:
        """Cancel a tournament whose channel was deleted: its match games end with no result,
        and nothing is posted (there is nowhere to post it)."""
        self._failures.pop(tournament.id, None)
        self.deadlines.cancel(tournament.id, "tournament_threads")
        try:
            ended = await self.tournaments.channel_gone(tournament.id)
        except (LostWrite, Refusal) as exc:
            log.warning("tournament %s: could not cancel it: %s", tournament.id, exc)
            return
        if ended is not None:
            log.info(
                "tournament %s: its channel %s was deleted; cancelled, %s match games ended",
                tournament.id,
                tournament.channel_id,
                len(ended),
            )

    async def _failed(self, tournament: Tournament, exc: Exception, *, forbidden: bool) -> None:
        """Try the round's threads again later; tell the channel if it keeps failing.

        A refused permission (403) is told at once, and once (remembered in its state, across
        restarts, until threads open again): the tournament waits, its round's
        clock held (:meth:`Tournaments.round_due`), until the bot may open threads again or the
        organiser cancels it. Other failures (Discord unwell, the network) are told after
        ``TELL_AFTER`` tries in a row.
        """
        failures = self._failures[tournament.id] = self._failures.get(tournament.id, 0) + 1
        log.warning(
            "tournament %s: could not open its matches (try %s): %s",
            tournament.id,
            failures,
            exc,
        )
        wait = min(RETRY * 2 ** (failures - 1), RETRY_MOST)
        self.deadlines.set(
            Deadline(
                "tournament_threads",
                tournament.id,
                tournament.channel_id,
                self.clock() + (RETRY_MOST if forbidden else wait),
                server_id=tournament.guild_id,
            )
        )
        if forbidden:
            # Remembered before it is told, in the tournament's state: a restart during the
            # pause does not tell the channel again.
            try:
                if not await self.tournaments.note_told_forbidden(tournament.id, True):
                    return
            except (LostWrite, Refusal) as error:
                log.warning(
                    "tournament %s: could not remember the telling: %s", tournament.id, error
                )
                return
            key = "tournament.threads.forbidden"
        elif failures == TELL_AFTER:
            key = "tournament.threads.failing"
        else:
            return
        lang = lang_for(tournament.lang)
        channel = self.bot.get_partial_messageable(tournament.channel_id)
        try:
            await channel.send(
                t(lang, key, name=safe_name(tournament.name)), allowed_mentions=NO_MENTIONS
            )
        except UNREACHABLE as error:
            log.warning("tournament %s: could not tell its channel: %s", tournament.id, error)
