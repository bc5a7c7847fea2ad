"""Shard processes of the bot sharing one database, SQLite or PostgreSQL, and how to read it."""

from __future__ import annotations

import asyncio
import re
import signal
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from tests.standin import BotCrashed, DiscordStandIn, EventLog, GatewayEvent, User
from tests.standin.world import Channel, Guild
from tests.support.consistency import StoredGame, check_database, check_postgres
from tests.support.flip_stream import Table
from tests.support.players import UPDATE_MESSAGE, game_id_of, text_of
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


SETTLE_SECONDS = 90.0
"""The longest the claims may take to settle: a lease running out (10 s) and a few renewals."""
HOLDING = re.compile(r"(?:claimed|holding) shards ([0-9,\-]+|none) of \d+")
CONNECTED = re.compile(r"shard (\d+): connected")
STOPPED = re.compile(r"shard (\d+): stopped")


@dataclass
class Held:
    """What one process of ``KRIG_SHARDS=auto`` says it holds, and which of those are connected."""

    holds: frozenset[int] = frozenset()
    connected: frozenset[int] = frozenset()

    @property
    def serving(self) -> bool:
        """Tell whether every shard it holds is connected."""
        return self.holds == self.connected


class Claims:
    """Every auto process's holdings, as their logs tell them; waits for the cluster to settle."""

    def __init__(self, standin: DiscordStandIn) -> None:
        self.standin = standin
        self.now: dict[str, Held] = {}
        self.changes: EventLog[dict[str, Held]] = EventLog()

    def told(self, name: str, line: str) -> None:
        """Read one line a process logged."""
        held = self.now.get(name, Held())
        if (match := HOLDING.search(line)) is not None:
            ids = frozenset(_expand(match[1])) if match[1] != "none" else frozenset()
            held = Held(ids, held.connected & ids)
        elif (match := CONNECTED.search(line)) is not None:
            held = Held(held.holds, held.connected | {int(match[1])})
        elif (match := STOPPED.search(line)) is not None:
            held = Held(held.holds, held.connected - {int(match[1])})
        else:
            return
        self.now[name] = held
        self.changes.append(dict(self.now))

    def gone(self, name: str) -> None:
        """Forget a process that ended."""
        self.now.pop(name, None)
        self.changes.append(dict(self.now))

    async def settled(self, parts: list[int]) -> dict[str, frozenset[int]]:
        """Wait until the live processes hold every shard once, in parts of these sizes, each
        connected; return who holds which."""
        count = self.standin.shard_count

        def even(now: dict[str, Held]) -> bool:
            holds = [held.holds for held in now.values()]
            union = frozenset().union(*holds)
            return (
                sorted(len(each) for each in holds) == sorted(parts)
                and union == frozenset(range(count))
                and sum(len(each) for each in holds) == count
                and all(held.serving for held in now.values())
            )

        await self.changes.wait(
            lambda _now: even(self.now), timeout=SETTLE_SECONDS, what=f"the shards held {parts}"
        )
        return {name: held.holds for name, held in self.now.items()}


