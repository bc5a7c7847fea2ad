"""Proof that the Discord stand-in works with the real, unmodified discord.py.

The bot here is a throwaway: one slash command group, a plain command with a user option,
string choices, an integer option, a button view, plus a few small commands that exercise
defers, files, modals, channel messages and a moderator-only guild command.
"""

from __future__ import annotations

import asyncio
import gc
import json
import os
import signal
import sys
import textwrap
import time
import weakref
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any, ClassVar
from urllib.parse import urlsplit

import aiohttp
import discord
import pytest
from discord import app_commands
from discord.ext import commands

from tests.standin import (
    SITECUSTOMIZE_DIR,
    BotCrashed,
    CommandNotAvailableError,
    DiscordStandIn,
    EventLog,
    OptionError,
    StandInError,
    StandInTimeout,
    UnknownCommandError,
    run_bot,
)
from tests.standin import fixtures as standin_fixtures
from tests.standin.fixtures import SampleWorld
from tests.standin.world import Overwrite

standin = standin_fixtures.standin
standin_world = standin_fixtures.standin_world

NO = discord.Locale.norwegian
SV = discord.Locale.swedish


class TinyTranslator(app_commands.Translator):
    """Just enough translations to see name/description localizations reach the sync."""

    TABLE: ClassVar[dict[str, dict[discord.Locale, str]]] = {
        "start": {NO: "begynn", SV: "börja"},
        "Start a game": {NO: "Start et spill", SV: "Starta ett spel"},
        "variant": {NO: "variant", SV: "variant"},
        "Classic": {NO: "Klassisk", SV: "Klassiskt"},
        "rounds": {NO: "runder", SV: "rundor"},
    }

    async def translate(
        self,
        string: app_commands.locale_str,
        locale: discord.Locale,
        context: app_commands.TranslationContextTypes,
    ) -> str | None:
        return self.TABLE.get(string.message, {}).get(locale)


class JoinView(discord.ui.View):
    """A button and a select under the game message."""

    def __init__(self, bot: TinyBot) -> None:
        super().__init__(timeout=60)
        self.bot = bot

    @discord.ui.button(label="Join", custom_id="krig:join", style=discord.ButtonStyle.primary)
    async def join(
        self, interaction: discord.Interaction, button: discord.ui.Button[JoinView]
    ) -> None:
        self.bot.seen.append(("join", interaction))
        await interaction.response.edit_message(
            content=f"{interaction.user.name} joined", view=self
        )

    @discord.ui.select(
        custom_id="krig:deck",
        options=[
            discord.SelectOption(label="Red", value="red"),
            discord.SelectOption(label="Blue", value="blue"),
        ],
    )
    async def deck(
        self, interaction: discord.Interaction, select: discord.ui.Select[JoinView]
    ) -> None:
        await interaction.response.send_message(f"deck {select.values[0]}", ephemeral=True)


class FeedbackModal(discord.ui.Modal, title="Feedback"):
    text: discord.ui.TextInput[FeedbackModal] = discord.ui.TextInput(
        label="What did you think?", custom_id="feedback:text"
    )

    async def on_submit(self, interaction: discord.Interaction) -> None:
        await interaction.response.send_message(f"thanks: {self.text.value}", ephemeral=True)


