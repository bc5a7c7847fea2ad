"""`python bot.py` as a user runs it: start-up failures, SIGKILL between flips, restart.

Every process here is the real one. None can reach the internet: Discord is the stand-in on
127.0.0.1, or a port there where nothing listens, or a name under .invalid that is never looked up.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import logging
import os
import re
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import time
import uuid
from asyncio.subprocess import Process
from collections.abc import AsyncIterator, Callable, Mapping
from pathlib import Path

import pytest

from krigbot.bot import quiet_discord_logs
from krigbot.engine import Rules, new_game
from krigbot.i18n import card_label, t
from krigbot.storage import Storage
from tests.standin import DiscordStandIn
from tests.standin.fixtures import SampleWorld
from tests.standin.server import SITECUSTOMIZE_DIR
from tests.support.players import answer_of
from tests.support.postgres import Cluster
from tests.support.processes import (
    BOT,
    COLOURS,
    ROOT,
    SECRET,
    BotProcess,
    bot_env,
    closed_port,
    command_line,
    exits_within,
    failure_line,
    held_sockets,
    run_once,
    spawn,
    still_running,
    tagged,
    three_rounds_played,
)

pytestmark = pytest.mark.slow

__all__ = ["closed_port"]

VOICE = "voice will NOT be supported"
RUNS = 6
"""Runs of a start that must fail cleanly: the traceback after its line came in some, not all."""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """Return a Krigbot checkout of its own: bot.py and the package, nothing else yet."""
    folder = tmp_path / "krigbot-checkout"
    folder.mkdir()
    shutil.copy(BOT, folder / "bot.py")
    (folder / "krigbot").symlink_to(ROOT / "krigbot", target_is_directory=True)
    return folder


@pytest.fixture
def elsewhere(tmp_path: Path) -> Path:
    """Return a folder that is not the project, to start the bot from (as cron or systemd do)."""
    folder = tmp_path / "somewhere-else"
    folder.mkdir()
    return folder


def test_missing_token_exits_with_one_line_saying_where_it_looked(
    project: Path, elsewhere: Path
) -> None:
    status, out, err = run_once(bot_env(os.environ), elsewhere, project / "bot.py")
    assert status == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1
    assert "DISCORD_TOKEN" in lines[0]
    assert str(project / ".env") in lines[0]
    assert "Traceback" not in err + out


def test_the_env_file_beside_bot_py_is_read_whatever_the_current_folder(
    project: Path, elsewhere: Path
) -> None:
    # A .env with a malformed setting proves the file was read, without reaching Discord.
    (project / ".env").write_text(f"DISCORD_TOKEN={SECRET}\nKRIG_DEV_GUILD=abc\n")
    (elsewhere / ".env").write_text("KRIG_DEV_GUILD=123\n")  # not the project's: not read
    status, out, err = run_once(bot_env(os.environ), elsewhere, project / "bot.py")
    assert status == 2
    assert "KRIG_DEV_GUILD" in failure_line(err)
    assert SECRET not in out + err


def test_a_web_port_without_a_secret_exits_with_one_line_saying_what_to_do(
    tmp_path: Path,
) -> None:
    env = bot_env(
        os.environ, DISCORD_TOKEN=SECRET, KRIG_WEB_PORT="8080", KRIG_DB=str(tmp_path / "krig.db")
    )
    status, out, err = run_once(env, tmp_path)
    assert status == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1
    assert "KRIG_WEB_SECRET" in lines[0]
    assert SECRET not in out + err
    assert "Traceback" not in err + out


@pytest.mark.parametrize(
    ("server", "prefix", "settings", "said"),
    [
        ("web", "KRIG_WEB", {"KRIG_WEB_SECRET": "web-secret-0123456789"}, "the web view"),
        ("metrics", "KRIG_METRICS", {}, "metrics"),
    ],
)
@pytest.mark.parametrize(
    ("family", "host", "shown"),
    [(socket.AF_INET, "127.0.0.1", "127.0.0.1"), (socket.AF_INET6, "::1", "[::1]")],
)
def test_a_port_in_use_exits_with_one_line_saying_so(
    tmp_path: Path,
    server: str,
    prefix: str,
    settings: dict[str, str],
    said: str,
    family: socket.AddressFamily,
    host: str,
    shown: str,
) -> None:
    with socket.socket(family) as taken:
        taken.bind((host, 0))
        taken.listen()
        port = str(taken.getsockname()[1])
        env = bot_env(
            os.environ,
            DISCORD_TOKEN=SECRET,
            KRIG_DB=str(tmp_path / "krig.db"),
            KRIG_RENDER_PROCESSES="0",
            **{f"{prefix}_HOST": host, f"{prefix}_PORT": port},
            **settings,
        )
        status, out, err = run_once(env, tmp_path)
    assert status == 2
    # After the log's start-up line, one line that says what is wrong, and no traceback; the
    # address is written as the link the server would have had, an IPv6 host in brackets.
    last = err.strip().splitlines()[-1]
    assert f"krigbot: cannot serve {said} on http://{shown}:{port}/" in last
    assert "Traceback" not in err + out
    assert SECRET not in out + err


def test_a_relative_database_path_is_taken_in_the_project_folder(
    project: Path, elsewhere: Path
) -> None:
    (project / "games").mkdir()  # a folder where the database file should be: refused
    (project / ".env").write_text(f"DISCORD_TOKEN={SECRET}\nKRIG_DB=games\n")
    status, _, err = run_once(bot_env(os.environ), elsewhere, project / "bot.py")
    assert status == 2
    assert f"cannot use the database {project / 'games'}:" in failure_line(err)
    assert not (elsewhere / "games").exists()


async def test_rejected_token_exits_with_one_line_and_never_prints_it(tmp_path: Path) -> None:
    async with DiscordStandIn(token="the-right-token") as standin:
        env = bot_env(
            standin.subprocess_env(), DISCORD_TOKEN=SECRET, KRIG_DB=str(tmp_path / "krig.db")
        )
        status, out, err = await asyncio.to_thread(run_once, env, tmp_path)
    assert status == 2
    assert "rejected" in failure_line(err)
    assert SECRET not in out + err


NO_DNS = """\
# Written by tests/test_process.py: a name under .invalid (RFC 6761) is never asked of a
# resolver; its lookup fails here at once, as every lookup does with the network's DNS down.
import runpy
import socket
import sqlite3

