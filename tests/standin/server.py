"""A Discord stand-in on 127.0.0.1: REST API + gateway websocket that the real discord.py talks to.

Typical use (see ``tests/test_standin.py`` for complete examples)::

    async with DiscordStandIn() as standin:
        guild = standin.add_guild("Krig HQ", locale="no")
        channel = standin.add_channel(guild, "games")
        alice = standin.add_user("alice")
        standin.add_member(guild, alice)
        async with run_bot(bot, standin):
            rec = await standin.slash("krig start", user=alice, channel=channel, options={...})
            response = await rec.response()

Everything happens on the test's event loop; waits are futures with timeouts, never polling.
"""

# The public waits take ``timeout=`` (``await rec.response(timeout=5)``) on purpose: tests
# read better that way than wrapped in ``asyncio.timeout``, and the guard needs the value.
# ruff: noqa: ASYNC109

from __future__ import annotations

import asyncio
import contextlib
import datetime
import json
import logging
import math
import os
import re
import secrets
import time
import traceback
import urllib.parse
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Self

from aiohttp import web

from tests.standin.commands import (
    ATTACHMENT,
    CHANNEL,
    CHAT_INPUT,
    MENTIONABLE,
    MESSAGE_COMMAND,
    ROLE,
    USER,
    USER_COMMAND,
    CommandNotAvailableError,
    ResolvedCommand,
    StandInError,
    Upload,
    build_options,
    find_command,
    message_target_json,
    validate_sync,
)
from tests.standin.events import BotCrashed, Cursor, EventLog, StandInTimeout
from tests.standin.gateway import (
    DIRECT_MESSAGES,
    GUILD_MEMBERS,
    GUILD_MESSAGES,
    MESSAGE_CONTENT,
    PRIVILEGED_INTENTS,
    Gateway,
    GatewayEvent,
    Session,
)
from tests.standin.messages import (
    EPHEMERAL,
    IS_COMPONENTS_V2,
    LOADING,
    MAX_FILE_SIZE,
    SETTABLE_ON_CREATE,
    SETTABLE_ON_EDIT,
    Attachment,
    ChannelEvent,
    FormErrors,
    Message,
    assign_component_ids,
    compute_mentions,
    normalize_embeds,
    validate_message,
)
from tests.standin.records import (
    APPLICATION_COMMAND,
    APPLICATION_COMMAND_AUTOCOMPLETE,
    AUTOCOMPLETE_RESULT,
    CHANNEL_MESSAGE,
    DEFERRED_CHANNEL_MESSAGE,
    DEFERRED_UPDATE_MESSAGE,
    MESSAGE_COMPONENT,
    MODAL,
    MODAL_SUBMIT,
    UPDATE_MESSAGE,
    Delay,
    Fault,
    InteractionRecord,
    InteractionResponse,
    RequestRecord,
    command_line,
)
from tests.standin.world import (
    DEFAULT_BOT_PERMISSIONS,
    DEFAULT_EVERYONE_PERMISSIONS,
    Channel,
    Guild,
    Member,
    Overwrite,
    PermissionsLike,
    Role,
    SnowflakeGenerator,
    User,
    normalize_locale,
    overwrites_from,
    permission_value,
)

log = logging.getLogger("tests.standin")

API_PREFIX = "/api/v10"
_RECORD_KEY = web.RequestKey("standin_record", RequestRecord)
SITECUSTOMIZE_DIR = Path(__file__).resolve().parent / "sitecustomize"

_MANAGE_MESSAGES = 1 << 13
_SEND_MESSAGES = 1 << 11
_VIEW_CHANNEL = 1 << 10
_ATTACH_FILES = 1 << 15
_USE_APPLICATION_COMMANDS = 1 << 31

# Which callback types Discord accepts for which interaction type.
_ALLOWED_CALLBACKS = {
    APPLICATION_COMMAND: {CHANNEL_MESSAGE, DEFERRED_CHANNEL_MESSAGE, MODAL},
    MESSAGE_COMPONENT: {
        CHANNEL_MESSAGE,
        DEFERRED_CHANNEL_MESSAGE,
        DEFERRED_UPDATE_MESSAGE,
        UPDATE_MESSAGE,
        MODAL,
    },
    APPLICATION_COMMAND_AUTOCOMPLETE: {AUTOCOMPLETE_RESULT},
    MODAL_SUBMIT: {
        CHANNEL_MESSAGE,
        DEFERRED_CHANNEL_MESSAGE,
        DEFERRED_UPDATE_MESSAGE,
        UPDATE_MESSAGE,
    },
}


class NotConnectedError(StandInError):
    """No bot gateway session exists that could receive the event."""


@dataclass(frozen=True)
class SyncRecord:
    """One command sync (bulk overwrite) the bot made."""

    guild_id: int | None
    payload: list[dict[str, Any]]
    at: float


@dataclass
class UploadedFile:
    index: int
    filename: str
    data: bytes
    content_type: str | None


class MessageWatcher:
    """Awaits message events (create/edit/delete) in one channel, or all channels, in order."""

    def __init__(self, cursor: Cursor[ChannelEvent], channel: Channel | None) -> None:
        self._cursor = cursor
        self._channel = channel

    async def next(
        self,
        kind: str | Iterable[str] | None = None,
        *,
        predicate: Callable[[ChannelEvent], bool] | None = None,
        timeout: float = 5.0,
    ) -> ChannelEvent:
        """The next event after the watcher's position (optionally of ``kind`` and matching)."""
        kinds = {kind} if isinstance(kind, str) else set(kind) if kind is not None else None

        def wanted(event: ChannelEvent) -> bool:
            if self._channel is not None and event.message.channel is not self._channel:
                return False
            if kinds is not None and event.kind not in kinds:
                return False
            return predicate is None or predicate(event)

        where = f"in #{self._channel.name}" if self._channel else "in any channel"
        return await self._cursor.next(
            wanted, timeout=timeout, what=f"a message {kinds or 'event'} {where}"
        )

    def pending(self) -> list[ChannelEvent]:
        return [
            e
            for e in self._cursor.pending()
            if self._channel is None or e.message.channel is self._channel
        ]


def _json(data: Any, status: int = 200, headers: Mapping[str, str] | None = None) -> web.Response:
    # Exactly "application/json": discord.py compares the header verbatim and treats
    # "application/json; charset=utf-8" (aiohttp's default for json_response) as text.
    return web.Response(
        body=json.dumps(data).encode(),
        status=status,
        headers={"Content-Type": "application/json", **(headers or {})},
    )


def _error(status: int, code: int, message: str, errors: FormErrors | None = None) -> web.Response:
    body: dict[str, Any] = {"message": message, "code": code}
    if errors:
        body["errors"] = errors.tree
    return _json(body, status)


def _no_content() -> web.Response:
    # No Content-Type at all: discord.py would try to JSON-decode an empty application/json body.
    return web.Response(status=204)


_DEFAULT_FAULT = {
    400: (50035, "Invalid Form Body"),
    401: (0, "401: Unauthorized"),
    403: (50013, "Missing Permissions"),
    404: (10062, "Unknown interaction"),
    500: (0, "500: Internal Server Error"),
    502: (0, "502: Bad Gateway"),
    503: (0, "503: Service Unavailable"),
    504: (0, "504: Gateway Timeout"),
}