class TinyBot(commands.Bot):
    """The throwaway bot. ``seen`` records (command, interaction) for assertions."""

    def __init__(self, *, mod_guild_id: int, intents: discord.Intents | None = None) -> None:
        super().__init__(
            command_prefix="!",
            intents=intents or discord.Intents.default(),
            guild_ready_timeout=0.05,
            help_command=None,
        )
        self.mod_guild_id = mod_guild_id
        self.seen: list[tuple[str, discord.Interaction]] = []
        self.errors: EventLog[BaseException] = EventLog()
        self.resumed = asyncio.Event()

    translator_class: ClassVar[type[app_commands.Translator]] = TinyTranslator

    async def before_identify_hook(self, shard_id: int | None, *, initial: bool = False) -> None:
        # discord.py sleeps 5 s before every IDENTIFY but the first; tests re-identify at once.
        return None

    async def on_resumed(self) -> None:
        self.resumed.set()

    async def setup_hook(self) -> None:
        await self.tree.set_translator(self.translator_class())
        self.tree.error(self.on_tree_error)
        krig = app_commands.Group(name="krig", description="Play Krig")
        bot = self

        @krig.command(name="start", description="Start a game")
        @app_commands.describe(variant="Rules", rounds="How many rounds")
        @app_commands.choices(
            variant=[
                app_commands.Choice(name="Classic", value="klassisk"),
                app_commands.Choice(name="Fast", value="rask"),
            ]
        )
        async def start(
            interaction: discord.Interaction,
            variant: app_commands.Choice[str],
            rounds: app_commands.Range[int, 1, 50] = 10,
        ) -> None:
            bot.seen.append(("krig start", interaction))
            # discord.py does not type-check option values ("ten" for an int option arrives as
            # "ten", Range or not); range() makes a fuzzed wrong type fail loudly.
            total = len(range(rounds)) * 2
            embed = discord.Embed(
                title="Krig", description=f"{variant.value}, {rounds} rounds ({total} cards)"
            )
            await interaction.response.send_message(embed=embed, view=JoinView(bot))

        @app_commands.command(name="challenge", description="Challenge someone")
        async def challenge(interaction: discord.Interaction, opponent: discord.User) -> None:
            bot.seen.append(("challenge", interaction))
            await interaction.response.send_message(
                f"{opponent.mention}, you are challenged!",
                allowed_mentions=discord.AllowedMentions(users=[opponent]),
            )

        @app_commands.command(name="slow", description="Think first")
        async def slow(interaction: discord.Interaction) -> None:
            await interaction.response.defer(ephemeral=True, thinking=True)
            await interaction.followup.send("done thinking")
            await interaction.followup.send("and one more", ephemeral=True)
            extra = await interaction.followup.send("short-lived", wait=True)
            await extra.delete()
            original = await interaction.original_response()
            await interaction.edit_original_response(content=f"{original.content} (edited)")

        @app_commands.command(name="board", description="Send the board as a file")
        async def board(interaction: discord.Interaction) -> None:
            await interaction.response.send_message(
                "board:", file=discord.File(_bytes_io(b"A K Q"), "board.txt")
            )

        @app_commands.command(name="feedback", description="Open a modal")
        async def feedback(interaction: discord.Interaction) -> None:
            await interaction.response.send_modal(FeedbackModal())

        @app_commands.command(name="say", description="Post in the channel, then edit it")
        @app_commands.guild_only()
        async def say(interaction: discord.Interaction, text: str) -> None:
            await interaction.response.send_message("ok", ephemeral=True)
            assert isinstance(interaction.channel, discord.TextChannel)
            posted = await interaction.channel.send(text)
            fetched = await interaction.channel.fetch_message(posted.id)
            await fetched.edit(content=fetched.content.upper())

        @app_commands.command(name="pick", description="Pick a card")
        async def pick(interaction: discord.Interaction, card: str) -> None:
            await interaction.response.send_message(f"picked {card}")

        @pick.autocomplete("card")
        async def pick_card(
            interaction: discord.Interaction, current: str
        ) -> list[app_commands.Choice[str]]:
            cards = ["King", "Knight", "Queen"]
            return [
                app_commands.Choice(name=c, value=c.lower())
                for c in cards
                if c.lower().startswith(current)
            ]

        @app_commands.context_menu(name="Challenge this player")
        async def challenge_menu(interaction: discord.Interaction, member: discord.Member) -> None:
            await interaction.response.send_message(
                f"challenging {member.display_name}", ephemeral=True
            )

        @app_commands.command(name="clear", description="Moderators only")
        @app_commands.default_permissions(manage_messages=True)
        @app_commands.guild_only()
        async def clear(interaction: discord.Interaction) -> None:
            await interaction.response.send_message("cleared", ephemeral=True)

        commands_: list[
            app_commands.Command[Any, ..., Any] | app_commands.Group | app_commands.ContextMenu
        ] = [
            krig,
            challenge,
            slow,
            board,
            feedback,
            say,
            pick,
            challenge_menu,
        ]
        for command in commands_:
            self.tree.add_command(command)
        guild = discord.Object(self.mod_guild_id)
        self.tree.add_command(clear, guild=guild)
        await self.tree.sync()
        await self.tree.sync(guild=guild)

    async def on_tree_error(
        self, interaction: discord.Interaction, error: app_commands.AppCommandError
    ) -> None:
        original = getattr(error, "original", error)
        self.errors.append(original)
        # HTTP failures are what the fault tests provoke; answering again would muddle them.
        if not isinstance(original, discord.HTTPException) and not interaction.response.is_done():
            await interaction.response.send_message(
                f"error: {type(original).__name__}", ephemeral=True
            )


def _bytes_io(data: bytes) -> Any:
    import io

    return io.BytesIO(data)


@pytest.fixture
async def bot(standin: DiscordStandIn, standin_world: SampleWorld) -> AsyncIterator[TinyBot]:
    """TinyBot running in-process against the stand-in's sample world."""
    async with run_bot(TinyBot(mod_guild_id=standin_world.no_guild.id), standin) as running:
        yield running


# ------------------------------------------------------------------------------------ start-up


async def test_startup_sync_and_guilds(
    standin: DiscordStandIn, standin_world: SampleWorld, bot: TinyBot
) -> None:
    w = standin_world
    assert bot.user is not None
    assert bot.user.id == standin.application_id
    assert {g.id for g in bot.guilds} == {w.no_guild.id, w.sv_guild.id}
    no_guild = bot.get_guild(w.no_guild.id)
    assert no_guild is not None
    assert no_guild.preferred_locale is NO
    # Without the members intent Discord only sends the bot's own member.
    assert [m.id for m in no_guild.members] == [standin.application_id]

    names = {c["name"] for c in standin.synced_commands()}
    assert names == {
        "krig",
        "challenge",
        "slow",
        "board",
        "feedback",
        "say",
        "pick",
        "Challenge this player",
    }
    assert [c["name"] for c in standin.synced_commands(w.no_guild)] == ["clear"]
    assert standin.synced_commands(w.sv_guild) == []

    krig = standin.synced_command("krig")
    start = krig["options"][0]
    assert (start["type"], start["name"]) == (1, "start")
    assert start["name_localizations"] == {"no": "begynn", "sv-SE": "börja"}
    assert start["description_localizations"]["sv-SE"] == "Starta ett spel"
    variant, rounds = start["options"]
    assert [c["value"] for c in variant["choices"]] == ["klassisk", "rask"]
    assert variant["choices"][0]["name_localizations"] == {"no": "Klassisk", "sv-SE": "Klassiskt"}
    assert (rounds["type"], rounds["min_value"], rounds["max_value"]) == (4, 1, 50)
    assert standin.synced_command("clear", w.no_guild)["default_member_permissions"] == str(1 << 13)

    paths = [r.path for r in standin.requests.items]
    assert paths[:2] == ["/users/@me", "/oauth2/applications/@me"]
    assert sum(1 for r in standin.requests.items if r.method == "PUT") == 2


