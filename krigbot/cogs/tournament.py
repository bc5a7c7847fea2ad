"""``/krig tournament``: sign-up with Join and Leave, rounds of matches in threads, a champion.

The cog asks :class:`~krigbot.sessions.tournaments.Tournaments` and shows what it tells: the
sign-up message and the bracket (or standings) are edited in place, each match of a round gets a
public thread under the tournament's channel with its players added and its game dealt there,
and the champion is announced (and given the role where the bot may, checked at creation).
"""

from __future__ import annotations

import asyncio
import io
import logging
from collections.abc import Awaitable, Callable, Coroutine
from typing import TYPE_CHECKING, Any, Protocol

import discord
from discord import app_commands
from discord.app_commands import locale_str as ls
from discord.ext import commands

from krigbot.adapter.buttons import view_of
from krigbot.adapter.choices import VARIANT_CHOICES
from krigbot.adapter.group import OF_KRIG
from krigbot.adapter.parts import (
    HasBot,
    HasButtons,
    HasDeadlines,
    HasPictures,
    HasRegistry,
    HasTables,
    HasTournaments,
    HasWeb,
)
from krigbot.adapter.players import actor_of, channel_of, player_of
from krigbot.adapter.replies import NO_MENTIONS, Reply, public_lang, refuse, respond
from krigbot.adapter.tables import Shown as Live
from krigbot.adapter.tables import editor
from krigbot.adapter.tournaments import (
    JoinButton,
    LeaveButton,
    MatchThreads,
    channel_deleted,
    crown,
    edited,
    shown_of,
    signup_view,
)
from krigbot.adapter.weblinks import table_view, web_button
from krigbot.engine.tournament import FORMATS
from krigbot.i18n import Lang, lang_for, t
from krigbot.render.embeds import safe_name
from krigbot.render.notices import forfeit_embed
from krigbot.render.play import dealt_embed, time_up_embed
from krigbot.render.tournament import (
    board_embed,
    signup_embed,
)
from krigbot.sessions import Actor, Deadline, FlipResult, LostWrite, Refusal
from krigbot.sessions.tournaments import MATCH_MINUTES, SIGNUP_MINUTES, Change, Tournament

if TYPE_CHECKING:
    from krigbot.config import Shards
    from krigbot.storage import GameRow

log = logging.getLogger(__name__)

FORMAT_CHOICES = [
    app_commands.Choice(name=ls(name, key=f"tournament.format.{name}"), value=name)
    for name in FORMATS
]
BRACKET_FILE = "bracket.png"
LINK_KEY = "web.open_tournament"
BEST_OF_CHOICES = [app_commands.Choice(name=str(n), value=n) for n in (1, 3, 5)]


class TournamentParts(
    HasBot,
    HasTournaments,
    HasRegistry,
    HasDeadlines,
    HasTables,
    HasWeb,
    HasButtons,
    HasPictures,
    Protocol,
):
    """What the tournament cog uses."""


class TournamentGroup(app_commands.Group, name="tournament"):
    """Tournaments: sign up, play your matches in threads, crown a champion"""