_real = socket.getaddrinfo


def _getaddrinfo(host, *args, **kwargs):
    name = host.decode() if isinstance(host, bytes) else str(host or "")
    if name.rstrip(".").endswith(".invalid"):
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
    return _real(host, *args, **kwargs)


socket.getaddrinfo = _getaddrinfo
runpy.run_path({standin!r})  # and point discord.py at the URL, as the stand-in's own does
"""


class Said:
    """The lines a bot process writes to stderr, as they come (read from its pipe)."""

    def __init__(self, proc: Process) -> None:
        assert proc.stderr is not None
        self.lines: list[str] = []
        self._changed = asyncio.Condition()
        self._reader = asyncio.create_task(self._read(proc.stderr))

    async def _read(self, stream: asyncio.StreamReader) -> None:
        while line := await stream.readline():
            async with self._changed:
                self.lines.append(COLOURS.sub("", line.decode(errors="replace")).rstrip("\n"))
                self._changed.notify_all()
        async with self._changed:
            self._changed.notify_all()

    async def wait(
        self, test: Callable[[list[str]], bool], *, what: str, seconds: float = 30
    ) -> None:
        """Wait until the lines so far pass ``test`` (fails if the process ends first)."""

        async def passed() -> None:
            async with self._changed:
                while not test(self.lines):
                    assert not self._reader.done(), f"the bot ended before {what}:\n{self.text}"
                    await self._changed.wait()

        try:
            await asyncio.wait_for(passed(), seconds)
        except TimeoutError:
            raise AssertionError(f"no {what} in {seconds} s; the bot said:\n{self.text}") from None

    async def closed(self) -> None:
        """Wait until the process has closed its stderr (it ended)."""
        await asyncio.wait_for(asyncio.shield(self._reader), 30)

    @property
    def text(self) -> str:
        return "\n".join(self.lines)


async def spawn_said(env: Mapping[str, str], cwd: Path) -> tuple[Process, Said]:
    """Start `python bot.py`, its stderr read line by line as it comes."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        str(BOT),
        env=dict(env),
        cwd=cwd,
        stderr=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.DEVNULL,
    )
    return proc, Said(proc)


