"""Two `python bot.py` processes of one bot on PostgreSQL: a round the process of a game's shard
plays reaches a viewer of the live page served by the other."""

from __future__ import annotations

import socket
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import pytest

from krigbot.storage import Storage
from krigbot.web.access import WebAccess
from tests.standin import DiscordStandIn
from tests.support.cluster import (
    IDENTIFY_SECONDS,
    ClusterDatabase,
    ShardProcess,
    guilds_on,
    seat_games,
)
from tests.support.live import Stream, live_address
from tests.support.postgres import Cluster

pytestmark = pytest.mark.slow

WEB_SECRET = "the-live-pages-secret-of-enough-length"


def free_port() -> int:
    """Return a port of 127.0.0.1 free a moment ago."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
async def pair(
    standin: DiscordStandIn, tmp_path: Path, postgres: Cluster, pg_dsn: str
) -> AsyncIterator[tuple[ShardProcess, ShardProcess, str]]:
    """Return two processes of the bot, shards 0 and 1, each serving the web view; and the
    address of the second's."""
    path = tmp_path / "data" / "krig.db"
    path.parent.mkdir(parents=True, exist_ok=True)
    database = ClusterDatabase("postgres", path, postgres, pg_dsn)
    made = []
    for n in range(2):
        port = free_port()
        settings = {
            "KRIG_WEB_PORT": str(port),
            "KRIG_WEB_URL": f"http://127.0.0.1:{port}",
            "KRIG_WEB_SECRET": WEB_SECRET,
        }
        made.append(ShardProcess(standin, tmp_path, database, str(n), f"bot-{n}", settings))
    try:
        for process in made:
            await process.start()
        yield made[0], made[1], made[1].settings["KRIG_WEB_URL"]
    finally:
        for process in made:
            await process.stop()
    for process in made:
        assert "Traceback" not in process.log(), process.log()


@pytest.mark.standin(shard_count=2, identify_interval=IDENTIFY_SECONDS)
async def test_a_round_played_by_one_process_reaches_a_viewer_of_the_other(
    standin: DiscordStandIn, pair: tuple[ShardProcess, ShardProcess, str], pg_dsn: str
) -> None:
    first, second, there = pair
    (table,) = await seat_games(standin, guilds_on(standin, range(1), per_shard=1))
    guild = table.newest.channel.guild
    assert guild is not None
    guild_id = guild.id
    storage = await Storage.open(pg_dsn)
    try:
        access = WebAccess(storage, secret=WEB_SECRET, base_url=there)
        await access.set_on(guild_id, True)
        page = await access.game_url(guild_id, table.game_id)
    finally:
        await storage.close()
    assert page is not None
    async with aiohttp.ClientSession() as session:
        async with session.get(page) as answer:  # the second process's page of shard 0's game
            assert answer.status == 200
            address = there + live_address(await answer.text())
        async with session.get(address) as answer:
            stream = Stream(answer)
            assert (await stream.next()).id == "0"
            alice = table.players[0]
            for n in (1, 2):
                rec = await standin.slash("flip", user=alice, channel=table.newest.channel)
                await rec.response(timeout=20)
                event = await stream.next()
                assert (event.kind, event.id) == ("round", str(n))
    assert "shard 0: connected" in first.log()
    assert "shard 0: connected" not in second.log()  # the game was never the second's
