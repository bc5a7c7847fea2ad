"""The README's commands are the ones that work: CI runs its test command, and its install command
starts the bot from a fresh copy of the repository with nothing but a token in .env."""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import signal
import subprocess
from pathlib import Path

import pytest

from tests.standin import BotCrashed, DiscordStandIn
from tests.standin.fixtures import SampleWorld

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")


def command_after(lead: str) -> str:
    """Return the one-line shell command in the code block that follows ``lead`` in the README."""
    match = re.search(re.escape(lead) + r".*?```sh\n(.+?)\n```", README, re.S)
    assert match is not None, f"no command after {lead!r} in README.md"
    (line,) = match[1].splitlines()
    return line


def fresh_copy(into: Path) -> Path:
    """Copy the files a clone would have (tracked, and new ones git does not ignore)."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout
    for name in filter(None, listed.decode().split("\0")):
        source = ROOT / name
        if source.is_file():
            target = into / name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)
    return into


def test_ci_runs_exactly_the_readmes_test_command() -> None:
    command = command_after("**Run the tests**")
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert command in ci.splitlines()


@pytest.mark.slow
async def test_the_readmes_install_command_starts_the_bot_from_a_fresh_copy(
    standin: DiscordStandIn, standin_world: SampleWorld, tmp_path: Path
) -> None:
    command = command_after("**Install and run the bot**")
    copy = fresh_copy(tmp_path / "krigbot")
    (copy / ".env").write_text("DISCORD_TOKEN=fake-token\n", encoding="utf-8")
    env = standin.subprocess_env(
        {key: os.environ[key] for key in ("PATH", "HOME", "PIP_INDEX_URL") if key in os.environ}
    )
    output = tmp_path / "output.txt"
    with output.open("wb") as out:
        shell = await asyncio.create_subprocess_exec(
            "bash",
            "-c",
            command,
            cwd=copy,
            env=env,
            stdout=out,
            stderr=out,
            start_new_session=True,  # so the whole command, pip and the bot, can be stopped
        )
    watcher = asyncio.create_task(shell.wait())
    standin.watch_task(watcher)
    try:
        # The first run installs everything into .venv (about 30 s here) before the bot starts.
        await standin.wait_for_ready(timeout=420)
        world = standin_world
        rules = await standin.slash("krig rules", user=world.carol, channel=world.no_channel)
        assert (await rules.response(timeout=30)).embeds
    except BotCrashed as exc:
        raise AssertionError(output.read_text()) from exc
    finally:
        standin.unwatch_task(watcher)
        watcher.cancel()
        if shell.returncode is None:
            os.killpg(shell.pid, signal.SIGTERM)
    # SIGTERM stops the bot cleanly: status 0, and the database is in data/ beside bot.py.
    assert await asyncio.wait_for(shell.wait(), 60) == 0, output.read_text()
    assert (copy / "data" / "krig.db").is_file()
    assert (copy / ".venv" / "bin" / "python").exists()


def section(heading: str) -> str:
    """Return the README's text under a heading, up to the next heading of any level."""
    match = re.search(rf"^#+ {re.escape(heading)}\n(.*?)(?=^#+ |\Z)", README, re.S | re.M)
    assert match is not None, f"no heading {heading!r} in README.md"
    return match[1]


FIGURE = re.compile(r"\d[\d,.]* ?(?:ms|µs|MiB|MB|KiB|flips|×|%)(?!\w)")


def test_the_readme_leaves_measurements_to_performance_md() -> None:
    """A newcomer reads a few figures and a link, not benchmark tables and their history."""
    assert "python -m bench." not in README
    figures = [line for line in README.splitlines() if FIGURE.search(line)]
    assert len(figures) <= 5, "\n".join(figures)
    assert "(docs/performance.md)" in section("What it needs")


def test_the_readmes_figures_are_the_ones_performance_md_measures() -> None:
    performance = (ROOT / "docs" / "performance.md").read_text(encoding="utf-8")
    for figure in FIGURE.findall(section("What it needs")):
        assert figure in performance, figure


def test_the_readme_tells_how_to_back_up_under_a_heading_of_its_own() -> None:
    backing_up = section("Backing up")
    assert '```sh\nsqlite3 data/krig.db ".backup backup.db"\n```' in backing_up
    assert "krig.db-wal" in backing_up  # why not cp, and what to remove when restoring
    # Set-up's "Take a backup first (below)" finds it below.
    assert README.index("Take a backup first (below)") < README.index("### Backing up")
