"""The service unit in deploy/ is one systemd accepts, for the bot as it is in this checkout."""

from __future__ import annotations

import importlib.util
import re
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
UNIT = ROOT / "deploy" / "krigbot.service"


def _unit_for_this_checkout(tmp_path: Path) -> Path:
    """Return the unit with the documented install folder replaced by this checkout."""
    text = UNIT.read_text(encoding="utf-8")
    text = text.replace("/opt/krigbot/.venv/bin/python", sys.executable)
    text = text.replace("/opt/krigbot", str(ROOT))
    path = tmp_path / "krigbot.service"
    path.write_text(text, encoding="utf-8")
    return path


def test_the_service_unit_passes_systemd_analyze_verify(tmp_path: Path) -> None:
    tool = shutil.which("systemd-analyze")
    if tool is None:
        pytest.skip("systemd-analyze is not installed on this machine: the unit was not checked")
    unit = _unit_for_this_checkout(tmp_path)
    done = subprocess.run(
        [tool, "verify", str(unit)], capture_output=True, text=True, timeout=60, cwd=tmp_path
    )
    # verify exits 0 on unknown keys too, with a warning: any output at all is a fault.
    assert (done.returncode, done.stdout + done.stderr) == (0, "")


def _setting(key: str) -> list[str]:
    """Return the values the unit gives ``key`` (each line's, in order)."""
    prefix = f"{key}="
    lines = UNIT.read_text(encoding="utf-8").splitlines()
    return [line.removeprefix(prefix) for line in lines if line.startswith(prefix)]


def _set_up_error() -> int:
    """Return bot.py's exit status for a set-up error (bot.py is a script, not a module)."""
    spec = importlib.util.spec_from_file_location("krigbot_main", ROOT / "bot.py")
    assert spec is not None
    assert spec.loader is not None
    main = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(main)
    status = main.SET_UP_ERROR
    assert isinstance(status, int)
    return status


@pytest.mark.parametrize(
    ("status", "restarted"),
    [
        (1, True),  # a crash (an uncaught exception): Python's own status
        (-int(signal.SIGKILL), True),  # the out-of-memory killer
        (-int(signal.SIGSEGV), True),
        (0, False),  # a stop (SIGTERM): systemctl stop, or the machine shutting down
        ("set-up error", False),  # a missing or rejected token, a bad setting: a person's
    ],
)
def test_the_service_restarts_every_failure_but_a_set_up_error(
    status: int | str, restarted: bool
) -> None:
    # Discord or PostgreSQL out of reach never ends the bot (it tries again by itself); what
    # ends it otherwise is restarted under these rules, but for the one status a person must mend.
    code = _set_up_error() if status == "set-up error" else status
    assert isinstance(code, int)
    (restart,) = _setting("Restart")
    prevented = {
        int(value) for line in _setting("RestartPreventExitStatus") for value in line.split()
    }
    assert restart == "on-failure"
    assert prevented == {_set_up_error()}
    # systemd's on-failure: an exit status other than 0, or a signal other than the clean ones.
    clean_signals = {
        -int(s) for s in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGPIPE)
    }
    failure = code != 0 and code not in clean_signals
    assert (failure and code not in prevented) == restarted
    assert _setting("KillSignal") == ["SIGTERM"]


MOST_EXPOSURE = 2.5
"""The highest exposure `systemd-analyze security` may rate the unit ("OK" is below 4.5)."""


def test_the_service_unit_is_rated_well_by_systemd_analyze_security(tmp_path: Path) -> None:
    tool = shutil.which("systemd-analyze")
    if tool is None:
        pytest.skip("systemd-analyze is not installed on this machine: the unit was not rated")
    unit = _unit_for_this_checkout(tmp_path)
    done = subprocess.run(
        [tool, "security", "--offline=true", "--no-pager", str(unit)],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
    )
    found = re.search(r"Overall exposure level for \S+: (\d+\.\d+)", done.stdout)
    assert found is not None, done.stdout + done.stderr
    assert float(found.group(1)) <= MOST_EXPOSURE, done.stdout
