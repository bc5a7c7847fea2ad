"""Install contexts as Discord has them: where a command is offered, and what the bot may reach.

A command declares where it may be installed (``integration_types``: 0 guild install, 1 user
install) and where it may be used (``contexts``: 0 guild, 1 the bot's DM, 2 a private channel,
i.e. a DM or group DM between users). Discord offers it in a channel only when both allow it and
an install authorizes it there: the bot is in the guild (a guild install), or the user installed
the app on their account (a user install). The interaction then says which (``context``,
``authorizing_integration_owners``).

Where the bot is no member (a private channel, a guild that never added it) only the
interaction reaches the channel: its callback, at most :data:`FOLLOWUP_LIMIT` follow-ups, and
edits through its webhook while the token lives. Every channel REST call there is refused with
403 50001 and noted in ``World.refused``. In such a guild, where the member may not "Use External
Apps" in the channel, Discord shows every response to the user alone (forced ephemeral).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import discord

from tests.standin.commands import CommandNotAvailableError
from tests.standin.rest import DiscordError
from tests.standin.world import DEFAULT_EVERYONE_PERMISSIONS, Channel, Guild, Member, Role, User

if TYPE_CHECKING:
    from tests.standin.records import InteractionRecord
    from tests.standin.server import DiscordStandIn
    from tests.standin.world import World

GUILD_INSTALL, USER_INSTALL = 0, 1
GUILD, BOT_DM, PRIVATE_CHANNEL = 0, 1, 2
DM, GROUP_DM = 1, 3

FOLLOWUP_LIMIT = 5
"""Follow-ups per interaction for a user-installed app where the bot is no member (June 2024)."""

USE_EXTERNAL_APPS = discord.Permissions(use_external_apps=True).value

USER_INSTALL_PERMISSIONS = discord.Permissions(
    send_messages=True,
    attach_files=True,
    embed_links=True,
    external_emojis=True,
    send_voice_messages=True,
    send_polls=True,
    use_external_apps=True,
).value
"""``app_permissions`` of a user-installed app where the bot is no member."""

DEFAULT_CONTEXTS = (GUILD, BOT_DM, PRIVATE_CHANNEL)
_PLACES = {GUILD: "guilds", BOT_DM: "DMs", PRIVATE_CHANNEL: "private channels"}
DEFAULT_INSTALLS = (GUILD_INSTALL,)


# ------------------------------------------------------------------------------- building


def install_for(standin: DiscordStandIn, user: User) -> None:
    """Install the bot on ``user``'s account (the Developer Portal's user install link)."""
    standin.world.user_installs.add(user.id)


def add_group_dm(standin: DiscordStandIn, *users: User, name: str = "group") -> Channel:
    """A group DM of ``users`` (the first owns it); the bot is no member of it."""
    return _private(standin, GROUP_DM, name, users)


def add_user_dm(standin: DiscordStandIn, one: User, other: User) -> Channel:
    """The DM between two users; the bot is no member of it."""
    return _private(standin, DM, f"dm-{one.name}-{other.name}", (one, other))


def _private(standin: DiscordStandIn, kind: int, name: str, users: tuple[User, ...]) -> Channel:
    world = standin.world
    channel = Channel(world.snowflakes.next(), name, kind, None, recipients=list(users))
    world.channels[channel.id] = channel
    return channel


def add_outside_guild(
    standin: DiscordStandIn,
    name: str,
    *members: User,
    locale: str = "en-US",
    external_apps: bool = True,
) -> tuple[Guild, Channel]:
    """A guild that never added the bot, with these members (the first owns it) and #general.

    ``external_apps=False``: @everyone may not "Use External Apps" (Discord then makes every
    response of a user-installed app ephemeral). The bot hears nothing of it on the gateway.
    """
    world = standin.world
    owner = members[0]
    guild = Guild(world.snowflakes.next(), name, locale, owner)
    permissions = DEFAULT_EVERYONE_PERMISSIONS | (USE_EXTERNAL_APPS if external_apps else 0)
    everyone = Role(guild.id, guild, "@everyone", permissions)
    guild.roles.append(everyone)
    for user in members:
        guild.members[user.id] = Member(user, guild, [everyone])
    channel = Channel(world.snowflakes.next(), "general", 0, guild)
    guild.channels.append(channel)
    world.outside_guilds[guild.id] = guild
    world.channels[channel.id] = channel
    return guild, channel


# ------------------------------------------------------------------------------- reading


def installed_in(world: World, guild: Guild | None) -> bool:
    """Whether the bot was added to ``guild`` (None, a DM or group DM, is no guild)."""
    return guild is not None and guild.id in world.guilds


def bot_sees(world: World, channel: Channel) -> bool:
    """Whether the bot's own token reaches ``channel``: its guilds' channels and its own DMs."""
    if channel.guild is not None:
        return installed_in(world, channel.guild)
    return channel.recipient is not None


def context_of(channel: Channel) -> int:
    """The interaction ``context`` of a command used in ``channel``."""
    if channel.guild is not None:
        return GUILD
    return BOT_DM if channel.recipient is not None else PRIVATE_CHANNEL


def user_installed(world: World, user: User) -> bool:
    """Whether ``user`` installed the bot on their account."""
    return user.id in world.user_installs


def owners(world: World, user: User, channel: Channel) -> dict[str, str]:
    """``authorizing_integration_owners``: which installs authorize an interaction here."""
    found: dict[str, str] = {}
    if channel.guild is not None and installed_in(world, channel.guild):
        found[str(GUILD_INSTALL)] = str(channel.guild.id)
    elif context_of(channel) == BOT_DM:
        # Discord's value for a guild install used in the bot's DM.
        found[str(GUILD_INSTALL)] = "0"
    if user_installed(world, user):
        found[str(USER_INSTALL)] = str(user.id)
    return found


def check_offered(
    world: World, command: Mapping[str, Any], guild_command: bool, user: User, channel: Channel
) -> None:
    """Raise Discord's refusal unless ``command`` is offered to ``user`` in ``channel``.

    Discord only reads ``contexts`` and ``integration_types`` of top-level, global commands;
    a guild command exists in its guild alone, through the guild install.
    """
    name = command.get("name")
    context = context_of(channel)
    if guild_command:
        if context != GUILD:
            raise CommandNotAvailableError(
                f"{name!r} is a guild command, not available in {_PLACES[context]}"
            )
        return
    contexts = command.get("contexts")
    allowed = DEFAULT_CONTEXTS if contexts is None else tuple(contexts)
    if context == BOT_DM and command.get("dm_permission") is False:
        allowed = tuple(c for c in allowed if c != BOT_DM)
    if context not in allowed:
        raise CommandNotAvailableError(
            f"{name!r} is not available in {_PLACES[context]} (contexts={list(allowed)})"
        )
    types = command.get("integration_types")
    installs = DEFAULT_INSTALLS if types is None else tuple(types)
    by_guild = GUILD_INSTALL in installs and (
        installed_in(world, channel.guild) if context == GUILD else context == BOT_DM
    )
    by_user = USER_INSTALL in installs and user_installed(world, user)
    if not (by_guild or by_user):
        raise CommandNotAvailableError(
            f"{name!r} is not authorized here for {user.name!r}: integration_types="
            f"{list(installs)}, user install: {user_installed(world, user)}, "
            f"guild install: {installed_in(world, channel.guild)}"
        )


def app_permissions(world: World, channel: Channel) -> int | None:
    """What the bot may do in a channel it cannot see (None: compute as for a member)."""
    return None if bot_sees(world, channel) else USER_INSTALL_PERMISSIONS


def not_a_member(world: World, record: InteractionRecord) -> bool:
    """Whether the interaction comes from where the bot is no member (the user install's)."""
    return record.channel is not None and not bot_sees(world, record.channel)


def forced_ephemeral(world: World, record: InteractionRecord) -> bool:
    """Whether Discord shows every response to this interaction to its user alone."""
    channel = record.channel
    if channel is None or channel.guild is None or installed_in(world, channel.guild):
        return False
    member = channel.guild.members.get(record.user.id)
    return member is None or not channel.permissions_for(member) & USE_EXTERNAL_APPS


def check_followup(world: World, record: InteractionRecord) -> None:
    """Refuse a follow-up past the limit of a user install where the bot is no member."""
    if not_a_member(world, record) and len(record.followups.items) >= FOLLOWUP_LIMIT:
        record.rejected.append((400, 40094))
        raise DiscordError(
            400, 40094, "This interaction has hit the maximum number of follow up messages"
        )


def check_reach(world: World, channel: Channel, method: str, path: str) -> None:
    """Refuse a channel REST call into a channel the bot cannot see (403 50001), and note it."""
    if not bot_sees(world, channel):
        world.refused.append((method, path))
        raise DiscordError(403, 50001, "Missing Access")
