"""Processes the tests start: the bot as ``python bot.py``, and what the suite leaves behind."""

from __future__ import annotations

import asyncio
import os
import re
import select
import signal
import socket
import subprocess
import sys
import time
from asyncio.subprocess import Process
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path

import pytest

from tests.standin import BotCrashed, DiscordStandIn, Message
from tests.standin.fixtures import SampleWorld
from tests.support.players import UPDATE_MESSAGE, answer_of
from tests.support.settings import IDENTIFY_SECONDS

RUN_TAG = "KRIG_TEST_RUN"
"""Set to the pytest process's id in its environment, so every process the suite starts (and
each of theirs) carries it, even once it has been adopted by init when its parent died."""


LEFTOVER_GRACE = 5.0
"""Seconds a process still there at the end may take to exit (a worker signalled just now)."""


def _stat(pid: int) -> tuple[int, str] | None:
    """Return a process's parent and state (Linux), or None once it is gone."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = text.rsplit(")", 1)[1].split()  # the name in parentheses may hold spaces
    return int(fields[1]), fields[0]


def _pids() -> list[int]:
    return [int(name) for name in os.listdir("/proc") if name.isdigit()]


def command_line(pid: int) -> str:
    """Return how a process was started ("" once it is gone)."""
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return ""
    return raw.replace(b"\0", b" ").decode(errors="replace").strip()


def descendants(root: int) -> set[int]:
    """Return the living processes under ``root``: children, theirs, and so on."""
    parents = {pid: stat for pid in _pids() if (stat := _stat(pid)) is not None}
    found: set[int] = set()
    frontier = {root}
    while frontier:
        frontier = {
            pid
            for pid, (parent, state) in parents.items()
            if parent in frontier and pid not in found and state != "Z"
        }
        found |= frontier
    return found


def tagged(key: str, value: str) -> set[int]:
    """Return the living processes whose environment has ``key=value``."""
    wanted = f"{key}={value}".encode()
    found = set()
    for pid in _pids():
        try:
            environ = Path(f"/proc/{pid}/environ").read_bytes()  # empty for a zombie
        except OSError:
            continue
        if wanted in environ.split(b"\0"):
            found.add(pid)
    return found


def exits_within(pid: int, *, seconds: float) -> bool:
    """Wait for any process (not only a child of ours) to end; tell whether it did in time."""
    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        return True
    try:
        ready, _, _ = select.select([fd], [], [], seconds)  # readable once the process ends
        return bool(ready)
    finally:
        os.close(fd)


def still_running(pids: Iterable[int], *, seconds: float) -> list[int]:
    """Give each process up to ``seconds`` in all to end; return those that did not."""
    deadline = time.monotonic() + seconds
    return [
        pid
        for pid in sorted(pids)
        if not exits_within(pid, seconds=max(0.0, deadline - time.monotonic()))
    ]


def leftovers() -> list[int]:
    """Return the processes this test run started that are still running."""
    me = os.getpid()
    ours = (descendants(me) | tagged(RUN_TAG, str(me))) - {me}
    # multiprocessing's resource tracker serves this process itself and ends with it.
    ours = {
        pid
        for pid in ours
        if not (
            (_stat(pid) or (0, ""))[0] == me
            and "multiprocessing.resource_tracker" in command_line(pid)
        )
    }
    return still_running(ours, seconds=LEFTOVER_GRACE)


ROOT = Path(__file__).resolve().parents[2]


BOT = ROOT / "bot.py"


SECRET = "sekret-token-do-not-print"


def bot_env(base: Mapping[str, str], **values: str) -> dict[str, str]:
    """Return an environment with only what the bot needs (and the run's tag), plus ``values``.

    The card emojis are off, as for the test bots in the tests' own process (``make_settings``):
    a start uploads nothing, and the tables read as labels."""
    env = {
        key: base[key]
        for key in ("PATH", "HOME", "PYTHONPATH", "KRIG_TEST_DISCORD_URL", RUN_TAG)
        if key in base
    }
    env["KRIG_CARD_EMOJIS"] = "off"
    env.update(values)
    return env


def run_once(env: Mapping[str, str], cwd: Path, bot: Path = BOT) -> tuple[int, str, str]:
    """Run the bot to completion (for start-up failures) and return (status, stdout, stderr)."""
    done = subprocess.run(
        [sys.executable, str(bot)],
        env=dict(env),
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
    )
    return done.returncode, done.stdout, done.stderr


COLOURS = re.compile(r"\x1b\[[0-9;]*m")


PROGRESS = re.compile(r"^\S+ \S+ (DEBUG|INFO) ")
"""A line of the bot's log telling its progress (discord.py's format, colours removed)."""


def failure_line(err: str) -> str:
    """Return the one line a failed start printed, checking that it printed nothing else.

    A bot that got as far as logging may have logged its progress first (starting, logging
    in); nothing else is allowed: no traceback, no warning.
    """
    assert "Traceback" not in err, err
    lines = [COLOURS.sub("", line) for line in err.splitlines() if line.strip()]
    said = [line for line in lines if not PROGRESS.match(line)]
    assert len(said) == 1, err
    assert said[0].startswith("krigbot: "), err
    return said[0]


held_sockets: dict[int, socket.socket] = {}
"""The sockets holding the ports of ``closed_port``, by port (a test may let one go)."""


@pytest.fixture
def closed_port() -> Iterator[int]:
    """Return a port on 127.0.0.1 where nothing listens (held, so nothing else takes it)."""
    held = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    held.bind(("127.0.0.1", 0))  # bound, never listening: connecting is refused
    port = held.getsockname()[1]
    held_sockets[port] = held
    try:
        yield port
    finally:
        held_sockets.pop(port, held).close()


class BotProcess:
    """One `python bot.py` process against the stand-in, restartable."""

    def __init__(self, standin: DiscordStandIn, tmp_path: Path, **settings: str) -> None:
        self.standin = standin
        self.tmp_path = tmp_path
        self.db = tmp_path / "data" / "krig.db"
        self.settings = settings
        """More of the bot's environment (``KRIG_DATABASE_URL``)."""
        self.proc: asyncio.subprocess.Process | None = None

    async def start(self) -> None:
        after = len(self.standin.gateway_events)
        env = bot_env(
            self.standin.subprocess_env(),
            DISCORD_TOKEN=SECRET,
            KRIG_DB=str(self.db),
            **{"KRIG_IDENTIFY_SECONDS": str(IDENTIFY_SECONDS), **self.settings},
        )
        with (self.tmp_path / "stderr.txt").open("ab") as stderr:
            self.proc = await asyncio.create_subprocess_exec(
                sys.executable,
                str(BOT),
                env=env,
                cwd=self.tmp_path,
                stderr=stderr,
                stdout=asyncio.subprocess.DEVNULL,
            )
        watcher = asyncio.create_task(self.proc.wait())
        self.standin.watch_task(watcher)  # a dying process fails the wait at once
        try:
            await self.standin.wait_for_ready(after=after, timeout=30)
        except BotCrashed as exc:
            raise AssertionError((self.tmp_path / "stderr.txt").read_text()) from exc
        finally:
            self.standin.unwatch_task(watcher)
            watcher.cancel()

    async def kill(self) -> None:
        assert self.proc is not None
        closed = self.standin.gateway_events.cursor()
        self.proc.send_signal(signal.SIGKILL)
        assert await self.proc.wait() == -signal.SIGKILL
        await closed.next(lambda event: event.kind == "close", timeout=10)

    async def stop(self) -> None:
        if self.proc is not None and self.proc.returncode is None:
            self.proc.kill()
            await self.proc.wait()


