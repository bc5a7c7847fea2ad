"""The live relay: the process that writes the live pages' streams, off the bot's process.

Started by the web view (``krigbot.web.handover``, which describes the messages), as
``python -m krigbot.web.relay <fd>`` with its end of the socket pair. It is handed each
viewer's connection once the bot has checked its address, and writes the stream the bot would
have written: the response's head, the position for a viewer joining (or the rounds after the
last it had), each round as it is committed, the end. It reads the games from the database
itself and rebuilds each round once for all of a game's viewers in a language, playing each
game on from where its last read left it (not from its seed); the bot only tells it which game
reached which round.

A viewer whose unsent bytes grow past ``UNSENT_BYTES`` (beyond what was first sent it) reads
too slowly: its connection is closed, and nothing more is kept for it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import socket
import sys
from collections import deque
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

from krigbot.config import LOG_LEVELS
from krigbot.engine import EngineError
from krigbot.engine.replay import Replaying
from krigbot.i18n import LANGS, t
from krigbot.logs import LOG_FORMATS, setup
from krigbot.storage import Storage, StorageError
from krigbot.web.handover import MESSAGE_BYTES
from krigbot.web.replay import replay_data
from krigbot.web.server import END_ID, SECURITY_HEADERS, UNSENT_BYTES, end_of, sse_event

if TYPE_CHECKING:
    from krigbot.i18n import Lang
    from krigbot.storage import GameRow

log = logging.getLogger("krigbot.web.relay")

HEAD: Final = (
    "HTTP/1.1 200 OK\r\n"
    "Content-Type: text/event-stream; charset=utf-8\r\n"
    "Cache-Control: no-store\r\n"
    "X-Accel-Buffering: no\r\n"
    "Connection: close\r\n"
    + "".join(f"{name}: {value}\r\n" for name, value in SECURITY_HEADERS.items())
    + "\r\n"
).encode()
"""The head of every stream's response: as the bot's pages', and the body ends with the
connection (no length, no chunks)."""
NICENESS: Final = 10
"""How much less the relay counts than the bot when both want the CPU."""
READ_EVERY: Final = 0.1
"""How often, at most, the relay reads the games told to have moved on: each read is a reader
of the bot's SQLite file, and a file read without pause keeps its log from starting over, which
slows the bot's every write. A tenth of a second is less than a round's animation takes."""
INLINE_ROUNDS: Final = 20
"""The most new rounds of a game the relay writes on its event loop's thread: the few a read
brings cost less than handing them to a thread and back. More (a viewer joining a long game)
are written in a thread, so the other streams go on meanwhile."""
CHECKPOINT_SECONDS: Final = 3600.0
"""The relay only reads; the bot checkpoints SQLite's log."""


class _Watcher(asyncio.Protocol):
    """One viewer's connection: what it has been sent, and whether it keeps up."""

    def __init__(self, relay: Relay, game: _Game, lang: Lang) -> None:
        self.relay = relay
        self.game = game
        self.lang = lang
        self.sent = -1
        """The last round written to it (-1: nothing yet)."""
        self.allowed = UNSENT_BYTES
        """The unsent bytes it may have: more, and it is dropped."""
        self.transport: asyncio.Transport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        pass  # a browser says nothing more on an event stream

    def eof_received(self) -> bool:
        return True  # its side closed for writing; the stream goes on until it closes

    def connection_lost(self, exc: Exception | None) -> None:
        self.transport = None
        self.relay.left(self)

    def write(self, data: bytes) -> None:
        """Write to the viewer; drop it if too much waits unsent."""
        transport = self.transport
        if transport is None or transport.is_closing():
            return
        transport.write(data)
        if transport.get_write_buffer_size() > self.allowed:
            transport.abort()  # it reads too slowly: nothing more is kept for it

    def finish(self) -> None:
        """Close the stream once what is written has gone."""
        if self.transport is not None:
            self.transport.close()


@dataclass
class _Game:
    """A game followed: its viewers, and its rounds as last read and rebuilt."""

    id: int
    viewers: set[_Watcher] = field(default_factory=set)
    row: GameRow | None = None
    built: dict[Lang, tuple[tuple[int, str], dict[str, Any]]] = field(default_factory=dict)
    """Its replay in each language of a viewer, and the (round, status) it was built for."""
    events: dict[tuple[Lang, int], bytes] = field(default_factory=dict)
    """Its rounds' events, each written once for all its viewers in a language."""
    told: int = 0
    """The latest round the bot told of."""
    replaying: Replaying = field(default_factory=Replaying)
    """Its rounds, played on from the last read at each read (not replayed from its seed)."""
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)


