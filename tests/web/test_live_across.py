"""On PostgreSQL, a round one process of the bot commits reaches the live pages' viewers
connected to another: told through the database (LISTEN/NOTIFY), read from the storage."""

from __future__ import annotations

import socket

import aiohttp
import pytest

from krigbot.sessions.live import LiveHub, across_processes
from krigbot.storage import Storage
from krigbot.web.access import WebAccess
from krigbot.web.server import WebView
from tests.standin import DiscordStandIn
from tests.standin.fixtures import SampleWorld
from tests.support.live import Stream, live_address
from tests.support.players import ChosenSeeds, flip, start_game
from tests.support.web import SECRET, Web
from tests.support.web_games import BOB_WINS, web_on

pytestmark = [pytest.mark.slow, pytest.mark.parametrize("backend", ["postgres"])]


async def test_a_round_played_by_one_process_reaches_the_viewers_of_another(
    standin: DiscordStandIn, world: SampleWorld, web: Web, seeds: ChosenSeeds, database: str
) -> None:
    seeds.fix(BOB_WINS)
    await web_on(standin, world, web.bot)
    table = await start_game(standin, world.no_channel, world.alice, world.bob)
    await flip(standin, world.no_channel, world.alice, count=27)
    url = await web.bot.web.game_url(world.no_guild.id, table.game_id)
    assert url is not None
    assert web.bot.user is not None
    # Another process of the bot: its own connections, viewers and web view; no game of its own.
    other = await Storage.open(database)
    hub = LiveHub()
    stop = await across_processes(hub, other, web.bot.user.id)
    assert stop is not None
    view = WebView(
        other,
        WebAccess(other, secret=SECRET, base_url=None),
        clock=web.bot.service.registry.clock,
        live=hub,
    )
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    there = f"http://127.0.0.1:{sock.getsockname()[1]}"
    await view.start("127.0.0.1", sock=sock)
    try:
        async with aiohttp.ClientSession() as session:
            async with session.get(url.replace(web.base, there)) as answer:
                address = there + live_address(await answer.text())
            async with session.get(address, headers={"Last-Event-ID": "27"}) as answer:
                stream = Stream(answer)
                await flip(standin, world.no_channel, world.bob)
                assert [(e.kind, e.id) for e in [await stream.next()]] == [("round", "28")]
                await flip(standin, world.no_channel, world.alice, count=2)
                events = await stream.take(3)
                assert [(e.kind, e.id) for e in events] == [
                    ("round", "29"),
                    ("round", "30"),
                    ("end", "end"),
                ]
                assert events[-1].data["final"] == [0, 52]
        assert web.bot.live.watching(table.game_id) == 0  # the viewer was the other process's
    finally:
        await view.stop()
        await stop()
        await other.close()
