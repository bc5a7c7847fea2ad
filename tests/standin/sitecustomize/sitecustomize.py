"""Point a whole bot process at the Discord stand-in.

Put this directory first on ``PYTHONPATH`` and set ``KRIG_TEST_DISCORD_URL`` (for example
``http://127.0.0.1:PORT``); Python imports ``sitecustomize`` at start-up, before the bot's own
code, so ``python -m krigbot`` then talks to the stand-in with nothing else changed.
``DiscordStandIn.subprocess_env()`` builds such an environment.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import os
import sys
from collections.abc import Sequence
from types import ModuleType
from typing import Any

PATCHED = ("discord.http", "discord.gateway")
"""The modules whose Discord addresses are pointed at the stand-in once they are loaded."""


def _point_at_standin(module: ModuleType, url: str) -> None:
    import yarl

    base = yarl.URL(url.rstrip("/"))
    if module.__name__ == "discord.http":
        module.Route.BASE = str(base) + "/api/v10"
    else:
        # A plain Client/Bot connects to DEFAULT_GATEWAY without asking REST first.
        module.DiscordWebSocket.DEFAULT_GATEWAY = yarl.URL.build(
            scheme="wss" if base.scheme == "https" else "ws",
            host=base.host or "127.0.0.1",
            port=base.port,
            path="/gateway",
        )


class _PointWhenLoaded(importlib.abc.MetaPathFinder):
    """Patch discord.py's addresses when it is imported, not in every Python process.

    Importing discord.py here, at start-up, would cost every Python process of a test's bot a
    fifth of a second (its picture workers and multiprocessing's resource tracker too), which
    no bot pays in production, and which start-up figures (``python -m bench.restart``) count.
    """

    def __init__(self, url: str) -> None:
        self.url = url

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname not in PATCHED:
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is None or spec.loader is None:
            return spec
        loader: Any = spec.loader
        run = loader.exec_module
        url = self.url

        def exec_module(module: ModuleType) -> None:
            run(module)
            _point_at_standin(module, url)

        loader.exec_module = exec_module
        return spec


def _install() -> None:
    url = os.environ.get("KRIG_TEST_DISCORD_URL")
    # A process without discord.py (pip installing it into a fresh .venv) cannot reach Discord.
    if not url or importlib.util.find_spec("discord") is None:
        return
    sys.meta_path.insert(0, _PointWhenLoaded(url))
    for name in PATCHED:
        if name in sys.modules:  # already imported (never, this early; but then patch it now)
            _point_at_standin(sys.modules[name], url)


try:
    _install()
except Exception as exc:  # pragma: no cover - only reached with a broken environment
    # A silent failure here would send the bot to the real Discord; make it loud instead.
    print(f"sitecustomize: could not point discord.py at the stand-in: {exc!r}", file=sys.stderr)
    raise