def retries(lines: list[str], start: str = "Discord is out of reach") -> list[str]:
    """Return the lines announcing another try (the bot's WARNING, one line each)."""
    return [line for line in lines if f"WARNING  krigbot: {start}" in line]


AWAY_PAUSE = re.compile(r"; trying again in (\d+\.\d) s$")


async def ended(proc: Process) -> int:
    """Return the status of a process told to stop (30 s for it, then it is a failure)."""
    try:
        return await asyncio.wait_for(proc.wait(), 30)
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()


@contextlib.asynccontextmanager
async def watched(standin: DiscordStandIn, proc: Process) -> AsyncIterator[None]:
    """Within the block, a bot process that dies fails the stand-in's waits at once."""
    watcher = asyncio.create_task(proc.wait())
    standin.watch_task(watcher)
    try:
        yield
    finally:
        standin.unwatch_task(watcher)
        watcher.cancel()


@contextlib.asynccontextmanager
async def stopped_at_the_end(proc: Process) -> AsyncIterator[None]:
    """After the block, SIGTERM must end the process with status 0; a failed block kills it."""
    try:
        yield
        proc.send_signal(signal.SIGTERM)
        assert await ended(proc) == 0
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()


@pytest.mark.parametrize("unreachable", ["closed-port", "no-dns"])
async def test_discord_out_of_reach_at_start_is_retried_and_a_sigterm_in_the_pause_ends_it(
    tmp_path: Path, closed_port: int, unreachable: str
) -> None:
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(
        NO_DNS.format(standin=str(SITECUSTOMIZE_DIR / "sitecustomize.py"))
    )
    host = "127.0.0.1" if unreachable == "closed-port" else "discord.invalid"
    env = bot_env(
        os.environ,
        PYTHONPATH=str(site),
        KRIG_TEST_DISCORD_URL=f"http://{host}:{closed_port}",
        DISCORD_TOKEN=SECRET,
        KRIG_DB=str(tmp_path / "krig.db"),
    )
    proc, said = await spawn_said(env, tmp_path)
    try:
        # Three tries failed: the third pause is the longest yet (2 to 4 s), the one cut short.
        await said.wait(lambda lines: len(retries(lines)) >= 3, what="three retries")
        proc.send_signal(signal.SIGTERM)
        status = await ended(proc)
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
    await said.closed()
    assert status == 0, said.text  # a stop, not a failure: nothing for a person to mend
    assert "Traceback" not in said.text
    tried = retries(said.lines)
    assert said.lines[-1] == tried[-1]  # stopped in the pause: no other try after the signal
    why = (
        f"({host}:{closed_port} refused the connection)"
        if unreachable == "closed-port"
        else f"(no DNS answer for {host})"
    )
    for line in tried:
        assert f"krigbot: Discord is out of reach {why}; trying again in " in line, line
        assert AWAY_PAUSE.search(line), line
    pauses = [float(AWAY_PAUSE.findall(line)[0]) for line in tried]
    assert pauses[0] <= 1.0 < pauses[2] <= 4.0  # growing, from a second
    assert SECRET not in said.text


async def test_a_bot_started_while_discord_is_away_comes_up_when_it_is_back(
    tmp_path: Path, closed_port: int
) -> None:
    # Discord out of reach at boot (no route yet, the port refused): no person restarts the bot.
    env = bot_env(
        os.environ,
        PYTHONPATH=str(SITECUSTOMIZE_DIR),
        KRIG_TEST_DISCORD_URL=f"http://127.0.0.1:{closed_port}",
        DISCORD_TOKEN=SECRET,
        KRIG_DB=str(tmp_path / "krig.db"),
        KRIG_RENDER_PROCESSES="0",
    )
    proc, said = await spawn_said(env, tmp_path)
    try:
        await said.wait(lambda lines: len(retries(lines)) >= 2, what="two retries")
        # Discord is back, where the bot looks for it (the port was held, never listening).
        held_sockets.pop(closed_port).close()
        async with DiscordStandIn(port=closed_port) as standin:
            async with watched(standin, proc):
                await standin.wait_for_ready(timeout=60)
            await said.wait(
                lambda lines: any("Krigbot is online as Krigbot" in line for line in lines),
                what="the line saying it is online",
            )
            proc.send_signal(signal.SIGTERM)
            assert await ended(proc) == 0
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
    await said.closed()
    assert "Traceback" not in said.text
    assert SECRET not in said.text


