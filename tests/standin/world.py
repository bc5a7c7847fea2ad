"""The stand-in's model of Discord's world: users, guilds, roles, members and channels.

Everything here is plain data plus the JSON shapes Discord sends for it, and the :class:`World`
that holds it by id. The objects are created through :class:`tests.standin.server.DiscordStandIn`
(``add_guild`` and friends), which also tells a connected bot about changes over the gateway.
"""

from __future__ import annotations

import datetime
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import discord

if TYPE_CHECKING:
    from tests.standin.messages import Message

DISCORD_EPOCH_MS = 1_420_070_400_000

#: Every locale Discord sends in ``locale``/``guild_locale`` and accepts in localizations.
DISCORD_LOCALES: frozenset[str] = frozenset(locale.value for locale in discord.Locale)

# Discord has no "nb"/"nn": Norwegian (Bokmål and Nynorsk alike) is "no". A Norwegian
# guild or user therefore arrives as "no", and the aliases map what a test author is likely
# to write onto what Discord really sends, so the bot is tested against the real value.
LOCALE_ALIASES: dict[str, str] = {
    "nb": "no",
    "nb-NO": "no",
    "nn": "no",
    "nn-NO": "no",
    "no-NO": "no",
    "sv": "sv-SE",
    "en": "en-US",
}

ALL_PERMISSIONS = discord.Permissions.all().value
ADMINISTRATOR = discord.Permissions(administrator=True).value
VIEW_CHANNEL = discord.Permissions(view_channel=True).value

#: What a fresh guild's @everyone role may do (close to Discord's default).
DEFAULT_EVERYONE_PERMISSIONS = discord.Permissions(
    view_channel=True,
    send_messages=True,
    send_messages_in_threads=True,
    create_public_threads=True,
    create_private_threads=True,
    embed_links=True,
    attach_files=True,
    add_reactions=True,
    use_external_emojis=True,
    use_external_stickers=True,
    read_message_history=True,
    use_application_commands=True,
    create_instant_invite=True,
    change_nickname=True,
    connect=True,
    speak=True,
).value

#: What the bot's own managed role grants unless ``add_guild(bot_permissions=...)`` says otherwise.
DEFAULT_BOT_PERMISSIONS = discord.Permissions(
    view_channel=True,
    send_messages=True,
    send_messages_in_threads=True,
    embed_links=True,
    attach_files=True,
    add_reactions=True,
    use_external_emojis=True,
    read_message_history=True,
).value

PermissionsLike = int | discord.Permissions | Iterable[str]


def normalize_locale(locale: str) -> str:
    """Return the locale string Discord would send for ``locale``.

    Accepts Discord's own codes ("sv-SE", "no", "en-US", ...) and a few aliases ("nb", "sv").
    Raises ``ValueError`` for anything Discord would never send, so tests cannot silently
    exercise a locale the real service does not have.
    """
    value = LOCALE_ALIASES.get(locale, locale)
    if value not in DISCORD_LOCALES:
        raise ValueError(
            f"{locale!r} is not a Discord locale; Discord uses one of {sorted(DISCORD_LOCALES)} "
            "(Norwegian is 'no', Swedish 'sv-SE')"
        )
    return value


def permission_value(permissions: PermissionsLike) -> int:
    """Turn an int, a ``discord.Permissions`` or permission names into a permission bit field."""
    if isinstance(permissions, discord.Permissions):
        return permissions.value
    if isinstance(permissions, int):
        return permissions
    return discord.Permissions(**dict.fromkeys(permissions, True)).value


def iso(ts: datetime.datetime | None) -> str | None:
    """ISO-8601 timestamp as Discord writes it (or None)."""
    return None if ts is None else ts.isoformat()


class SnowflakeGenerator:
    """Makes unique, increasing Discord snowflakes whose timestamp part is the current time."""

    def __init__(self, worker: int = 1) -> None:
        self._worker = worker & 0x1F
        self._last = 0
        self._increment = 0

    def next(self) -> int:
        """Return a fresh snowflake, strictly greater than every previous one."""
        ms = int(time.time() * 1000) - DISCORD_EPOCH_MS
        self._increment = (self._increment + 1) & 0xFFF
        value = (ms << 22) | (self._worker << 17) | self._increment
        # Two ids in the same millisecond with a wrapped increment would go backwards.
        if value <= self._last:
            value = self._last + 1
        self._last = value
        return value

    def on_shard(self, shard: int, count: int) -> int:
        """Return a fresh snowflake whose guild lands on ``shard`` of ``count``.

        Its time part is moved up to ``count - 1`` milliseconds ahead, so it stays the greatest.
        """
        value = self.next()
        value += ((shard - (value >> 22)) % count) << 22
        self._last = value
        return value


