"""Running ``python -m krigbot.sim`` in-process, and the deal files it reads."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from krigbot.sim import main


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict[str, Any] | None, str]:
    """Run the command line; return its exit status, its JSON output (if any) and its stderr."""
    status = main(list(argv))
    captured = capsys.readouterr()
    data = json.loads(captured.out) if captured.out.strip() else None
    return status, data, captured.err


def deal_file(tmp_path: Path, piles: Any) -> str:
    """Write a deal of the given piles where ``--deal`` reads it; return its path."""
    path = tmp_path / "deal.json"
    path.write_text(json.dumps({"piles": piles}), encoding="utf-8")
    return str(path)