class Relay:
    """The games followed and their viewers, in the relay process."""

    def __init__(self, link: socket.socket, storage: Storage) -> None:
        self.link = link
        self.storage = storage
        self.games: dict[int, _Game] = {}
        self.closed = asyncio.Event()
        self._tasks: set[asyncio.Task[None]] = set()
        self._stale: set[int] = set()
        """The games told to have moved on and not read since."""
        self._refreshing: asyncio.Task[None] | None = None
        self._unsent: deque[bytes] = deque()
        """What the bot has not taken yet (a game watched, or no longer: one per game)."""

    # ----------------------------------------------------------------- messages

    def readable(self) -> None:
        """Read the bot's messages: viewers handed over, rounds committed."""
        while True:
            try:
                data, fds, _, _ = socket.recv_fds(self.link, MESSAGE_BYTES, 4)
            except BlockingIOError:
                return
            except OSError:
                data, fds = b"", []
            if not data:
                for fd in fds:
                    socket.close(fd)
                self.closed.set()
                asyncio.get_running_loop().remove_reader(self.link)
                return
            self.heard(data.decode(), fds)

    def heard(self, message: str, fds: list[int]) -> None:
        words = message.split()
        if words[0] == "c" and len(fds) == 1 and len(words) == 4:
            _, game, lang, after = words
            connection = socket.socket(fileno=fds[0])
            if not game.isdigit() or lang not in LANGS:
                connection.close()
                return
            self._spawn(
                self.join(int(game), lang, int(after) if after.isdigit() else None, connection)
            )
            return
        for fd in fds:
            socket.close(fd)
        if words[0] == "r":
            for note in words[1:]:
                game, _, round_ = note.partition(":")
                followed = self.games.get(int(game))
                if followed is not None:
                    followed.told = max(followed.told, int(round_))
                    self.refresh(followed)

    def tell(self, message: str) -> None:
        """Tell the bot something (a game watched, or no longer); kept while the bot is busy,
        lost if it is gone."""
        if not self._unsent:
            try:
                self.link.send(message.encode())
                return
            except BlockingIOError:
                asyncio.get_running_loop().add_writer(self.link, self._writable)
            except OSError:
                self.closed.set()
                return
        self._unsent.append(message.encode())

    def _writable(self) -> None:
        while self._unsent:
            try:
                self.link.send(self._unsent[0])
            except BlockingIOError:
                return
            except OSError:
                self.closed.set()
                break
            self._unsent.popleft()
        asyncio.get_running_loop().remove_writer(self.link)

    def _spawn(self, coro: Any) -> None:
        task = asyncio.create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._done)

    def _done(self, task: asyncio.Task[None]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.error("a live stream failed", exc_info=task.exception())

    # ----------------------------------------------------------------- viewers

    async def join(
        self, game_id: int, lang: Lang, after: int | None, connection: socket.socket
    ) -> None:
        """Take a viewer's connection: the head, where it is, then the rounds as they come."""
        followed = self.games.get(game_id)
        if followed is None:
            followed = self.games[game_id] = _Game(game_id)
            self.tell(f"w {game_id}")  # before reading: no round falls between
        connection.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, UNSENT_BYTES)
        loop = asyncio.get_running_loop()
        watcher = _Watcher(self, followed, lang)
        followed.viewers.add(watcher)
        try:
            await loop.connect_accepted_socket(lambda: watcher, connection)
        except OSError:
            self.left(watcher)
            return
        async with followed.lock:
            if followed.row is None:
                followed.row = await self.storage.games.get_game(game_id)
            row = followed.row
            if row is None:
                watcher.finish()
                return
            try:
                data = await self.built(followed, lang)
            except EngineError:
                watcher.finish()
                return
            rounds = data["rounds"]
            if after is None:
                first = HEAD + sse_event("position", len(rounds), data)
                watcher.sent = len(rounds)
            else:
                first = HEAD
                watcher.sent = min(after, len(rounds))
            watcher.allowed = UNSENT_BYTES + len(first)
            watcher.write(first)
            self.catch_up(followed, watcher)

    def left(self, watcher: _Watcher) -> None:
        """Forget a viewer gone (or dropped); a game without viewers is no longer followed."""
        followed = watcher.game
        followed.viewers.discard(watcher)
        if not followed.viewers and self.games.get(followed.id) is followed:
            del self.games[followed.id]
            self.tell(f"u {followed.id}")

    def catch_up(self, followed: _Game, watcher: _Watcher) -> None:
        """Write a viewer the rounds it has not had, and the end if the game is over."""
        built = followed.built.get(watcher.lang)
        row = followed.row
        if built is None or row is None or watcher.sent < 0:
            return  # a viewer still joining is written all it needs when it has joined
        data = built[1]
        rounds = data["rounds"]
        # One write of all that is new to it: each write is a system call, and a packet.
        news = [self.event(followed, watcher.lang, played) for played in rounds[watcher.sent :]]
        watcher.sent = max(watcher.sent, len(rounds))
        if not row.is_active:
            ended = end_of(data) | {"title": t(watcher.lang, "over.title")}
            news.append(sse_event("end", END_ID, ended))
        if news:
            watcher.write(b"".join(news))
        if not row.is_active:
            watcher.finish()

    @staticmethod
    def event(followed: _Game, lang: Lang, played: dict[str, Any]) -> bytes:
        key = (lang, int(played["n"]))
        event = followed.events.get(key)
        if event is None:
            event = followed.events[key] = sse_event("round", played["n"], played)
        return event

    async def built(self, followed: _Game, lang: Lang) -> dict[str, Any]:
        """Return the game's replay in a language, rebuilt (its new rounds only) if it moved."""
        row = followed.row
        assert row is not None
        at = (row.round, row.status)
        built = followed.built.get(lang)
        if built is not None and built[0] == at:
            return built[1]
        # A running game's rounds up to the last rebuilt are kept: only the new are written.
        known = None if built is None else built[1]["rounds"]
        new = row.round - (0 if known is None else len(known))
        if new > INLINE_ROUNDS:
            # A whole game (a viewer joining a long one): in a thread, the streams go on.
            data = await asyncio.to_thread(replay_data, row, lang, known, followed.replaying)
        else:
            data = replay_data(row, lang, known, followed.replaying)
        followed.built[lang] = (at, data)
        return data

    # ----------------------------------------------------------------- rounds

    def refresh(self, followed: _Game) -> None:
        """Read a game again (it was told to have moved on) and write its viewers the news.

        The games told meanwhile are read together, in one query: each read is a reader in the
        bot's database, and a reader's every visit costs the bot's writes a little (SQLite)."""
        self._stale.add(followed.id)
        if self._refreshing is None or self._refreshing.done():
            self._refreshing = asyncio.create_task(self._refresh())
            self._tasks.add(self._refreshing)
            self._refreshing.add_done_callback(self._done)

    async def _refresh(self) -> None:
        again: set[int] = set()
        """Games read before the round they were told of was committed: read once more."""
        while self._stale:
            await asyncio.sleep(READ_EVERY)  # the rounds told meanwhile are read together
            stale = [game_id for game_id in self._stale if game_id in self.games]
            self._stale.clear()
            rows = await self.storage.games.get_games(stale)
            for game_id in stale:
                followed = self.games.get(game_id)
                if followed is None:
                    continue
                fresh = rows.get(game_id)
                if fresh is not None and fresh.round < followed.told and game_id not in again:
                    again.add(game_id)
                    self._stale.add(game_id)  # a read begun before that commit
                    continue
                again.discard(game_id)
                async with followed.lock:
                    await self._show(followed, fresh)

    async def _show(self, followed: _Game, fresh: GameRow | None) -> None:
        """Write a game's viewers what it became (``fresh``: as read; None: it is gone)."""
        if fresh is None:
            for watcher in list(followed.viewers):
                watcher.finish()
            return
        old = followed.row
        if old is not None and (fresh.round, fresh.status) == (old.round, old.status):
            return
        followed.row = fresh
        langs = {watcher.lang for watcher in followed.viewers}
        try:
            for lang in langs:
                await self.built(followed, lang)
        except EngineError:
            for watcher in list(followed.viewers):
                watcher.finish()
            return
        for watcher in list(followed.viewers):
            self.catch_up(followed, watcher)

    async def close(self) -> None:
        for followed in list(self.games.values()):
            for watcher in list(followed.viewers):
                if watcher.transport is not None:
                    watcher.transport.abort()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)