@dataclass(eq=False)
class User:
    """A Discord user (human or bot); ``locale`` is the client language sent with interactions."""

    id: int
    name: str
    display_name: str | None = None
    bot: bool = False
    locale: str = "en-US"

    @property
    def mention(self) -> str:
        return f"<@{self.id}>"

    def to_json(self) -> dict[str, Any]:
        """The user object as Discord sends it."""
        data: dict[str, Any] = {
            "id": str(self.id),
            "username": self.name,
            "global_name": self.display_name,
            "discriminator": "0",
            "avatar": None,
            "banner": None,
            "accent_color": None,
            "public_flags": 0,
            "flags": 0,
            "avatar_decoration_data": None,
            "collectibles": None,
            "primary_guild": None,
        }
        if self.bot:
            data["bot"] = True
        return data


@dataclass(eq=False)
class Role:
    """A guild role. The @everyone role has the guild's id, as on Discord."""

    id: int
    guild: Guild
    name: str
    permissions: int
    position: int = 0
    managed: bool = False
    bot_id: int | None = None
    color: int = 0
    mentionable: bool = False

    @property
    def mention(self) -> str:
        return "@everyone" if self.id == self.guild.id else f"<@&{self.id}>"

    def to_json(self) -> dict[str, Any]:
        """The role object as Discord sends it."""
        data: dict[str, Any] = {
            "id": str(self.id),
            "name": self.name,
            "permissions": str(self.permissions),
            "position": self.position,
            "color": self.color,
            "colors": {
                "primary_color": self.color,
                "secondary_color": None,
                "tertiary_color": None,
            },
            "hoist": False,
            "icon": None,
            "unicode_emoji": None,
            "managed": self.managed,
            "mentionable": self.mentionable,
            "flags": 0,
        }
        if self.bot_id is not None:
            data["tags"] = {"bot_id": str(self.bot_id)}
        return data


@dataclass(eq=False)
class Member:
    """A user's membership in a guild: roles, nickname and the permissions they imply."""

    user: User
    guild: Guild
    roles: list[Role] = field(default_factory=list)
    nick: str | None = None
    joined_at: datetime.datetime = field(
        default_factory=lambda: datetime.datetime.now(datetime.UTC)
    )

    @property
    def id(self) -> int:
        return self.user.id

    @property
    def permissions(self) -> int:
        """Guild-wide permissions (owner and administrators get everything)."""
        return self.guild.base_permissions(self)

    def permissions_in(self, channel: Channel) -> int:
        """Permissions in ``channel`` after overwrites, computed like Discord does."""
        return channel.permissions_for(self)

    def to_json(self, *, with_user: bool = True) -> dict[str, Any]:
        """The guild member object as Discord sends it."""
        data: dict[str, Any] = {
            "roles": [str(r.id) for r in self.roles if r.id != self.guild.id],
            "nick": self.nick,
            "avatar": None,
            "banner": None,
            "joined_at": iso(self.joined_at),
            "premium_since": None,
            "deaf": False,
            "mute": False,
            "pending": False,
            # discord.py 2.7.1 reads member["flags"] unconditionally; without it GUILD_CREATE fails.
            "flags": 0,
            "communication_disabled_until": None,
        }
        if with_user:
            data["user"] = self.user.to_json()
        return data


@dataclass
class Overwrite:
    """A channel permission overwrite for a role (type 0) or a member (type 1)."""

    id: int
    type: int
    allow: int = 0
    deny: int = 0

    def to_json(self) -> dict[str, Any]:
        return {
            "id": str(self.id),
            "type": self.type,
            "allow": str(self.allow),
            "deny": str(self.deny),
        }


PUBLIC_THREAD = 11
PRIVATE_THREAD = 12
THREAD_TYPES = (PUBLIC_THREAD, PRIVATE_THREAD)


