"""The bot's side of the live relay: the process that writes the live pages' streams.

A live page's viewers cost the process that writes their streams a little CPU each at every
round; hundreds of them would cost the bot's process as much as its flips. So the web view
hands each viewer's connection, once it has checked the page's address, to a process of its
own, the relay (``krigbot.web.relay``), and the bot's process does the same small work at a
round however many watch: it tells the relay, in one message, that a game it follows reached
a round.

The two talk over a Unix socket pair of packets (``SOCK_SEQPACKET``), one message a packet,
words separated by spaces:

- bot to relay: ``db <log level> <log format> <location>`` first (how it logs, and the
  database it reads the games from); ``c <game>
  <language> <after>`` with the viewer's connection attached (``after`` is the last round the
  viewer has, ``-`` for none); ``r <game>:<round> ...``, rounds committed (the latest of
  each game, those told within 10 ms together).
- relay to bot: ``ready`` once its database is open; ``w <game>``, a game it has viewers of
  (the bot answers ``r <game>:0``: read it again, for a round committed before it listened);
  ``u <game>``, a game it no longer has any viewer of.

The relay ends when its end of the pair does (so with the bot, even one killed outright). One
that dies is started again at the next viewer; the viewers it had reconnect by themselves (a
browser's ``EventSource`` does, with the last event it had).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
import sys
from collections import deque
from pathlib import Path
from typing import TYPE_CHECKING, Final

from krigbot.logs import JsonFormatter
from krigbot.sessions.live import LOOK, Viewer

if TYPE_CHECKING:
    from krigbot.i18n import Lang
    from krigbot.sessions.live import LiveHub

log = logging.getLogger(__name__)

READY_SECONDS: Final = 20.0
"""How long a viewer waits for a relay starting; past it, the bot serves the stream itself."""
RETRY_SECONDS: Final = 60.0
"""How long after a relay that could not start the bot serves the streams itself."""
STOP_SECONDS: Final = 5.0
"""How long a relay told to end may take before it is killed."""
OUTBOX: Final = 4096
"""The messages that may wait for a relay that does not read them; one more, and it is
stopped as stuck (its viewers reconnect to the next)."""
NOTE_SECONDS: Final = 0.01
"""How long the rounds told wait to go to the relay together (a live page shows them that much
later: nobody sees it)."""
NOTES_A_MESSAGE: Final = 200
"""The games' rounds one message tells, at most (``game:round``, each under 20 bytes)."""
MESSAGE_BYTES: Final = 4096
"""The longest message either side sends (a database's address is the longest)."""
ROOT: Final = str(Path(__file__).resolve().parents[2])
"""The folder krigbot is imported from, which the relay imports it from too."""


def can_relay() -> bool:
    """Tell whether this system can hand connections to another process (Unix sockets that
    carry file descriptors, and packets)."""
    return hasattr(socket, "send_fds") and hasattr(socket, "SOCK_SEQPACKET")


class _Forward(Viewer):
    """The relay, as one viewer of a game in the live hub: each round is passed on at once."""

    __slots__ = ("_link",)

    def __init__(self, game_id: int, link: RelayLink) -> None:
        super().__init__(game_id)
        self._link = link

    def offer(self, round_: int) -> bool:
        self._link.told(self.game_id, round_)
        return True


