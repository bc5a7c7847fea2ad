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

This module is the facade tests hold: it owns the state (the :class:`World`, the
:class:`MessageStore`, the hosted :class:`Applications`, the interaction records) and the
test-facing controls. The REST routes are in ``tests/standin/routes/`` (one module per
resource, served through ``tests/standin/rest.py``), the gateway in ``gateway.py`` and what a
user's client sends in ``client.py``. Every JSON body the bot sends is held against Discord's
own OpenAPI description (``schema.py``, the spec in ``discord-api-spec/``): one it refuses gets
Discord's 400 50035, and the ``standin`` fixture fails the test that sent it.
"""

# The public waits take ``timeout=`` (``await rec.response(timeout=5)``) on purpose: tests
# read better that way than wrapped in ``asyncio.timeout``, and the guard needs the value.
# ruff: noqa: ASYNC109

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import re
import traceback
from collections.abc import AsyncIterator, Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Self

from aiohttp import web

from tests.standin.apps import Application, Applications, SyncRecord
from tests.standin.client import InteractionClient
from tests.standin.commands import CHAT_INPUT
from tests.standin.events import BotCrashed, EventLog, StandInTimeout
from tests.standin.gateway import GUILD_MEMBERS, PRIVILEGED_INTENTS, Gateway, GatewayEvent, Session
from tests.standin.messages import MAX_FILE_SIZE, ChannelEvent, Message, compute_mentions
from tests.standin.oauth import OAuth
from tests.standin.records import Delay, Fault, InteractionRecord, RequestRecord
from tests.standin.rest import (
    API_PREFIX,
    STANDIN_KEY,
    Serving,
    serve,
    standin_of,
    unknown_route,
)
from tests.standin.routes import TABLES
from tests.standin.schema import Refusal
from tests.standin.store import MessageStore, MessageWatcher
from tests.standin.world import (
    DEFAULT_BOT_PERMISSIONS,
    DEFAULT_EVERYONE_PERMISSIONS,
    Channel,
    Guild,
    Member,
    Overwrite,
    PermissionsLike,
    Role,
    User,
    World,
    normalize_locale,
    overwrites_from,
    permission_value,
)

log = logging.getLogger("tests.standin")

SITECUSTOMIZE_DIR = Path(__file__).resolve().parent / "sitecustomize"


async def gateway_route(request: web.Request) -> web.StreamResponse:
    """Serve ``/gateway`` for the stand-in the request came to."""
    return await standin_of(request).gateway.handle(request)


class DiscordStandIn(InteractionClient):
    """A fake Discord (REST + gateway) for the real discord.py, plus helpers for tests.

    ``interaction_deadline``: a first response later than this many seconds after dispatch
    gets 404/10062 like on Discord (None disables). ``token_lifetime``: follow-ups and edits
    after this many seconds get 401/50027. ``allowed_privileged_intents``: IDENTIFY asking
    for other privileged intents is closed with 4014, as when they are off in the portal.
    ``token``: if set, REST and IDENTIFY demand exactly this bot token. ``check_bodies``:
    every JSON body is held against Discord's OpenAPI description (``schema.py``) and one it
    refuses gets 400/50035 and is kept in ``refused_bodies``; benches may switch it off.

    Shards: ``shard_count`` is what ``GET /gateway/bot`` recommends, with ``max_concurrency``
    identify buckets (``shard_id % max_concurrency``); an IDENTIFY sooner than
    ``identify_interval`` seconds after the last one accepted in its bucket gets op 9 (Discord
    says 5 s; 0, the default, lets every one through). A shard that would hold more than
    ``max_guilds_per_shard`` guilds is closed with 4011, a shard id not below its count with 4010.
    """

    def __init__(
        self,
        *,
        bot_name: str = "Krigbot",
        token: str | None = None,
        shard_count: int = 1,
        max_concurrency: int = 1,
        identify_interval: float = 0.0,
        max_guilds_per_shard: int = 2500,
        interaction_deadline: float | None = 3.0,
        token_lifetime: float = 15 * 60.0,
        allowed_privileged_intents: int = PRIVILEGED_INTENTS,
        dispatch_message_events: bool = True,
        max_file_size: int = MAX_FILE_SIZE,
        check_bodies: bool = True,
        host: str = "127.0.0.1",
        port: int = 0,
    ) -> None:
        self.host = host
        self.port = port
        self.shard_count = shard_count
        self.max_concurrency = max_concurrency
        self.identify_interval = identify_interval
        self.max_guilds_per_shard = max_guilds_per_shard
        self.interaction_deadline = interaction_deadline
        self.token_lifetime = token_lifetime
        self.allowed_privileged_intents = allowed_privileged_intents
        self.dispatch_message_events = dispatch_message_events
        self.max_file_size = max_file_size
        self.check_bodies = check_bodies
        #: If True (run_bot sets it), an error logged by the bot ends any wait with BotCrashed.
        self.fail_fast_on_bot_errors = False

        self.world = World()
        # The registries tests read directly, shared with the world (never rebound).
        self.users = self.world.users
        self.guilds = self.world.guilds
        self.channels = self.world.channels
        self.roles = self.world.roles
        self.store = MessageStore(self)
        self.messages_by_id = self.store.messages_by_id
        self.channel_events = self.store.channel_events

        # On Discord a bot's user id is its application id.
        bot_user = User(id=self.world.snowflakes.next(), name=bot_name, bot=True)
        self.users[bot_user.id] = bot_user
        self.applications = Applications()
        #: The one bot hosted so far; routes find theirs from the request's token instead.
        self.app = self.applications.add(
            Application(bot_user, self.add_user("app-owner"), token, self.guard)
        )
        #: OAuth2 codes and access tokens (an Activity's users signing in).
        self.oauth = OAuth()
        self.requests: EventLog[RequestRecord] = EventLog(self.guard)
        self.unknown_requests: list[RequestRecord] = []
        self.internal_errors: list[str] = []
        #: Bodies Discord's schema refuses (answered 400/50035), for the fixture to fail on.
        self.refused_bodies: list[Refusal] = []
        self.interactions: dict[int, InteractionRecord] = {}
        self.interactions_by_token: dict[str, InteractionRecord] = {}
        self.interaction_log: EventLog[InteractionRecord] = EventLog(self.guard)
        self.bot_errors: EventLog[logging.LogRecord] = EventLog()
        self.accepted_error_count = 0
        self.faults: list[Fault] = []
        self.delays: list[Delay] = []
        self._watched: set[asyncio.Task[Any]] = set()
        self.gateway = Gateway(self)
        self._runner: web.AppRunner | None = None
        self._serving = Serving(None)

    # ================================================================ lifecycle

    async def __aenter__(self) -> Self:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def start(self) -> None:
        """Start serving on ``host`` (a free port unless one was given)."""
        app = web.Application(middlewares=[serve], client_max_size=64 * 1024 * 1024)
        self._serving = Serving(self)
        app[STANDIN_KEY] = self._serving
        # A function of the module, not this stand-in's bound method: aiohttp caches each
        # handler with its middlewares for the life of the process, and a bound method would
        # keep every stand-in ever started (and all it recorded) alive in that cache.
        app.router.add_get("/gateway", gateway_route)
        for table in TABLES:
            app.router.add_routes(table)
        # Last: anything else is logged and answered 404 so a test notices the gap.
        app.router.add_route("*", "/{tail:.*}", unknown_route)
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
        # Refused first: a bot that reconnects the moment its connection closes must not
        # resume on a stand-in that is going away.
        self.gateway.refusing = True
        await self.gateway.close()
        await self._runner.cleanup()
        self._runner = None
        self._serving.standin = None

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
        """Whether a hosted bot has this token (``Bot <token>`` or bare)."""
        return self.applications.by_token(header_or_token) is not None

    # The hosted bot's attributes as tests read them (one bot so far: see ``self.app``).

    @property
    def bot_user(self) -> User:
        return self.app.bot_user

    @property
    def application_id(self) -> int:
        return self.app.id

    @property
    def application_flags(self) -> int:
        return self.app.flags

    @application_flags.setter
    def application_flags(self, flags: int) -> None:
        self.app.flags = flags

    @property
    def commands(self) -> dict[int | None, list[dict[str, Any]]]:
        """Synced commands: None -> global list, guild id -> that guild's list."""
        return self.app.commands

    @property
    def syncs(self) -> EventLog[SyncRecord]:
        return self.app.syncs

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
        if not self._watched and not self.fail_fast_on_bot_errors:
            # Nothing else to watch (bots in processes of their own, as in the benches): a
            # plain timed wait, without asyncio.wait's set of callbacks for every answer.
            try:
                async with asyncio.timeout(timeout):
                    return await future
            except TimeoutError:
                raise StandInTimeout(
                    f"timed out after {timeout}s waiting for {what}\n{self.diagnostics()}"
                ) from None
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
            self.world.snowflakes.next(),
            name,
            display_name,
            bot=bot,
            locale=normalize_locale(locale),
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
        shard: int | None = None,
    ) -> Guild:
        """Create a guild the bot is in: @everyone, the bot's managed role, the owner and the bot.

        ``locale`` becomes ``preferred_locale``/``guild_locale`` ("nb" is mapped to Discord's "no").
        If the bot is connected it receives GUILD_CREATE (``on_guild_join``). ``shard``: an id
        that lands on that shard of ``shard_count`` (otherwise wherever the time puts it).
        """
        gid = (
            self.world.snowflakes.next()
            if shard is None
            else self.world.snowflakes.on_shard(shard, self.shard_count)
        )
        if owner is None:
            owner = self.add_user(f"owner-of-{name}".replace(" ", "-").lower())
        guild = Guild(gid, name, normalize_locale(locale), owner)
        everyone = Role(gid, guild, "@everyone", permission_value(everyone_permissions), position=0)
        bot_role = Role(
            self.world.snowflakes.next(),
            guild,
            self.app.bot_user.name,
            permission_value(bot_permissions),
            position=1,
            managed=True,
            bot_id=self.app.bot_user.id,
        )
        guild.roles.extend([everyone, bot_role])
        self.roles[everyone.id] = everyone
        self.roles[bot_role.id] = bot_role
        self.guilds[gid] = guild
        guild.members[owner.id] = Member(owner, guild, [everyone])
        guild.members[self.app.bot_user.id] = Member(self.app.bot_user, guild, [everyone, bot_role])
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
            self.world.snowflakes.next(),
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

    def move_role(self, role: Role, position: int) -> None:
        """Move a role in its server's order and tell the bot (GUILD_ROLE_UPDATE)."""
        role.position = position
        self.gateway.dispatch(
            "GUILD_ROLE_UPDATE",
            {"guild_id": str(role.guild.id), "role": role.to_json()},
            guild_id=role.guild.id,
        )

    def threads(self, parent: Channel) -> list[Channel]:
        """Return the threads started under ``parent``, oldest first."""
        assert parent.guild is not None
        return [thread for thread in parent.guild.threads if thread.parent is parent]

    def delete_channel(self, channel: Channel) -> None:
        """Delete a text channel and, as Discord does, its threads (or a thread); tell the bot."""
        guild = channel.guild
        assert guild is not None
        for thread in [channel] if channel.is_thread else self.threads(channel):
            assert thread.parent is not None
            guild.threads.remove(thread)
            del self.channels[thread.id]
            gone = {"id": str(thread.id), "guild_id": str(guild.id), "type": thread.type}
            self.gateway.dispatch(
                "THREAD_DELETE", gone | {"parent_id": str(thread.parent.id)}, guild_id=guild.id
            )
        if channel.is_thread:
            return
        guild.channels.remove(channel)
        del self.channels[channel.id]
        self.gateway.dispatch("CHANNEL_DELETE", channel.to_json(), guild_id=guild.id)

    def archive(self, thread: Channel, *, locked: bool = False) -> None:
        """Archive a thread (as Discord does after its inactivity) and tell the bot."""
        assert thread.guild is not None
        thread.archived, thread.locked = True, locked
        self.gateway.dispatch("THREAD_UPDATE", thread.to_json(), guild_id=thread.guild.id)

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
            self.world.snowflakes.next(), name, 0, guild, position=len(guild.channels), topic=topic
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
        return self.world.dm_channel(user)

    def guild_create_json(self, guild: Guild, session: Session) -> dict[str, Any]:
        """GUILD_CREATE as this session gets it: all members only with the GUILD_MEMBERS intent."""
        if session.has_intent(GUILD_MEMBERS):
            members: list[Member] | None = None
        else:
            # Without the intent Discord only sends the bot's own member (and voice members).
            members = [m for m in guild.members.values() if m.user.id == session.application.id]
        return guild.to_json(members=members)

    # ================================================================ synced commands

    def synced_commands(self, guild: Guild | None = None) -> list[dict[str, Any]]:
        """The commands the bot last synced globally (or for ``guild``), as Discord stored them."""
        return list(self.app.commands.get(guild.id if guild else None, []))

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
        return await self.app.syncs.wait(start=after, timeout=timeout, what="a command sync")

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
        drop: bool = False,
    ) -> Fault:
        """Make the next ``times`` requests matching ``method`` ("*" = any) and ``path_regex`` fail.

        ``path_regex`` is searched in the path below ``/api/v10`` (e.g. ``r"/callback$"``).
        429s carry ``Via`` (unless ``via=False``, which discord.py treats as a Cloudflare ban),
        ``Retry-After`` and ``X-RateLimit-*`` headers and a ``retry_after`` body. 404 defaults to
        code 10062 "Unknown interaction". Faults are checked before the request is processed, so
        a failed interaction callback leaves the interaction unacknowledged. ``drop``: the
        request is carried out all the same, and its connection then closed unanswered (the
        network failed on the way back), so the bot does not know it was done.
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
            drop,
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
        msg = Message(self.world.snowflakes.next(), channel, user, content=content)
        msg.mentions, msg.mention_role_ids, msg.mention_everyone = compute_mentions(
            content, None, None, users=self.users, reply_author=None
        )
        self.store.store_new(msg)
        return msg


def format_log(record: logging.LogRecord) -> str:
    """A log record with its traceback, for failure messages."""
    text = f"[{record.name}] {record.getMessage()}"
    if record.exc_info and record.exc_info[1] is not None:
        text += "\n" + "".join(traceback.format_exception(*record.exc_info))
    return text