@dataclass(eq=False)
class Channel:
    """A guild text channel (type 0), a DM (type 1) or a group DM (type 3; ``guild`` is None),
    or a thread (type 11 public, 12 private) under a text channel (``parent``).

    The bot's own DM with a user has ``recipient``; a DM or group DM between users (which the
    bot is no member of) has ``recipients`` instead (see ``tests/standin/contexts.py``). A
    thread's permissions are its parent's, as on Discord; its ``thread_members`` are who joined
    or was added.
    """

    id: int
    name: str
    type: int = 0
    guild: Guild | None = None
    position: int = 0
    topic: str | None = None
    recipient: User | None = None
    recipients: list[User] = field(default_factory=list)
    overwrites: dict[int, Overwrite] = field(default_factory=dict)
    #: Every message ever stored in this channel, deleted ones included (see ``Message.deleted``).
    messages: list[Message] = field(default_factory=list)
    parent: Channel | None = None
    owner_id: int | None = None
    thread_members: set[int] = field(default_factory=set)
    archived: bool = False
    locked: bool = False

    @property
    def is_thread(self) -> bool:
        return self.type in THREAD_TYPES

    @property
    def mention(self) -> str:
        return f"<#{self.id}>"

    @property
    def is_dm(self) -> bool:
        return self.guild is None

    def permissions_for(self, member: Member) -> int:
        """Discord's algorithm: base permissions, then @everyone, role and member overwrites."""
        if self.guild is None:
            return ALL_PERMISSIONS
        if self.parent is not None:
            return self.parent.permissions_for(member)
        base = self.guild.base_permissions(member)
        if base & ADMINISTRATOR:
            return ALL_PERMISSIONS
        perms = base
        everyone = self.overwrites.get(self.guild.id)
        if everyone is not None:
            perms = (perms & ~everyone.deny) | everyone.allow
        allow = deny = 0
        for role in member.roles:
            ow = self.overwrites.get(role.id)
            if ow is not None and ow.type == 0:
                allow |= ow.allow
                deny |= ow.deny
        perms = (perms & ~deny) | allow
        own = self.overwrites.get(member.id)
        if own is not None and own.type == 1:
            perms = (perms & ~own.deny) | own.allow
        # Without VIEW_CHANNEL nothing else in the channel applies.
        if not perms & VIEW_CHANNEL:
            return 0
        return perms

    def last_message_id(self) -> int | None:
        return self.messages[-1].id if self.messages else None

    def to_json(self) -> dict[str, Any]:
        """The channel object as Discord sends it."""
        last = self.last_message_id()
        if self.guild is None:
            return {
                "id": str(self.id),
                "type": self.type,
                "last_message_id": None if last is None else str(last),
                "recipients": [u.to_json() for u in self.recipients]
                or ([self.recipient.to_json()] if self.recipient else []),
                "flags": 0,
                **(
                    {"name": self.name, "owner_id": str(self.recipients[0].id)}
                    if self.type == 3
                    else {}
                ),
            }
        if self.parent is not None:
            return self._thread_json(self.guild, self.parent, last)
        return {
            "id": str(self.id),
            "type": self.type,
            "guild_id": str(self.guild.id),
            "name": self.name,
            "position": self.position,
            "permission_overwrites": [ow.to_json() for ow in self.overwrites.values()],
            "parent_id": None,
            "topic": self.topic,
            "nsfw": False,
            "rate_limit_per_user": 0,
            "last_message_id": None if last is None else str(last),
            "flags": 0,
        }

    def _thread_json(self, guild: Guild, parent: Channel, last: int | None) -> dict[str, Any]:
        """The thread channel object as Discord sends it."""
        shown = [m for m in self.messages if not m.deleted and not m.ephemeral]
        return {
            "id": str(self.id),
            "type": self.type,
            "guild_id": str(guild.id),
            "parent_id": str(parent.id),
            "owner_id": str(self.owner_id),
            "name": self.name,
            "last_message_id": None if last is None else str(last),
            "rate_limit_per_user": 0,
            "message_count": len(shown),
            "member_count": min(len(self.thread_members), 50),
            "total_message_sent": len(shown),
            "thread_metadata": {
                "archived": self.archived,
                "auto_archive_duration": 1440,
                "archive_timestamp": iso(datetime.datetime.now(datetime.UTC)),
                "locked": self.locked,
                "create_timestamp": iso(datetime.datetime.now(datetime.UTC)),
            },
            "flags": 0,
        }


