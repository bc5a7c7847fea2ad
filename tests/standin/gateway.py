"""The stand-in's gateway: sessions, sequence numbers, IDENTIFY/RESUME and ordered dispatch."""

from __future__ import annotations

import asyncio
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from aiohttp import WSMsgType, web

from tests.standin import wire
from tests.standin.events import EventLog

if TYPE_CHECKING:
    from tests.standin.apps import Application
    from tests.standin.server import DiscordStandIn

# Opcodes
DISPATCH = 0
HEARTBEAT = 1
IDENTIFY = 2
PRESENCE_UPDATE = 3
RESUME = 6
RECONNECT = 7
REQUEST_GUILD_MEMBERS = 8
INVALID_SESSION = 9
HELLO = 10
HEARTBEAT_ACK = 11

# Intents the stand-in pays attention to
GUILDS = 1 << 0
GUILD_MEMBERS = 1 << 1
GUILD_PRESENCES = 1 << 8
GUILD_MESSAGES = 1 << 9
DIRECT_MESSAGES = 1 << 12
MESSAGE_CONTENT = 1 << 15
PRIVILEGED_INTENTS = GUILD_MEMBERS | GUILD_PRESENCES | MESSAGE_CONTENT

#: How many dispatched events a session keeps for RESUME replay.
REPLAY_BUFFER = 10_000

# Close codes for a bad IDENTIFY
INVALID_SHARD = 4010
SHARDING_REQUIRED = 4011

GatewayEventKind = Literal[
    "connect",
    "identify",
    "ready",
    "resume",
    "resumed",
    "invalid_session",
    "close",
    "heartbeat",
    "op",
    "refused",
    "identify_refused",
    "overlap",
]


@dataclass(frozen=True)
class GatewayEvent:
    """Something that happened on the gateway, for tests to await (e.g. a new IDENTIFY)."""

    kind: GatewayEventKind
    session_id: str | None
    shard: tuple[int, int]
    at: float
    detail: Any = None


@dataclass(eq=False)
class Connection:
    """One websocket connection from a bot."""

    ws: web.WebSocketResponse
    send_lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    session: Session | None = None
    writer: asyncio.Task[None] | None = None

    async def send(self, payload: dict[str, Any]) -> None:
        # Always TEXT frames: discord.py only runs its zlib/zstd decompressor on BINARY frames,
        # so uncompressed text is valid even though it asks for compress=zlib-stream.
        async with self.send_lock:
            await self.ws.send_str(wire.dumps(payload))


@dataclass(eq=False)
class Session:
    """A gateway session; it survives a dropped connection so RESUME can replay what was missed."""

    id: str
    shard: tuple[int, int]
    intents: int
    token: str
    #: The bot that IDENTIFYed with ``token``.
    application: Application
    identified_at: float
    seq: int = 0
    sent: int = 0
    valid: bool = True
    connection: Connection | None = None
    frames: dict[int, str] = field(default_factory=dict)
    wakeup: asyncio.Event = field(default_factory=asyncio.Event)

    def covers_guild(self, guild_id: int) -> bool:
        shard_id, count = self.shard
        return (guild_id >> 22) % count == shard_id

    def dispatch(self, event: str, data: Any) -> int:
        """Queue a DISPATCH; the connection's writer sends queued frames in sequence order."""
        self.seq += 1
        self.frames[self.seq] = wire.dumps({"op": DISPATCH, "t": event, "s": self.seq, "d": data})
        self.frames.pop(self.seq - REPLAY_BUFFER, None)
        self.wakeup.set()
        return self.seq

    def has_intent(self, intent: int) -> bool:
        return bool(self.intents & intent)


