"""Point a whole bot process at the Discord stand-in.

Put this directory first on ``PYTHONPATH`` and set ``KRIG_TEST_DISCORD_URL`` (for example
``http://127.0.0.1:PORT``); Python imports ``sitecustomize`` at start-up, before the bot's own
code, so ``python -m krigbot`` then talks to the stand-in with nothing else changed.
``DiscordStandIn.subprocess_env()`` builds such an environment.
"""

from __future__ import annotations

import importlib.util
import os
import sys


def _point_discord_at_standin() -> None:
    url = os.environ.get("KRIG_TEST_DISCORD_URL")
    # A process without discord.py (pip installing it into a fresh .venv) cannot reach Discord.
    if not url or importlib.util.find_spec("discord") is None:
        return
    import discord.gateway
    import discord.http
    import yarl

    base = yarl.URL(url.rstrip("/"))
    discord.http.Route.BASE = str(base) + "/api/v10"
    # A plain Client/Bot connects to DEFAULT_GATEWAY without asking REST first.
    discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY = yarl.URL.build(
        scheme="wss" if base.scheme == "https" else "ws",
        host=base.host or "127.0.0.1",
        port=base.port,
        path="/gateway",
    )


try:
    _point_discord_at_standin()
except Exception as exc:  # pragma: no cover - only reached with a broken environment
    # A silent failure here would send the bot to the real Discord; make it loud instead.
    print(f"sitecustomize: could not point discord.py at the stand-in: {exc!r}", file=sys.stderr)
    raise