@pytest.mark.parametrize(
    ("status", "via", "said_why"),
    [
        (503, True, "Discord's servers failed (503)"),
        (429, False, "Discord asked the bot to slow down (429)"),
    ],
    ids=["server-error", "cloudflare-429"],
)
async def test_discord_failing_at_start_is_tried_again_until_the_bot_is_up(
    standin: DiscordStandIn, tmp_path: Path, status: int, via: bool, said_why: str
) -> None:
    # discord.py tries a 503 once, and a 429 without Via (Cloudflare's, not Discord's) not again.
    standin.fail_next("GET", r"/users/@me$", status=status, via=via, times=2)
    env = bot_env(
        standin.subprocess_env(),
        DISCORD_TOKEN=SECRET,
        KRIG_DB=str(tmp_path / "krig.db"),
        KRIG_RENDER_PROCESSES="0",
    )
    proc, said = await spawn_said(env, tmp_path)
    async with stopped_at_the_end(proc), watched(standin, proc):
        await standin.wait_for_ready(timeout=60)
    await said.closed()
    tried = retries(said.lines, said_why)
    assert len(tried) == 2, said.text
    assert all(AWAY_PAUSE.search(line) for line in tried)
    assert "Traceback" not in said.text


@pytest.mark.parametrize(
    "problem", ["folder", "not-a-database", "folder-cannot-be-made", "from-a-newer-krigbot"]
)
def test_an_unusable_database_says_one_line_and_closes_cleanly(
    tmp_path: Path, problem: str
) -> None:
    path = tmp_path / "krig.db"
    original = b"this is not an sqlite file at all" * 100
    if problem == "folder":
        path.mkdir()
    elif problem == "not-a-database":
        path.write_bytes(original)
    elif problem == "folder-cannot-be-made":
        (tmp_path / "data").write_text("a file where the database's folder should be")
        path = tmp_path / "data" / "krig.db"
    else:
        with contextlib.closing(sqlite3.connect(path)) as newer:
            newer.execute("PRAGMA user_version = 999")
    env = bot_env(os.environ, DISCORD_TOKEN=SECRET, KRIG_DB=str(path))
    for _ in range(RUNS):
        status, out, err = run_once(env, tmp_path)
        assert status == 2
        assert err.count("\n") == 1, err  # that line and nothing after it
        assert err.startswith(f"krigbot: cannot use the database {path}: "), err
        assert SECRET not in out + err
    if problem == "not-a-database":
        assert "not a SQLite database" in err
        assert path.read_bytes() == original


def children(pid: int) -> list[int]:
    """Return the ids of a process's child processes (Linux), started by any of its threads."""
    found = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        with contextlib.suppress(OSError):  # a thread that ended meanwhile
            found += [int(child) for child in (task / "children").read_text().split()]
    return found


async def until(condition: Callable[[], bool], *, seconds: float, what: str) -> None:
    """Wait for a state of another process, which nothing can tell the test about."""
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, f"timed out after {seconds} s waiting for {what}"
        await asyncio.sleep(0.005)  # ok: a bounded poll; no event tells of another process


async def test_sigkill_between_flips_loses_no_round_and_old_buttons_work(
    standin: DiscordStandIn, standin_world: SampleWorld, bot_process: BotProcess
) -> None:
    w = standin_world
    await bot_process.start()
    table = await three_rounds_played(standin, w)
    assert "krig:flip:1:3" in table.custom_ids()

    assert bot_process.proc is not None
    workers = children(bot_process.proc.pid)
    assert workers, "the bot draws its pictures in a worker process"
    await bot_process.kill()  # right after the third acknowledged flip
    # A killed bot leaves no worker behind: each notices and exits.
    for worker in workers:
        assert exits_within(worker, seconds=10), f"render worker {worker} outlived the bot"
    await bot_process.start()

    status = await answer_of(
        standin, await standin.slash("krig status", user=w.alice, channel=w.no_channel), 10
    )
    assert status.ephemeral
    assert "3" in status.embeds[0]["description"]

    pressed = await standin.click(table, "krig:flip:1:3", user=w.bob)
    after = await answer_of(standin, pressed, 10, shows=True)
    assert after.type == 7  # the old table message is updated in place by the new process
    assert after.embeds[0]["title"] == t("nb", "table.title", round=4)

    # The same future as if nothing had happened: the engine replays round 4 from the seed.
    storage = await Storage.open(bot_process.db)
    try:
        row = await storage.games.get_game(1)
    finally:
        await storage.close()
    assert row is not None
    assert row.round == 4
    replay = new_game(Rules.from_dict(row.rules), seed=row.seed)
    for _ in range(3):
        replay.play_round()
    fourth = replay.play_round()
    description = after.embeds[0]["description"]
    for _, card in fourth.battle:
        assert card_label(card, "nb") in description


