"""Slash commands and buttons of Krig: thin handlers over the game service and the renderers."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from datetime import timedelta
from typing import TYPE_CHECKING, Any

import discord
from discord import app_commands
from discord.app_commands import locale_str as ls
from discord.ext import commands

from krigbot.cogs.buttons import AcceptButton, DeclineButton, FlipButton, ForfeitButton, view_of
from krigbot.cogs.pictures import Pictures
from krigbot.cogs.replies import NO_MENTIONS, Reply, public_lang, refuse, respond, user_lang
from krigbot.i18n import Lang, lang_for, t
from krigbot.render.embeds import (
    VARIANTS,
    challenge_embed,
    counts_field,
    leaderboard_embed,
    names_of,
    outcome_text,
    round_embed,
    rules_embed,
    safe_name,
    stats_embed,
    status_embed,
)
from krigbot.sessions import MAX_FLIPS, FlipResult, Player, Refusal

if TYPE_CHECKING:
    from krigbot.bot import KrigBot
    from krigbot.storage import GameRow

log = logging.getLogger(__name__)

MAX_ROUND_LIMIT = 10_000
PERIODS = {"all": None, "month": timedelta(days=30), "week": timedelta(days=7)}

VARIANT_CHOICES = [
    app_commands.Choice(name=ls(name, key=f"variant.{name}.name"), value=name) for name in VARIANTS
]
PICKUP_CHOICES = [
    app_commands.Choice(name=ls(value, key=f"pickup.{value}"), value=value)
    for value in ("winner_first", "table", "shuffled")
]
SHORTAGE_CHOICES = [
    app_commands.Choice(name=ls(value, key=f"shortage.{value}"), value=value)
    for value in ("lose", "last_card")
]
IMAGES_CHOICES = [
    app_commands.Choice(name=ls(value, key=f"images.{value}"), value=value)
    for value in ("on", "off")
]
PERIOD_CHOICES = [
    app_commands.Choice(name=ls(value, key=f"period.{value}"), value=value) for value in PERIODS
]


def _opt(name: str) -> ls:
    return ls(name, key=f"opt.{name}.name")


def _desc(key: str, english: str) -> ls:
    return ls(english, key=key)


class KrigCog(commands.Cog, name="Krig"):
    """Krig in server channels: challenges, flips, results and records."""

    krig = app_commands.Group(
        name=ls("krig", key="cmd.krig.name"),
        description=_desc("cmd.krig.desc", "Play Krig (War), the card game"),
        guild_only=True,
    )

    def __init__(self, bot: KrigBot) -> None:
        self.bot = bot
        self.service = bot.service
        self.storage = bot.storage
        self.pictures = Pictures(bot.storage)
        self._timers: dict[int, asyncio.Task[None]] = {}

    async def cog_unload(self) -> None:
        for task in self._timers.values():
            task.cancel()
        self._timers.clear()

    # ------------------------------------------------------------------ challenges

    @krig.command(
        name=ls("start", key="cmd.start.name"),
        description=_desc("cmd.start.desc", "Challenge one to three players to a game of Krig"),
    )
    @app_commands.rename(
        opponent=_opt("opponent"),
        opponent2=_opt("opponent2"),
        opponent3=_opt("opponent3"),
        variant=_opt("variant"),
        rounds=_opt("rounds"),
        pickup=_opt("pickup"),
        shortage=_opt("shortage"),
    )
    @app_commands.describe(
        opponent=_desc("opt.opponent.desc", "Who you challenge"),
        opponent2=_desc("opt.opponent2.desc", "A second opponent (3 players)"),
        opponent3=_desc("opt.opponent3.desc", "A third opponent (4 players, or teams)"),
        variant=_desc("opt.variant.desc", "Which rules to play"),
        rounds=_desc("opt.rounds.desc", "End after this many rounds; most cards wins"),
        pickup=_desc("opt.pickup.desc", "The order won cards go under the pile"),
        shortage=_desc("opt.shortage.desc", "What happens when someone runs out of cards in a war"),
    )
    @app_commands.choices(variant=VARIANT_CHOICES, pickup=PICKUP_CHOICES, shortage=SHORTAGE_CHOICES)
    async def start(
        self,
        interaction: discord.Interaction[Any],
        opponent: discord.User,
        opponent2: discord.User | None = None,
        opponent3: discord.User | None = None,
        variant: str = "standard",
        rounds: app_commands.Range[int, 1, MAX_ROUND_LIMIT] | None = None,
        pickup: str | None = None,
        shortage: str | None = None,
    ) -> None:
        """Challenge one to three players to a game of Krig."""
        assert interaction.guild_id is not None
        assert interaction.channel_id is not None
        guild_id, channel_id = interaction.guild_id, interaction.channel_id
        opponents = [o for o in (opponent, opponent2, opponent3) if o is not None]
        lang = public_lang(interaction)
        options: dict[str, Any] = {}
        if rounds is not None:
            if not 1 <= rounds <= MAX_ROUND_LIMIT:
                await refuse(interaction, "err.rounds_range", min=1, max=MAX_ROUND_LIMIT)
                return
            options["max_rounds"] = rounds
        if pickup is not None:
            options["pickup"] = pickup
        if shortage is not None:
            options["shortage"] = shortage
        if variant not in VARIANTS:
            await refuse(interaction, "err.bad_option", reason=variant)
            return

        async def work() -> Reply:
            result = await self.service.challenge(
                guild_id=guild_id,
                channel_id=channel_id,
                challenger=_player(interaction.user),
                opponents=[_player(o) for o in opponents],
                variant=variant,
                options=options,
            )
            row = result.row
            await self.storage.update_extra(row.id, {"lang": lang})
            lines = [" ".join(f"<@{o.id}>" for o in opponents)]
            if result.replaced is not None:
                hours = round(self.service.idle_after / timedelta(hours=1))
                lines.append(t(lang, "game.abandoned", count=hours, hours=hours))

            async def sent(message_id: int) -> None:
                await self.storage.set_challenge_message(row.id, message_id)
                self._schedule_expiry(row, message_id, lang, self.service.challenge_ttl)

            return Reply(
                content="\n".join(lines),
                embed=challenge_embed(row, lang),
                view=self._challenge_view(row.id, lang),
                mentions=discord.AllowedMentions(
                    everyone=False, roles=False, users=[discord.Object(o.id) for o in opponents]
                ),
                sent=sent,
            )

        await respond(interaction, work())

    @staticmethod
    def _challenge_view(game_id: int, lang: Lang) -> discord.ui.View:
        return view_of(AcceptButton(game_id, lang), DeclineButton(game_id, lang))

    def _schedule_expiry(self, row: GameRow, message_id: int, lang: Lang, delay: timedelta) -> None:
        self._cancel_expiry(row.id)
        self._timers[row.id] = asyncio.create_task(
            self._expire_later(row.id, row.channel_id, message_id, lang, delay.total_seconds()),
            name=f"krig-expire-{row.id}",
        )

    def _cancel_expiry(self, game_id: int) -> None:
        task = self._timers.pop(game_id, None)
        if task is not None and task is not asyncio.current_task():
            task.cancel()

    async def _expire_later(
        self, game_id: int, channel_id: int, message_id: int, lang: Lang, delay: float
    ) -> None:
        if delay > 0:
            await asyncio.sleep(delay)  # the challenge's lifetime, not a wait for something
        self._timers.pop(game_id, None)
        row = await self.service.expire(game_id)
        if row is None:
            return
        embed = challenge_embed(row, lang, note=t(lang, "challenge.expired"))
        message = self.bot.get_partial_messageable(channel_id).get_partial_message(message_id)
        try:
            await message.edit(embed=embed, view=None, allowed_mentions=NO_MENTIONS)
        except discord.HTTPException as exc:
            log.warning("could not mark challenge %s as expired: %s", game_id, exc)

    def restore_timers(self, challenges: list[GameRow]) -> None:
        """Start the expiry timers of challenges that were open when the bot stopped."""
        now = self.service.clock()
        for row in challenges:
            if row.challenge_message_id is None:
                continue
            left = self.service.challenge_ttl - (now - row.created_at)
            lang = lang_for(row.extra.get("lang"))
            self._schedule_expiry(row, row.challenge_message_id, lang, max(left, timedelta(0)))

    async def on_accept(self, interaction: discord.Interaction[Any], game_id: int) -> None:
        """Handle an Accept press."""
        lang = public_lang(interaction)
        pressed = interaction.message.id if interaction.message else None

        async def work() -> Reply:
            result = await self.service.accept(
                game_id, interaction.user.id, table_message_id=pressed
            )
            row = result.row
            if result.game is None:
                return Reply(
                    embed=challenge_embed(row, lang),
                    view=self._challenge_view(row.id, lang),
                    update=True,
                )
            self._cancel_expiry(row.id)
            embed = discord.Embed(
                title=t(lang, "table.title", round=0),
                description=t(lang, "table.dealt"),
                colour=discord.Colour.blurple(),
            )
            embed.add_field(
                name=t(lang, "table.counts_heading"),
                value=counts_field(result.game, names_of(row), lang),
                inline=False,
            )
            embed.set_footer(text=t(lang, "table.round_footer", round=0, game=row.id))
            return Reply(embed=embed, view=view_of(FlipButton(row.id, 0, lang)), update=True)

        await respond(interaction, work(), update=True)

    async def on_decline(self, interaction: discord.Interaction[Any], game_id: int) -> None:
        """Handle a Decline press."""
        lang = public_lang(interaction)

        async def work() -> Reply:
            row = await self.service.decline(game_id, interaction.user.id)
            self._cancel_expiry(row.id)
            note = t(lang, "challenge.declined", name=safe_name(_display_name(interaction.user)))
            return Reply(embed=challenge_embed(row, lang, note=note), view=None, update=True)

        await respond(interaction, work(), update=True)

    # --------------------------------------------------------------------- playing

    async def _table_reply(self, result: FlipResult, lang: Lang, *, update: bool) -> Reply:
        row = result.row
        embed = round_embed(row, result.game, result.rounds, lang)
        files: list[discord.File] = []
        more: list[discord.Embed] = []
        if await self.pictures.enabled(row.guild_id):
            files.append(
                await self.pictures.round_picture(row, result.game, result.rounds[-1], lang, embed)
            )
            if result.outcome is not None:
                story, chart = await self.pictures.story_picture(row, result.game, lang)
                more.append(story)
                files.append(chart)
        if result.outcome is not None:
            return Reply(embed=embed, more_embeds=more, files=files, view=None, update=update)
        view = view_of(FlipButton(row.id, row.round, lang))
        if update:  # flip() recorded the pressed message as the table
            return Reply(embed=embed, files=files, view=view, update=True)

        async def sent(message_id: int) -> None:
            await self.service.show_table(row.channel_id, row.id, row.round, message_id)

        return Reply(embed=embed, files=files, view=view, sent=sent)

    @app_commands.command(
        name=ls("flip", key="cmd.flip.name"),
        description=_desc("cmd.flip.desc", "Flip the next card (play one round)"),
    )
    @app_commands.guild_only()
    @app_commands.rename(count=_opt("count"))
    @app_commands.describe(count=_desc("opt.count.desc", "Play several rounds at once (up to 50)"))
    async def flip(
        self,
        interaction: discord.Interaction[Any],
        count: app_commands.Range[int, 1, MAX_FLIPS] = 1,
    ) -> None:
        """Flip the next card (play one round)."""
        assert interaction.channel_id is not None
        channel_id = interaction.channel_id
        lang = public_lang(interaction)

        async def work() -> Reply:
            result = await self.service.flip(channel_id, interaction.user.id, count)
            return await self._table_reply(result, lang, update=False)

        await respond(interaction, work())

    async def on_flip_button(
        self, interaction: discord.Interaction[Any], game_id: int, round_shown: int
    ) -> None:
        """Handle a Flip press: plays only if the button shows the round on the table."""
        assert interaction.channel_id is not None
        channel_id = interaction.channel_id
        lang = public_lang(interaction)
        pressed = interaction.message.id if interaction.message else None

        async def work() -> Reply:
            try:
                result = await self.service.flip(
                    channel_id,
                    interaction.user.id,
                    1,
                    game_id=game_id,
                    expected_round=round_shown,
                    table_message_id=pressed,
                )
            except Refusal as refusal:
                if refusal.key != "flip.raced":
                    raise
                row = await self.storage.get_game(game_id)
                if row is not None and row.table_message_id == pressed:
                    # Two presses on the newest table: the other one played; this one shows it.
                    return Reply(silent=True)
                raise Refusal("err.stale_button") from None
            return await self._table_reply(result, lang, update=True)

        await respond(interaction, work(), update=True)

    @krig.command(
        name=ls("status", key="cmd.status.name"),
        description=_desc("cmd.status.desc", "Show the game in this channel"),
    )
    async def status(self, interaction: discord.Interaction[Any]) -> None:
        """Show the game in this channel."""
        assert interaction.channel_id is not None
        channel_id = interaction.channel_id
        lang = user_lang(interaction)

        async def work() -> Reply:
            found = await self.service.game_in(channel_id)
            if found is None:
                return Reply(content=t(lang, "status.none"), ephemeral=True)
            row, game = found
            reply = Reply(embed=status_embed(row, game, lang), ephemeral=True)
            if game is not None and game.round and await self.pictures.enabled(row.guild_id):
                story, chart = await self.pictures.story_picture(row, game, lang)
                reply.more_embeds.append(story)
                reply.files.append(chart)
            return reply

        await respond(interaction, work(), ephemeral=True)

    @krig.command(
        name=ls("forfeit", key="cmd.forfeit.name"),
        description=_desc("cmd.forfeit.desc", "Give up your game"),
    )
    async def forfeit(self, interaction: discord.Interaction[Any]) -> None:
        """Give up your game."""
        assert interaction.channel_id is not None
        channel_id = interaction.channel_id
        lang = user_lang(interaction)
        user_id = interaction.user.id

        async def work() -> Reply:
            found = await self.service.game_in(channel_id)
            if found is None:
                raise Refusal("err.no_game")
            row, game = found
            if user_id not in row.players:
                raise Refusal("err.not_player")
            if game is None:
                raise Refusal("err.not_running")
            view = view_of(
                ForfeitButton(row.id, user_id, True, lang),
                ForfeitButton(row.id, user_id, False, lang),
            )
            return Reply(content=t(lang, "forfeit.confirm"), view=view, ephemeral=True)

        await respond(interaction, work(), ephemeral=True)

    async def on_forfeit_button(
        self, interaction: discord.Interaction[Any], game_id: int, user_id: int, confirm: bool
    ) -> None:
        """Handle the confirmation of /krig forfeit."""
        assert interaction.channel_id is not None
        channel_id = interaction.channel_id
        if interaction.user.id != user_id:
            await refuse(interaction, "err.not_player")
            return
        mine = user_lang(interaction)
        public = public_lang(interaction)
        if not confirm:
            await Reply(content=t(mine, "forfeit.kept"), view=None, update=True).send(interaction)
            return

        async def work() -> Reply:
            result = await self.service.forfeit(channel_id, user_id, game_id)
            row = result.row
            names = names_of(row)
            seat = row.players.index(user_id)
            embed = discord.Embed(
                title=t(public, "forfeit.done", name=names[seat]), colour=discord.Colour.dark_grey()
            )
            if result.outcome is not None:
                embed.description = outcome_text(row, result.game, public)
            else:
                embed.add_field(
                    name=t(public, "table.counts_heading"),
                    value=counts_field(result.game, names, public),
                )

            async def sent(_: int) -> None:
                await interaction.followup.send(embed=embed, allowed_mentions=NO_MENTIONS)

            return Reply(content=t(mine, "forfeit.confirmed"), view=None, update=True, sent=sent)

        await respond(interaction, work(), update=True)

    @krig.command(
        name=ls("cancel", key="cmd.cancel.name"),
        description=_desc("cmd.cancel.desc", "Cancel the game in this channel without a result"),
    )
    async def cancel(self, interaction: discord.Interaction[Any]) -> None:
        """Cancel the game in this channel without a result."""
        assert interaction.channel_id is not None
        channel_id = interaction.channel_id
        lang = public_lang(interaction)
        moderator = interaction.permissions.manage_messages

        async def work() -> Reply:
            row = await self.service.cancel(channel_id, interaction.user.id, moderator=moderator)
            self._cancel_expiry(row.id)
            if row.status == "challenge" and row.challenge_message_id is not None:
                note = t(lang, "challenge.cancelled")
                message = self.bot.get_partial_messageable(channel_id).get_partial_message(
                    row.challenge_message_id
                )
                with contextlib.suppress(discord.HTTPException):
                    await message.edit(
                        embed=challenge_embed(row, lang, note=note),
                        view=None,
                        allowed_mentions=NO_MENTIONS,
                    )
            name = safe_name(_display_name(interaction.user))
            return Reply(content=t(lang, "cancel.done", name=name))

        await respond(interaction, work())

    # ----------------------------------------------------------------------- records

    @krig.command(
        name=ls("leaderboard", key="cmd.leaderboard.name"),
        description=_desc("cmd.leaderboard.desc", "This server's best players"),
    )
    @app_commands.rename(period=_opt("period"))
    @app_commands.describe(period=_desc("opt.period.desc", "Which period"))
    @app_commands.choices(period=PERIOD_CHOICES)
    async def leaderboard(self, interaction: discord.Interaction[Any], period: str = "all") -> None:
        """Show this server's best players."""
        assert interaction.guild_id is not None
        guild_id = interaction.guild_id
        lang = public_lang(interaction)
        if period not in PERIODS:
            await refuse(interaction, "err.bad_option", reason=period)
            return
        window = PERIODS[period]

        async def work() -> Reply:
            since = None if window is None else self.service.clock() - window
            rows = await self.storage.leaderboard(guild_id, since=since, limit=10)
            return Reply(embed=leaderboard_embed(rows, period, lang))

        await respond(interaction, work())

    @krig.command(
        name=ls("stats", key="cmd.stats.name"),
        description=_desc("cmd.stats.desc", "A player's record on this server"),
    )
    @app_commands.rename(user=_opt("user"))
    @app_commands.describe(user=_desc("opt.user.desc", "Whose record (default: you)"))
    async def stats(
        self, interaction: discord.Interaction[Any], user: discord.User | None = None
    ) -> None:
        """Show a player's record on this server."""
        assert interaction.guild_id is not None
        guild_id = interaction.guild_id
        target = user or interaction.user
        lang = public_lang(interaction)

        async def work() -> Reply:
            record = await self.storage.player_stats(guild_id, target.id)
            return Reply(embed=stats_embed(_display_name(target), target.id, record, lang))

        await respond(interaction, work())

    @krig.command(
        name=ls("settings", key="cmd.settings.name"),
        description=_desc("cmd.settings.desc", "Server settings for Krig (moderators)"),
    )
    @app_commands.rename(images=_opt("images"))
    @app_commands.describe(
        images=_desc("opt.images.desc", "Show the table and the game's story as pictures")
    )
    @app_commands.choices(images=IMAGES_CHOICES)
    async def settings(self, interaction: discord.Interaction[Any], images: str) -> None:
        """Change the server's settings (moderators with Manage Messages)."""
        assert interaction.guild_id is not None
        guild_id = interaction.guild_id
        lang = user_lang(interaction)
        if not interaction.permissions.manage_messages:
            await refuse(interaction, "settings.denied")
            return
        if images not in ("on", "off"):
            await refuse(interaction, "err.bad_option", reason=images)
            return

        async def work() -> Reply:
            await self.pictures.set_enabled(guild_id, images == "on")
            return Reply(content=t(lang, f"settings.images_{images}"), ephemeral=True)

        await respond(interaction, work(), ephemeral=True)

    @krig.command(
        name=ls("rules", key="cmd.rules.name"),
        description=_desc("cmd.rules.desc", "How to play Krig and its variants"),
    )
    @app_commands.rename(variant=_opt("variant"))
    @app_commands.describe(variant=_desc("opt.variant.desc", "Which rules to play"))
    @app_commands.choices(variant=VARIANT_CHOICES)
    async def rules(
        self, interaction: discord.Interaction[Any], variant: str | None = None
    ) -> None:
        """Explain how to play, in the reader's language."""
        if variant is not None and variant not in VARIANTS:
            await refuse(interaction, "err.bad_option", reason=variant)
            return
        embed = rules_embed(variant, user_lang(interaction))
        await interaction.response.send_message(
            embed=embed, ephemeral=True, allowed_mentions=NO_MENTIONS
        )


def _display_name(user: discord.abc.User) -> str:
    return user.display_name


def _player(user: discord.abc.User) -> Player:
    return Player(user.id, _display_name(user), user.bot)