class DiscordStandIn:
    """A fake Discord (REST + gateway) for the real discord.py, plus helpers for tests.

    ``interaction_deadline``: a first response later than this many seconds after dispatch
    gets 404/10062 like on Discord (None disables). ``token_lifetime``: follow-ups and edits
    after this many seconds get 401/50027. ``allowed_privileged_intents``: IDENTIFY asking
    for other privileged intents is closed with 4014, as when they are off in the portal.
    ``token``: if set, REST and IDENTIFY demand exactly this bot token.
    """

    def __init__(
        self,
        *,
        bot_name: str = "Krigbot",
        token: str | None = None,
        shard_count: int = 1,
        interaction_deadline: float | None = 3.0,
        token_lifetime: float = 15 * 60.0,
        allowed_privileged_intents: int = PRIVILEGED_INTENTS,
        dispatch_message_events: bool = True,
        max_file_size: int = MAX_FILE_SIZE,
        host: str = "127.0.0.1",
        port: int = 0,
    ) -> None:
        self.host = host
        self.port = port
        self.token = token
        self.shard_count = shard_count
        self.interaction_deadline = interaction_deadline
        self.token_lifetime = token_lifetime
        self.allowed_privileged_intents = allowed_privileged_intents
        self.dispatch_message_events = dispatch_message_events
        self.max_file_size = max_file_size
        #: If True (run_bot sets it), an error logged by the bot ends any wait with BotCrashed.
        self.fail_fast_on_bot_errors = False

        self.snowflakes = SnowflakeGenerator()
        self.users: dict[int, User] = {}
        self.guilds: dict[int, Guild] = {}
        self.channels: dict[int, Channel] = {}
        self.roles: dict[int, Role] = {}
        self.messages_by_id: dict[int, Message] = {}
        self._dm_channels: dict[int, Channel] = {}
        self._uploads: dict[int, Attachment] = {}

        self.application_id = self.snowflakes.next()
        self.application_flags = 0
        # On Discord a bot's user id is its application id.
        self.bot_user = User(id=self.application_id, name=bot_name, bot=True)
        self.users[self.bot_user.id] = self.bot_user
        self.app_owner = self.add_user("app-owner")

        #: Synced commands: None -> global list, guild id -> that guild's list.
        self.commands: dict[int | None, list[dict[str, Any]]] = {}
        self.syncs: EventLog[SyncRecord] = EventLog(self.guard)
        self.requests: EventLog[RequestRecord] = EventLog(self.guard)
        self.unknown_requests: list[RequestRecord] = []
        self.internal_errors: list[str] = []
        self.interactions: dict[int, InteractionRecord] = {}
        self._by_token: dict[str, InteractionRecord] = {}
        self.interaction_log: EventLog[InteractionRecord] = EventLog(self.guard)
        self.channel_events: EventLog[ChannelEvent] = EventLog(self.guard)
        self.bot_errors: EventLog[logging.LogRecord] = EventLog()
        self.accepted_error_count = 0
        self.faults: list[Fault] = []
        self.delays: list[Delay] = []
        self._watched: set[asyncio.Task[Any]] = set()
        self.gateway = Gateway(self)
        self._runner: web.AppRunner | None = None

    # ================================================================ lifecycle

    async def __aenter__(self) -> Self:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def start(self) -> None:
        """Start serving on ``host`` (a free port unless one was given)."""
        app = web.Application(middlewares=[self._middleware], client_max_size=64 * 1024 * 1024)
        self._add_routes(app)
        self._runner = web.AppRunner(app, access_log=None, shutdown_timeout=1.0)
        await self._runner.setup()
        site = web.TCPSite(self._runner, self.host, self.port)
        await site.start()
        self.port = int(self._runner.addresses[0][1])
        log.debug("Discord stand-in listening on %s", self.url)

    async def close(self) -> None:
        """Close bot connections and stop serving."""
        if self._runner is None:
            return
        await self.gateway.close()
        await self._runner.cleanup()
        self._runner = None

    @property
    def url(self) -> str:
        """``http://127.0.0.1:PORT`` (what ``KRIG_TEST_DISCORD_URL`` should be)."""
        return f"http://{self.host}:{self.port}"

    @property
    def api_base(self) -> str:
        """The value for ``discord.http.Route.BASE``."""
        return self.url + API_PREFIX

    @property
    def gateway_url(self) -> str:
        """The websocket URL for ``DiscordWebSocket.DEFAULT_GATEWAY``."""
        return f"ws://{self.host}:{self.port}/gateway"

    def subprocess_env(self, base: Mapping[str, str] | None = None) -> dict[str, str]:
        """Environment for a bot process: sitecustomize on PYTHONPATH and KRIG_TEST_DISCORD_URL."""
        env = dict(os.environ if base is None else base)
        parts = [str(SITECUSTOMIZE_DIR), *filter(None, env.get("PYTHONPATH", "").split(os.pathsep))]
        env["PYTHONPATH"] = os.pathsep.join(parts)
        env["KRIG_TEST_DISCORD_URL"] = self.url
        return env

    def token_ok(self, header_or_token: str | None) -> bool:
        if header_or_token is None:
            return False
        token = header_or_token.removeprefix("Bot ")
        return bool(token) and (self.token is None or token == self.token)

    # ================================================================ waiting and crash guard

    def watch_task(self, task: asyncio.Task[Any]) -> None:
        """Make every wait on the stand-in fail fast with :class:`BotCrashed` if ``task`` ends."""
        self._watched.add(task)

    def accept_bot_errors(self) -> list[logging.LogRecord]:
        """Mark the errors the bot logged so far as expected, so ``run_bot`` does not fail on them.

        Returns the newly accepted records, for assertions.
        """
        accepted = self.bot_errors.items[self.accepted_error_count :]
        self.accepted_error_count = len(self.bot_errors)
        return accepted

    def unwatch_task(self, task: asyncio.Task[Any]) -> None:
        self._watched.discard(task)

    async def guard(self, future: asyncio.Future[int], timeout: float, what: str) -> int:
        """Wait for ``future``; stop early if a watched bot task ends or the bot logs an error."""
        watched = set(self._watched)
        waiters: set[asyncio.Future[Any]] = {future, *watched}
        error_future: asyncio.Future[int] | None = None
        if self.fail_fast_on_bot_errors:
            error_future = self.bot_errors.future(len(self.bot_errors), lambda _r: True)
            waiters.add(error_future)
        try:
            done, _pending = await asyncio.wait(
                waiters, timeout=timeout, return_when=asyncio.FIRST_COMPLETED
            )
        finally:
            if error_future is not None and not error_future.done():
                error_future.cancel()
        if future in done:
            return future.result()
        for task in watched:
            if task in done:
                exc = None if task.cancelled() else task.exception()
                raise BotCrashed(f"the bot task ended while waiting for {what}: {exc!r}") from exc
        if error_future is not None and error_future in done:
            record = self.bot_errors.items[error_future.result()]
            raise BotCrashed(
                f"the bot logged an error while the test waited for {what}:\n{format_log(record)}"
            )
        raise StandInTimeout(f"timed out after {timeout}s waiting for {what}\n{self.diagnostics()}")

    def diagnostics(self) -> str:
        """A summary of recent traffic, for failure messages."""
        lines = ["recent requests: " + ", ".join(repr(r) for r in self.requests.items[-8:])]
        if self.unknown_requests:
            lines.append(f"unknown routes hit: {self.unknown_requests}")
        if self.internal_errors:
            lines.append("stand-in internal errors:\n" + "\n".join(self.internal_errors))
        if self.bot_errors.items:
            lines.append(
                "bot errors:\n" + "\n".join(format_log(r) for r in self.bot_errors.items[-3:])
            )
        sessions = self.gateway.active_sessions()
        lines.append(
            f"gateway sessions: {[(s.id[:8], s.shard, s.connection is not None) for s in sessions]}"
        )
        return "\n".join(lines)

    # ================================================================ world

    def add_user(
        self,
        name: str,
        display_name: str | None = None,
        *,
        bot: bool = False,
        locale: str = "en-US",
    ) -> User:
        """Create a user. ``locale`` is what their client sends in interactions by default."""
        user = User(
            self.snowflakes.next(), name, display_name, bot=bot, locale=normalize_locale(locale)
        )
        self.users[user.id] = user
        return user

    def add_guild(
        self,
        name: str = "Test Guild",
        *,
        locale: str = "en-US",
        owner: User | None = None,
        bot_permissions: PermissionsLike = DEFAULT_BOT_PERMISSIONS,
        everyone_permissions: PermissionsLike = DEFAULT_EVERYONE_PERMISSIONS,
    ) -> Guild:
        """Create a guild the bot is in: @everyone, the bot's managed role, the owner and the bot.

        ``locale`` becomes ``preferred_locale``/``guild_locale`` ("nb" is mapped to Discord's "no").
        If the bot is connected it receives GUILD_CREATE (``on_guild_join``).
        """
        gid = self.snowflakes.next()
        if owner is None:
            owner = self.add_user(f"owner-of-{name}".replace(" ", "-").lower())
        guild = Guild(gid, name, normalize_locale(locale), owner)
        everyone = Role(gid, guild, "@everyone", permission_value(everyone_permissions), position=0)
        bot_role = Role(
            self.snowflakes.next(),
            guild,
            self.bot_user.name,
            permission_value(bot_permissions),
            position=1,
            managed=True,
            bot_id=self.bot_user.id,
        )
        guild.roles.extend([everyone, bot_role])
        self.roles[everyone.id] = everyone
        self.roles[bot_role.id] = bot_role
        self.guilds[gid] = guild
        guild.members[owner.id] = Member(owner, guild, [everyone])
        guild.members[self.bot_user.id] = Member(self.bot_user, guild, [everyone, bot_role])
        session = self.gateway.session_for(gid)
        if session is not None:
            session.dispatch("GUILD_CREATE", self.guild_create_json(guild, session))
        return guild

    def add_role(
        self,
        guild: Guild,
        name: str,
        permissions: PermissionsLike = 0,
        *,
        color: int = 0,
        mentionable: bool = False,
    ) -> Role:
        """Create a role, e.g. ``add_role(g, "Moderator", ["manage_messages"])``."""
        role = Role(
            self.snowflakes.next(),
            guild,
            name,
            permission_value(permissions),
            position=len(guild.roles),
            color=color,
            mentionable=mentionable,
        )
        guild.roles.append(role)
        self.roles[role.id] = role
        self.gateway.dispatch(
            "GUILD_ROLE_CREATE",
            {"guild_id": str(guild.id), "role": role.to_json()},
            guild_id=guild.id,
        )
        return role

    def add_member(
        self, guild: Guild, user: User, *, roles: Sequence[Role] = (), nick: str | None = None
    ) -> Member:
        """Make ``user`` a member of ``guild`` with extra ``roles`` (everyone gets @everyone)."""
        member = Member(user, guild, [guild.everyone, *roles], nick=nick)
        guild.members[user.id] = member
        self.gateway.dispatch(
            "GUILD_MEMBER_ADD",
            None,
            guild_id=guild.id,
            intent=GUILD_MEMBERS,
            build=lambda _s: member.to_json() | {"guild_id": str(guild.id)},
        )
        return member

    def set_roles(self, member: Member, roles: Sequence[Role]) -> None:
        """Replace a member's roles (besides @everyone) and tell the bot (GUILD_MEMBER_UPDATE)."""
        member.roles = [member.guild.everyone, *roles]
        self.gateway.dispatch(
            "GUILD_MEMBER_UPDATE",
            None,
            guild_id=member.guild.id,
            intent=GUILD_MEMBERS,
            build=lambda _s: member.to_json() | {"guild_id": str(member.guild.id)},
        )

    def add_channel(
        self,
        guild: Guild,
        name: str = "general",
        *,
        topic: str | None = None,
        overwrites: Mapping[Role | User | Member, tuple[PermissionsLike, PermissionsLike]]
        | None = None,
    ) -> Channel:
        """Create a text channel; ``overwrites`` maps a role/user to ``(allow, deny)``."""
        channel = Channel(
            self.snowflakes.next(), name, 0, guild, position=len(guild.channels), topic=topic
        )
        if overwrites:
            channel.overwrites = overwrites_from(guild, overwrites)
        guild.channels.append(channel)
        self.channels[channel.id] = channel
        self.gateway.dispatch("CHANNEL_CREATE", channel.to_json(), guild_id=guild.id)
        return channel

    def set_overwrite(
        self,
        channel: Channel,
        target: Role | User | Member,
        *,
        allow: PermissionsLike = 0,
        deny: PermissionsLike = 0,
    ) -> None:
        """Set a permission overwrite on ``channel`` and tell the bot (CHANNEL_UPDATE)."""
        kind = 0 if isinstance(target, Role) else 1
        channel.overwrites[target.id] = Overwrite(
            target.id, kind, permission_value(allow), permission_value(deny)
        )
        if channel.guild is not None:
            self.gateway.dispatch("CHANNEL_UPDATE", channel.to_json(), guild_id=channel.guild.id)

    def dm_channel(self, user: User) -> Channel:
        """The DM channel between the bot and ``user`` (created on first use)."""
        channel = self._dm_channels.get(user.id)
        if channel is None:
            channel = Channel(self.snowflakes.next(), f"dm-{user.name}", 1, None, recipient=user)
            self._dm_channels[user.id] = channel
            self.channels[channel.id] = channel
        return channel

    def guild_create_json(self, guild: Guild, session: Session) -> dict[str, Any]:
        """GUILD_CREATE as this session gets it: all members only with the GUILD_MEMBERS intent."""
        if session.has_intent(GUILD_MEMBERS):
            members: list[Member] | None = None
        else:
            # Without the intent Discord only sends the bot's own member (and voice members).
            members = [m for m in guild.members.values() if m.user.id == self.bot_user.id]
        return guild.to_json(members=members)

    # ================================================================ synced commands

    def synced_commands(self, guild: Guild | None = None) -> list[dict[str, Any]]:
        """The commands the bot last synced globally (or for ``guild``), as Discord stored them."""
        return list(self.commands.get(guild.id if guild else None, []))

    def synced_command(
        self, name: str, guild: Guild | None = None, *, type: int = CHAT_INPUT
    ) -> dict[str, Any]:
        """One synced command by name; ``KeyError`` listing the synced names if absent."""
        commands = self.synced_commands(guild)
        for cmd in commands:
            if cmd["name"] == name and int(cmd.get("type", 1)) == type:
                return cmd
        raise KeyError(f"no synced command {name!r}; synced: {[c['name'] for c in commands]}")

    async def wait_for_sync(self, *, after: int = 0, timeout: float = 10.0) -> SyncRecord:
        """Wait for a command sync (the first one at index ``after`` or later)."""
        return await self.syncs.wait(start=after, timeout=timeout, what="a command sync")

    # ================================================================ gateway control

    @property
    def gateway_events(self) -> EventLog[GatewayEvent]:
        """Every IDENTIFY, RESUME, READY, close... on the gateway, awaitable."""
        return self.gateway.events

    async def wait_for_ready(self, *, after: int = 0, timeout: float = 10.0) -> GatewayEvent:
        """Wait until a session is IDENTIFYed and sent READY + GUILD_CREATE (index >= ``after``)."""
        return await self.gateway.events.wait(
            lambda e: e.kind == "ready",
            start=after,
            timeout=timeout,
            what="a gateway IDENTIFY/READY",
        )

    async def drop_gateway(self, *, code: int = 4000, invalidate: bool = False) -> int:
        """Close the bot's gateway connection(s): it resumes, or with ``invalidate`` re-IDENTIFYs.

        Note discord.py sleeps 5 s before any IDENTIFY that is not its first
        (``Client.before_identify_hook``); override that hook in test bots that re-identify.
        """
        return await self.gateway.drop(code=code, invalidate=invalidate)

    @contextlib.asynccontextmanager
    async def gateway_away(self) -> AsyncIterator[None]:
        """Drop the bot's gateway connections and refuse new ones until the block ends."""
        self.gateway.refusing = True
        try:
            await self.gateway.drop()
            yield
        finally:
            self.gateway.refusing = False

    async def send_reconnect(self) -> None:
        """Ask the bot to reconnect and resume (gateway op 7)."""
        await self.gateway.send_reconnect()

    # ================================================================ faults

    def fail_next(
        self,
        method: str,
        path_regex: str,
        *,
        status: int = 429,
        times: int = 1,
        retry_after: float = 0.05,
        code: int | None = None,
        message: str | None = None,
        is_global: bool = False,
        via: bool = True,
        body: Any = None,
    ) -> Fault:
        """Make the next ``times`` requests matching ``method`` ("*" = any) and ``path_regex`` fail.

        ``path_regex`` is searched in the path below ``/api/v10`` (e.g. ``r"/callback$"``).
        429s carry ``Via`` (unless ``via=False``, which discord.py treats as a Cloudflare ban),
        ``Retry-After`` and ``X-RateLimit-*`` headers and a ``retry_after`` body. 404 defaults to
        code 10062 "Unknown interaction". Faults are checked before the request is processed, so
        a failed interaction callback leaves the interaction unacknowledged.
        """
        fault = Fault(
            method.upper(),
            re.compile(path_regex),
            status,
            times,
            retry_after,
            code,
            message,
            is_global,
            via,
            body,
        )
        self.faults.append(fault)
        return fault

    def delay(
        self, method: str, path_regex: str, seconds: float, *, times: int | None = None
    ) -> Delay:
        """Add ``seconds`` of latency to matching requests (all of them, or the next ``times``)."""
        delay = Delay(method.upper(), re.compile(path_regex), seconds, times)
        self.delays.append(delay)
        return delay

    def clear_faults(self) -> None:
        """Remove every pending fault and delay."""
        self.faults.clear()
        self.delays.clear()

    def requests_matching(self, method: str, path_regex: str) -> list[RequestRecord]:
        """Recorded requests with ``method`` ("*" = any) whose path matches ``path_regex``."""
        pattern = re.compile(path_regex)
        return [
            r for r in self.requests.items if method in ("*", r.method) and pattern.search(r.path)
        ]

    # ================================================================ messages

    def messages(
        self, channel: Channel, *, include_ephemeral: bool = True, include_deleted: bool = False
    ) -> list[Message]:
        """Messages in ``channel`` in creation order (with ephemeral ones unless told otherwise)."""
        return [
            m
            for m in channel.messages
            if (include_deleted or not m.deleted) and (include_ephemeral or not m.ephemeral)
        ]

    def message(self, message_id: int) -> Message:
        """A stored message by id (``KeyError`` if the bot never made it)."""
        return self.messages_by_id[message_id]

    def watch(self, channel: Channel | None = None) -> MessageWatcher:
        """Start watching message events in ``channel`` (None = everywhere) from *now*.

        Create the watcher before triggering the action, then ``await watcher.next("edit")``.
        """
        return MessageWatcher(self.channel_events.cursor(), channel)

    async def next_message(
        self,
        channel: Channel | None,
        *,
        kinds: Iterable[str] = ("create", "edit"),
        predicate: Callable[[ChannelEvent], bool] | None = None,
        timeout: float = 5.0,
    ) -> ChannelEvent:
        """Wait for the next message creation/edit in ``channel`` happening after this call."""
        return await self.watch(channel).next(kinds, predicate=predicate, timeout=timeout)

    def user_message(self, channel: Channel, user: User, content: str) -> Message:
        """A message posted by a user (not the bot); the bot receives MESSAGE_CREATE."""
        msg = Message(self.snowflakes.next(), channel, user, content=content)
        msg.mentions, msg.mention_role_ids, msg.mention_everyone = compute_mentions(
            content, None, None, users=self.users, reply_author=None
        )
        self._store_new(msg)
        return msg

    # ================================================================ interactions: public API

    async def slash(
        self,
        command: str,
        *,
        user: User | Member,
        channel: Channel | None = None,
        options: Mapping[str, Any] | None = None,
        locale: str | None = None,
        enforce_permissions: bool = True,
        app_permissions: PermissionsLike | None = None,
        member_permissions: PermissionsLike | None = None,
    ) -> InteractionRecord:
        """Run a slash command as the Discord client would, and return its record.

        ``command`` is "name [group] [subcommand]" (default or ``locale``-localized names) and
        must exist in what the bot synced (guild commands of the channel's guild first, then
        global). ``options`` maps option names to values: str/int/float/bool, stand-in
        ``User``/``Member``/``Channel``/``Role`` objects, or :class:`Upload` for attachments.
        Choices may be given by value or by (localized) name. ``channel=None`` means a DM.
        Raises :class:`UnknownCommandError`/:class:`OptionError`/:class:`CommandNotAvailableError`
        for anything the real client would not let the user send.
        """
        account = self._user_of(user)
        channel = channel if channel is not None else self.dm_channel(account)
        loc = normalize_locale(locale or account.locale)
        resolved_cmd = self._find(command, CHAT_INPUT, channel, loc)
        self._check_available(resolved_cmd, account, channel, enforce_permissions)
        opts, resolved = build_options(
            resolved_cmd, options or {}, locale=loc, resolve_value=self._value_resolver(channel)
        )
        data = self._command_data(resolved_cmd, opts, resolved)
        return self._dispatch_interaction(
            APPLICATION_COMMAND,
            data,
            account,
            channel,
            loc,
            app_permissions=app_permissions,
            member_permissions=member_permissions,
        )

    async def slash_raw(
        self,
        command: str,
        *,
        user: User | Member,
        channel: Channel | None = None,
        options: list[dict[str, Any]] | None = None,
        resolved: dict[str, Any] | None = None,
        locale: str | None = None,
        command_id: int | None = None,
        guild_command: bool | None = None,
    ) -> InteractionRecord:
        """Send a command interaction with ``data.options`` exactly as given (no checks at all).

        For fuzzing: wrong option types, unknown names, missing required options. ``command``
        is the top-level name; if it was synced its id/guild are used unless overridden.
        """
        account = self._user_of(user)
        channel = channel if channel is not None else self.dm_channel(account)
        loc = normalize_locale(locale) if locale else account.locale
        cmd_id, guild_id = command_id, None
        with contextlib.suppress(StandInError):
            found = self._find(command.split()[0], CHAT_INPUT, channel, loc, allow_group=True)
            cmd_id = cmd_id or int(found.command["id"])
            guild_id = found.guild_id
        if guild_command is not None:
            guild_id = channel.guild.id if guild_command and channel.guild else None
        data: dict[str, Any] = {
            "id": str(cmd_id or self.snowflakes.next()),
            "name": command.split()[0],
            "type": CHAT_INPUT,
            "options": options or [],
        }
        if resolved:
            data["resolved"] = resolved
        if guild_id is not None:
            data["guild_id"] = str(guild_id)
        return self._dispatch_interaction(APPLICATION_COMMAND, data, account, channel, loc)

    async def autocomplete(
        self,
        command: str,
        *,
        focused: str,
        value: Any,
        user: User | Member,
        channel: Channel | None = None,
        options: Mapping[str, Any] | None = None,
        locale: str | None = None,
    ) -> InteractionRecord:
        """Send an autocomplete interaction for option ``focused`` with the partial ``value`` typed.

        ``await rec.response()`` then has ``.choices``.
        """
        account = self._user_of(user)
        channel = channel if channel is not None else self.dm_channel(account)
        loc = normalize_locale(locale or account.locale)
        resolved_cmd = self._find(command, CHAT_INPUT, channel, loc)
        values = {**(options or {}), focused: value}
        opts, resolved = build_options(
            resolved_cmd,
            values,
            locale=loc,
            resolve_value=self._value_resolver(channel),
            focused=self._canonical_option(resolved_cmd, focused, loc),
        )
        data = self._command_data(resolved_cmd, opts, resolved)
        return self._dispatch_interaction(
            APPLICATION_COMMAND_AUTOCOMPLETE, data, account, channel, loc
        )

    async def context_menu(
        self,
        name: str,
        *,
        target: User | Member | Message,
        user: User | Member,
        channel: Channel | None = None,
        locale: str | None = None,
        enforce_permissions: bool = True,
    ) -> InteractionRecord:
        """Use a user (target is a User/Member) or message (target is a Message) context menu."""
        account = self._user_of(user)
        kind = MESSAGE_COMMAND if isinstance(target, Message) else USER_COMMAND
        if channel is None:
            channel = target.channel if isinstance(target, Message) else self.dm_channel(account)
        loc = normalize_locale(locale or account.locale)
        resolved_cmd = self._find(name, kind, channel, loc)
        self._check_available(resolved_cmd, account, channel, enforce_permissions)
        resolved: dict[str, dict[str, Any]]
        if isinstance(target, Message):
            target_id = target.id
            resolved = {"messages": {str(target.id): message_target_json(target)}}
        else:
            target_user = self._user_of(target)
            target_id = target_user.id
            resolved = self._value_resolver(channel)(USER, target_user, {})[1]
        data = self._command_data(resolved_cmd, [], resolved)
        data["target_id"] = str(target_id)
        return self._dispatch_interaction(APPLICATION_COMMAND, data, account, channel, loc)

    async def click(
        self,
        message: Message | int,
        custom_id: str,
        *,
        user: User | Member,
        locale: str | None = None,
    ) -> InteractionRecord:
        """Press the button ``custom_id`` on ``message`` (a stand-in Message or its id).

        Fails like the client would if the message is gone, the button does not exist, is
        disabled or is a link, or if the message is ephemeral and belongs to someone else.
        """
        msg = self._clickable(message, user)
        comp = msg.component(custom_id)
        if comp.get("type") != 2:
            raise StandInError(
                f"{custom_id!r} is not a button (component type {comp.get('type')}); use select()"
            )
        if comp.get("style") in (5, 6):
            raise StandInError(
                f"{custom_id!r} is a link/premium button; clicking it sends no interaction"
            )
        if comp.get("disabled"):
            raise StandInError(f"button {custom_id!r} is disabled")
        data: dict[str, Any] = {"custom_id": custom_id, "component_type": 2}
        if isinstance(comp.get("id"), int):
            data["id"] = comp["id"]
        account = self._user_of(user)
        loc = normalize_locale(locale or account.locale)
        return self._dispatch_interaction(
            MESSAGE_COMPONENT, data, account, msg.channel, loc, message=msg
        )

    async def select(
        self,
        message: Message | int,
        custom_id: str,
        values: Sequence[Any],
        *,
        user: User | Member,
        locale: str | None = None,
    ) -> InteractionRecord:
        """Choose ``values`` in the select menu ``custom_id``.

        String selects take option values; user/role/channel/mentionable selects take stand-in
        objects (sent as ids with ``resolved`` data).
        """
        msg = self._clickable(message, user)
        comp = msg.component(custom_id)
        kind = comp.get("type")
        if kind not in (3, 5, 6, 7, 8):
            raise StandInError(f"{custom_id!r} is not a select menu (component type {kind})")
        if comp.get("disabled"):
            raise StandInError(f"select {custom_id!r} is disabled")
        low, high = comp.get("min_values", 1), comp.get("max_values", 1)
        if not low <= len(values) <= high:
            raise StandInError(
                f"select {custom_id!r} takes {low}..{high} values, got {len(values)}"
            )
        data: dict[str, Any] = {"custom_id": custom_id, "component_type": kind}
        if isinstance(comp.get("id"), int):
            data["id"] = comp["id"]
        if kind == 3:
            offered = [o.get("value") for o in comp.get("options") or []]
            bad = [v for v in values if v not in offered]
            if bad:
                raise StandInError(
                    f"select {custom_id!r} offers {offered}; {bad} are not among them"
                )
            data["values"] = list(values)
        else:
            resolver = self._value_resolver(msg.channel)
            resolved: dict[str, dict[str, Any]] = {}
            ids = []
            for value in values:
                opt_type = {5: USER, 6: ROLE, 7: MENTIONABLE, 8: CHANNEL}[kind]
                wire, fragment = resolver(opt_type, value, {})
                ids.append(wire)
                for key, items in fragment.items():
                    resolved.setdefault(key, {}).update(items)
            data["values"] = ids
            data["resolved"] = resolved
        account = self._user_of(user)
        loc = normalize_locale(locale or account.locale)
        return self._dispatch_interaction(
            MESSAGE_COMPONENT, data, account, msg.channel, loc, message=msg
        )

    async def submit_modal(
        self,
        record: InteractionRecord,
        values: Mapping[str, str | Sequence[str]],
        *,
        user: User | Member | None = None,
        locale: str | None = None,
    ) -> InteractionRecord:
        """Fill in and submit the modal the bot opened in answer to ``record``.

        ``values`` maps text-input custom_ids to text (select custom_ids to lists of values).
        Required inputs left out raise :class:`StandInError`.
        """
        if not record.callbacks.items or record.callbacks.items[0].type != MODAL:
            raise StandInError("the bot did not answer this interaction with a modal")
        modal = record.callbacks.items[0].data
        remaining = dict(values)

        def fill(comp: dict[str, Any]) -> dict[str, Any] | None:
            kind = comp.get("type")
            if kind == 1:
                inner = [
                    c for c in (fill(x) for x in comp.get("components") or []) if c is not None
                ]
                return {"type": 1, "id": comp.get("id"), "components": inner}
            if kind == 18:
                inner_comp = fill(comp["component"])
                return {"type": 18, "id": comp.get("id"), "component": inner_comp}
            custom_id = comp.get("custom_id")
            if custom_id is None:
                return {"type": kind, "id": comp.get("id")}
            given = remaining.pop(custom_id, None)
            if kind == 4:
                text = "" if given is None else str(given)
                if comp.get("required", True) and not text:
                    raise StandInError(f"modal input {custom_id!r} is required")
                return {"type": 4, "id": comp.get("id"), "custom_id": custom_id, "value": text}
            chosen = [] if given is None else [given] if isinstance(given, str) else list(given)
            return {"type": kind, "id": comp.get("id"), "custom_id": custom_id, "values": chosen}

        components = [c for c in (fill(c) for c in modal.get("components") or []) if c is not None]
        if remaining:
            raise StandInError(f"the modal has no inputs {sorted(remaining)}")
        data = {"custom_id": modal.get("custom_id"), "components": components}
        account = self._user_of(user) if user is not None else record.user
        loc = normalize_locale(locale) if locale else record.locale
        channel = record.channel or self.dm_channel(account)
        return self._dispatch_interaction(
            MODAL_SUBMIT, data, account, channel, loc, message=record.source_message
        )

    async def send_interaction(
        self,
        type: int,
        data: dict[str, Any],
        *,
        user: User | Member,
        channel: Channel | None = None,
        locale: str | None = None,
        message: Message | None = None,
        extra: Mapping[str, Any] | None = None,
    ) -> InteractionRecord:
        """The raw escape hatch: dispatch an interaction of ``type`` with ``data`` verbatim.

        ``extra`` is merged into the top-level INTERACTION_CREATE payload last (a key set to
        None is removed), e.g. to drop ``member`` or fake ``guild_locale``.
        """
        account = self._user_of(user)
        channel = channel if channel is not None else self.dm_channel(account)
        loc = normalize_locale(locale) if locale else account.locale
        return self._dispatch_interaction(
            type, data, account, channel, loc, message=message, extra=extra
        )

    def interaction(self, interaction_id: int) -> InteractionRecord:
        """The record of a dispatched interaction by id."""
        return self.interactions[interaction_id]

    # ================================================================ interactions: building

    def _user_of(self, user: User | Member) -> User:
        return user.user if isinstance(user, Member) else user

    def _find(
        self, path: str, kind: int, channel: Channel, locale: str, *, allow_group: bool = False
    ) -> ResolvedCommand:
        candidates: list[tuple[int | None, Sequence[dict[str, Any]]]] = []
        if channel.guild is not None:
            candidates.append((channel.guild.id, self.commands.get(channel.guild.id, [])))
        candidates.append((None, self.commands.get(None, [])))
        if allow_group:
            for guild_id, cmds in candidates:
                for cmd in cmds:
                    if cmd["name"] == path and int(cmd.get("type", 1)) == kind:
                        return ResolvedCommand(cmd, guild_id, [])
        return find_command(candidates, path, kind=kind, locale=locale)

    def _canonical_option(self, resolved: ResolvedCommand, name: str, locale: str) -> str:
        for opt in resolved.leaf.get("options") or []:
            if name == opt["name"] or name == (opt.get("name_localizations") or {}).get(locale):
                return str(opt["name"])
        return name

    def _check_available(
        self, resolved: ResolvedCommand, user: User, channel: Channel, enforce_permissions: bool
    ) -> None:
        cmd = resolved.command
        contexts = cmd.get("contexts")
        guild = channel.guild
        if guild is None:
            if (
                resolved.guild_id is not None
                or cmd.get("dm_permission") is False
                or (contexts is not None and 1 not in contexts)
            ):
                raise CommandNotAvailableError(f"{cmd['name']!r} is not available in DMs")
            return
        if contexts is not None and 0 not in contexts:
            raise CommandNotAvailableError(
                f"{cmd['name']!r} is not available in guilds (contexts={contexts})"
            )
        member = guild.members.get(user.id)
        if member is None:
            raise StandInError(
                f"{user.name!r} is not a member of {guild.name!r}; add_member() first"
            )
        if not enforce_permissions:
            return
        perms = member.permissions_in(channel)
        if not perms & _USE_APPLICATION_COMMANDS:
            raise CommandNotAvailableError(
                f"{user.name!r} lacks Use Application Commands in #{channel.name}"
            )
        required = cmd.get("default_member_permissions")
        if required not in (None, ""):
            needed = int(required)
            if perms & needed != needed:
                raise CommandNotAvailableError(
                    f"Discord hides {cmd['name']!r} from {user.name!r}: "
                    f"default_member_permissions={needed} but they have {perms} in "
                    f"#{channel.name} (pass enforce_permissions=False to force)"
                )

    def _value_resolver(
        self, channel: Channel
    ) -> Callable[[int, Any, Mapping[str, Any]], tuple[Any, dict[str, dict[str, Any]]]]:
        guild = channel.guild

        def resolve(
            kind: int, value: Any, _spec: Mapping[str, Any]
        ) -> tuple[Any, dict[str, dict[str, Any]]]:
            if isinstance(value, Member):
                value = value.user
            if isinstance(value, User):
                fragment: dict[str, dict[str, Any]] = {"users": {str(value.id): value.to_json()}}
                member = guild.members.get(value.id) if guild else None
                if member is not None:
                    fragment["members"] = {
                        str(value.id): member.to_json(with_user=False)
                        | {"permissions": str(member.permissions_in(channel))}
                    }
                return str(value.id), fragment
            if isinstance(value, Role):
                return str(value.id), {"roles": {str(value.id): value.to_json()}}
            if isinstance(value, Channel):
                info = {"id": str(value.id), "name": value.name, "type": value.type, "flags": 0}
                if value.guild is not None:
                    info["guild_id"] = str(value.guild.id)
                    bot = value.guild.members.get(self.bot_user.id)
                    info["permissions"] = str(value.permissions_for(bot) if bot else 0)
                return str(value.id), {"channels": {str(value.id): info}}
            if isinstance(value, Upload) and kind == ATTACHMENT:
                att = self._make_attachment(channel, value.filename, value.data, value.content_type)
                return str(att.id), {
                    "attachments": {str(att.id): att.to_json() | {"ephemeral": True}}
                }
            raise StandInError(f"cannot send {value!r} as an option/select value")

        return resolve

    def _command_data(
        self,
        resolved: ResolvedCommand,
        options: list[dict[str, Any]],
        resolved_data: dict[str, Any],
    ) -> dict[str, Any]:
        cmd = resolved.command
        data: dict[str, Any] = {
            "id": str(cmd["id"]),
            "name": cmd["name"],
            "type": int(cmd.get("type", CHAT_INPUT)),
        }
        if options:
            data["options"] = options
        if resolved_data:
            data["resolved"] = resolved_data
        if resolved.guild_id is not None:
            # discord.py looks guild commands up by data.guild_id; global ones have none.
            data["guild_id"] = str(resolved.guild_id)
        return data

    def _clickable(self, message: Message | int, user: User | Member) -> Message:
        msg = self.messages_by_id.get(message) if isinstance(message, int) else message
        if msg is None:
            raise StandInError(f"no message {message} in the stand-in")
        if msg.deleted:
            raise StandInError(f"message {msg.id} was deleted")
        if msg.ephemeral and msg.interaction_metadata is not None:
            owner = int(msg.interaction_metadata["user"]["id"])
            if owner != self._user_of(user).id:
                raise StandInError(
                    f"message {msg.id} is ephemeral and only visible to user {owner}"
                )
        return msg

    def _dispatch_interaction(
        self,
        itype: int,
        data: dict[str, Any],
        user: User,
        channel: Channel,
        locale: str,
        *,
        message: Message | None = None,
        app_permissions: PermissionsLike | None = None,
        member_permissions: PermissionsLike | None = None,
        extra: Mapping[str, Any] | None = None,
    ) -> InteractionRecord:
        guild = channel.guild
        session = self.gateway.session_for(guild.id if guild else None)
        if session is None:
            raise NotConnectedError(
                "no bot gateway session could receive this interaction (has the bot IDENTIFYed?)\n"
                + self.diagnostics()
            )
        iid = self.snowflakes.next()
        token = "standin-" + secrets.token_urlsafe(32)
        payload: dict[str, Any] = {
            "id": str(iid),
            "application_id": str(self.application_id),
            "type": itype,
            "data": data,
            "token": token,
            "version": 1,
            "locale": locale,
            "channel_id": str(channel.id),
            "channel": channel.to_json(),
            "entitlements": [],
            "entitlement_sku_ids": [],
            "attachment_size_limit": self.max_file_size,
        }
        if guild is not None:
            member = guild.members.get(user.id)
            if member is None:
                raise StandInError(
                    f"{user.name!r} is not a member of {guild.name!r}; add_member() first"
                )
            perms = (
                permission_value(member_permissions)
                if member_permissions is not None
                else member.permissions_in(channel)
            )
            bot_member = guild.members[self.bot_user.id]
            app_perms = (
                permission_value(app_permissions)
                if app_permissions is not None
                else channel.permissions_for(bot_member)
            )
            payload |= {
                "guild_id": str(guild.id),
                "guild": guild.partial_json(),
                "guild_locale": guild.locale,
                "member": member.to_json() | {"permissions": str(perms)},
                "app_permissions": str(app_perms),
                "context": 0,
                "authorizing_integration_owners": {"0": str(guild.id)},
            }
            payload["channel"]["permissions"] = str(perms)
        else:
            payload |= {
                "user": user.to_json(),
                "app_permissions": str(
                    permission_value(app_permissions)
                    if app_permissions is not None
                    else DEFAULT_BOT_PERMISSIONS
                ),
                "context": 1,
                "authorizing_integration_owners": {"0": "0"},
            }
        if message is not None:
            payload["message"] = message.to_json()
        for key, value in (extra or {}).items():
            if value is None:
                payload.pop(key, None)
            else:
                payload[key] = value
        record = InteractionRecord(
            id=iid,
            token=token,
            type=itype,
            payload=payload,
            user=user,
            channel=channel,
            guild=guild,
            locale=locale,
            dispatched_at=time.perf_counter(),
            guard=self.guard,
            source_message=message,
        )
        self.interactions[iid] = record
        self._by_token[token] = record
        self.interaction_log.append(record)
        session.dispatch("INTERACTION_CREATE", payload)
        return record

    # ================================================================ HTTP plumbing

    def _add_routes(self, app: web.Application) -> None:
        api = API_PREFIX
        r = app.router
        r.add_get("/gateway", self.gateway.handle)
        r.add_get(f"{api}/gateway", self._get_gateway)
        r.add_get(f"{api}/gateway/bot", self._get_gateway_bot)
        r.add_get(f"{api}/users/@me", self._get_me)
        r.add_post(f"{api}/users/@me/channels", self._create_dm)
        r.add_get(f"{api}/users/{{user_id:\\d+}}", self._get_user)
        r.add_get(f"{api}/oauth2/applications/@me", self._get_application)
        r.add_get(f"{api}/applications/@me", self._get_application)
        r.add_get(f"{api}/applications/{{app_id}}/commands", self._get_commands)
        r.add_put(f"{api}/applications/{{app_id}}/commands", self._put_commands)
        r.add_get(f"{api}/applications/{{app_id}}/guilds/{{guild_id}}/commands", self._get_commands)
        r.add_put(f"{api}/applications/{{app_id}}/guilds/{{guild_id}}/commands", self._put_commands)
        r.add_post(f"{api}/interactions/{{interaction_id}}/{{token}}/callback", self._callback)
        r.add_post(f"{api}/webhooks/{{app_id}}/{{token}}", self._webhook_execute)
        for method, handler in (
            ("GET", self._webhook_get),
            ("PATCH", self._webhook_edit),
            ("DELETE", self._webhook_delete),
        ):
            r.add_route(
                method, f"{api}/webhooks/{{app_id}}/{{token}}/messages/{{message_id}}", handler
            )
        r.add_get(f"{api}/channels/{{channel_id}}", self._get_channel)
        r.add_get(f"{api}/channels/{{channel_id}}/messages", self._list_messages)
        r.add_post(f"{api}/channels/{{channel_id}}/messages", self._channel_post)
        r.add_post(f"{api}/channels/{{channel_id}}/typing", self._typing)
        for method, handler in (
            ("GET", self._channel_get_message),
            ("PATCH", self._channel_edit),
            ("DELETE", self._channel_delete),
        ):
            r.add_route(method, f"{api}/channels/{{channel_id}}/messages/{{message_id}}", handler)
        for method in ("PUT", "DELETE"):
            r.add_route(
                method,
                f"{api}/channels/{{channel_id}}/messages/{{message_id}}/reactions/{{emoji}}/@me",
                self._reaction,
            )
        r.add_get(f"{api}/guilds/{{guild_id}}", self._get_guild)
        r.add_get(f"{api}/guilds/{{guild_id}}/channels", self._get_guild_channels)
        r.add_get(f"{api}/guilds/{{guild_id}}/roles", self._get_guild_roles)
        r.add_get(f"{api}/guilds/{{guild_id}}/members/{{user_id}}", self._get_member)
        r.add_get("/attachments/{channel_id}/{attachment_id}/{filename}", self._get_attachment)
        # Last: anything else is logged and answered 404 so a test notices the gap.
        r.add_route("*", "/{tail:.*}", self._unknown)

    @web.middleware
    async def _middleware(
        self, request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]
    ) -> web.StreamResponse:
        path = request.path
        rel = path[len(API_PREFIX) :] if path.startswith(API_PREFIX + "/") else path
        record = RequestRecord(request.method, rel, dict(request.query), time.perf_counter())
        # Kept on the request (not "the last record") because requests run concurrently.
        request[_RECORD_KEY] = record
        if path != "/gateway":
            self.requests.append(record)
        try:
            needs_auth = path.startswith(API_PREFIX + "/") and not rel.startswith(
                ("/interactions/", "/webhooks/", "/gateway")
            )
            if needs_auth and not self.token_ok(request.headers.get("Authorization")):
                response: web.StreamResponse = _error(401, 0, "401: Unauthorized")
            else:
                for delay in self.delays:
                    if delay.matches(request.method, rel):
                        if delay.times is not None:
                            delay.times -= 1
                        record.delayed += delay.seconds
                        await asyncio.sleep(delay.seconds)
                fault = next((f for f in self.faults if f.matches(request.method, rel)), None)
                if fault is not None:
                    fault.times -= 1
                    fault.hits.append(record)
                    record.fault = fault
                    response = self._fault_response(fault)
                else:
                    response = await handler(request)
        except web.HTTPException:
            raise
        except Exception as exc:
            text = f"{request.method} {rel}: {exc!r}\n{traceback.format_exc()}"
            self.internal_errors.append(text)
            log.error("stand-in internal error: %s", text)
            response = _error(400, 0, f"stand-in internal error: {exc!r}")
        record.status = response.status
        if path != "/gateway":
            self._ratelimit_headers(response, rel, request.method)
        return response

    def _ratelimit_headers(self, response: web.StreamResponse, rel: str, method: str) -> None:
        # Generous, realistic headers so discord.py's bucket code runs but never has to wait.
        if response.status == 429 or "X-RateLimit-Limit" in response.headers or response.prepared:
            return
        route = re.sub(r"\d{15,}", "{id}", rel)
        route = re.sub(r"/webhooks/\{id\}/[^/]+", "/webhooks/{id}/{token}", route)
        route = re.sub(r"/interactions/\{id\}/[^/]+", "/interactions/{id}/{token}", route)
        response.headers.update(
            {
                "X-RateLimit-Limit": "50",
                "X-RateLimit-Remaining": "49",
                "X-RateLimit-Reset": f"{time.time() + 1:.3f}",
                "X-RateLimit-Reset-After": "1.000",
                "X-RateLimit-Bucket": f"{abs(hash((method, route))):016x}",
            }
        )

    def _fault_response(self, fault: Fault) -> web.Response:
        if fault.status == 429:
            headers = {
                "Retry-After": str(max(1, math.ceil(fault.retry_after))),
                "X-RateLimit-Limit": "5",
                "X-RateLimit-Remaining": "0",
                "X-RateLimit-Reset": f"{time.time() + fault.retry_after:.3f}",
                "X-RateLimit-Reset-After": f"{fault.retry_after:.3f}",
                "X-RateLimit-Bucket": "standinfault",
                "X-RateLimit-Scope": "global" if fault.is_global else "user",
            }
            if fault.is_global:
                headers["X-RateLimit-Global"] = "true"
            if not fault.via:
                # What Cloudflare sends when it bans an IP: HTML, no Via header.
                return web.Response(
                    status=429,
                    text="<html>error code: 1015</html>",
                    content_type="text/html",
                    headers=headers,
                )
            # The Via header is how discord.py tells Discord's 429 from a Cloudflare ban.
            headers["Via"] = "1.1 google"
            body = (
                fault.body
                if fault.body is not None
                else {
                    "message": fault.message or "You are being rate limited.",
                    "retry_after": fault.retry_after,
                    "global": fault.is_global,
                    "code": fault.code or 0,
                }
            )
            return _json(body, 429, headers)
        default_code, default_message = _DEFAULT_FAULT.get(
            fault.status, (0, f"{fault.status}: error")
        )
        body = (
            fault.body
            if fault.body is not None
            else {
                "message": fault.message or default_message,
                "code": fault.code if fault.code is not None else default_code,
            }
        )
        return _json(body, fault.status)

    async def _unknown(self, request: web.Request) -> web.Response:
        self.unknown_requests.append(request[_RECORD_KEY])
        log.warning("stand-in: unknown route %s %s", request.method, request.path)
        return _error(
            404,
            0,
            f"404: Not Found (the stand-in does not implement {request.method} {request.path})",
        )

    async def _read_payload(
        self, request: web.Request
    ) -> tuple[dict[str, Any], list[UploadedFile]]:
        files: list[UploadedFile] = []
        if request.content_type == "multipart/form-data":
            form = await request.post()
            payload: dict[str, Any] = {}
            raw = form.get("payload_json")
            if isinstance(raw, str):
                payload = json.loads(raw)
            for key, value in form.items():
                match = re.fullmatch(r"files\[(\d+)\]", key)
                if match and isinstance(value, web.FileField):
                    files.append(
                        UploadedFile(
                            int(match.group(1)),
                            value.filename,
                            value.file.read(),
                            value.content_type,
                        )
                    )
        elif request.can_read_body:
            payload = await request.json()
        else:
            payload = {}
        request[_RECORD_KEY].json = payload
        return payload, files

    # ================================================================ REST: identity, gateway

    async def _get_gateway(self, request: web.Request) -> web.Response:
        return _json({"url": self.gateway_url})

    async def _get_gateway_bot(self, request: web.Request) -> web.Response:
        return _json(
            {
                "url": self.gateway_url,
                "shards": self.shard_count,
                "session_start_limit": {
                    "total": 1000,
                    "remaining": 999,
                    "reset_after": 14400000,
                    "max_concurrency": 1,
                },
            }
        )

    async def _get_me(self, request: web.Request) -> web.Response:
        return _json(
            self.bot_user.to_json() | {"verified": True, "mfa_enabled": False, "locale": "en-US"}
        )

    async def _get_user(self, request: web.Request) -> web.Response:
        user = self.users.get(int(request.match_info["user_id"]))
        if user is None:
            return _error(404, 10013, "Unknown User")
        return _json(user.to_json())

    async def _create_dm(self, request: web.Request) -> web.Response:
        payload, _ = await self._read_payload(request)
        user = self.users.get(int(payload.get("recipient_id", 0)))
        if user is None:
            return _error(400, 50035, "Invalid Form Body")
        return _json(self.dm_channel(user).to_json())

    async def _get_application(self, request: web.Request) -> web.Response:
        return _json(
            {
                "id": str(self.application_id),
                "name": self.bot_user.name,
                "icon": None,
                "description": "",
                "summary": "",
                "type": None,
                "bot_public": True,
                "bot_require_code_grant": False,
                "verify_key": "0" * 64,
                "flags": self.application_flags,
                "owner": self.app_owner.to_json(),
                "team": None,
                "bot": self.bot_user.to_json(),
                "rpc_origins": [],
                "tags": [],
                "redirect_uris": [],
                "interactions_endpoint_url": None,
                "approximate_guild_count": len(self.guilds),
                "integration_types_config": {"0": {}},
            }
        )

    # ================================================================ REST: commands

    def _check_app(self, request: web.Request) -> web.Response | None:
        if request.match_info.get("app_id") != str(self.application_id):
            return _error(404, 10002, "Unknown Application")
        return None

    def _guild_scope(self, request: web.Request) -> tuple[int | None, web.Response | None]:
        raw = request.match_info.get("guild_id")
        if raw is None:
            return None, None
        guild = self.guilds.get(int(raw)) if raw.isdigit() else None
        if guild is None:
            return None, _error(403, 50001, "Missing Access")
        return guild.id, None

    async def _get_commands(self, request: web.Request) -> web.Response:
        error = self._check_app(request)
        guild_id, scope_error = self._guild_scope(request)
        if error or scope_error:
            return error or scope_error  # type: ignore[return-value]
        return _json(self.commands.get(guild_id, []))

    async def _put_commands(self, request: web.Request) -> web.Response:
        error = self._check_app(request)
        guild_id, scope_error = self._guild_scope(request)
        if error or scope_error:
            return error or scope_error  # type: ignore[return-value]
        payload: Any = await request.json()
        request[_RECORD_KEY].json = payload
        errors = validate_sync(payload)
        if errors:
            return _error(400, 50035, "Invalid Form Body", errors)
        old = {(c["name"], int(c.get("type", 1))): c for c in self.commands.get(guild_id, [])}
        stored: list[dict[str, Any]] = []
        for cmd in payload:
            kind = int(cmd.get("type", CHAT_INPUT))
            previous = old.get((cmd["name"], kind))
            # Discord keeps a command's id across syncs as long as name and type stay the same.
            entry = json.loads(json.dumps(cmd)) | {
                "id": previous["id"] if previous else str(self.snowflakes.next()),
                "application_id": str(self.application_id),
                "version": str(self.snowflakes.next()),
                "type": kind,
                "description": cmd.get("description", ""),
                # Discord answers with the permission bit field as a string.
                "default_member_permissions": None
                if cmd.get("default_member_permissions") is None
                else str(cmd["default_member_permissions"]),
                "nsfw": bool(cmd.get("nsfw", False)),
            }
            if guild_id is not None:
                entry["guild_id"] = str(guild_id)
            stored.append(entry)
        self.commands[guild_id] = stored
        self.syncs.append(SyncRecord(guild_id, payload, time.perf_counter()))
        return _json(stored)

    # ================================================================ REST: interactions

    def _record_for(self, token: str) -> InteractionRecord | None:
        return self._by_token.get(token)

    async def _callback(self, request: web.Request) -> web.Response:
        received = time.perf_counter()
        record = self._record_for(request.match_info["token"])
        if record is None or str(record.id) != request.match_info["interaction_id"]:
            return _error(404, 10062, "Unknown interaction")
        payload, files = await self._read_payload(request)
        if record.acknowledged:
            record.rejected.append((400, 40060))
            return _error(400, 40060, "Interaction has already been acknowledged.")
        if (
            self.interaction_deadline is not None
            and received - record.dispatched_at > self.interaction_deadline
        ):
            # Discord forgets an interaction not answered within 3 seconds.
            record.rejected.append((404, 10062))
            return _error(404, 10062, "Unknown interaction")
        rtype = payload.get("type")
        data = payload.get("data") or {}
        if rtype not in _ALLOWED_CALLBACKS.get(record.type, set()):
            errors = FormErrors()
            errors.add(
                ("type",),
                "INTERACTION_CALLBACK_TYPE_INVALID",
                f"Callback type {rtype} is invalid for interaction type {record.type}",
            )
            return _error(400, 50035, "Invalid Form Body", errors)
        message: Message | None = None
        if rtype == CHANNEL_MESSAGE:
            assert record.channel is not None
            result = self._new_message(
                record.channel,
                self.bot_user,
                data,
                files,
                prefix=("data",),
                record=record,
                msg_type=20 if record.type == APPLICATION_COMMAND else 0,
            )
            if isinstance(result, web.Response):
                return result
            message = result
            record.original = message
        elif rtype == DEFERRED_CHANNEL_MESSAGE:
            assert record.channel is not None
            flags = LOADING | (int(data.get("flags") or 0) & EPHEMERAL)
            message = self._make_message(
                record.channel,
                self.bot_user,
                record=record,
                msg_type=20 if record.type == APPLICATION_COMMAND else 0,
                flags=flags,
            )
            self._store_new(message)
            record.original = message
        elif rtype in (DEFERRED_UPDATE_MESSAGE, UPDATE_MESSAGE):
            message = record.source_message
            if message is None:
                return _error(400, 50035, "Invalid Form Body")
            if rtype == UPDATE_MESSAGE:
                problem = self._edit_message(message, data, files, prefix=("data",))
                if problem is not None:
                    return problem
            record.original = message
        elif rtype == AUTOCOMPLETE_RESULT:
            if len(data.get("choices") or []) > 25:
                errors = FormErrors()
                errors.add(
                    ("data", "choices"), "BASE_TYPE_MAX_LENGTH", "Must be 25 or fewer in length."
                )
                return _error(400, 50035, "Invalid Form Body", errors)
        elif rtype == MODAL:
            errors = FormErrors()
            errors.max_length(("data", "title"), data.get("title"), 45)
            if not data.get("custom_id") or len(str(data.get("custom_id"))) > 100:
                errors.add(
                    ("data", "custom_id"),
                    "BASE_TYPE_BAD_LENGTH",
                    "Must be between 1 and 100 in length.",
                )
            if errors:
                return _error(400, 50035, "Invalid Form Body", errors)
        record.acknowledged = True
        response = InteractionResponse(
            type=int(rtype),
            data=data,
            files=[(f.filename, f.data) for f in files],
            dispatched_at=record.dispatched_at,
            received_at=received,
            message=message if rtype != DEFERRED_UPDATE_MESSAGE else None,
        )
        record.callbacks.append(response)
        if request.query.get("with_response") not in ("1", "true", "True"):
            return _no_content()
        # discord.py 2.7 always asks with_response=1 and reads interaction.response_message_id
        # (views are stored under it) and resource.message (InteractionCallbackResponse.resource).
        interaction_info: dict[str, Any] = {"id": str(record.id), "type": record.type}
        body: dict[str, Any] = {"interaction": interaction_info, "resource": {"type": rtype}}
        if message is not None and rtype != DEFERRED_UPDATE_MESSAGE:
            interaction_info |= {
                "response_message_id": str(message.id),
                "response_message_loading": bool(message.flags & LOADING),
                "response_message_ephemeral": message.ephemeral,
            }
            body["resource"]["message"] = message.to_json()
        return _json(body)

    def _webhook_record(
        self, request: web.Request
    ) -> tuple[InteractionRecord | None, web.Response | None]:
        record = self._record_for(request.match_info["token"])
        if record is None or request.match_info["app_id"] != str(self.application_id):
            return None, _error(404, 10015, "Unknown Webhook")
        if time.perf_counter() - record.dispatched_at > self.token_lifetime:
            record.rejected.append((401, 50027))
            return None, _error(401, 50027, "Invalid Webhook Token")
        if not record.acknowledged:
            # Follow-ups and @original only exist once the interaction has been responded to.
            record.rejected.append((404, 10015))
            return None, _error(404, 10015, "Unknown Webhook")
        return record, None

    def _webhook_message(self, record: InteractionRecord, message_id: str) -> Message | None:
        if message_id == "@original":
            msg = record.original
        else:
            msg = self.messages_by_id.get(int(message_id)) if message_id.isdigit() else None
            if msg is not None and msg is not record.original and msg not in record.followups.items:
                msg = None
        return None if msg is None or msg.deleted else msg

    async def _webhook_execute(self, request: web.Request) -> web.Response:
        record, error = self._webhook_record(request)
        if record is None:
            return error  # type: ignore[return-value]
        payload, files = await self._read_payload(request)
        original = record.original
        if (
            original is not None
            and original.loading
            and not record.defer_filled
            and original.interaction_id == record.id
        ):
            # Discord: after a "thinking" defer the first follow-up *becomes* the deferred
            # message (same id, keeping the defer's ephemeral flag).
            problem = self._edit_message(original, payload, files, prefix=())
            if problem is not None:
                return problem
            record.defer_filled = True
            message = original
        else:
            assert record.channel is not None
            result = self._new_message(
                record.channel,
                self.bot_user,
                payload,
                files,
                prefix=(),
                record=record,
                msg_type=20 if record.type == APPLICATION_COMMAND else 0,
            )
            if isinstance(result, web.Response):
                return result
            message = result
        record.followups.append(message)
        if request.query.get("wait") in ("1", "true", "True"):
            return _json(message.to_json())
        return _no_content()

    async def _webhook_get(self, request: web.Request) -> web.Response:
        record, error = self._webhook_record(request)
        if record is None:
            return error  # type: ignore[return-value]
        msg = self._webhook_message(record, request.match_info["message_id"])
        if msg is None:
            return _error(404, 10008, "Unknown Message")
        return _json(msg.to_json())

    async def _webhook_edit(self, request: web.Request) -> web.Response:
        record, error = self._webhook_record(request)
        if record is None:
            return error  # type: ignore[return-value]
        msg = self._webhook_message(record, request.match_info["message_id"])
        if msg is None:
            return _error(404, 10008, "Unknown Message")
        payload, files = await self._read_payload(request)
        problem = self._edit_message(msg, payload, files, prefix=())
        if problem is not None:
            return problem
        if msg is record.original:
            record.original_edits.append(msg.revision())
        return _json(msg.to_json())

    async def _webhook_delete(self, request: web.Request) -> web.Response:
        record, error = self._webhook_record(request)
        if record is None:
            return error  # type: ignore[return-value]
        msg = self._webhook_message(record, request.match_info["message_id"])
        if msg is None:
            return _error(404, 10008, "Unknown Message")
        self._delete_message(msg)
        return _no_content()

    # ================================================================ REST: channels and messages

    def _channel(self, request: web.Request) -> Channel | None:
        raw = request.match_info["channel_id"]
        return self.channels.get(int(raw)) if raw.isdigit() else None

    def _bot_perms(self, channel: Channel) -> int:
        if channel.guild is None:
            return DEFAULT_BOT_PERMISSIONS | _VIEW_CHANNEL | _SEND_MESSAGES
        return channel.permissions_for(channel.guild.members[self.bot_user.id])

    def _channel_message(self, channel: Channel, raw: str) -> Message | None:
        msg = self.messages_by_id.get(int(raw)) if raw.isdigit() else None
        # Ephemeral messages do not exist for the channel endpoints.
        if msg is None or msg.channel is not channel or msg.deleted or msg.ephemeral:
            return None
        return msg

    async def _get_channel(self, request: web.Request) -> web.Response:
        channel = self._channel(request)
        if channel is None:
            return _error(404, 10003, "Unknown Channel")
        return _json(channel.to_json())

    async def _list_messages(self, request: web.Request) -> web.Response:
        channel = self._channel(request)
        if channel is None:
            return _error(404, 10003, "Unknown Channel")
        msgs = [m for m in channel.messages if not m.deleted and not m.ephemeral]
        before, after = request.query.get("before"), request.query.get("after")
        if before:
            msgs = [m for m in msgs if m.id < int(before)]
        if after:
            msgs = [m for m in msgs if m.id > int(after)]
        limit = max(1, min(100, int(request.query.get("limit", 50))))
        newest_first = list(reversed(msgs))
        chosen = newest_first[:limit] if not after else list(reversed(msgs[:limit]))
        return _json([m.to_json() for m in chosen])

    async def _channel_post(self, request: web.Request) -> web.Response:
        channel = self._channel(request)
        if channel is None:
            return _error(404, 10003, "Unknown Channel")
        perms = self._bot_perms(channel)
        if not perms & _VIEW_CHANNEL:
            return _error(403, 50001, "Missing Access")
        if not perms & _SEND_MESSAGES:
            return _error(403, 50013, "Missing Permissions")
        payload, files = await self._read_payload(request)
        if files and not perms & _ATTACH_FILES:
            return _error(403, 50013, "Missing Permissions")
        if int(payload.get("flags") or 0) & EPHEMERAL:
            payload = {**payload, "flags": int(payload["flags"]) & ~EPHEMERAL}
        ref = payload.get("message_reference")
        result = self._new_message(
            channel,
            self.bot_user,
            payload,
            files,
            prefix=(),
            record=None,
            msg_type=19 if ref else 0,
        )
        if isinstance(result, web.Response):
            return result
        return _json(result.to_json())

    async def _channel_get_message(self, request: web.Request) -> web.Response:
        channel = self._channel(request)
        if channel is None:
            return _error(404, 10003, "Unknown Channel")
        msg = self._channel_message(channel, request.match_info["message_id"])
        if msg is None:
            return _error(404, 10008, "Unknown Message")
        return _json(msg.to_json())

    async def _channel_edit(self, request: web.Request) -> web.Response:
        channel = self._channel(request)
        if channel is None:
            return _error(404, 10003, "Unknown Channel")
        msg = self._channel_message(channel, request.match_info["message_id"])
        if msg is None:
            return _error(404, 10008, "Unknown Message")
        payload, files = await self._read_payload(request)
        if msg.author.id != self.bot_user.id and set(payload) - {"flags"}:
            return _error(403, 50005, "Cannot edit a message authored by another user")
        problem = self._edit_message(msg, payload, files, prefix=())
        if problem is not None:
            return problem
        return _json(msg.to_json())

    async def _channel_delete(self, request: web.Request) -> web.Response:
        channel = self._channel(request)
        if channel is None:
            return _error(404, 10003, "Unknown Channel")
        msg = self._channel_message(channel, request.match_info["message_id"])
        if msg is None:
            return _error(404, 10008, "Unknown Message")
        if msg.author.id != self.bot_user.id and not self._bot_perms(channel) & _MANAGE_MESSAGES:
            return _error(403, 50013, "Missing Permissions")
        self._delete_message(msg)
        return _no_content()

    async def _typing(self, request: web.Request) -> web.Response:
        if self._channel(request) is None:
            return _error(404, 10003, "Unknown Channel")
        return _no_content()

    async def _reaction(self, request: web.Request) -> web.Response:
        channel = self._channel(request)
        if channel is None:
            return _error(404, 10003, "Unknown Channel")
        msg = self._channel_message(channel, request.match_info["message_id"])
        if msg is None:
            return _error(404, 10008, "Unknown Message")
        emoji = request.match_info["emoji"]
        users = msg.reactions.setdefault(emoji, set())
        if request.method == "PUT":
            users.add(self.bot_user.id)
        else:
            users.discard(self.bot_user.id)
        return _no_content()

    async def _get_attachment(self, request: web.Request) -> web.Response:
        raw = request.match_info["attachment_id"]
        att = self._uploads.get(int(raw)) if raw.isdigit() else None
        if att is None or att.url.split("/")[-3] != request.match_info["channel_id"]:
            return web.Response(status=404, text="Not Found")
        return web.Response(
            body=att.data, headers={"Content-Type": att.content_type or "application/octet-stream"}
        )

    # ================================================================ REST: guilds

    def _guild(self, request: web.Request) -> Guild | None:
        raw = request.match_info["guild_id"]
        return self.guilds.get(int(raw)) if raw.isdigit() else None

    async def _get_guild(self, request: web.Request) -> web.Response:
        guild = self._guild(request)
        if guild is None:
            return _error(404, 10004, "Unknown Guild")
        data = guild.to_json(members=[])
        for key in (
            "channels",
            "members",
            "threads",
            "presences",
            "voice_states",
            "joined_at",
            "large",
            "member_count",
        ):
            data.pop(key, None)
        data["approximate_member_count"] = len(guild.members)
        return _json(data)

    async def _get_guild_channels(self, request: web.Request) -> web.Response:
        guild = self._guild(request)
        if guild is None:
            return _error(404, 10004, "Unknown Guild")
        return _json([c.to_json() for c in guild.channels])

    async def _get_guild_roles(self, request: web.Request) -> web.Response:
        guild = self._guild(request)
        if guild is None:
            return _error(404, 10004, "Unknown Guild")
        return _json([r.to_json() for r in guild.roles])

    async def _get_member(self, request: web.Request) -> web.Response:
        guild = self._guild(request)
        if guild is None:
            return _error(404, 10004, "Unknown Guild")
        raw = request.match_info["user_id"]
        member = guild.members.get(int(raw)) if raw.isdigit() else None
        if member is None:
            return _error(404, 10007, "Unknown Member")
        return _json(member.to_json())

    # ================================================================ message store internals

    def _make_attachment(
        self,
        channel: Channel,
        filename: str,
        data: bytes,
        content_type: str | None,
        description: str | None = None,
    ) -> Attachment:
        aid = self.snowflakes.next()
        url = f"{self.url}/attachments/{channel.id}/{aid}/{urllib.parse.quote(filename)}"
        att = Attachment(aid, filename, data, url, content_type, description)
        self._uploads[aid] = att
        return att

    def _make_message(
        self,
        channel: Channel,
        author: User,
        *,
        record: InteractionRecord | None,
        msg_type: int,
        flags: int = 0,
    ) -> Message:
        msg = Message(self.snowflakes.next(), channel, author, flags=flags, type=msg_type)
        if record is not None:
            msg.webhook_id = self.application_id
            msg.application_id = self.application_id
            msg.interaction_id = record.id
            meta: dict[str, Any] = {
                "id": str(record.id),
                "type": record.type,
                "user": record.user.to_json(),
                "authorizing_integration_owners": record.payload.get(
                    "authorizing_integration_owners", {}
                ),
            }
            if record.type == APPLICATION_COMMAND:
                meta["name"] = command_line(record.data)
                meta["command_type"] = record.data.get("type", 1)
            if record.source_message is not None:
                meta["interacted_message_id"] = str(record.source_message.id)
            msg.interaction_metadata = meta
        return msg

    def _store_new(self, msg: Message) -> None:
        if not msg.loading:
            msg.pinged = list(msg.mentions)
        msg.channel.messages.append(msg)
        self.messages_by_id[msg.id] = msg
        self.channel_events.append(ChannelEvent("create", msg, msg.revision(), time.perf_counter()))
        self._message_event("MESSAGE_CREATE", msg)

    def _delete_message(self, msg: Message) -> None:
        msg.deleted = True
        self.channel_events.append(ChannelEvent("delete", msg, msg.revision(), time.perf_counter()))
        if not msg.ephemeral:
            guild = msg.channel.guild
            data = {"id": str(msg.id), "channel_id": str(msg.channel.id)}
            if guild is not None:
                data["guild_id"] = str(guild.id)
            self.gateway.dispatch(
                "MESSAGE_DELETE",
                data,
                guild_id=guild.id if guild else None,
                intent=GUILD_MESSAGES if guild else DIRECT_MESSAGES,
            )

    def _message_event(self, event: str, msg: Message) -> None:
        if msg.ephemeral or not self.dispatch_message_events:
            return
        guild = msg.channel.guild

        def build(session: Session) -> dict[str, Any]:
            data = msg.to_json(guild_id=guild.id if guild else None)
            if guild is not None:
                member = guild.members.get(msg.author.id)
                if member is not None:
                    data["member"] = member.to_json(with_user=False)
                own = msg.author.id == self.bot_user.id
                mentioned = any(u.id == self.bot_user.id for u in msg.mentions)
                if not session.has_intent(MESSAGE_CONTENT) and not own and not mentioned:
                    # Without the Message Content intent Discord blanks other users' messages.
                    data |= {"content": "", "embeds": [], "attachments": [], "components": []}
            return data

        self.gateway.dispatch(
            event,
            None,
            guild_id=guild.id if guild else None,
            intent=GUILD_MESSAGES if guild else DIRECT_MESSAGES,
            build=build,
        )

    def _new_message(
        self,
        channel: Channel,
        author: User,
        payload: dict[str, Any],
        files: list[UploadedFile],
        *,
        prefix: tuple[str, ...],
        record: InteractionRecord | None,
        msg_type: int,
    ) -> Message | web.Response:
        flags = int(payload.get("flags") or 0) & SETTABLE_ON_CREATE
        msg = self._make_message(channel, author, record=record, msg_type=msg_type, flags=flags)
        problem = self._apply(msg, payload, files, prefix=prefix, creating=True)
        if problem is not None:
            return problem
        self._store_new(msg)
        return msg

    def _edit_message(
        self,
        msg: Message,
        payload: dict[str, Any],
        files: list[UploadedFile],
        *,
        prefix: tuple[str, ...],
    ) -> web.Response | None:
        before = msg.revision()
        was_loading = msg.loading
        problem = self._apply(msg, payload, files, prefix=prefix, creating=False)
        if problem is not None:
            return problem
        msg.history.append(before)
        if was_loading:
            msg.pinged = list(msg.mentions)
        msg.edited_at = None if was_loading else datetime.datetime.now(datetime.UTC)
        self.channel_events.append(ChannelEvent("edit", msg, msg.revision(), time.perf_counter()))
        self._message_event("MESSAGE_UPDATE", msg)
        return None

    def _apply(
        self,
        msg: Message,
        payload: dict[str, Any],
        files: list[UploadedFile],
        *,
        prefix: tuple[str, ...],
        creating: bool,
    ) -> web.Response | None:
        """Validate ``payload`` against ``msg``'s resulting state and, if valid, apply it."""
        if len(files) > 10:
            errors = FormErrors()
            errors.add((*prefix, "files"), "BASE_TYPE_MAX_LENGTH", "Must be 10 or fewer in length.")
            return _error(400, 50035, "Invalid Form Body", errors)
        if any(len(f.data) > self.max_file_size for f in files):
            return _error(413, 40005, "Request entity too large")
        content = msg.content
        if "content" in payload:
            content = "" if payload["content"] is None else str(payload["content"])
        embeds = msg.embeds
        if "embeds" in payload:
            embeds = normalize_embeds(payload["embeds"] or [])
        components = msg.components
        if "components" in payload:
            components = assign_component_ids(payload["components"] or [])
        flags = msg.flags
        if not creating and "flags" in payload and payload["flags"] is not None:
            wanted = int(payload["flags"])
            flags = (
                (flags & ~SETTABLE_ON_EDIT)
                | (wanted & SETTABLE_ON_EDIT)
                | (msg.flags & IS_COMPONENTS_V2)
            )
        if not creating:
            flags &= ~LOADING
        attachments = self._merge_attachments(msg, payload, files)
        errors = FormErrors()
        nonempty = validate_message(
            errors,
            prefix,
            content=content,
            embeds=embeds,
            components=components,
            flags=flags,
            attachment_count=len(attachments),
            has_poll=bool(payload.get("poll")),
        )
        if errors:
            return _error(400, 50035, "Invalid Form Body", errors)
        if not nonempty:
            return _error(400, 50006, "Cannot send an empty message")
        reply_author = None
        ref = payload.get("message_reference") if creating else None
        if ref and ref.get("message_id"):
            target = self.messages_by_id.get(int(ref["message_id"]))
            if target is None and ref.get("fail_if_not_exists", True):
                errors.add(
                    (*prefix, "message_reference"), "REPLIES_UNKNOWN_MESSAGE", "Unknown message"
                )
                return _error(400, 50035, "Invalid Form Body", errors)
            reply_author = target.author if target else None
            msg.message_reference = {
                "type": 0,
                "message_id": str(ref["message_id"]),
                "channel_id": str(msg.channel.id),
                **({"guild_id": str(msg.channel.guild.id)} if msg.channel.guild else {}),
            }
        msg.content, msg.embeds, msg.components, msg.flags = content, embeds, components, flags
        msg.attachments = attachments
        if "allowed_mentions" in payload or creating:
            msg.allowed_mentions = payload.get("allowed_mentions")
        msg.mentions, msg.mention_role_ids, msg.mention_everyone = compute_mentions(
            content, msg.allowed_mentions, None, users=self.users, reply_author=reply_author
        )
        return None

    def _merge_attachments(
        self, msg: Message, payload: dict[str, Any], files: list[UploadedFile]
    ) -> list[Attachment]:
        by_index = {f.index: f for f in files}
        used: set[int] = set()
        if "attachments" not in payload:
            # No attachments array: keep what the message had and append the new files.
            result = list(msg.attachments)
        else:
            result = []
            existing = {a.id: a for a in msg.attachments}
            for item in payload.get("attachments") or []:
                raw_id = item.get("id")
                try:
                    ident = int(raw_id)
                except (TypeError, ValueError):
                    continue
                if ident in existing:
                    result.append(existing[ident])
                elif ident in by_index:
                    f = by_index[ident]
                    used.add(ident)
                    result.append(
                        self._make_attachment(
                            msg.channel,
                            item.get("filename") or f.filename,
                            f.data,
                            f.content_type,
                            item.get("description"),
                        )
                    )
        for f in files:
            if f.index not in used:
                result.append(
                    self._make_attachment(msg.channel, f.filename, f.data, f.content_type)
                )
        return result


def format_log(record: logging.LogRecord) -> str:
    """A log record with its traceback, for failure messages."""
    text = f"[{record.name}] {record.getMessage()}"
    if record.exc_info and record.exc_info[1] is not None:
        text += "\n" + "".join(traceback.format_exception(*record.exc_info))
    return text
