"""Fixtures for the web view: the real bot on the stand-in, and its pages on a local port."""

from __future__ import annotations

import socket
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from krigbot.bot import KrigBot
from krigbot.storage import Storage
from krigbot.web.activity import ActivitySignIn
from krigbot.web.server import WebView
from tests.standin import DiscordStandIn, run_bot
from tests.standin.fixtures import SampleWorld
from tests.support.players import ChosenSeeds
from tests.support.settings import make_settings
from tests.support.web import SECRET, Web


@pytest.fixture
def world(standin_world: SampleWorld) -> SampleWorld:
    """Return the two servers and their people (alice nb, bob sv-SE, carol en-US, moderator)."""
    return standin_world


@pytest.fixture
def relay() -> bool:
    """Whether the live streams are written by the relay process, as in the bot (a test
    parametrized with False has the bot's process write them, as where the relay cannot run)."""
    return True


@pytest.fixture
async def web(
    standin: DiscordStandIn,
    standin_world: SampleWorld,
    storage: Storage,
    db_path: Path,
    seeds: ChosenSeeds,
    request: pytest.FixtureRequest,
    relay: bool,
) -> AsyncIterator[Web]:
    """Return the bot, with its web view serving on a free port of 127.0.0.1; a test marked
    ``activity`` has the application's Activity set up on the stand-in too."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    base = f"http://127.0.0.1:{port}"
    activity = request.node.get_closest_marker("activity") is not None
    settings = make_settings(
        db_path, web_port=port, web_url=base, web_secret=SECRET, activity=activity
    )
    bot = KrigBot(settings, storage, seeds=seeds, guild_ready_timeout=0.05)
    sign_in = ActivitySignIn(
        client_id=lambda: standin.app.id,
        client_secret=standin.app.client_secret,
        api_base=standin.api_base,
    )
    view = WebView(
        storage,
        bot.web,
        clock=lambda: bot.service.registry.clock(),
        live=bot.live,
        activity=sign_in if activity else None,
        games=bot.activity_desk if activity else None,
        relay=relay,
    )
    await view.start("127.0.0.1", sock=sock)
    try:
        async with run_bot(bot, standin) as running:
            yield Web(running, base, view)
    finally:
        await view.stop()
