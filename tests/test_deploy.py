"""The service unit in deploy/ is one systemd accepts, for the bot as it is in this checkout."""

from __future__ import annotations

import shutil
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


def test_the_service_does_not_restart_on_a_set_up_error() -> None:
    # bot.py exits 2 on a missing or rejected token or a bad setting: restarting cannot mend it.
    lines = UNIT.read_text(encoding="utf-8").splitlines()
    assert "Restart=on-failure" in lines
    assert "RestartPreventExitStatus=2" in lines
    assert "KillSignal=SIGTERM" in lines