async def test_json_content_type_and_unknown_routes(standin: DiscordStandIn) -> None:
    async with aiohttp.ClientSession() as session:
        headers = {"Authorization": "Bot x"}
        async with session.get(standin.api_base + "/users/@me", headers=headers) as resp:
            assert resp.headers["Content-Type"] == "application/json"
            assert (await resp.json())["id"] == str(standin.application_id)
        async with session.get(standin.api_base + "/users/@me") as resp:
            assert resp.status == 401
        async with session.get(standin.api_base + "/no/such/route", headers=headers) as resp:
            assert resp.status == 404
            assert resp.headers["Content-Type"] == "application/json"
    assert [r.path for r in standin.unknown_requests] == ["/no/such/route"]
    standin.unknown_requests.clear()  # on purpose here; the fixture fails tests that hit one


@pytest.mark.parametrize(
    ("method", "path", "code", "message"),
    [
        ("GET", "/channels/1", 10003, "Unknown Channel"),
        ("GET", "/channels/not-an-id/messages", 10003, "Unknown Channel"),
        ("POST", "/channels/1/typing", 10003, "Unknown Channel"),
        ("GET", "/channels/{channel}/messages/1", 10008, "Unknown Message"),
        ("PATCH", "/channels/{channel}/messages/1", 10008, "Unknown Message"),
        ("DELETE", "/channels/{channel}/messages/1", 10008, "Unknown Message"),
        ("PUT", "/channels/{channel}/messages/1/reactions/x/@me", 10008, "Unknown Message"),
        ("GET", "/guilds/1", 10004, "Unknown Guild"),
        ("GET", "/guilds/{guild}/members/1", 10007, "Unknown Member"),
        ("GET", "/users/1", 10013, "Unknown User"),
        ("GET", "/applications/1/commands", 10002, "Unknown Application"),
        ("POST", "/interactions/1/no-such-token/callback", 10062, "Unknown interaction"),
        ("POST", "/webhooks/{app}/no-such-token", 10015, "Unknown Webhook"),
        ("PATCH", "/webhooks/{app}/no-such-token/messages/@original", 10015, "Unknown Webhook"),
    ],
)
async def test_unknown_ids_get_discords_404(
    standin: DiscordStandIn,
    standin_world: SampleWorld,
    method: str,
    path: str,
    code: int,
    message: str,
) -> None:
    w = standin_world
    url = standin.api_base + path.format(
        channel=w.no_channel.id, guild=w.no_guild.id, app=standin.application_id
    )
    async with (
        aiohttp.ClientSession() as session,
        session.request(method, url, headers={"Authorization": "Bot x"}, json={}) as resp,
    ):
        assert resp.status == 404
        assert await resp.json() == {"message": message, "code": code}


# ------------------------------------------------------------------------------ slash commands


async def test_slash_group_options_and_button_click(
    standin: DiscordStandIn, standin_world: SampleWorld, bot: TinyBot
) -> None:
    w = standin_world
    rec = await standin.slash(
        "krig start",
        user=w.alice,
        channel=w.no_channel,
        options={"variant": "klassisk", "rounds": 7},
        locale="sv-SE",
    )
    response = await rec.response()
    assert response.type == 4
    assert response.embeds[0]["description"] == "klassisk, 7 rounds (14 cards)"
    assert response.message is not None
    assert response.message.id > 0
    assert response.message.custom_ids() == ["krig:join", "krig:deck"]
    assert 0 <= response.latency < 3

    _, interaction = bot.seen[-1]
    assert interaction.locale is SV
    assert interaction.guild_locale is NO
    assert rec.data["options"][0]["name"] == "start"
    assert interaction.data == rec.data
    assert interaction.app_permissions.send_messages

    watcher = standin.watch(w.no_channel)
    click = await standin.click(response.message, "krig:join", user=w.bob)
    clicked = await click.response()
    assert clicked.type == 7
    assert clicked.message is response.message
    assert response.message.content == "bob joined"
    assert len(response.message.history) == 1
    event = await watcher.next("edit")
    assert event.message is response.message
    assert event.revision.content == "bob joined"
    assert standin.messages(w.no_channel) == [response.message]


async def test_select_menu(
    standin: DiscordStandIn, standin_world: SampleWorld, bot: TinyBot
) -> None:
    w = standin_world
    rec = await standin.slash(
        "krig start", user=w.alice, channel=w.no_channel, options={"variant": "rask"}
    )
    message = (await rec.response()).message
    assert message is not None
    chosen = await (await standin.select(message, "krig:deck", ["blue"], user=w.carol)).response()
    assert (chosen.content, chosen.ephemeral) == ("deck blue", True)
    with pytest.raises(StandInError, match="offers"):
        await standin.select(message, "krig:deck", ["green"], user=w.carol)


