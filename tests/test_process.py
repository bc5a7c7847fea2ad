"""`python bot.py` as a user runs it: start-up failures, SIGKILL between flips, restart."""

from __future__ import annotations

import asyncio
import os
import select
import signal
import sys
from collections.abc import AsyncIterator, Mapping
from pathlib import Path

import pytest

from krigbot.engine import Rules
from krigbot.engine.steal import new_game
from krigbot.i18n import card_label
from krigbot.storage import Storage
from tests.standin import BotCrashed, DiscordStandIn
from tests.standin.fixtures import SampleWorld

ROOT = Path(__file__).resolve().parent.parent
BOT = ROOT / "bot.py"
SECRET = "sekret-token-do-not-print"


def bot_env(base: Mapping[str, str], **values: str) -> dict[str, str]:
    """Return an environment with only what the bot needs, plus ``values``."""
    env = {
        key: base[key]
        for key in ("PATH", "HOME", "PYTHONPATH", "KRIG_TEST_DISCORD_URL")
        if key in base
    }
    env.update(values)
    return env


def run_once(env: Mapping[str, str], cwd: Path) -> tuple[int, str, str]:
    """Run the bot to completion (for start-up failures) and return (status, stdout, stderr)."""
    import subprocess

    done = subprocess.run(
        [sys.executable, str(BOT)],
        env=dict(env),
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
    )
    return done.returncode, done.stdout, done.stderr


def test_missing_token_exits_with_one_line_saying_what_to_do(tmp_path: Path) -> None:
    status, out, err = run_once(bot_env(os.environ), tmp_path)
    assert status == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1
    assert "DISCORD_TOKEN" in lines[0]
    assert ".env" in lines[0]
    assert "Traceback" not in err + out


def test_token_in_env_file_is_read(tmp_path: Path) -> None:
    # A .env with a malformed setting proves the file was read, without reaching Discord.
    (tmp_path / ".env").write_text(f"DISCORD_TOKEN={SECRET}\nKRIG_DEV_GUILD=abc\n")
    status, out, err = run_once(bot_env(os.environ), tmp_path)
    assert status == 2
    assert "KRIG_DEV_GUILD" in err
    assert SECRET not in out + err


def test_a_web_port_without_a_secret_exits_with_one_line_saying_what_to_do(
    tmp_path: Path,
) -> None:
    env = bot_env(os.environ, DISCORD_TOKEN=SECRET, KRIG_WEB_PORT="8080")
    status, out, err = run_once(env, tmp_path)
    assert status == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1
    assert "KRIG_WEB_SECRET" in lines[0]
    assert SECRET not in out + err
    assert "Traceback" not in err + out


def test_a_web_port_in_use_exits_with_one_line_saying_so(tmp_path: Path) -> None:
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = str(taken.getsockname()[1])
        env = bot_env(
            os.environ,
            DISCORD_TOKEN=SECRET,
            KRIG_WEB_PORT=port,
            KRIG_WEB_SECRET="web-secret-0123456789",
            KRIG_RENDER_PROCESSES="0",
        )
        status, out, err = run_once(env, tmp_path)
    assert status == 2
    # After the log's start-up line, one line that says what is wrong, and no traceback.
    assert f"krigbot: cannot serve the web view on 127.0.0.1:{port}" in err.strip().splitlines()[-1]
    assert "Traceback" not in err + out
    assert SECRET not in out + err


async def test_rejected_token_exits_with_one_line_and_never_prints_it(tmp_path: Path) -> None:
    async with DiscordStandIn(token="the-right-token") as standin:
        env = bot_env(
            standin.subprocess_env(), DISCORD_TOKEN=SECRET, KRIG_DB=str(tmp_path / "krig.db")
        )
        status, out, err = await asyncio.to_thread(run_once, env, tmp_path)
    assert status == 2
    lines = [line for line in err.strip().splitlines() if line.startswith("krigbot:")]
    assert len(lines) == 1
    assert "rejected" in lines[0]
    assert "Traceback" not in err
    assert SECRET not in out + err