def worker_started(bot: int) -> bool:
    """Tell whether the bot has a drawing worker that is past exec (and maybe no further)."""
    return any("spawn_main" in command_line(child) for child in children(bot))


@pytest.mark.parametrize("moment", ["at-once", "worker-started", "logging-in", "ready"])
async def test_a_bot_killed_at_any_moment_of_its_start_leaves_no_process_behind(
    standin: DiscordStandIn, tmp_path: Path, moment: str
) -> None:
    # The tag finds the bot's processes after its death, when init has adopted them.
    tag = uuid.uuid4().hex
    env = bot_env(
        standin.subprocess_env(),
        DISCORD_TOKEN=SECRET,
        KRIG_DB=str(tmp_path / "krig.db"),
        KRIG_TEST_BOT=tag,
    )
    requests = standin.requests.cursor()
    proc = await spawn(env, tmp_path, tmp_path / "stderr.txt")
    try:
        if moment == "worker-started":
            # The worker runs, but has not yet got to learn whose it is: the moment a bot
            # killed within a second of its start left its worker waiting forever.
            await until(lambda: worker_started(proc.pid), seconds=30, what="a drawing worker")
        elif moment == "logging-in":
            await requests.next(lambda r: r.path.endswith("/users/@me"), timeout=30)
        elif moment == "ready":
            await standin.wait_for_ready(timeout=30)
        left = tagged("KRIG_TEST_BOT", tag) - {proc.pid}
    finally:
        proc.send_signal(signal.SIGKILL)
        await proc.wait()
    left |= tagged("KRIG_TEST_BOT", tag)  # whatever it started meanwhile, too
    if moment != "at-once":
        assert left, "the bot had started its drawing worker"
    survivors = still_running(left, seconds=10)
    assert survivors == [], [command_line(pid) for pid in survivors]


async def test_started_from_another_folder_the_bot_uses_its_own_and_says_nothing_of_voice(
    standin: DiscordStandIn, project: Path, elsewhere: Path
) -> None:
    (project / ".env").write_text(f"DISCORD_TOKEN={SECRET}\n")
    env = bot_env(standin.subprocess_env())
    stderr = elsewhere / "stderr.txt"
    proc = await spawn(env, elsewhere, stderr, project / "bot.py")
    async with stopped_at_the_end(proc), watched(standin, proc):
        await standin.wait_for_ready(timeout=30)
    assert (project / "data" / "krig.db").is_file()
    assert not (elsewhere / "data").exists()
    log = COLOURS.sub("", stderr.read_text())
    assert VOICE not in log
    assert "WARNING" not in log
    assert "Traceback" not in log


RETRY = "lost the connection to Discord"


async def test_a_connection_lost_after_start_is_retried_with_one_line_per_attempt(
    tmp_path: Path,
) -> None:
    stderr = tmp_path / "stderr.txt"
    async with DiscordStandIn() as standin:
        env = bot_env(
            standin.subprocess_env(), DISCORD_TOKEN=SECRET, KRIG_DB=str(tmp_path / "krig.db")
        )
        proc = await spawn(env, tmp_path, stderr)
        try:
            await standin.wait_for_ready(timeout=30)
        except BaseException:
            proc.kill()
            await proc.wait()
            raise
    # Discord is gone (its port closed): discord.py retries with a growing, random pause.
    try:
        try:
            await until(
                lambda: stderr.read_text().count(RETRY) >= 2 or proc.returncode is not None,
                seconds=30,
                what="two retries",
            )
        except AssertionError as exc:
            raise AssertionError(f"{exc}; the bot said:\n{stderr.read_text()}") from None
        assert proc.returncode is None, stderr.read_text()  # still trying, as it should
    finally:
        if proc.returncode is None:
            proc.send_signal(signal.SIGTERM)
        status = await proc.wait()
    assert status == 0
    log = COLOURS.sub("", stderr.read_text())
    assert "Traceback" not in log
    retries = [line for line in log.splitlines() if RETRY in line]
    assert len(retries) >= 2
    for line in retries:
        assert " WARNING " in line  # discord.py's own warning, one line, shown as it should be
        assert "trying again in" in line