@dataclass(eq=False)
class Guild:
    """A guild with its roles, channels and members. ``locale`` is the guild's preferred_locale."""

    id: int
    name: str
    locale: str
    owner: User
    roles: list[Role] = field(default_factory=list)
    channels: list[Channel] = field(default_factory=list)
    #: Its threads, archived ones included (GUILD_CREATE sends the active ones).
    threads: list[Channel] = field(default_factory=list)
    members: dict[int, Member] = field(default_factory=dict)
    created_at: datetime.datetime = field(
        default_factory=lambda: datetime.datetime.now(datetime.UTC)
    )

    @property
    def everyone(self) -> Role:
        """The @everyone role (its id is the guild id)."""
        return self.roles[0]

    @property
    def bot_role(self) -> Role | None:
        """The managed role Discord creates for the bot when it joins."""
        return next((r for r in self.roles if r.bot_id is not None), None)

    def member(self, user: User | int) -> Member:
        """The member for ``user``; ``KeyError`` if the user is not in this guild."""
        uid = user if isinstance(user, int) else user.id
        return self.members[uid]

    def channel(self, name: str) -> Channel:
        """The channel called ``name`` in this guild."""
        for channel in self.channels:
            if channel.name == name:
                return channel
        raise KeyError(f"no channel {name!r} in guild {self.name!r}")

    def role(self, name: str) -> Role:
        """The role called ``name`` in this guild."""
        for role in self.roles:
            if role.name == name:
                return role
        raise KeyError(f"no role {name!r} in guild {self.name!r}")

    def base_permissions(self, member: Member) -> int:
        if member.user.id == self.owner.id:
            return ALL_PERMISSIONS
        perms = self.everyone.permissions
        for role in member.roles:
            perms |= role.permissions
        if perms & ADMINISTRATOR:
            return ALL_PERMISSIONS
        return perms

    def to_json(
        self, *, members: Iterable[Member] | None = None, joined_at: datetime.datetime | None = None
    ) -> dict[str, Any]:
        """The full guild object of GUILD_CREATE (``members`` limits which members are sent).

        No ``unavailable`` key: with ``unavailable: false`` discord.py treats the event as an
        outage ending (``on_guild_available``) instead of a join (``on_guild_join``).
        """
        chosen = list(self.members.values()) if members is None else list(members)
        return {
            "id": str(self.id),
            "name": self.name,
            "icon": None,
            "splash": None,
            "discovery_splash": None,
            "banner": None,
            "description": None,
            "owner_id": str(self.owner.id),
            "preferred_locale": self.locale,
            "features": [],
            "verification_level": 0,
            "default_message_notifications": 0,
            "explicit_content_filter": 0,
            "mfa_level": 0,
            "nsfw_level": 0,
            "premium_tier": 0,
            "premium_subscription_count": 0,
            "premium_progress_bar_enabled": False,
            "system_channel_id": None,
            "system_channel_flags": 0,
            "rules_channel_id": None,
            "public_updates_channel_id": None,
            "afk_channel_id": None,
            "afk_timeout": 300,
            "vanity_url_code": None,
            "max_members": 500000,
            "max_video_channel_users": 25,
            "max_stage_video_channel_users": 50,
            "nsfw": False,
            "large": False,
            "member_count": len(self.members),
            "joined_at": iso(joined_at or self.created_at),
            "roles": [r.to_json() for r in self.roles],
            "emojis": [],
            "stickers": [],
            "channels": [c.to_json() for c in self.channels],
            "threads": [t.to_json() for t in self.threads if not t.archived],
            "members": [m.to_json() for m in chosen],
            "presences": [],
            "voice_states": [],
            "stage_instances": [],
            "guild_scheduled_events": [],
            "soundboard_sounds": [],
        }

    def partial_json(self) -> dict[str, Any]:
        """The small guild object Discord puts in an interaction (``interaction.guild``)."""
        return {"id": str(self.id), "locale": self.locale, "features": []}


def overwrites_from(
    guild: Guild, overwrites: Mapping[Role | User | Member, tuple[PermissionsLike, PermissionsLike]]
) -> dict[int, Overwrite]:
    """Build channel overwrites from ``{role_or_user: (allow, deny)}``."""
    result: dict[int, Overwrite] = {}
    for target, (allow, deny) in overwrites.items():
        kind = 0 if isinstance(target, Role) else 1
        result[target.id] = Overwrite(
            target.id, kind, permission_value(allow), permission_value(deny)
        )
    return result


class World:
    """Every user, guild, role and channel by id: the state the routes look things up in."""

    def __init__(self) -> None:
        self.snowflakes = SnowflakeGenerator()
        self.users: dict[int, User] = {}
        self.guilds: dict[int, Guild] = {}
        self.channels: dict[int, Channel] = {}
        self.roles: dict[int, Role] = {}
        self._dm_channels: dict[int, Channel] = {}
        #: Users who installed the bot on their account (a user install).
        self.user_installs: set[int] = set()
        #: Guilds the bot was never added to, reached only through members' user installs.
        self.outside_guilds: dict[int, Guild] = {}
        #: Channel REST calls refused because the bot cannot see the channel (403 50001).
        self.refused: list[tuple[str, str]] = []

    def dm_channel(self, user: User) -> Channel:
        """The DM channel between the bot and ``user`` (created on first use)."""
        channel = self._dm_channels.get(user.id)
        if channel is None:
            channel = Channel(self.snowflakes.next(), f"dm-{user.name}", 1, None, recipient=user)
            self._dm_channels[user.id] = channel
            self.channels[channel.id] = channel
        return channel