class AutoProcess:
    """One `python bot.py` with ``KRIG_SHARDS=auto``, its log read line by line as it comes."""

    def __init__(
        self,
        standin: DiscordStandIn,
        folder: Path,
        url: str,
        name: str,
        claims: Claims,
        settings: dict[str, str],
        program: Path = BOT,
    ) -> None:
        self.standin = standin
        self.settings = settings
        self.program = program
        """The script it runs: ``bot.py``, or a stand-in for another release of it."""
        self.folder = folder
        self.url = url
        self.name = name
        self.claims = claims
        self.stderr = folder / f"{name}.txt"
        self.lines: EventLog[str] = EventLog()
        self.proc: asyncio.subprocess.Process | None = None
        self._reader: asyncio.Task[None] | None = None

    async def start(self) -> None:
        """Start the process (it claims its part of the shards by itself)."""
        env = bot_env(
            self.standin.subprocess_env(),
            DISCORD_TOKEN=SECRET,
            KRIG_SHARD_COUNT=str(self.standin.shard_count),
            KRIG_SHARDS="auto",
            KRIG_RENDER_PROCESSES="0",
            KRIG_DB=str(self.folder / "data" / "krig.db"),
            KRIG_DATABASE_URL=self.url,
            **{"KRIG_IDENTIFY_SECONDS": str(IDENTIFY_SECONDS), **self.settings},
        )
        self.proc = await asyncio.create_subprocess_exec(
            sys.executable,
            str(self.program),
            env=env,
            cwd=self.folder,
            stderr=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.DEVNULL,
        )
        self._reader = asyncio.create_task(self._read(self.proc))

    async def _read(self, proc: asyncio.subprocess.Process) -> None:
        assert proc.stderr is not None
        with self.stderr.open("a") as copy:
            while line := await proc.stderr.readline():
                text = COLOURS.sub("", line.decode(errors="replace"))
                copy.write(text)
                copy.flush()
                self.lines.append(text)
                self.claims.told(self.name, text)

    async def signal(self, sig: signal.Signals) -> None:
        """Send ``sig`` and wait for the process to end (its log read to the end)."""
        assert self.proc is not None
        self.proc.send_signal(sig)
        await self.proc.wait()
        if self._reader is not None:
            await self._reader
        self.claims.gone(self.name)

    def pause(self) -> None:
        """Hold the process still (SIGSTOP): it renews nothing and reads nothing until resumed."""
        assert self.proc is not None
        self.proc.send_signal(signal.SIGSTOP)
        self.claims.gone(self.name)

    def resume(self) -> None:
        """Let a paused process run again (SIGCONT)."""
        assert self.proc is not None
        self.proc.send_signal(signal.SIGCONT)

    async def stop(self) -> None:
        """End the process, if it still runs (paused or not)."""
        if self.proc is not None and self.proc.returncode is None:
            self.proc.kill()
            await self.proc.wait()
        if self._reader is not None:
            await self._reader

    def log(self) -> str:
        """Return what the process logged."""
        return "".join(self.lines.items)


async def seat_games(
    standin: DiscordStandIn, guilds: list[Guild], *, lang: str = "nb"
) -> list[Table]:
    """Start and accept one game in a new channel of each guild."""
    tables: list[Table] = []
    for n, guild in enumerate(guilds):
        channel = standin.add_channel(guild, f"krig-{n}")
        alice = standin.add_user(f"a{n}", f"Alice {n}", locale=lang)
        bob = standin.add_user(f"b{n}", f"Bob {n}", locale=lang)
        for user in (alice, bob):
            standin.add_member(guild, user)
        tables.append(await deal(standin, channel, alice, bob, n))
    return tables


async def deal(standin: DiscordStandIn, channel: Channel, alice: User, bob: User, n: int) -> Table:
    """Start a game between two players and return it as they know it."""
    started = await standin.slash(
        "krig start", user=alice, channel=channel, options={"opponent": bob}
    )
    challenge = await started.response(timeout=20)
    assert challenge.message is not None, text_of(challenge)
    game_id = game_id_of(challenge.message)
    accepted = await (
        await standin.click(challenge.message, f"krig:accept:{game_id}", user=bob)
    ).response(timeout=20)
    assert accepted.type == UPDATE_MESSAGE, text_of(accepted)
    return Table(n, game_id, (alice, bob), challenge.message)


def guilds_on(standin: DiscordStandIn, shards: range, per_shard: int) -> list[Guild]:
    """Add ``per_shard`` guilds on each shard."""
    return [
        standin.add_guild(f"server {shard}.{k}", shard=shard, locale="nb")
        for shard in shards
        for k in range(per_shard)
    ]


async def end_processes(
    standin: DiscordStandIn, made: Sequence[ShardProcess | AutoProcess]
) -> None:
    """Stop every process a test made, then check what they left: no traceback and no token in
    their logs, and no identify before its bucket's turn."""
    for process in made:
        await process.stop()
    for process in made:
        assert "Traceback" not in process.log(), process.log()
        assert SECRET not in process.log()
    refused = [e for e in standin.gateway_events.items if e.kind == "identify_refused"]
    assert refused == [], "an identify came before its bucket's turn"