async def test_a_bot_that_cannot_reach_discord_s_gateway_at_start_stops_when_told(
    standin: DiscordStandIn, tmp_path: Path
) -> None:
    # Discord's gateway away at start: each shard tries again every 5 seconds, and discord.py's
    # close() alone never ended that, so systemctl stop waited for its SIGKILL.
    standin.gateway.refusing = True
    env = bot_env(standin.subprocess_env(), DISCORD_TOKEN=SECRET, KRIG_DB=str(tmp_path / "krig.db"))
    proc = await spawn(env, tmp_path, tmp_path / "stderr.txt")
    try:
        await standin.gateway_events.wait(
            lambda e: e.kind == "refused", timeout=30, what="a connection to the gateway"
        )
        proc.send_signal(signal.SIGTERM)
        assert await asyncio.wait_for(proc.wait(), 30) == 0
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()


LEAK = """\
import subprocess
import sys


def test_that_leaves_a_process_running():
    subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)", {marker!r}])  # ok
"""


def test_the_suite_fails_naming_a_process_a_test_left_running(tmp_path: Path) -> None:
    marker = f"left-behind-{uuid.uuid4().hex}"
    leak = tmp_path / "test_leak.py"
    leak.write_text(LEAK.format(marker=marker))
    try:
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "pytest",
                "-p",
                "tests.conftest",
                "-q",
                tmp_path / "test_leak.py",
            ],
            cwd=ROOT,
            env=bot_env(os.environ),
            capture_output=True,
            text=True,
            timeout=120,
        )
    finally:
        leaked = [pid for pid in _all_pids() if marker in command_line(pid)]
        for pid in leaked:
            os.kill(pid, signal.SIGKILL)
        assert still_running(leaked, seconds=10) == []
    assert "1 passed" in done.stdout  # the test itself passed...
    assert done.returncode == pytest.ExitCode.TESTS_FAILED  # ...and the run failed
    assert "processes left running by the tests" in done.stdout
    assert marker in done.stdout
    assert leaked, "the leaked process was still there after the run"


def _all_pids() -> list[int]:
    return [int(name) for name in os.listdir("/proc") if name.isdigit()]


def test_the_voice_warnings_are_dropped_and_discord_warnings_still_shown(
    caplog: pytest.LogCaptureFixture,
) -> None:
    quiet_discord_logs()
    client = logging.getLogger("discord.client")
    with caplog.at_level(logging.WARNING, logger="discord"):
        client.warning("PyNaCl is not installed, voice will NOT be supported")
        client.warning("davey is not installed, voice will NOT be supported")
        client.warning("Application has an interaction endpoint URL set, this means …")
        logging.getLogger("discord.gateway").warning("Can't keep up, websocket is 9.0s behind.")
    shown = [record.getMessage() for record in caplog.records]
    assert shown == [
        "Application has an interaction endpoint URL set, this means …",
        "Can't keep up, websocket is 9.0s behind.",
    ]


async def test_postgresql_out_of_reach_at_start_is_waited_for(
    standin: DiscordStandIn, postgres: Cluster, tmp_path: Path
) -> None:
    # At boot the bot may start before PostgreSQL: its socket is not there yet.
    url = postgres.create_database()
    socket_dir = tmp_path / "pg-socket"  # where the bot looks; the server's folder comes later
    env = bot_env(
        standin.subprocess_env(),
        DISCORD_TOKEN=SECRET,
        KRIG_DATABASE_URL=url.replace(f"host={postgres.socket_dir}", f"host={socket_dir}"),
        KRIG_RENDER_PROCESSES="0",
    )
    proc, said = await spawn_said(env, tmp_path)
    async with stopped_at_the_end(proc):
        await said.wait(
            lambda lines: bool(retries(lines, "the database")), what="a retry of the database"
        )
        socket_dir.symlink_to(postgres.socket_dir, target_is_directory=True)  # the server is up
        async with watched(standin, proc):
            await standin.wait_for_ready(timeout=60)
    await said.closed()
    (line, *_) = retries(said.lines, "the database")
    assert "is out of reach (Cannot reach the PostgreSQL server" in line, line
    assert AWAY_PAUSE.search(line), line
    assert "Traceback" not in said.text


