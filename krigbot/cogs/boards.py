"""The records and settings of Krig: leaderboard, stats, server settings and rules."""

from __future__ import annotations

from datetime import timedelta
from typing import TYPE_CHECKING, Any, Protocol

import discord
from discord import app_commands
from discord.app_commands import locale_str as ls
from discord.ext import commands

from krigbot.adapter.buttons import view_of
from krigbot.adapter.choices import VARIANT_CHOICES
from krigbot.adapter.group import subcommand
from krigbot.adapter.parts import HasPictures, HasRegistry, HasStorage, HasWeb
from krigbot.adapter.players import actor_of, display_name
from krigbot.adapter.replies import NO_MENTIONS, Reply, public_lang, refuse, respond, user_lang
from krigbot.adapter.surfaces import place_of, reaches, scope_of
from krigbot.adapter.weblinks import web_button
from krigbot.engine.rules import PRESETS
from krigbot.i18n import Lang, t
from krigbot.render.embeds import krigbot_stats_embed, leaderboard_embed, rules_embed, stats_embed
from krigbot.sessions import Refusal, may_moderate
from krigbot.sessions.tournaments import CREATORS, CREATORS_SETTING

if TYPE_CHECKING:
    pass

PERIODS = {"all": None, "month": timedelta(days=30), "week": timedelta(days=7)}

IMAGES_CHOICES = [
    app_commands.Choice(name=ls(value, key=f"images.{value}"), value=value)
    for value in ("on", "off")
]
WEB_SETTINGS = ("on", "off", "rotate")
WEB_CHOICES = [
    app_commands.Choice(name=ls(value, key=f"webview.{value}"), value=value)
    for value in WEB_SETTINGS
]
CREATORS_CHOICES = [
    app_commands.Choice(name=ls(value, key=f"tournament.creators.{value}"), value=value)
    for value in CREATORS
]
PERIOD_CHOICES = [
    app_commands.Choice(name=ls(value, key=f"period.{value}"), value=value) for value in PERIODS
]


class BoardsParts(HasRegistry, HasStorage, HasPictures, HasWeb, Protocol):
    """What the boards cog uses."""