async def test_localized_names_and_choice_names(
    standin: DiscordStandIn, standin_world: SampleWorld, bot: TinyBot
) -> None:
    w = standin_world
    rec = await standin.slash(
        "krig begynn",
        user=w.alice,
        channel=w.no_channel,
        options={"variant": "Klassisk", "runder": 3},
    )
    assert w.alice.locale == "no"  # "nb" is mapped to the code Discord really sends
    assert (await rec.response()).embeds[0]["description"].startswith("klassisk, 3 rounds")
    options = rec.data["options"][0]["options"]
    assert options == [
        {"name": "variant", "type": 3, "value": "klassisk"},
        {"name": "rounds", "type": 4, "value": 3},
    ]


async def test_user_option_resolves_member_and_mentions(
    standin: DiscordStandIn, standin_world: SampleWorld, bot: TinyBot
) -> None:
    w = standin_world
    rec = await standin.slash(
        "challenge", user=w.alice, channel=w.sv_channel, options={"opponent": w.bob}
    )
    response = await rec.response()
    assert response.content == f"<@{w.bob.id}>, you are challenged!"
    assert response.allowed_mentions is not None
    assert response.allowed_mentions["users"] == [w.bob.id]
    assert response.message is not None
    assert response.message.mentions == [w.bob]
    assert str(w.bob.id) in rec.data["resolved"]["members"]
    _, interaction = bot.seen[-1]
    assert interaction.guild_locale is SV
    opponent = interaction.namespace.opponent
    assert isinstance(opponent, discord.Member)
    assert opponent.id == w.bob.id


async def test_wrong_names_and_values_raise(
    standin: DiscordStandIn, standin_world: SampleWorld, bot: TinyBot
) -> None:
    w = standin_world
    with pytest.raises(UnknownCommandError, match="no subcommand 'stop'"):
        await standin.slash("krig stop", user=w.alice, channel=w.no_channel)
    with pytest.raises(UnknownCommandError, match="is a group"):
        await standin.slash("krig", user=w.alice, channel=w.no_channel)
    with pytest.raises(UnknownCommandError, match="no option 'colour'"):
        await standin.slash(
            "krig start",
            user=w.alice,
            channel=w.no_channel,
            options={"variant": "rask", "colour": 1},
        )
    with pytest.raises(OptionError, match="only offers the choices"):
        await standin.slash(
            "krig start", user=w.alice, channel=w.no_channel, options={"variant": "turbo"}
        )
    with pytest.raises(OptionError, match=r"within 1\.\.50"):
        await standin.slash(
            "krig start",
            user=w.alice,
            channel=w.no_channel,
            options={"variant": "rask", "rounds": 99},
        )
    with pytest.raises(OptionError, match="integer option"):
        await standin.slash(
            "krig start",
            user=w.alice,
            channel=w.no_channel,
            options={"variant": "rask", "rounds": "ten"},
        )
    with pytest.raises(OptionError, match="requires option"):
        await standin.slash("krig start", user=w.alice, channel=w.no_channel)
    # Guild commands exist only where they were synced.
    with pytest.raises(UnknownCommandError, match="no synced command 'clear'"):
        await standin.slash("clear", user=w.alice, channel=w.sv_channel)
    assert standin.interactions == {}


async def test_raw_options_reach_the_bot_unchecked(
    standin: DiscordStandIn, standin_world: SampleWorld, bot: TinyBot
) -> None:
    w = standin_world
    rec = await standin.slash_raw(
        "krig",
        user=w.alice,
        channel=w.no_channel,
        options=[
            {
                "type": 1,
                "name": "start",
                "options": [
                    {"name": "variant", "type": 3, "value": "klassisk"},
                    {"name": "rounds", "type": 4, "value": "ten"},
                ],
            }
        ],
    )
    response = await rec.response()
    assert (response.content, response.ephemeral) == ("error: TypeError", True)
    assert isinstance(await bot.errors.wait(), TypeError)


async def test_moderator_permissions(
    standin: DiscordStandIn, standin_world: SampleWorld, bot: TinyBot
) -> None:
    w = standin_world
    with pytest.raises(CommandNotAvailableError, match="default_member_permissions"):
        await standin.slash("clear", user=w.alice, channel=w.no_channel)
    for user in (w.moderator, w.owner):
        rec = await standin.slash("clear", user=user, channel=w.no_channel)
        assert (await rec.response()).content == "cleared"
        member = rec.payload["member"]
        assert int(member["permissions"]) & (1 << 13)
    assert standin.interactions[rec.id] is rec


async def test_dm_interaction(
    standin: DiscordStandIn, standin_world: SampleWorld, bot: TinyBot
) -> None:
    w = standin_world
    rec = await standin.slash("challenge", user=w.carol, options={"opponent": w.bob})
    assert "member" not in rec.payload
    assert rec.payload["user"]["id"] == str(w.carol.id)
    assert "guild_id" not in rec.payload
    assert "guild_locale" not in rec.payload
    response = await rec.response()
    assert response.message is not None
    assert response.message.channel.is_dm
    _, interaction = bot.seen[-1]
    assert interaction.guild is None
    assert isinstance(interaction.user, discord.User)
    with pytest.raises(CommandNotAvailableError, match="not available in DMs"):
        await standin.slash("say", user=w.moderator, options={"text": "hi"})
    # Guild commands do not even exist in DMs.
    with pytest.raises(UnknownCommandError, match="no synced command 'clear'"):
        await standin.slash("clear", user=w.moderator)


# --------------------------------------------------------------------- responses of all kinds