class RelayLink:
    """The relay process, started at the first viewer and again after it died."""

    def __init__(self, location: str, hub: LiveHub) -> None:
        self._location = location
        self._hub = hub
        self._process: asyncio.subprocess.Process | None = None
        self._sock: socket.socket | None = None
        self._ready: asyncio.Future[bool] | None = None
        self._watched: dict[int, _Forward] = {}
        self._notes: dict[int, int] = {}
        """The games told of a round and not yet passed on: the latest round of each."""
        self._noting: asyncio.TimerHandle | None = None
        self._outbox: deque[tuple[bytes, int | None]] = deque()
        """The messages the relay has not taken yet, each with the connection it hands over."""
        self._failed_at: float | None = None
        self._reaping: set[asyncio.Task[None]] = set()
        """The tasks that start a relay, and that wait for each relay started to end."""
        self.starts = 0
        """How many relays have been started (each after the last one died)."""

    @property
    def pid(self) -> int | None:
        """Return the running relay's process id, if one runs."""
        return None if self._process is None else self._process.pid

    async def ready(self) -> bool:
        """Start the relay if none runs; True once it takes viewers, False where it cannot
        (it failed to start a moment ago, or fails now: the bot serves the stream then)."""
        loop = asyncio.get_running_loop()
        if self._ready is None:
            if self._failed_at is not None and loop.time() - self._failed_at < RETRY_SECONDS:
                return False
            self._ready = loop.create_future()
            # A task of its own: the viewer whose visit starts it may leave meanwhile.
            launch = asyncio.create_task(self._launch(self._ready), name="krig-live-relay-start")
            self._reaping.add(launch)
            launch.add_done_callback(self._reaping.discard)
        return await asyncio.shield(self._ready)

    async def _launch(self, ready: asyncio.Future[bool]) -> None:
        try:
            await self._start()
        except OSError as exc:
            log.warning("the live relay cannot start, the bot serves the streams: %s", exc)
            self._gone()
            return
        try:
            async with asyncio.timeout(READY_SECONDS):
                await asyncio.shield(ready)
        except TimeoutError:
            log.warning("the live relay did not start in %g s", READY_SECONDS)
            await self._end()

    async def _start(self) -> None:
        mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            mine.setblocking(False)
            env = dict(os.environ)
            env["PYTHONPATH"] = os.pathsep.join(
                part for part in (ROOT, env.get("PYTHONPATH")) if part
            )
            self._process = await asyncio.create_subprocess_exec(
                sys.executable,
                "-m",
                "krigbot.web.relay",
                str(theirs.fileno()),
                pass_fds=(theirs.fileno(),),
                stdin=asyncio.subprocess.DEVNULL,
                env=env,
            )
        except BaseException:
            mine.close()
            raise
        finally:
            theirs.close()  # the relay's own now: its end closes with the relay alone
        self.starts += 1
        self._sock = mine
        loop = asyncio.get_running_loop()
        loop.add_reader(mine, self._readable)
        root = logging.getLogger()
        json_logs = any(isinstance(handler.formatter, JsonFormatter) for handler in root.handlers)
        level = logging.getLevelName(root.getEffectiveLevel())
        self.send(f"db {level} {'json' if json_logs else 'text'} {self._location}")
        reaping = asyncio.create_task(self._reap(self._process), name="krig-live-relay")
        self._reaping.add(reaping)
        reaping.add_done_callback(self._reaping.discard)
        log.info("live relay started (pid %s)", self._process.pid)

    async def _reap(self, process: asyncio.subprocess.Process) -> None:
        code = await process.wait()
        if process is self._process:
            log.warning(
                "the live relay ended (exit status %s); the next viewer starts another", code
            )
            self._gone()

    def hand(self, connection: int, game_id: int, lang: Lang, after: int | None) -> bool:
        """Hand a viewer's connection (its file descriptor) to the relay; False if no relay
        runs (the caller keeps the connection and serves the stream)."""
        if self._sock is None or self._ready is None or not self._ready.done():
            return False
        words = f"c {game_id} {lang} {'-' if after is None else after}"
        # A copy of the connection waits with the message if the relay is behind: the
        # caller's copy is closed as soon as this returns.
        self._put(words.encode(), connection)
        return True

    def told(self, game_id: int, round_: int) -> None:
        """Tell the relay that a game reached a round, with the others told within
        ``NOTE_SECONDS``: one message (and one wake-up of the relay) for a burst of rounds."""
        if self._sock is None:
            return
        self._notes[game_id] = max(round_, self._notes.get(game_id, LOOK))
        if self._noting is None:
            self._noting = asyncio.get_running_loop().call_later(NOTE_SECONDS, self._note)

    def _note(self) -> None:
        self._noting = None
        notes = [f"{game}:{round_}" for game, round_ in self._notes.items()]
        self._notes.clear()
        for start in range(0, len(notes), NOTES_A_MESSAGE):
            self.send(" ".join(["r", *notes[start : start + NOTES_A_MESSAGE]]))

    def send(self, message: str) -> None:
        """Send a message to the relay; one that does not read is stopped (it is stuck)."""
        if self._sock is not None:
            self._put(message.encode(), None)

    def _put(self, data: bytes, connection: int | None) -> None:
        sock = self._sock
        assert sock is not None
        if not self._outbox:
            try:
                _send(sock, data, connection)
                return
            except BlockingIOError:
                asyncio.get_running_loop().add_writer(sock, self._writable)
            except OSError:
                self._gone()
                return
        self._outbox.append((data, None if connection is None else os.dup(connection)))
        if len(self._outbox) > OUTBOX:
            log.warning("the live relay does not read its messages; it is stopped")
            self._kill()

    def _writable(self) -> None:
        sock = self._sock
        assert sock is not None
        while self._outbox:
            data, connection = self._outbox[0]
            try:
                _send(sock, data, connection)
            except BlockingIOError:
                return
            except OSError:
                self._gone()
                return
            self._outbox.popleft()
            if connection is not None:
                os.close(connection)  # the relay has its own copy now
        asyncio.get_running_loop().remove_writer(sock)

    def _readable(self) -> None:
        sock = self._sock
        while sock is not None and sock is self._sock:
            try:
                data = sock.recv(MESSAGE_BYTES)
            except BlockingIOError:
                return
            except OSError:
                data = b""
            if not data:
                if self._ready is not None and self._ready.done():
                    log.warning("the live relay ended; the next viewer starts another")
                else:
                    log.warning(
                        "the live relay ended as it started; the bot writes the streams for %g s",
                        RETRY_SECONDS,
                    )
                self._gone()
                return
            self._heard(data.decode())

    def _heard(self, message: str) -> None:
        kind, _, rest = message.partition(" ")
        if kind == "ready":
            if self._ready is not None and not self._ready.done():
                self._ready.set_result(True)
        elif kind == "w" and rest.isdigit():
            game_id = int(rest)
            if game_id not in self._watched:
                forward = self._watched[game_id] = _Forward(game_id, self)
                self._hub.watch(game_id, forward)
            self.told(game_id, LOOK)
        elif kind == "u" and rest.isdigit():
            gone = self._watched.pop(int(rest), None)
            if gone is not None:
                self._hub.leave(gone)

    def _gone(self) -> None:
        """Forget the relay (ended, or out of reach): its games are no longer watched here."""
        loop = asyncio.get_running_loop()
        sock, self._sock = self._sock, None
        if sock is not None:
            loop.remove_reader(sock)
            loop.remove_writer(sock)
            sock.close()  # the relay reads its end and ends, if it has not
        for _, connection in self._outbox:
            if connection is not None:
                os.close(connection)  # a viewer never handed over: its browser asks again
        self._outbox.clear()
        self._notes.clear()
        if self._noting is not None:
            self._noting.cancel()
            self._noting = None
        for forward in self._watched.values():
            self._hub.leave(forward)
        self._watched.clear()
        if self._ready is not None and not self._ready.done():
            self._ready.set_result(False)
            self._failed_at = loop.time()
        self._ready = None
        self._process = None

    def _kill(self) -> None:
        process = self._process
        self._gone()
        if process is not None and process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                process.kill()

    async def _end(self) -> None:
        process = self._process
        self._gone()  # its end of the pair closed: the relay ends by itself
        if process is None:
            return
        try:
            async with asyncio.timeout(STOP_SECONDS):
                await process.wait()
        except TimeoutError:
            with contextlib.suppress(ProcessLookupError):
                process.kill()
            await process.wait()

    async def stop(self) -> None:
        """End the relay, and with it every stream it writes."""
        await self._end()
        await asyncio.gather(*self._reaping, return_exceptions=True)


def _send(sock: socket.socket, data: bytes, connection: int | None) -> None:
    if connection is None:
        sock.send(data)
    else:
        socket.send_fds(sock, [data], [connection])