class BoardsCog(commands.Cog, name="Boards"):
    """The server's records, its settings for Krig, and the rules."""

    def __init__(self, parts: BoardsParts) -> None:
        self.parts = parts

    @commands.Cog.listener()
    async def on_guild_update(self, before: discord.Guild, after: discord.Guild) -> None:
        """Keep a renamed server's name for the titles of its web pages."""
        if before.name != after.name:
            await self.parts.web.rename(after.id, after.name)

    @subcommand
    @app_commands.describe(period="Which period")
    @app_commands.choices(period=PERIOD_CHOICES)
    async def leaderboard(self, interaction: discord.Interaction[Any], period: str = "all") -> None:
        """This server's best players"""
        guild_id = scope_of(interaction)
        lang = public_lang(interaction)
        if period not in PERIODS:
            await refuse(interaction, "err.bad_option", reason=period)
            return
        window = PERIODS[period]

        async def work() -> Reply:
            since = None if window is None else self.parts.registry.clock() - window
            rows = await self.parts.storage.stats.leaderboard(guild_id, since=since, limit=10)
            users = [row.user_id for row in rows]
            matches = await self.parts.storage.matches.match_records(guild_id, users, since=since)
            url = await self.parts.web.leaderboard_url(guild_id, period)
            view = None if url is None else view_of(web_button(url, lang, "web.open_leaderboard"))
            embed = leaderboard_embed(
                rows, period, lang, matches=matches, place=place_of(interaction)
            )
            return Reply(embed=embed, view=view)

        await respond(interaction, work())

    @subcommand
    @app_commands.describe(user="Whose record (default: you)")
    async def stats(
        self, interaction: discord.Interaction[Any], user: discord.User | None = None
    ) -> None:
        """A player's record on this server"""
        guild_id = scope_of(interaction)
        target = user or interaction.user
        lang = public_lang(interaction)

        async def work() -> Reply:
            if target.id == self.parts.registry.krigbot_id:
                own = await self.parts.storage.stats.krigbot_record(guild_id, target.id)
                return Reply(
                    embed=krigbot_stats_embed(
                        display_name(target), own, lang, place=place_of(interaction)
                    )
                )
            record = await self.parts.storage.stats.player_stats(guild_id, target.id)
            matches = await self.parts.storage.matches.match_records(guild_id, [target.id])
            everywhere = await self.parts.storage.stats.record_everywhere(target.id)
            tournaments = await self.parts.storage.tournaments.record(guild_id, target.id)
            embed = stats_embed(
                display_name(target),
                target.id,
                record,
                lang,
                matches=matches.get(target.id),
                everywhere=everywhere,
                place=place_of(interaction),
                tournaments=tournaments,
            )
            return Reply(embed=embed)

        await respond(interaction, work())

    @subcommand
    @app_commands.describe(
        images="Show the table and the game's story as pictures",
        web="Show the server's leaderboard, players and game replays on the web",
        tournaments="Who may create a tournament",
    )
    @app_commands.choices(images=IMAGES_CHOICES, web=WEB_CHOICES, tournaments=CREATORS_CHOICES)
    async def settings(
        self,
        interaction: discord.Interaction[Any],
        images: str | None = None,
        web: str | None = None,
        tournaments: str | None = None,
    ) -> None:
        """Server settings for Krig (moderators)"""
        if not reaches(interaction) or interaction.guild_id is None:
            raise Refusal("here.server_only")
        guild_id = interaction.guild_id
        lang = user_lang(interaction)
        may_moderate(actor_of(interaction))
        if images is None and web is None and tournaments is None:
            await refuse(interaction, "settings.choose")
            return
        for given, allowed in (
            (images, ("on", "off")),
            (web, WEB_SETTINGS),
            (tournaments, CREATORS),
        ):
            if given is not None and given not in allowed:
                await refuse(interaction, "err.bad_option", reason=given)
                return

        async def work() -> Reply:
            lines = []
            if images is not None:
                await self.parts.pictures.set_enabled(guild_id, images == "on")
                lines.append(t(lang, f"settings.images_{images}"))
            if web is not None:
                name = interaction.guild.name if interaction.guild is not None else None
                lines.append(await self._web_setting(guild_id, web, lang, name))
            if tournaments is not None:
                settings = self.parts.storage.settings
                await settings.set_setting(guild_id, CREATORS_SETTING, tournaments)
                lines.append(t(lang, f"settings.tournaments_{tournaments}"))
            return Reply(content="\n".join(lines), ephemeral=True)

        await respond(interaction, work(), ephemeral=True)

    async def _web_setting(self, guild_id: int, choice: str, lang: Lang, name: str | None) -> str:
        """Apply a moderator's web choice and return what to tell them; ``name`` is the
        server's, for its pages' titles."""
        access = self.parts.web
        if choice == "rotate":
            await access.rotate(guild_id)
        else:
            await access.set_on(guild_id, choice == "on", name=name)
        if choice == "off":
            return t(lang, "settings.web_off")
        if not await access.is_on(guild_id):
            return t(lang, "settings.web_rotated_hidden")
        url = await access.leaderboard_url(guild_id)
        if url is None:
            return t(lang, "settings.web_on_unlinked")
        return t(lang, "settings.web_rotated" if choice == "rotate" else "settings.web_on", url=url)

    @subcommand
    @app_commands.describe(variant="Which rules to play")
    @app_commands.choices(variant=VARIANT_CHOICES)
    async def rules(
        self, interaction: discord.Interaction[Any], variant: str | None = None
    ) -> None:
        """How to play Krig and its variants"""
        if variant is not None and variant not in PRESETS:
            await refuse(interaction, "err.bad_option", reason=variant)
            return
        embed = rules_embed(variant, user_lang(interaction))
        await interaction.response.send_message(
            embed=embed, ephemeral=True, allowed_mentions=NO_MENTIONS
        )