async def test_defer_followups_and_original_edit(
    standin: DiscordStandIn, standin_world: SampleWorld, bot: TinyBot
) -> None:
    w = standin_world
    rec = await standin.slash("slow", user=w.alice, channel=w.no_channel)
    response = await rec.response()
    assert (response.type, response.ephemeral, response.deferred) == (5, True, True)
    first = await rec.followup(0)
    # Discord turns the first follow-up after a "thinking" defer into the deferred message.
    assert response.message is first
    assert not first.loading
    assert first.ephemeral
    second = await rec.followup(1)
    assert second.id != first.id
    assert second.content == "and one more"
    third = await rec.followup(2)
    edit = await rec.original_edit(0)
    assert edit.content == "done thinking (edited)"
    assert [r.content for r in first.history] == ["", "done thinking"]
    assert third.deleted
    assert third not in standin.messages(w.no_channel)
    methods = [
        r.method for r in standin.requests_matching("*", rf"^/webhooks/\d+/{rec.token}/messages/")
    ]
    assert methods == ["DELETE", "GET", "PATCH"]


async def test_file_upload_multipart(
    standin: DiscordStandIn, standin_world: SampleWorld, bot: TinyBot
) -> None:
    w = standin_world
    response = await (await standin.slash("board", user=w.bob, channel=w.sv_channel)).response()
    assert response.files == [("board.txt", b"A K Q")]
    assert response.message is not None
    assert response.message.files == [("board.txt", b"A K Q")]
    url = response.message.attachments[0].url
    async with aiohttp.ClientSession() as session, session.get(url) as resp:
        assert await resp.read() == b"A K Q"


async def test_modal_roundtrip(
    standin: DiscordStandIn, standin_world: SampleWorld, bot: TinyBot
) -> None:
    w = standin_world
    rec = await standin.slash("feedback", user=w.carol, channel=w.no_channel)
    modal = await rec.response()
    assert modal.type == 9
    assert modal.data["title"] == "Feedback"
    with pytest.raises(StandInError, match="required"):
        await standin.submit_modal(rec, {})
    submitted = await standin.submit_modal(rec, {"feedback:text": "great game"})
    assert (await submitted.response()).content == "thanks: great game"


async def test_autocomplete(
    standin: DiscordStandIn, standin_world: SampleWorld, bot: TinyBot
) -> None:
    w = standin_world
    rec = await standin.autocomplete(
        "pick", focused="card", value="k", user=w.alice, channel=w.no_channel
    )
    response = await rec.response()
    assert response.type == 8
    assert response.choices == [
        {"name": "King", "value": "king"},
        {"name": "Knight", "value": "knight"},
    ]
    assert rec.data["options"] == [{"name": "card", "type": 3, "value": "k", "focused": True}]


async def test_user_context_menu(
    standin: DiscordStandIn, standin_world: SampleWorld, bot: TinyBot
) -> None:
    w = standin_world
    rec = await standin.context_menu(
        "Challenge this player", target=w.bob, user=w.alice, channel=w.sv_channel
    )
    response = await rec.response()
    assert (response.content, response.ephemeral) == ("challenging Bob", True)
    assert rec.data["target_id"] == str(w.bob.id)


async def test_user_messages_respect_the_message_content_intent(
    standin: DiscordStandIn, standin_world: SampleWorld, bot: TinyBot
) -> None:
    w = standin_world
    plain = asyncio.ensure_future(
        bot.wait_for("message", check=lambda m: m.author.id == w.alice.id, timeout=5)
    )
    standin.user_message(w.no_channel, w.alice, "hello there")
    # Without the privileged Message Content intent Discord blanks other users' messages...
    assert (await plain).content == ""
    mention = asyncio.ensure_future(
        bot.wait_for("message", check=lambda m: m.author.id == w.bob.id, timeout=5)
    )
    standin.user_message(w.no_channel, w.bob, f"{standin.bot_user.mention} hello")
    # ...unless they mention the bot.
    assert (await mention).content == f"<@{standin.application_id}> hello"


async def test_channel_messages_are_stored_and_awaitable(
    standin: DiscordStandIn, standin_world: SampleWorld, bot: TinyBot
) -> None:
    w = standin_world
    watcher = standin.watch(w.sv_channel)
    rec = await standin.slash("say", user=w.bob, channel=w.sv_channel, options={"text": "hei"})
    await rec.response()
    created = await watcher.next("create", predicate=lambda e: not e.message.ephemeral)
    edited = await watcher.next("edit")
    assert created.revision.content == "hei"
    assert edited.revision.content == "HEI"
    assert created.message is edited.message
    assert created.message.author is standin.bot_user
    assert [m.content for m in standin.messages(w.sv_channel, include_ephemeral=False)] == ["HEI"]
    assert [
        r.method for r in standin.requests_matching("*", rf"/channels/{w.sv_channel.id}/messages")
    ] == [
        "POST",
        "GET",
        "PATCH",
    ]


async def test_a_channels_messages_are_listed_only_with_read_message_history(
    standin: DiscordStandIn, standin_world: SampleWorld
) -> None:
    w = standin_world
    said = standin.user_message(w.no_channel, w.alice, "hei")
    url = f"{standin.api_base}/channels/{w.no_channel.id}/messages"
    headers = {"Authorization": "Bot x"}
    async with aiohttp.ClientSession() as session:
        async with session.get(url, headers=headers) as listed:
            assert [m["id"] for m in await listed.json()] == [str(said.id)]
        # Denied to everyone in the channel: Discord answers with no messages, not an error.
        history = discord.Permissions(read_message_history=True).value
        w.no_channel.overwrites[w.no_guild.id] = Overwrite(w.no_guild.id, 0, deny=history)
        async with session.get(url, headers=headers) as listed:
            assert listed.status == 200
            assert await listed.json() == []