async def three_rounds_played(standin: DiscordStandIn, world: SampleWorld) -> Message:
    """Let Alice challenge Bob, Bob accept and Alice flip three times, each answer awaited as a
    player would await a bot in another process; return the table after the third round."""
    challenge = await standin.slash(
        "krig start", user=world.alice, channel=world.no_channel, options={"opponent": world.bob}
    )
    message = (await answer_of(standin, challenge, 10, shows=True)).message
    assert message is not None
    accepted = await standin.click(message, "krig:accept:1", user=world.bob)
    assert (await answer_of(standin, accepted, 10, shows=True)).type == UPDATE_MESSAGE
    table = None
    for _ in range(3):
        flipped = await standin.slash("flip", user=world.alice, channel=world.no_channel)
        table = (await answer_of(standin, flipped, 10, shows=True)).message
    assert table is not None
    return table


async def spawn(env: Mapping[str, str], cwd: Path, stderr: Path, bot: Path = BOT) -> Process:
    """Start `python bot.py` with its stderr going to a file."""
    with stderr.open("ab") as err:
        return await asyncio.create_subprocess_exec(
            sys.executable,
            str(bot),
            env=dict(env),
            cwd=cwd,
            stderr=err,
            stdout=asyncio.subprocess.DEVNULL,
        )