async def serve(fd: int) -> None:
    """Serve the viewers the bot hands over, until the bot's end of ``fd`` closes."""
    link = socket.socket(fileno=fd)
    link.setblocking(False)
    loop = asyncio.get_running_loop()
    ready = loop.create_future()

    def first() -> None:
        try:
            data = link.recv(MESSAGE_BYTES)
        except BlockingIOError:
            return
        loop.remove_reader(link)
        if not ready.done():
            ready.set_result(data.decode())

    loop.add_reader(link, first)
    message = await ready
    kind, level, fmt, location = [*message.split(" ", 3), "", "", ""][:4]
    if kind != "db" or fmt not in LOG_FORMATS or level not in LOG_LEVELS:
        return  # the bot ended before it said where its games are
    setup(level, "json" if fmt == "json" else "text")
    try:
        storage = await Storage.open(location, checkpoint_every=CHECKPOINT_SECONDS)
    except StorageError as exc:
        log.error("the live relay cannot read the games: %s", exc)
        return
    relay = Relay(link, storage)
    try:
        loop.add_reader(link, relay.readable)
        relay.tell("ready")
        await relay.closed.wait()
    finally:
        await relay.close()
        await storage.close()
        link.close()


def main() -> None:
    """Run the relay on the socket whose descriptor is the first argument."""
    # The bot's flips come first: when both want a core, the relay waits (and it never
    # preempts the bot when told of a round). A Ctrl+C in the bot's terminal reaches the
    # relay too: it ends when the bot does, not at the signal.
    with contextlib.suppress(OSError):
        os.nice(NICENESS)  # where the system refuses, the relay runs as the bot does
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    asyncio.run(serve(int(sys.argv[1])))


if __name__ == "__main__":
    main()
