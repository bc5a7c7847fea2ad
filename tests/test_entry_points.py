"""Every command a reader is told to run answers ``--help`` with its own usage and does nothing.

A benchmark that runs for minutes, or a tool that takes ``--help`` for a folder to write into,
is what a newcomer meets first when they ask a command what it does.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

BENCHES = sorted(
    f"bench.{path.stem}"
    for path in (ROOT / "bench").glob("*.py")
    if re.search(r"^def main\(", path.read_text(), re.MULTILINE)
)
MODULES = ["krigbot.sim", "krigbot.render.samples", "krigbot.storage.migrate_to", *BENCHES]


def test_the_benches_are_found() -> None:
    """The list below is built from bench/, so a new bench is held to the same rule."""
    assert {"bench.bot", "bench.render", "bench.soak", "bench.cluster"} <= set(BENCHES)


def help_of(command: list[str], tmp_path: Path) -> tuple[subprocess.CompletedProcess[str], Path]:
    """Run ``command --help`` from an empty folder, with home and temp inside it too."""
    cwd = tmp_path / "cwd"
    home = tmp_path / "home"
    temp = tmp_path / "tmp"
    for folder in (cwd, home, temp):
        folder.mkdir()
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "HOME": str(home),
        "TMPDIR": str(temp),
        "DISCORD_TOKEN": "",
    }
    done = subprocess.run(
        [sys.executable, *command, "--help"],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    return done, tmp_path


def written(tmp_path: Path) -> list[str]:
    """Return every file or folder that appeared under the run's folders."""
    return sorted(
        str(path.relative_to(tmp_path))
        for folder in ("cwd", "home", "tmp")
        for path in (tmp_path / folder).rglob("*")
    )


@pytest.mark.parametrize("module", MODULES)
def test_a_module_answers_help_and_writes_nothing(module: str, tmp_path: Path) -> None:
    done, _ = help_of(["-m", module], tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"usage: python -m {module} "), done.stdout[:200]
    assert written(tmp_path) == []


def test_the_bot_answers_help_with_what_it_reads(tmp_path: Path) -> None:
    data = ROOT / "data"
    before = sorted(data.rglob("*")) if data.exists() else None
    done, _ = help_of([str(ROOT / "bot.py")], tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("usage: python bot.py "), done.stdout[:200]
    assert written(tmp_path) == []
    assert (sorted(data.rglob("*")) if data.exists() else None) == before
    # Every setting the bot reads is listed, with where it reads them from.
    config = (ROOT / "krigbot" / "config.py").read_text()
    read = set(re.findall(r'"((?:KRIG|DISCORD|LOG)_[A-Z_]+)"', config))
    assert read >= {"DISCORD_TOKEN", "KRIG_DB", "KRIG_WEB_SECRET"}
    assert [name for name in sorted(read) if name not in done.stdout.split()] == []
    assert str(ROOT / ".env") in done.stdout


def test_the_bot_refuses_an_argument_it_does_not_take(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "bot.py"), "--tokn=x"],
        cwd=tmp_path,
        env={**os.environ, "DISCORD_TOKEN": ""},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 2
    assert "unrecognized arguments: --tokn=x" in done.stderr