async def test_a_client_that_hangs_up_mid_request_is_recorded_as_499_and_nothing_is_done(
    standin: DiscordStandIn, standin_world: SampleWorld
) -> None:
    w = standin_world
    before = len(standin.messages(w.no_channel))
    api = urlsplit(standin.api_base)
    assert api.hostname is not None
    assert api.port is not None
    path = f"/channels/{w.no_channel.id}/messages"
    _, writer = await asyncio.open_connection(api.hostname, api.port)
    head = (
        f"POST {api.path}{path} HTTP/1.1\r\nHost: {api.netloc}\r\nAuthorization: Bot x\r\n"
        "Content-Type: application/json\r\nContent-Length: 100\r\n\r\n"
    )
    writer.write(head.encode() + b'{"content": "halv')  # a process killed while it sends
    await writer.drain()
    record = await standin.requests.wait(
        lambda r: r.method == "POST" and r.path == path, what="the request, begun"
    )
    writer.close()
    await writer.wait_closed()
    await asyncio.wait_for(record.finished.wait(), timeout=5)

    assert record.status == 499
    assert standin.internal_errors == []
    assert len(standin.messages(w.no_channel)) == before


async def test_second_callback_is_rejected_with_40060(
    standin: DiscordStandIn, standin_world: SampleWorld, bot: TinyBot
) -> None:
    w = standin_world
    rec = await standin.slash(
        "challenge", user=w.alice, channel=w.no_channel, options={"opponent": w.carol}
    )
    await rec.response()
    url = f"{standin.api_base}/interactions/{rec.id}/{rec.token}/callback?with_response=1"
    async with (
        aiohttp.ClientSession() as session,
        session.post(url, json={"type": 4, "data": {"content": "again"}}) as resp,
    ):
        assert resp.status == 400
        assert (await resp.json())["code"] == 40060
    assert rec.rejected == [(400, 40060)]
    assert len(rec.callbacks) == 1


# ----------------------------------------------------------------------------- fault injection


async def test_429_with_via_is_retried(
    standin: DiscordStandIn, standin_world: SampleWorld, bot: TinyBot
) -> None:
    w = standin_world
    fault = standin.fail_next("POST", r"/callback$", status=429, retry_after=0.05)
    rec = await standin.slash(
        "challenge", user=w.alice, channel=w.no_channel, options={"opponent": w.bob}
    )
    response = await rec.response()
    assert response.content.endswith("you are challenged!")
    assert len(fault.hits) == 1
    assert fault.exhausted
    assert [r.status for r in standin.requests_matching("POST", r"/callback$")] == [429, 200]
    assert response.latency >= 0.05


async def test_429_without_via_is_a_cloudflare_ban(
    standin: DiscordStandIn, standin_world: SampleWorld, bot: TinyBot
) -> None:
    w = standin_world
    standin.fail_next("POST", r"/callback$", status=429, via=False)
    await standin.slash(
        "challenge", user=w.alice, channel=w.no_channel, options={"opponent": w.bob}
    )
    error = await bot.errors.wait()
    assert isinstance(error, discord.HTTPException)
    assert error.status == 429


async def test_unknown_interaction_and_server_errors(
    standin: DiscordStandIn, standin_world: SampleWorld, bot: TinyBot
) -> None:
    w = standin_world
    standin.fail_next("POST", r"/callback$", status=404)
    rec = await standin.slash(
        "challenge", user=w.alice, channel=w.no_channel, options={"opponent": w.bob}
    )
    error = await bot.errors.wait()
    assert isinstance(error, discord.NotFound)
    assert error.code == 10062
    assert not rec.acknowledged

    # HTTPClient retries only 500/502/504/524, so a 503 on a channel message fails at once.
    # (Callbacks and follow-ups use the webhook adapter, which retries every 5xx after 1 s.)
    standin.fail_next("POST", rf"^/channels/{w.no_channel.id}/messages$", status=503)
    await standin.slash("say", user=w.alice, channel=w.no_channel, options={"text": "hi"})
    error = await bot.errors.wait(start=1)
    assert isinstance(error, discord.DiscordServerError)
    assert error.status == 503
    assert standin.messages(w.no_channel, include_ephemeral=False) == []


async def test_a_dropped_answer_leaves_the_work_done_and_the_bot_unaware(
    standin: DiscordStandIn, standin_world: SampleWorld, bot: TinyBot
) -> None:
    w = standin_world
    standin.fail_next("POST", rf"^/channels/{w.no_channel.id}/messages$", drop=True)
    await standin.slash("say", user=w.alice, channel=w.no_channel, options={"text": "hi"})
    error = await bot.errors.wait()

    assert isinstance(error, aiohttp.ServerDisconnectedError)
    assert [m.content for m in standin.messages(w.no_channel, include_ephemeral=False)] == ["hi"]
    (dropped,) = standin.requests_matching("POST", rf"^/channels/{w.no_channel.id}/messages$")
    assert dropped.status == 0