class Gateway:
    """Serves ``/gateway``: HELLO, heartbeats, IDENTIFY (READY + GUILD_CREATE), RESUME, chunking."""

    def __init__(self, standin: DiscordStandIn) -> None:
        self.standin = standin
        self.sessions: dict[str, Session] = {}
        self.connections: set[Connection] = set()
        self.events: EventLog[GatewayEvent] = EventLog(standin.guard)
        #: Sent in HELLO. Long, so the client's heartbeat thread stays quiet during tests.
        self.heartbeat_interval_ms = 45_000
        #: While set, connections are refused (503) as when Discord's gateway is out of reach.
        self.refusing = False
        #: While set, a new IDENTIFY for a shard leaves its older sessions running (a hand-off,
        #: which Discord allows for a moment): each guild's events then go to its sessions in
        #: turn, so two bot processes holding one shard both receive some.
        self.overlapping = False
        self._turn = 0
        #: While set, the events of this session's shard go to it alone: a test picks which
        #: process of a hand-off receives an interaction.
        self.aimed: Session | None = None
        #: When each (application, identify bucket) last accepted an IDENTIFY.
        self._identified: dict[tuple[int, int], float] = {}

    # ---------------------------------------------------------------- routing of dispatches

    def active_sessions(self) -> list[Session]:
        """Valid sessions, newest first (a newer IDENTIFY for a shard supersedes older ones)."""
        return sorted(
            (s for s in self.sessions.values() if s.valid), key=lambda s: -s.identified_at
        )

    def sessions_for(self, guild_id: int | None) -> list[Session]:
        """The valid sessions of the shard that handles ``guild_id``, newest first (DMs: 0)."""
        return sorted(
            (
                session
                for session in self.sessions.values()
                if session.valid
                and (session.shard[0] == 0 if guild_id is None else session.covers_guild(guild_id))
            ),
            key=lambda s: -s.identified_at,
        )

    def session_for(self, guild_id: int | None) -> Session | None:
        """The session that receives events for ``guild_id`` (DMs go to shard 0).

        The newest, or while :attr:`overlapping` each of the shard's sessions in turn (or the
        :attr:`aimed` one, if it is one of them).
        """
        sessions = self.sessions_for(guild_id)
        if not sessions:
            return None
        if self.aimed in sessions:
            return self.aimed
        if not self.overlapping:
            return sessions[0]
        self._turn += 1
        return sessions[self._turn % len(sessions)]

    def dispatch(
        self,
        event: str,
        data: Any,
        *,
        guild_id: int | None,
        intent: int | None = None,
        build: Callable[[Session], Any] | None = None,
    ) -> Session | None:
        """Send a DISPATCH to whichever session handles ``guild_id``; returns it (None if none)."""
        session = self.session_for(guild_id)
        if session is None or (intent is not None and not session.has_intent(intent)):
            return None
        session.dispatch(event, build(session) if build is not None else data)
        return session

    def _log(
        self,
        kind: GatewayEventKind,
        session: Session | None,
        detail: Any = None,
        shard: tuple[int, int] = (0, 1),
    ) -> None:
        self.events.append(
            GatewayEvent(
                kind,
                session.id if session else None,
                session.shard if session else shard,
                time.perf_counter(),
                detail,
            )
        )

    # ---------------------------------------------------------------- websocket handling

    async def handle(self, request: web.Request) -> web.StreamResponse:
        if self.refusing:
            self._log("refused", None, dict(request.query))
            return web.Response(status=503, text="the stand-in's gateway is away")
        ws = web.WebSocketResponse(autoping=True, max_msg_size=0)
        try:
            await ws.prepare(request)
        except ConnectionResetError:
            # The client hung up before the handshake's answer (a process stopped or killed
            # while it connected): Discord sees no more of it either. Nothing reaches it.
            return web.Response(status=499, text="the client closed the connection")
        conn = Connection(ws)
        self.connections.add(conn)
        self._log("connect", None, dict(request.query))
        try:
            await conn.send(
                {
                    "op": HELLO,
                    "d": {"heartbeat_interval": self.heartbeat_interval_ms},
                    "s": None,
                    "t": None,
                }
            )
            async for msg in ws:
                if msg.type is WSMsgType.TEXT:
                    await self._on_frame(conn, wire.loads(msg.data))
                elif msg.type is WSMsgType.ERROR:
                    break
        except ConnectionResetError:
            pass
        finally:
            self.connections.discard(conn)
            if conn.writer is not None:
                conn.writer.cancel()
                # asyncio.wait, not "await writer": our own cancellation must still propagate.
                await asyncio.wait([conn.writer])
            session = conn.session
            if session is not None and session.connection is conn:
                session.connection = None
            self._log("close", session, ws.close_code)
        return ws

    async def _on_frame(self, conn: Connection, frame: dict[str, Any]) -> None:
        op = frame.get("op")
        data: Any = frame.get("d")
        if op == HEARTBEAT:
            self._log("heartbeat", conn.session, data)
            await conn.send({"op": HEARTBEAT_ACK, "d": None, "s": None, "t": None})
        elif op == IDENTIFY:
            await self._identify(conn, data)
        elif op == RESUME:
            await self._resume(conn, data)
        elif op == REQUEST_GUILD_MEMBERS:
            self._request_members(conn, data)
        else:
            self._log("op", conn.session, frame)

    async def _identify(self, conn: Connection, data: dict[str, Any]) -> None:
        standin = self.standin
        app = standin.applications.by_token(data.get("token"))
        if app is None:
            await conn.ws.close(code=4004, message=b"Authentication failed.")
            return
        intents = int(data.get("intents", 0))
        if intents & PRIVILEGED_INTENTS & ~standin.allowed_privileged_intents:
            # Discord refuses privileged intents not enabled in the developer portal.
            await conn.ws.close(code=4014, message=b"Disallowed intent(s).")
            return
        shard_data = data.get("shard") or [0, 1]
        shard = (int(shard_data[0]), int(shard_data[1]))
        if not 0 <= shard[0] < shard[1]:
            self._log("identify_refused", None, "invalid shard", shard)
            await conn.ws.close(code=INVALID_SHARD, message=b"Invalid shard.")
            return
        guilds = [g for g in standin.guilds.values() if (g.id >> 22) % shard[1] == shard[0]]
        if len(guilds) > standin.max_guilds_per_shard:
            self._log("identify_refused", None, "sharding required", shard)
            await conn.ws.close(code=SHARDING_REQUIRED, message=b"Sharding required.")
            return
        # Discord's session start limit: one IDENTIFY per bucket per interval, for each bot.
        bucket = (app.id, shard[0] % standin.max_concurrency)
        now = time.perf_counter()
        last = self._identified.get(bucket)
        if last is not None and now - last < standin.identify_interval:
            self._log("identify_refused", None, "too early", shard)
            await conn.send({"op": INVALID_SESSION, "d": False, "s": None, "t": None})
            return
        self._identified[bucket] = now
        live = [
            old.id
            for old in self.sessions.values()
            if old.shard == shard
            and old.valid
            and old.connection is not None
            and not old.connection.ws.closed
        ]
        if live:
            # Another connection still serves the shard: two processes would answer its events.
            self._log("overlap", None, live, shard)
        if not self.overlapping:
            for old in self.sessions.values():
                if old.shard == shard:
                    old.valid = False
        session = Session(
            id=secrets.token_hex(16),
            shard=shard,
            intents=intents,
            token=str(data.get("token")),
            application=app,
            identified_at=time.perf_counter(),
        )
        self.sessions[session.id] = session
        self._attach(conn, session)
        self._log("identify", session, data)
        ready: dict[str, Any] = {
            "v": 10,
            "user": app.bot_user.to_json() | {"verified": True, "mfa_enabled": False, "flags": 0},
            "guilds": [{"id": str(g.id), "unavailable": True} for g in guilds],
            "session_id": session.id,
            "session_type": "normal",
            "resume_gateway_url": standin.gateway_url,
            "application": {"id": str(app.id), "flags": app.flags},
            "private_channels": [],
            "relationships": [],
            "presences": [],
            "guild_join_requests": [],
            "geo_ordered_rtc_regions": [],
            "user_settings": {},
            "auth": {},
        }
        if data.get("shard") is not None:
            ready["shard"] = list(shard)
        session.dispatch("READY", ready)
        for guild in guilds:
            session.dispatch("GUILD_CREATE", standin.guild_create_json(guild, session))
        self._log("ready", session, [g.id for g in guilds])

    async def _resume(self, conn: Connection, data: dict[str, Any]) -> None:
        session = self.sessions.get(str(data.get("session_id")))
        seq = data.get("seq") or 0
        if (
            session is None
            or not session.valid
            or session.token != data.get("token")
            or (seq < session.seq and (seq + 1) not in session.frames)
        ):
            self._log("invalid_session", session, data)
            # d=false: not resumable, the client must IDENTIFY again.
            await conn.send({"op": INVALID_SESSION, "d": False, "s": None, "t": None})
            return
        session.sent = int(seq)
        self._attach(conn, session)
        self._log("resume", session, data)
        session.dispatch("RESUMED", {})
        self._log("resumed", session, seq)

    def _attach(self, conn: Connection, session: Session) -> None:
        old = session.connection
        if old is not None and old is not conn and old.writer is not None:
            old.writer.cancel()
        session.connection = conn
        conn.session = session
        if conn.writer is not None:
            conn.writer.cancel()
        conn.writer = asyncio.create_task(
            self._writer(conn, session), name=f"standin-gateway-writer-{session.id}"
        )

    async def _writer(self, conn: Connection, session: Session) -> None:
        """Send the session's frames in sequence order; RESUME replays by rewinding ``sent``."""
        try:
            while not conn.ws.closed and session.connection is conn:
                while session.sent < session.seq and session.connection is conn:
                    nxt = session.sent + 1
                    frame = session.frames.get(nxt)
                    if frame is not None:
                        async with conn.send_lock:
                            await conn.ws.send_str(frame)
                    session.sent = nxt
                if session.sent >= session.seq:
                    session.wakeup.clear()
                    await session.wakeup.wait()
        except (ConnectionResetError, RuntimeError):
            return

    def _request_members(self, conn: Connection, data: dict[str, Any]) -> None:
        session = conn.session
        if session is None:
            return
        guild = self.standin.guilds.get(int(data.get("guild_id", 0)))
        if guild is None:
            return
        members = list(guild.members.values())
        user_ids = data.get("user_ids")
        if user_ids:
            wanted = {int(u) for u in ([user_ids] if isinstance(user_ids, str | int) else user_ids)}
            members = [m for m in members if m.id in wanted]
        elif not session.has_intent(GUILD_MEMBERS):
            members = []
        else:
            query = (data.get("query") or "").lower()
            members = [m for m in members if m.user.name.lower().startswith(query)]
            limit = int(data.get("limit") or 0)
            if limit:
                members = members[:limit]
        chunk: dict[str, Any] = {
            "guild_id": str(guild.id),
            "members": [m.to_json() for m in members],
            "chunk_index": 0,
            "chunk_count": 1,
        }
        if data.get("nonce") is not None:
            chunk["nonce"] = data["nonce"]
        session.dispatch("GUILD_MEMBERS_CHUNK", chunk)

    # ---------------------------------------------------------------- control from tests

    async def drop(self, *, code: int = 4000, invalidate: bool = False) -> int:
        """Close every bot connection with ``code``; returns how many were closed.

        With ``invalidate`` the sessions are forgotten, so the client's RESUME is answered with
        INVALID_SESSION and it must IDENTIFY again.
        """
        if invalidate:
            for session in self.sessions.values():
                session.valid = False
        conns = list(self.connections)
        for conn in conns:
            await conn.ws.close(code=code, message=b"stand-in dropped the connection")
        return len(conns)

    async def send_reconnect(self) -> None:
        """Send op 7 RECONNECT to every connection (Discord's "please reconnect and resume")."""
        for conn in list(self.connections):
            await conn.send({"op": RECONNECT, "d": None, "s": None, "t": None})

    async def close(self) -> None:
        for conn in list(self.connections):
            await conn.ws.close(code=1001, message=b"stand-in shutting down")
