"""Shard processes of the bot sharing one database, SQLite or PostgreSQL, and how to read it."""

from __future__ import annotations

import asyncio
import re
import signal
import sys
from dataclasses import dataclass
from pathlib import Path

from tests.standin import BotCrashed, DiscordStandIn, GatewayEvent
from tests.support.consistency import StoredGame, check_database, check_postgres
from tests.support.postgres import Cluster
from tests.support.processes import BOT, SECRET, bot_env

IDENTIFY_SECONDS = 0.5
"""The stand-in's pause between identifies, and the bots' (Discord's is 5 s)."""


COLOURS = re.compile(r"\x1b\[[0-9;]*m")


@dataclass
class ClusterDatabase:
    """The one database every process of the bot uses, and how to read it from outside."""

    kind: str
    path: Path
    """The SQLite file; with PostgreSQL, the folder the processes run in (KRIG_DB's)."""
    postgres: Cluster | None = None
    url: str = ""

    def env(self) -> dict[str, str]:
        """Return the settings that point a process at it."""
        if self.postgres is None:
            return {"KRIG_DB": str(self.path)}
        return {"KRIG_DB": str(self.path), "KRIG_DATABASE_URL": self.url}

    def games(self) -> dict[int, StoredGame]:
        """Return every stored game, checked whole (every card there, nothing half-written)."""
        if self.postgres is None:
            return check_database(self.path)
        return check_postgres(self.postgres, self.url)

    def __str__(self) -> str:
        return self.url or str(self.path)


class ShardProcess:
    """One `python bot.py` running some shards of the bot, restartable."""

    def __init__(
        self,
        standin: DiscordStandIn,
        folder: Path,
        database: ClusterDatabase,
        shards: str,
        name: str,
        settings: dict[str, str],
    ) -> None:
        self.standin = standin
        self.settings = settings
        self.folder = folder
        self.database = database
        self.shards = shards
        self.ids = [int(part) for part in _expand(shards)]
        self.stderr = folder / f"{name}.txt"
        self.proc: asyncio.subprocess.Process | None = None
        self.watcher: asyncio.Task[int] | None = None

    async def start(self) -> None:
        """Start the process and return once each of its shards has had its READY."""
        after = len(self.standin.gateway_events)
        env = bot_env(
            self.standin.subprocess_env(),
            DISCORD_TOKEN=SECRET,
            KRIG_SHARD_COUNT=str(self.standin.shard_count),
            KRIG_SHARDS=self.shards,
            KRIG_IDENTIFY_SECONDS=str(IDENTIFY_SECONDS),
            KRIG_RENDER_PROCESSES="0",
            **self.database.env(),
            **self.settings,
        )
        with self.stderr.open("ab") as stderr:
            self.proc = await asyncio.create_subprocess_exec(
                sys.executable,
                str(BOT),
                env=env,
                cwd=self.folder,
                stderr=stderr,
                stdout=asyncio.subprocess.DEVNULL,
            )
        # A dying process fails the wait at once. Not cancelled once ready: another process
        # starting meanwhile waits with it in view, and would take the cancellation for a death.
        self.watcher = watcher = asyncio.create_task(self.proc.wait())
        self.standin.watch_task(watcher)
        try:
            for shard in self.ids:

                def ready(e: GatewayEvent, shard: int = shard) -> bool:
                    return e.kind == "ready" and e.shard[0] == shard

                await self.standin.gateway_events.wait(
                    ready,
                    start=after,
                    timeout=60,
                    what=f"shard {shard} of {self.shards} ready",
                )
        except BotCrashed as exc:
            raise AssertionError(self.log()) from exc
        finally:
            self.standin.unwatch_task(watcher)

    async def kill(self) -> None:
        """SIGKILL the process and wait until the stand-in saw its connections close."""
        assert self.proc is not None
        closed = self.standin.gateway_events.cursor()
        self.proc.send_signal(signal.SIGKILL)
        assert await self.proc.wait() == -signal.SIGKILL
        for _ in self.ids:
            await closed.next(lambda event: event.kind == "close", timeout=10)

    async def stop(self) -> None:
        """End the process, if it still runs."""
        if self.proc is not None and self.proc.returncode is None:
            self.proc.kill()
            await self.proc.wait()
        if self.watcher is not None:
            await self.watcher

    def log(self) -> str:
        """Return what the process logged, colours removed."""
        return COLOURS.sub("", self.stderr.read_text()) if self.stderr.exists() else ""


def _expand(shards: str) -> list[int]:
    ids: list[int] = []
    for part in shards.split(","):
        first, _, last = part.partition("-")
        ids.extend(range(int(first), int(last or first) + 1))
    return ids
