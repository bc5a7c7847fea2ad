"""The stand-in keeps Discord's rules for threads, read through discord.py."""

from __future__ import annotations

import asyncio

import discord
import pytest

from krigbot.bot import KrigBot
from tests.standin import DiscordStandIn
from tests.standin.fixtures import SampleWorld
from tests.support.players import answer_of

pytestmark = pytest.mark.usefixtures("standin_world")


def text_channel(bot: KrigBot, world: SampleWorld) -> discord.TextChannel:
    channel = bot.get_channel(world.no_channel.id)
    assert isinstance(channel, discord.TextChannel)
    return channel


async def test_a_public_thread_is_started_announced_and_written_in(
    bot: KrigBot, standin: DiscordStandIn, standin_world: SampleWorld
) -> None:
    parent = text_channel(bot, standin_world)

    thread = await parent.create_thread(name="Round 1", type=discord.ChannelType.public_thread)
    await thread.add_user(discord.Object(standin_world.alice.id))
    await thread.send("hello")

    (stood,) = standin.threads(standin_world.no_channel)
    assert (stood.id, stood.name, stood.type, stood.parent) == (
        thread.id,
        "Round 1",
        11,
        standin_world.no_channel,
    )
    assert stood.thread_members == {bot.user.id if bot.user else 0, standin_world.alice.id}
    assert [m.content for m in standin.messages(stood)] == ["hello"]
    assert thread.parent_id == parent.id
    assert bot.get_channel(thread.id) is not None  # THREAD_CREATE reached the bot's cache


async def test_threads_need_their_permissions(
    bot: KrigBot, standin: DiscordStandIn, standin_world: SampleWorld
) -> None:
    parent = text_channel(bot, standin_world)
    thread = await parent.create_thread(name="Open", type=discord.ChannelType.public_thread)
    everyone = standin_world.no_guild.everyone
    standin.set_overwrite(
        standin_world.no_channel,
        everyone,
        deny=["create_public_threads", "send_messages_in_threads"],
    )

    with pytest.raises(discord.Forbidden):
        await parent.create_thread(name="Closed", type=discord.ChannelType.public_thread)
    with pytest.raises(discord.Forbidden):
        await thread.send("no")
    with pytest.raises(discord.Forbidden):
        await thread.add_user(discord.Object(standin_world.alice.id))


async def test_an_archived_thread_refuses_members_and_a_message_opens_it_again(
    bot: KrigBot, standin: DiscordStandIn, standin_world: SampleWorld
) -> None:
    parent = text_channel(bot, standin_world)
    thread = await parent.create_thread(name="Old", type=discord.ChannelType.public_thread)
    (stood,) = standin.threads(standin_world.no_channel)

    standin.archive(stood)
    with pytest.raises(discord.HTTPException) as refused:
        await thread.add_user(discord.Object(standin_world.alice.id))
    reopened = asyncio.ensure_future(
        bot.wait_for(
            "raw_thread_update",
            check=lambda raw: not raw.data["thread_metadata"]["archived"],
            timeout=5,
        )
    )
    await thread.send("back")

    assert refused.value.code == 50083
    assert not stood.archived
    told = await reopened  # Discord tells the bot the thread is open again
    assert told.thread_id == stood.id
    standin.archive(stood, locked=True)
    with pytest.raises(discord.HTTPException):
        await thread.send("locked")


async def test_the_guilds_active_threads_are_listed_with_their_parent_and_name(
    bot: KrigBot, standin: DiscordStandIn, standin_world: SampleWorld
) -> None:
    parent = text_channel(bot, standin_world)
    first = await parent.create_thread(name="Round 1", type=discord.ChannelType.public_thread)
    second = await parent.create_thread(name="Round 2", type=discord.ChannelType.public_thread)
    standin.archive(standin.threads(standin_world.no_channel)[0])
    guild = bot.get_guild(standin_world.no_guild.id)
    assert guild is not None

    active = await guild.active_threads()

    assert [(t.id, t.name, t.parent_id) for t in active] == [(second.id, "Round 2", parent.id)]
    assert first.id not in {t.id for t in active}
    assert bot.user is not None
    assert [member.id for member in active[0].members] == [bot.user.id]


async def test_a_command_in_a_thread_is_answered_there(
    bot: KrigBot, standin: DiscordStandIn, standin_world: SampleWorld
) -> None:
    parent = text_channel(bot, standin_world)
    await parent.create_thread(name="Play", type=discord.ChannelType.public_thread)
    (stood,) = standin.threads(standin_world.no_channel)

    answer = await answer_of(
        standin, await standin.slash("krig rules", user=standin_world.alice, channel=stood)
    )

    assert answer.embeds
    assert answer.message is not None
    assert answer.message.channel is stood


async def test_the_champions_role_is_given_only_below_the_bots_own(
    bot: KrigBot, standin: DiscordStandIn, standin_world: SampleWorld
) -> None:
    guild = standin_world.no_guild
    champion = standin.add_role(guild, "Champion")
    bot_role = guild.bot_role
    assert bot_role is not None
    alice = guild.members[standin_world.alice.id]

    with pytest.raises(discord.Forbidden):  # no Manage Roles
        await bot.http.add_role(guild.id, alice.id, champion.id)
    bot_role.permissions |= discord.Permissions(manage_roles=True).value
    with pytest.raises(discord.Forbidden):  # above the bot's own role
        await bot.http.add_role(guild.id, alice.id, champion.id)
    standin.move_role(bot_role, champion.position + 1)
    await bot.http.add_role(guild.id, alice.id, champion.id)

    assert champion in alice.roles