def test_database_that_is_not_a_database_refuses_to_start(tmp_path: Path) -> None:
    broken = tmp_path / "krig.db"
    broken.write_bytes(b"this is not an sqlite file at all" * 100)
    env = bot_env(os.environ, DISCORD_TOKEN=SECRET, KRIG_DB=str(broken))
    status, out, err = run_once(env, tmp_path)
    assert status == 2
    failures = [line for line in err.splitlines() if line.startswith("krigbot:")]
    assert len(failures) == 1
    assert "not a SQLite database" in failures[0]
    assert "Traceback" not in err
    assert SECRET not in out + err


def children(pid: int) -> list[int]:
    """Return the ids of a process's child processes (Linux)."""
    text = Path(f"/proc/{pid}/task/{pid}/children").read_text()
    return [int(child) for child in text.split()]


def exits_within(pid: int, *, seconds: float) -> bool:
    """Wait for a process that is not our child to end; tell whether it did in time."""
    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        return True
    try:
        ready, _, _ = select.select([fd], [], [], seconds)  # readable once the process ends
        return bool(ready)
    finally:
        os.close(fd)


class BotProcess:
    """One `python bot.py` process against the stand-in, restartable."""

    def __init__(self, standin: DiscordStandIn, tmp_path: Path) -> None:
        self.standin = standin
        self.tmp_path = tmp_path
        self.db = tmp_path / "data" / "krig.db"
        self.proc: asyncio.subprocess.Process | None = None

    async def start(self) -> None:
        after = len(self.standin.gateway_events)
        env = bot_env(self.standin.subprocess_env(), DISCORD_TOKEN=SECRET, KRIG_DB=str(self.db))
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


@pytest.fixture
async def bot_process(standin: DiscordStandIn, tmp_path: Path) -> AsyncIterator[BotProcess]:
    process = BotProcess(standin, tmp_path)
    try:
        yield process
    finally:
        await process.stop()


async def test_sigkill_between_flips_loses_no_round_and_old_buttons_work(
    standin: DiscordStandIn, standin_world: SampleWorld, bot_process: BotProcess
) -> None:
    w = standin_world
    await bot_process.start()
    challenge = await standin.slash(
        "krig start", user=w.alice, channel=w.no_channel, options={"opponent": w.bob}
    )
    message = (await challenge.response(timeout=10)).message
    assert message is not None
    accepted = await standin.click(message, "krig:accept:1", user=w.bob)
    assert (await accepted.response(timeout=10)).type == 7
    table = None
    for _ in range(3):
        flipped = await standin.slash("flip", user=w.alice, channel=w.no_channel)
        table = (await flipped.response(timeout=10)).message
    assert table is not None
    assert "krig:flip:1:3" in table.custom_ids()

    assert bot_process.proc is not None
    workers = children(bot_process.proc.pid)
    assert workers, "the bot draws its pictures in a worker process"
    await bot_process.kill()  # right after the third acknowledged flip
    # A killed bot leaves no worker behind: each notices and exits.
    for worker in workers:
        assert exits_within(worker, seconds=10), f"render worker {worker} outlived the bot"
    await bot_process.start()

    status = await (
        await standin.slash("krig status", user=w.alice, channel=w.no_channel)
    ).response(timeout=10)
    assert status.ephemeral
    assert "3" in status.embeds[0]["description"]

    pressed = await standin.click(table, "krig:flip:1:3", user=w.bob)
    after = await pressed.response(timeout=10)
    assert after.type == 7  # the old table message was updated in place by the new process
    assert after.embeds[0]["title"].endswith("4")

    # The same future as if nothing had happened: the engine replays round 4 from the seed.
    storage = await Storage.open(bot_process.db)
    try:
        row = await storage.get_game(1)
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
