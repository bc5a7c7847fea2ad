"""What the test command needs is named in the README, and `.ci/run` installs what is missing.

`.ci/run` runs here from a copy of the checkout with a ``PATH`` of stand-ins: an ``apt-get`` that
writes down what it was asked, and a ``python3`` that stops the run where the test command
starts (exit status 42), so only the installing part runs.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CI = ROOT / ".ci" / "run"
README = (ROOT / "README.md").read_text(encoding="utf-8")
STOPPED = 42
"""The stand-in ``python3``'s exit status: the run got as far as the test command."""


def readme_apt_line() -> list[str]:
    """Return the packages of the README's `sudo apt install …` for the tests."""
    section = README.split("**Run the tests**", 1)[1].split("```", 1)[0]
    match = re.search(r"`sudo apt install ([a-z0-9 .+-]+)`", section)
    assert match is not None, "the README names no apt line before the test command"
    return match[1].split()


def ci_packages() -> list[str]:
    """Return every package `.ci/run` may install (its ``missing+=(NAME)`` lines)."""
    return re.findall(r"missing\+=\(([a-z0-9.+-]+)\)", CI.read_text(encoding="utf-8"))


def test_the_readme_names_every_prerequisite_of_the_test_command() -> None:
    packages = readme_apt_line()
    assert {"python3-venv", "postgresql-15", "chromium"} <= set(packages)
    assert set(ci_packages()) <= set(packages)


def run_ci(tmp_path: Path, *, initdb: bool, chromium: bool) -> tuple[int, list[str], str]:
    """Run `.ci/run` with stand-ins; return its status, apt-get's calls and its output."""
    checkout = tmp_path / "checkout"
    (checkout / ".ci").mkdir(parents=True)
    shutil.copy(CI, checkout / ".ci" / "run")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    calls = tmp_path / "apt-get.calls"
    tools = {
        "apt-get": f'#!/bin/sh\necho "$*" >> {calls}\n',
        "python3": f"#!/bin/sh\nexit {STOPPED}\n",
        "systemd-analyze": "#!/bin/sh\n",
    }
    if chromium:
        tools["chromium"] = "#!/bin/sh\n"
    for name, text in tools.items():
        (bin_dir / name).write_text(text, encoding="utf-8")
        (bin_dir / name).chmod(0o755)
    for name in ("dirname",):
        found = shutil.which(name)
        assert found is not None
        (bin_dir / name).symlink_to(found)
    pg_bin = tmp_path / "postgresql" / "bin"
    pg_bin.mkdir(parents=True)
    if initdb:
        (pg_bin / "initdb").write_text("#!/bin/sh\n", encoding="utf-8")
        (pg_bin / "initdb").chmod(0o755)
    bash = shutil.which("bash")
    assert bash is not None
    done = subprocess.run(
        [bash, str(checkout / ".ci" / "run")],
        env={"PATH": str(bin_dir), "KRIG_PG_BIN": str(pg_bin), "HOME": str(tmp_path)},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    said = calls.read_text(encoding="utf-8").splitlines() if calls.exists() else []
    return done.returncode, said, done.stdout + done.stderr


@pytest.mark.parametrize(
    ("initdb", "chromium", "installed"),
    [
        (False, True, ["postgresql-15"]),
        (True, False, ["chromium"]),
        (False, False, ["postgresql-15", "chromium"]),
    ],
)
def test_ci_installs_what_is_missing_quietly_then_runs_the_tests(
    tmp_path: Path, initdb: bool, chromium: bool, installed: list[str]
) -> None:
    status, calls, output = run_ci(tmp_path, initdb=initdb, chromium=chromium)
    assert status == STOPPED, output
    assert output == ""
    assert calls[0] == "update -qq"
    (install,) = calls[1:]
    words = install.split()
    assert words[:3] == ["install", "-y", "-qq"]
    assert [word for word in words if not word.startswith("-")][1:] == installed


def test_ci_installs_nothing_when_everything_is_there(tmp_path: Path) -> None:
    status, calls, output = run_ci(tmp_path, initdb=True, chromium=True)
    assert (status, calls, output) == (STOPPED, [], "")