async def test_a_database_url_postgresql_refuses_for_good_exits_with_one_line(
    postgres: Cluster, tmp_path: Path
) -> None:
    # A database that does not exist: a person must create it; no retry.
    url = postgres.dsn("no_such_database")
    env = bot_env(os.environ, DISCORD_TOKEN=SECRET, KRIG_DATABASE_URL=url)
    status, _, err = await asyncio.to_thread(run_once, env, tmp_path)
    assert status == 2
    assert "does not exist" in failure_line(err)


async def test_the_first_start_says_two_plain_lines(
    standin: DiscordStandIn, standin_world: SampleWorld, tmp_path: Path
) -> None:
    env = bot_env(standin.subprocess_env(), DISCORD_TOKEN=SECRET, KRIG_DB=str(tmp_path / "krig.db"))
    proc, said = await spawn_said(env, tmp_path)
    async with stopped_at_the_end(proc):
        await said.wait(
            lambda lines: any("Krigbot is online" in line for line in lines),
            what="the line saying it is online",
        )
    await said.closed()
    messages = [line.split(" ", 2)[2] for line in said.lines]  # without the time
    assert messages == [
        f"INFO     krigbot: Krigbot is starting: database {tmp_path / 'krig.db'}, "
        "shards chosen by Discord",
        f"INFO     krigbot.bot: Krigbot is online as Krigbot in {len(standin.guilds)} servers",
    ]


REAL_LOOKING = "MTQ2MjM0NTY3ODkwMTIzNDU2Nw.GkR7xQ.Zr2c7wQ2nV8pXb4YtL9sJm3Hd6Fa1KeUo0Ii5g"
"""A token of a bot token's shape (base64 user id, timestamp, HMAC), as the portal gives one."""


@pytest.mark.parametrize("token", [REAL_LOOKING, "x"], ids=["real-looking", "one-letter"])
async def test_at_debug_no_log_line_holds_a_token_and_short_text_is_not_mangled(
    standin: DiscordStandIn, standin_world: SampleWorld, tmp_path: Path, token: str
) -> None:
    w = standin_world
    env = bot_env(
        standin.subprocess_env(),
        DISCORD_TOKEN=token,
        KRIG_DB=str(tmp_path / "krig.db"),
        LOG_LEVEL="DEBUG",
    )
    proc, said = await spawn_said(env, tmp_path)
    async with stopped_at_the_end(proc), watched(standin, proc):
        await standin.wait_for_ready(timeout=60)
        challenge = await standin.slash(
            "krig start", user=w.alice, channel=w.no_channel, options={"opponent": w.bob}
        )
        await answer_of(standin, challenge, 10, shows=True)
    await said.closed()
    text = said.text
    # The settings, whole, at DEBUG: the token hidden, every other value as it is.
    (settings,) = [line for line in said.lines if "krigbot: settings: Settings(" in line]
    assert " DEBUG " in settings
    assert "token=<hidden>" in settings
    assert "log_format='text'" in settings
    assert "discord.http" in text  # discord.py's own DEBUG lines were written too
    interaction = standin.interactions[challenge.id].token
    assert f"/{interaction}/" not in text
    assert "/interactions/" in text  # the callback's URL, its token hidden
    if token == REAL_LOOKING:
        assert token not in text
        assert token.split(".")[2] not in text  # nor its secret part


def test_the_pauses_between_tries_double_from_a_second_to_a_minute_at_random() -> None:
    spec = importlib.util.spec_from_file_location("krigbot_main", BOT)
    assert spec is not None
    assert spec.loader is not None
    main = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(main)
    for attempt, (low, high) in enumerate([(0.5, 1), (1, 2), (2, 4), (4, 8), (8, 16), (16, 32)]):
        pauses = {main.retry_pause(attempt) for _ in range(50)}
        assert all(low <= pause <= high for pause in pauses), (attempt, pauses)
        assert len(pauses) > 1  # random: bots cut off together do not come back in step
    for attempt in (6, 7, 20, 1_000, 10**9):  # a long outage: a try a minute at most
        assert 30 <= main.retry_pause(attempt) <= 60