class TournamentCog(commands.Cog, name="Tournaments"):
    """Tournaments: their commands, buttons, threads and messages."""

    tournament = TournamentGroup(extras=OF_KRIG)

    def __init__(
        self, parts: TournamentParts, *, rest_turn: Callable[[], float] = lambda: 0.0
    ) -> None:
        self.parts = parts
        self.rest_turn = rest_turn
        """A turn for one request under this process's share of Discord's global limit: 0.0,
        or the seconds to wait for one (the bot's ``rest_turn``)."""
        self._tasks: set[asyncio.Task[None]] = set()
        self._turns: dict[int, asyncio.Lock] = {}
        self.threads = MatchThreads(
            parts.bot,
            parts.tournaments,
            parts.deadlines,
            lambda: parts.registry.clock(),  # the registry's clock as it is when asked
            self._paced,
            self._show_table,
        )
        parts.buttons.handle(JoinButton, self.on_join)
        parts.buttons.handle(LeaveButton, self.on_leave)
        parts.tournaments.on_change.append(self._changed)
        parts.tournaments.on_ended.append(self._ended)
        parts.deadlines.handle("tournament_signup", self._signup_due)
        parts.deadlines.handle("tournament_round", self._round_due)
        parts.deadlines.handle("tournament_threads", self._threads_due)

    async def cog_unload(self) -> None:
        self.parts.deadlines.handle("tournament_signup", None)
        self.parts.deadlines.handle("tournament_round", None)
        self.parts.deadlines.handle("tournament_threads", None)
        for task in list(self._tasks):
            task.cancel()

    def _spawn(self, work: Coroutine[Any, Any, None], name: str) -> None:
        task = asyncio.create_task(work, name=f"krig-tournament-{name}")
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    # ------------------------------------------------------------------ commands

    @tournament.command(name="create")
    @app_commands.describe(
        name="The tournament's name",
        format="Knockout, Swiss or round robin",
        variant="Which rules to play",
        best_of=ls("Games a match: 1, 3 or 5", key="opt.tournament.best_of.desc"),
        size="Most players (2-64, round robin up to 10)",
        signup_minutes="Minutes the sign-up is open (0: the organiser starts it)",
        match_minutes="Minutes each round has before the cards are counted",
        role="A role the champion is given",
    )
    @app_commands.choices(format=FORMAT_CHOICES, variant=VARIANT_CHOICES)
    @app_commands.choices(best_of=BEST_OF_CHOICES)
    async def create(
        self,
        interaction: discord.Interaction[Any],
        name: app_commands.Range[str, 1, 80],
        format: str = "knockout",
        variant: str = "standard",
        best_of: int = 1,
        size: app_commands.Range[int, 2, 64] | None = None,
        signup_minutes: app_commands.Range[int, 0, 10080] = SIGNUP_MINUTES,
        match_minutes: app_commands.Range[int, 1, 10080] = MATCH_MINUTES,
        role: discord.Role | None = None,
    ) -> None:
        """Open a tournament's sign-up in this channel"""
        problem = self._cannot_create(interaction, role)
        if problem is not None:
            await refuse(interaction, problem[0], **problem[1])
            return
        lang = public_lang(interaction)
        chosen = next((each for each in FORMATS if each == format), None)
        if chosen is None:
            await refuse(interaction, "tournament.err.format")
            return
        guild_id = interaction.guild_id or 0

        async def work() -> Reply:
            await self.parts.tournaments.may_create(guild_id, actor_of(interaction))
            made = await self.parts.tournaments.create(
                guild_id=guild_id,
                channel_id=channel_of(interaction),
                organiser=player_of(interaction.user),
                name=name,
                format=chosen,
                variant=variant,
                best_of=best_of,
                size=size,
                signup_minutes=signup_minutes,
                match_minutes=match_minutes,
                role_id=None if role is None else role.id,
                lang=lang,
            )

            async def sent(message_id: int) -> None:
                await self.parts.tournaments.set_messages(made.id, signup=message_id)

            return Reply(
                embed=signup_embed(shown_of(made), lang), view=signup_view(made, lang), sent=sent
            )

        await respond(interaction, work())

    def _cannot_create(
        self, interaction: discord.Interaction[Any], role: discord.Role | None
    ) -> tuple[str, dict[str, str]] | None:
        """Return the refusal of a tournament the bot could not run here, if any."""
        channel = interaction.channel
        if interaction.guild_id is None or not isinstance(channel, discord.TextChannel):
            return "tournament.err.server", {}
        mine = interaction.app_permissions
        if not (mine.create_public_threads and mine.send_messages_in_threads):
            return "tournament.err.threads", {}
        if role is not None:
            me = interaction.guild.me if interaction.guild is not None else None
            if (
                not mine.manage_roles
                or me is None
                or role >= me.top_role
                or role.managed
                or role.is_default()
            ):
                return "tournament.err.role", {"role": role.name}
        return None

    @tournament.command(name="join")
    async def join(self, interaction: discord.Interaction[Any]) -> None:
        """Sign up for the tournament in this channel"""
        await self._sign(interaction, None, joining=True)

    @tournament.command(name="leave")
    async def leave(self, interaction: discord.Interaction[Any]) -> None:
        """Leave the tournament (after the start you give up the rest)"""
        await self._sign(interaction, None, joining=False)

    async def on_join(self, interaction: discord.Interaction[Any], tournament_id: int) -> None:
        """Handle a Join press on the sign-up message."""
        await self._sign(interaction, tournament_id, joining=True)

    async def on_leave(self, interaction: discord.Interaction[Any], tournament_id: int) -> None:
        """Handle a Leave press on the sign-up message."""
        await self._sign(interaction, tournament_id, joining=False)

    async def _sign(
        self, interaction: discord.Interaction[Any], tournament_id: int | None, *, joining: bool
    ) -> None:
        """Join or leave; the sign-up message follows through :meth:`_changed`."""
        lang = lang_for(interaction.locale)

        async def work() -> Reply:
            found = await self._here(interaction, tournament_id)
            service = self.parts.tournaments
            if joining:
                done = await service.join(found.id, player_of(interaction.user))
            else:
                done = await service.leave(found.id, interaction.user.id)
            key = "tournament.joined" if joining else "tournament.left"
            return Reply(content=t(lang, key, name=safe_name(done.name)), ephemeral=True)

        await respond(interaction, work(), ephemeral=True)

    async def _here(
        self, interaction: discord.Interaction[Any], tournament_id: int | None
    ) -> Tournament:
        """Return the tournament a press names, or the open one of the channel."""
        service = self.parts.tournaments
        if tournament_id is not None:
            found = await service.get(tournament_id)
        else:
            found = await service.in_channel(channel_of(interaction))
        if found is None:
            raise Refusal("tournament.err.here")
        return found

    @tournament.command(name="start")
    async def start(self, interaction: discord.Interaction[Any]) -> None:
        """Close the sign-up and start the first round"""
        await self._organise(interaction, self.parts.tournaments.begin, "tournament.started")

    @tournament.command(name="cancel")
    async def cancel(self, interaction: discord.Interaction[Any]) -> None:
        """Cancel the tournament in this channel"""
        await self._organise(interaction, self.parts.tournaments.cancel, "tournament.cancelled")

    async def _organise(
        self,
        interaction: discord.Interaction[Any],
        change: Callable[[int, Actor], Awaitable[Tournament]],
        done: str,
    ) -> None:
        """Make an organiser's change to the channel's tournament; announce it with ``done``."""
        lang = public_lang(interaction)

        async def work() -> Reply:
            found = await self._here(interaction, None)
            changed = await change(found.id, actor_of(interaction))
            return Reply(content=t(lang, done, name=safe_name(changed.name)))

        await respond(interaction, work())

    @tournament.command(name="status")
    async def status(self, interaction: discord.Interaction[Any]) -> None:
        """Show this server's tournaments"""
        lang = lang_for(interaction.locale)
        if interaction.guild_id is None:
            await refuse(interaction, "tournament.err.server")
            return
        guild_id = interaction.guild_id

        async def work() -> Reply:
            running = await self.parts.tournaments.in_server(guild_id)
            if not running:
                return Reply(content=t(lang, "tournament.status.none"), ephemeral=True)
            embeds = [
                board_embed(shown_of(each), lang)
                if each.bracket is not None
                else signup_embed(shown_of(each), lang)
                for each in running
            ]
            return Reply(embed=embeds[0], more_embeds=embeds[1:], ephemeral=True)

        await respond(interaction, work(), ephemeral=True)

    # ------------------------------------------------------------------ what follows a change

    async def _changed(self, tournament: Tournament, change: Change) -> None:
        # Called under a game's or the tournament's lock: the Discord work goes in a task.
        self._spawn(self._show(tournament, change), f"{tournament.id}-{change}")

    async def _show(self, tournament: Tournament, change: Change) -> None:
        """Edit the sign-up and the bracket, open the round's threads, crown the champion.

        One change of a tournament at a time, each showing it as stored when its turn comes,
        so edits racing each other never leave an older list on top.
        """
        turn = self._turns.setdefault(tournament.id, asyncio.Lock())
        async with turn:
            try:
                await self._show_in_turn(tournament, change)
            except LostWrite:
                log.info("tournament %s is another process's now", tournament.id)
            except Exception:
                # The change is stored: the next change, or a restart, shows it again.
                log.exception("could not show tournament %s (%s)", tournament.id, change)

    async def _show_in_turn(self, tournament: Tournament, change: Change) -> None:
        lang = lang_for(tournament.lang)
        channel = self.parts.bot.get_partial_messageable(tournament.channel_id)
        fresh = await self.parts.tournaments.get(tournament.id) or tournament
        if fresh.channel_gone:
            return  # there is no channel left to show anything in
        try:
            if change in ("signup", "started", "cancelled") and fresh.signup_message_id:
                # A sign-up message someone deleted is left so: the bracket still follows.
                await edited(
                    channel.get_partial_message(fresh.signup_message_id),
                    embed=signup_embed(shown_of(fresh), lang),
                    view=signup_view(fresh, lang),
                    allowed_mentions=NO_MENTIONS,
                )
            if fresh.bracket is not None:
                await self._show_board(fresh, lang)
            if change == "finished" and fresh.champion is not None:
                await crown(self.parts.bot, fresh, fresh.champion, lang)
        except discord.HTTPException as exc:
            if channel_deleted(exc):
                await self.threads.channel_gone(fresh)
                return
            log.warning("could not show tournament %s: %s", tournament.id, exc)
        if fresh.status == "running" and change in ("started", "round"):
            await self.threads.open_matches(fresh)

    async def _show_board(self, tournament: Tournament, lang: Lang) -> None:
        """Edit the bracket's message, or post it the first time (or again, if someone deleted
        it): its text, its picture (where the server shows pictures) and the link to its page
        (where it has the web view)."""
        shown = shown_of(tournament)
        embed = board_embed(shown, lang)
        pictures = self.parts.pictures
        png = (
            await pictures.bracket_picture(shown, lang)
            if await pictures.enabled(tournament.guild_id)
            else None
        )

        def files() -> list[discord.File]:  # each request reads its own
            return [] if png is None else [discord.File(io.BytesIO(png), filename=BRACKET_FILE)]

        if png is not None:
            embed.set_image(url=f"attachment://{BRACKET_FILE}")
        url = await self.parts.web.tournament_url(tournament.guild_id, tournament.id)
        view = discord.ui.View() if url is None else view_of(web_button(url, lang, LINK_KEY))
        channel = self.parts.bot.get_partial_messageable(tournament.channel_id)
        if tournament.board_message_id is not None and await edited(
            channel.get_partial_message(tournament.board_message_id),
            embed=embed,
            view=view,
            attachments=files(),
        ):
            return
        message = await channel.send(
            embed=embed, view=view, files=files(), allowed_mentions=NO_MENTIONS
        )
        await self.parts.tournaments.set_messages(tournament.id, board=message.id)

    @commands.Cog.listener()
    async def on_guild_channel_delete(self, channel: discord.abc.GuildChannel) -> None:
        """Cancel the tournament of a channel deleted: its matches' threads went with it."""
        found = await self.parts.tournaments.in_channel(channel.id)
        if found is not None and self.parts.registry.owns(found.guild_id):
            await self.threads.channel_gone(found)

    async def open_matches(self, tournament: Tournament) -> None:
        """Open the threads of the round's matches still to open, in the tournament's turn."""
        async with self._turns.setdefault(tournament.id, asyncio.Lock()):
            fresh = await self.parts.tournaments.get(tournament.id)
            if fresh is not None and fresh.status == "running":
                await self.threads.open_matches(fresh)

    async def _threads_due(self, deadline: Deadline) -> None:
        tournament = await self.parts.tournaments.get(deadline.game_id)
        if tournament is not None and tournament.status == "running":
            await self.open_matches(tournament)

    async def _paced(self) -> None:
        """Wait for a turn under the process's share of Discord's global limit."""
        # Pacing, not waiting for something to happen: nothing could cut it short.
        while (pause := self.rest_turn()) > 0:  # noqa: ASYNC110
            await asyncio.sleep(pause)

    async def _show_table(
        self, tournament: Tournament, row: GameRow, game: Any, lang: Lang
    ) -> None:
        """Post a match game's first table in its thread, naming its players."""
        channel = self.parts.bot.get_partial_messageable(row.channel_id)
        view = await table_view(self.parts.web, row, lang)
        a, b = (f"<@{player}>" for player in row.players)
        message = await channel.send(
            t(lang, "tournament.match_intro", a=a, b=b, name=safe_name(tournament.name)),
            embed=dealt_embed(row, game, lang),
            view=view,
            allowed_mentions=discord.AllowedMentions(
                everyone=False, roles=False, users=[discord.Object(p) for p in row.players]
            ),
        )
        edit = editor(self.parts.bot, row.channel_id, message.id)
        self.parts.tables.show(row.channel_id, Live(message.id, view, edit))
        await self.parts.registry.show_table(row.channel_id, row.id, 0, message.id)

    async def _ended(self, result: FlipResult) -> None:
        """Show in its thread the end of a game the tournament ended: counted out at the round's
        deadline, or given up by a player who left."""
        row, game = result.row, result.game
        lang = lang_for(row.extra.get("lang"))
        tables = self.parts.tables
        async with tables.turn(row.channel_id):
            channel = self.parts.bot.get_partial_messageable(row.channel_id)
            outcome = game.outcome
            if outcome is not None and outcome.reason == "forfeit":
                # A player left the tournament: the one who did not win gave up.
                seat = next(s for s in range(len(row.players)) if s not in outcome.winners)
                embed = forfeit_embed(row, game, seat, lang, over=True)
            else:
                embed = time_up_embed(row, game, lang)
            try:
                await channel.send(embed=embed, allowed_mentions=NO_MENTIONS)
            except discord.HTTPException as exc:
                log.warning("could not show the end of tournament game %s: %s", row.id, exc)
                return
            table = tables.live(row.channel_id)
            if table is not None:
                tables.forget(row.channel_id, table.message_id)
                tables.retire(table)
            tables.end_game(row.id)
        await self.parts.registry.ending_shown(row.id)

    async def _signup_due(self, deadline: Deadline) -> None:
        await self.parts.deadlines.attempt(
            deadline,
            self.parts.tournaments.signup_due(deadline.game_id),
            "close a tournament's sign-up",
        )

    async def _round_due(self, deadline: Deadline) -> None:
        await self.parts.deadlines.attempt(
            deadline,
            self.parts.tournaments.round_due(deadline.game_id),
            "end a tournament's round",
        )

    async def restore(self, shards: Shards | None = None) -> None:
        """Pick every open tournament up where it stood (at start, or ``shards`` taken over)."""
        await self.parts.bot.wait_until_ready()
        for tournament in await self.parts.tournaments.restore(shards):
            if not await self.threads.still_there(tournament):
                continue  # its channel was deleted while the bot was away: cancelled
            if tournament.status == "running":
                await self.open_matches(tournament)
