"""A TCP proxy in front of PostgreSQL's unix socket that a test can cut and restore: a network
partition between one process and the database, and nothing else."""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path
from types import TracebackType
from typing import Self


class CuttableProxy:
    """Listens on 127.0.0.1 and forwards each connection to a unix socket, until cut.

    Cut, it closes every connection it carries and closes each new one at once, as a link to
    the database that is gone does; stalled, it carries nothing and answers nothing, as a link
    that drops every packet does (its connections stay open, waiting); restored, it forwards
    again, what waited included.
    """

    def __init__(self, socket_path: Path) -> None:
        self.socket_path = socket_path
        self.cut_off = False
        self.refused = 0
        """Connections closed at once because the proxy was cut."""
        self._server: asyncio.Server | None = None
        self._links: set[asyncio.StreamWriter] = set()
        self._pipes: set[asyncio.Task[None]] = set()
        self._flowing = asyncio.Event()
        self._flowing.set()

    @classmethod
    def to_postgres(cls, socket_dir: str) -> CuttableProxy:
        """Return a proxy to the PostgreSQL cluster whose unix socket is in ``socket_dir``."""
        (socket,) = Path(socket_dir).glob(".s.PGSQL.*[0-9]")
        return cls(socket)

    @property
    def port(self) -> int:
        """Return the port the proxy listens on."""
        assert self._server is not None
        port: int = self._server.sockets[0].getsockname()[1]
        return port

    def url(self, database_url: str) -> str:
        """Return ``database_url`` (``postgresql://user@/name?host=…``) through the proxy."""
        user_and_rest = database_url.removeprefix("postgresql://")
        user, _, rest = user_and_rest.partition("@/")
        name = rest.partition("?")[0]
        return f"postgresql://{user}@127.0.0.1:{self.port}/{name}"

    async def __aenter__(self) -> Self:
        self._server = await asyncio.start_server(self._accept, "127.0.0.1", 0)
        return self

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        assert self._server is not None
        self._server.close()
        self.cut()
        self._flowing.set()  # a connection held while stalled is closed, as cut
        for pipe in list(self._pipes):
            pipe.cancel()
        await asyncio.gather(*self._pipes, return_exceptions=True)
        await self._server.wait_closed()

    def cut(self) -> None:
        """Close every connection through the proxy, and every new one from now on."""
        self.cut_off = True
        for writer in list(self._links):
            writer.transport.abort()
        self._links.clear()

    def stall(self) -> None:
        """Carry nothing from now on, on any connection, old or new, and close none."""
        self._flowing.clear()

    def restore(self) -> None:
        """Forward connections again."""
        self.cut_off = False
        self._flowing.set()

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if self.cut_off:
            self.refused += 1
            writer.transport.abort()
            return
        await self._flowing.wait()
        try:
            far_reader, far_writer = await asyncio.open_unix_connection(str(self.socket_path))
        except OSError:
            writer.transport.abort()
            return
        if self.cut_off:  # cut while connecting
            far_writer.transport.abort()
            writer.transport.abort()
            return
        self._links |= {writer, far_writer}
        pipes = {
            asyncio.create_task(self._pipe(reader, far_writer)),
            asyncio.create_task(self._pipe(far_reader, writer)),
        }
        self._pipes |= pipes
        try:
            await asyncio.wait(pipes, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for pipe in pipes:
                pipe.cancel()
            await asyncio.gather(*pipes, return_exceptions=True)
            self._pipes -= pipes
            for each in (writer, far_writer):
                self._links.discard(each)
                each.transport.abort()

    async def _pipe(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        """Copy bytes from one side to the other until either side ends; held while stalled."""
        with contextlib.suppress(ConnectionError, OSError):
            while data := await reader.read(65536):
                await self._flowing.wait()
                writer.write(data)
                await writer.drain()