async def test_500_is_retried(
    standin: DiscordStandIn, standin_world: SampleWorld, bot: TinyBot
) -> None:
    w = standin_world
    standin.fail_next("POST", r"/callback$", status=500)
    rec = await standin.slash(
        "challenge", user=w.alice, channel=w.no_channel, options={"opponent": w.bob}
    )
    # discord.py waits 1 s before retrying a 500 -- inside Discord's 3 s window.
    response = await rec.response(timeout=5)
    assert response.latency >= 1.0
    assert [r.status for r in standin.requests_matching("POST", r"/callback$")] == [500, 200]


async def test_late_response_gets_10062(
    standin: DiscordStandIn, standin_world: SampleWorld, bot: TinyBot
) -> None:
    w = standin_world
    standin.delay("POST", r"/callback$", 0.2, times=1)
    standin.interaction_deadline = 0.1
    rec = await standin.slash(
        "challenge", user=w.alice, channel=w.no_channel, options={"opponent": w.bob}
    )
    error = await bot.errors.wait()
    assert isinstance(error, discord.NotFound)
    assert error.code == 10062
    assert rec.rejected == [(404, 10062)]


async def test_discord_limits_are_enforced(
    standin: DiscordStandIn, standin_world: SampleWorld, bot: TinyBot
) -> None:
    w = standin_world
    rec = await standin.slash("say", user=w.bob, channel=w.sv_channel, options={"text": "x" * 2001})
    await rec.response()
    error = await bot.errors.wait()
    assert isinstance(error, discord.HTTPException)
    assert error.code == 50035
    assert "2000 or fewer" in str(error)


# ---------------------------------------------------------------------------------- gateway


async def test_gateway_drop_resume_and_reidentify(
    standin: DiscordStandIn, standin_world: SampleWorld, bot: TinyBot
) -> None:
    w = standin_world
    events = standin.gateway_events.cursor()
    assert await standin.drop_gateway() == 1
    await events.next(lambda e: e.kind == "resumed")
    await asyncio.wait_for(bot.resumed.wait(), 5)
    rec = await standin.slash(
        "challenge", user=w.alice, channel=w.no_channel, options={"opponent": w.bob}
    )
    assert (await rec.response()).type == 4

    await standin.drop_gateway(invalidate=True)
    await events.next(lambda e: e.kind == "invalid_session")
    ready = await events.next(lambda e: e.kind == "ready")
    assert set(ready.detail) == {w.no_guild.id, w.sv_guild.id}
    rec = await standin.slash(
        "challenge", user=w.alice, channel=w.no_channel, options={"opponent": w.bob}
    )
    assert (await rec.response()).type == 4


async def test_world_changes_reach_a_connected_bot(
    standin: DiscordStandIn, standin_world: SampleWorld, bot: TinyBot
) -> None:
    joined: asyncio.Future[discord.Guild] = asyncio.get_running_loop().create_future()

    async def on_join(guild: discord.Guild) -> None:
        if not joined.done():
            joined.set_result(guild)

    bot.add_listener(on_join, "on_guild_join")
    guild = standin.add_guild("Late Guild", locale="da")
    channel = standin.add_channel(guild, "late")
    dave = standin.add_user("dave")
    standin.add_member(guild, dave)
    joined_guild = await asyncio.wait_for(joined, 5)
    assert joined_guild.id == guild.id
    assert joined_guild.preferred_locale is discord.Locale.danish
    rec = await standin.slash("challenge", user=dave, channel=channel, options={"opponent": dave})
    assert (await rec.response()).message in standin.messages(channel)


# ------------------------------------------------------------------------------------ harness


async def test_run_bot_reports_a_crash_before_ready(
    standin: DiscordStandIn, standin_world: SampleWorld
) -> None:
    class Broken(TinyBot):
        async def setup_hook(self) -> None:
            raise RuntimeError("setup exploded")

    with pytest.raises(BotCrashed, match="setup exploded"):
        async with run_bot(
            Broken(mod_guild_id=standin_world.no_guild.id), standin, ready_timeout=5
        ):
            pass


async def test_invalid_localized_names_fail_the_sync(
    standin: DiscordStandIn, standin_world: SampleWorld
) -> None:
    class Shouting(TinyTranslator):
        async def translate(
            self,
            string: app_commands.locale_str,
            locale: discord.Locale,
            context: app_commands.TranslationContextTypes,
        ) -> str | None:
            return string.message.upper()  # Discord rejects upper-case command names

    class ShoutingBot(TinyBot):
        translator_class = Shouting

    with pytest.raises(BotCrashed, match="Command name is invalid: 'KRIG'"):
        async with run_bot(
            ShoutingBot(mod_guild_id=standin_world.no_guild.id), standin, ready_timeout=5
        ):
            pass
    assert standin.syncs.items == []


async def test_bot_error_fails_the_wait_fast(
    standin: DiscordStandIn, standin_world: SampleWorld
) -> None:
    w = standin_world

    class Faulty(TinyBot):
        async def setup_hook(self) -> None:
            @app_commands.command(name="boom", description="Raises")
            async def boom(interaction: discord.Interaction) -> None:
                raise ValueError("kaboom")

            self.tree.add_command(boom)
            await self.tree.sync()

    async with run_bot(Faulty(mod_guild_id=w.no_guild.id), standin):
        rec = await standin.slash("boom", user=w.alice, channel=w.no_channel)
        started = time.perf_counter()
        with pytest.raises(BotCrashed, match="kaboom"):
            await rec.response(timeout=30)
        assert time.perf_counter() - started < 5  # failed at the error, not at the timeout
        accepted = standin.accept_bot_errors()
        assert "Ignoring exception in command 'boom'" in accepted[0].getMessage()


