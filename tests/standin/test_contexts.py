"""The stand-in's install contexts with the real discord.py: what is offered where, what reaches."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import discord
import pytest
from discord import app_commands
from discord.ext import commands

from tests.standin import CommandNotAvailableError, DiscordStandIn, run_bot
from tests.standin.contexts import (
    FOLLOWUP_LIMIT,
    add_group_dm,
    add_outside_guild,
    add_user_dm,
    install_for,
)
from tests.standin.fixtures import SampleWorld
from tests.support.players import settled


class ContextBot(commands.Bot):
    """Two commands: one usable everywhere through either install, one for servers only."""

    def __init__(self) -> None:
        super().__init__(
            command_prefix="!", intents=discord.Intents.default(), guild_ready_timeout=0.05
        )
        self.seen: list[discord.Interaction[Any]] = []
        self.errors: list[discord.HTTPException] = []
        self.followups = 0

    async def setup_hook(self) -> None:
        bot = self

        @app_commands.command(name="play", description="Play anywhere")
        @app_commands.allowed_contexts(guilds=True, dms=True, private_channels=True)
        @app_commands.allowed_installs(guilds=True, users=True)
        async def play(interaction: discord.Interaction[Any], followups: int = 0) -> None:
            bot.seen.append(interaction)
            await interaction.response.send_message("table")
            for _ in range(followups):
                try:
                    await interaction.followup.send("more")
                    bot.followups += 1
                except discord.HTTPException as exc:
                    bot.errors.append(exc)
            try:
                assert interaction.channel_id is not None
                await bot.get_partial_messageable(interaction.channel_id).send("own token")
            except discord.HTTPException as exc:
                bot.errors.append(exc)

        @app_commands.command(name="settings", description="Servers only")
        @app_commands.guild_only()
        async def settings(interaction: discord.Interaction[Any]) -> None:
            await interaction.response.send_message("set")

        self.tree.add_command(play)
        self.tree.add_command(settings)
        await self.tree.sync()


@pytest.fixture
async def context_bot(
    standin: DiscordStandIn, standin_world: SampleWorld
) -> AsyncIterator[ContextBot]:
    async with run_bot(ContextBot(), standin) as bot:
        yield bot


async def test_the_sync_carries_each_commands_installs_and_contexts(
    standin: DiscordStandIn, context_bot: ContextBot
) -> None:
    play = standin.synced_command("play")
    settings = standin.synced_command("settings")

    assert sorted(play["integration_types"]) == [0, 1]
    assert sorted(play["contexts"]) == [0, 1, 2]
    assert settings["contexts"] == [0]


async def test_a_command_is_offered_only_where_its_declaration_and_an_install_allow(
    standin: DiscordStandIn, world: SampleWorld, context_bot: ContextBot
) -> None:
    group = add_group_dm(standin, world.alice, world.bob, world.carol)
    with pytest.raises(CommandNotAvailableError):
        # Nobody installed the bot on their account: nothing authorizes it in a group DM.
        await standin.slash("play", user=world.alice, channel=group)
    install_for(standin, world.alice)
    with pytest.raises(CommandNotAvailableError):
        await standin.slash("settings", user=world.alice, channel=group)
    with pytest.raises(CommandNotAvailableError):
        await standin.slash("play", user=world.bob, channel=group)  # bob has no install

    await (await standin.slash("play", user=world.alice, channel=group)).response()
    assert len(context_bot.seen) == 1


@pytest.fixture
def world(standin_world: SampleWorld) -> SampleWorld:
    return standin_world


async def test_a_group_dm_interaction_is_a_private_channel_of_the_users_install(
    standin: DiscordStandIn, world: SampleWorld, context_bot: ContextBot
) -> None:
    group = add_group_dm(standin, world.alice, world.bob, world.carol, name="friends")
    install_for(standin, world.alice)

    rec = await standin.slash("play", user=world.alice, channel=group)
    answer = await rec.response()

    (interaction,) = context_bot.seen
    assert interaction.context.private_channel
    assert interaction.is_user_integration()
    assert not interaction.is_guild_integration()
    assert interaction.guild_id is None
    assert isinstance(interaction.channel, discord.GroupChannel)
    assert {u.id for u in interaction.channel.recipients} >= {world.bob.id, world.carol.id}
    assert rec.payload["authorizing_integration_owners"] == {"1": str(world.alice.id)}
    assert not answer.ephemeral
    assert answer.message is not None
    assert answer.message.channel is group


async def test_the_bots_own_token_reaches_nothing_where_it_is_no_member(
    standin: DiscordStandIn, world: SampleWorld, context_bot: ContextBot
) -> None:
    install_for(standin, world.alice)
    dm = add_user_dm(standin, world.alice, world.bob)
    _, outside = add_outside_guild(standin, "No bot here", world.alice, world.bob)

    for channel in (dm, outside):
        await (await standin.slash("play", user=world.alice, channel=channel)).response()
        await settled()

    assert [(e.status, e.code) for e in context_bot.errors] == [(403, 50001), (403, 50001)]
    assert [method for method, _ in standin.world.refused] == ["POST", "POST"]


async def test_a_user_install_gets_five_follow_ups_per_interaction_where_it_is_no_member(
    standin: DiscordStandIn, world: SampleWorld, context_bot: ContextBot
) -> None:
    install_for(standin, world.alice)
    group = add_group_dm(standin, world.alice, world.bob)

    rec = await standin.slash("play", user=world.alice, channel=group, options={"followups": 6})
    await rec.followup(FOLLOWUP_LIMIT - 1)
    await settled()

    assert context_bot.followups == FOLLOWUP_LIMIT
    assert (400, 40094) in rec.rejected
    assert next((e.status, e.code) for e in context_bot.errors) == (400, 40094)


async def test_a_guild_follow_up_has_no_such_limit(
    standin: DiscordStandIn, world: SampleWorld, context_bot: ContextBot
) -> None:
    rec = await standin.slash(
        "play", user=world.alice, channel=world.no_channel, options={"followups": 6}
    )
    await rec.followup(5)
    await settled()

    assert context_bot.followups == 6
    assert context_bot.errors == []


async def test_answers_are_forced_ephemeral_where_the_server_denies_external_apps(
    standin: DiscordStandIn, world: SampleWorld, context_bot: ContextBot
) -> None:
    install_for(standin, world.alice)
    _, strict = add_outside_guild(standin, "Strict", world.bob, world.alice, external_apps=False)
    _, open_ = add_outside_guild(standin, "Open", world.bob, world.alice)

    forced = await standin.slash("play", user=world.alice, channel=strict)
    shown = await standin.slash("play", user=world.alice, channel=open_)

    await settled()
    assert (await forced.response()).message.ephemeral  # type: ignore[union-attr]
    assert forced.forced_ephemeral
    assert not (await shown.response()).message.ephemeral  # type: ignore[union-attr]
    (first, second) = context_bot.seen
    assert not first.permissions.use_external_apps
    assert second.permissions.use_external_apps


async def test_webhook_edits_expire_with_the_token(
    standin: DiscordStandIn, world: SampleWorld, context_bot: ContextBot
) -> None:
    install_for(standin, world.alice)
    group = add_group_dm(standin, world.alice, world.bob)
    rec = await standin.slash("play", user=world.alice, channel=group)
    await rec.response()
    await settled()
    (interaction,) = context_bot.seen

    await interaction.edit_original_response(content="still mine")
    standin.token_lifetime = 0.0
    with pytest.raises(discord.HTTPException) as refused:
        await interaction.edit_original_response(content="too late")

    assert (refused.value.status, refused.value.code) == (401, 50027)
    assert [r.content for r in rec.original_edits.items] == ["still mine"]