async def test_a_wait_with_no_bot_task_to_watch_times_out_and_says_what_it_waited_for(
    standin: DiscordStandIn,
) -> None:
    """With the bots in processes of their own nothing is watched: a wait still ends on time."""
    assert not standin.fail_fast_on_bot_errors
    started = time.perf_counter()
    with pytest.raises(StandInTimeout, match=r"after 0\.2s waiting for a READY nobody sends"):
        await standin.gateway_events.wait(
            lambda e: e.kind == "ready", timeout=0.2, what="a READY nobody sends"
        )
    assert time.perf_counter() - started >= 0.19
    # What it saw comes with it: no requests, no gateway sessions.
    with pytest.raises(StandInTimeout, match=r"gateway sessions: \[\]"):
        await standin.interaction_log.wait(timeout=0.01, what="an interaction")


# -------------------------------------------------------------------------------- subprocess

SUBPROCESS_BOT = textwrap.dedent(
    """
    import asyncio, os
    import discord
    from discord import app_commands
    from discord.ext import commands

    class Draw(discord.ui.View):
        def __init__(self):
            super().__init__(timeout=None)

        @discord.ui.button(label="Draw", custom_id="krig:draw")
        async def draw(self, interaction, button):
            await interaction.response.send_message(f"drawn by pid {os.getpid()}")

    class Bot(commands.Bot):
        async def setup_hook(self):
            self.add_view(Draw())

            @app_commands.command(name="game", description="Start")
            async def game(interaction):
                await interaction.response.send_message("game on", view=Draw())

            self.tree.add_command(game)
            await self.tree.sync()

    async def main():
        bot = Bot(command_prefix="!", intents=discord.Intents.default(), guild_ready_timeout=0.05)
        async with bot:
            await bot.start("fake-token")

    asyncio.run(main())
    """
)


async def test_subprocess_bot_survives_sigkill_and_restart(
    standin: DiscordStandIn, standin_world: SampleWorld, tmp_path: Path
) -> None:
    w = standin_world
    script = tmp_path / "bot.py"
    script.write_text(SUBPROCESS_BOT)

    async def launch() -> asyncio.subprocess.Process:
        stderr = (tmp_path / "stderr.txt").open("ab")
        try:
            return await asyncio.create_subprocess_exec(
                sys.executable,
                str(script),
                env=standin.subprocess_env(),
                stderr=stderr,
                stdout=asyncio.subprocess.DEVNULL,
            )
        finally:
            stderr.close()

    async def until_ready(proc: asyncio.subprocess.Process, after: int) -> None:
        watcher = asyncio.create_task(proc.wait())
        standin.watch_task(watcher)  # a dying process fails the wait at once
        try:
            await standin.wait_for_ready(after=after, timeout=20)
        except BotCrashed as exc:
            raise AssertionError((tmp_path / "stderr.txt").read_text()) from exc
        finally:
            standin.unwatch_task(watcher)
            watcher.cancel()

    proc = await launch()
    try:
        await until_ready(proc, 0)
        rec = await standin.slash("game", user=w.alice, channel=w.no_channel)
        message = (await rec.response(timeout=10)).message
        assert message is not None
        first = await (await standin.click(message, "krig:draw", user=w.bob)).response(timeout=10)
        assert first.content == f"drawn by pid {proc.pid}"

        closed = standin.gateway_events.cursor()
        proc.send_signal(signal.SIGKILL)
        assert await proc.wait() == -signal.SIGKILL
        await closed.next(lambda e: e.kind == "close")

        ready_count = len(standin.gateway_events)
        proc = await launch()
        await until_ready(proc, ready_count)
        # The old message id still works; the new process's persistent view answers.
        second = await (await standin.click(message.id, "krig:draw", user=w.bob)).response(
            timeout=10
        )
        assert second.content == f"drawn by pid {proc.pid}"
        assert (
            len({e.session_id for e in standin.gateway_events.items if e.kind == "identify"}) == 2
        )
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()


def test_sitecustomize_points_discord_at_the_url(tmp_path: Path) -> None:
    """The sitecustomize alone, in a fresh interpreter (no server needed)."""
    import subprocess

    env = {
        **os.environ,
        "PYTHONPATH": str(SITECUSTOMIZE_DIR),
        "KRIG_TEST_DISCORD_URL": "http://127.0.0.1:4321",
    }
    code = (
        "import json, discord.http, discord.gateway; "
        "print(json.dumps([discord.http.Route.BASE, "
        "str(discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY)]))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        env=env,
        capture_output=True,
        text=True,
        check=True,
        cwd=os.fspath(tmp_path),
    )
    assert json.loads(out.stdout) == [
        "http://127.0.0.1:4321/api/v10",
        "ws://127.0.0.1:4321/gateway",
    ]


async def test_a_closed_stand_in_and_all_it_recorded_are_let_go() -> None:
    # A benchmark runs one stand-in after another in a process: one kept alive keeps every
    # message and request it recorded, and each next run of the benchmark went slower.
    standin = DiscordStandIn()
    await standin.start()
    async with aiohttp.ClientSession() as http, http.get(f"{standin.url}/gateway") as answer:
        assert answer.status in (400, 426)  # served (not a websocket): the handler is cached
    await standin.close()
    gone = weakref.ref(standin)
    del standin
    gc.collect()

    assert gone() is None
