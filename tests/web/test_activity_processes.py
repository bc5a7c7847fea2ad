"""The Activity on two `python bot.py` processes that claim two shards with ``KRIG_SHARDS=auto``,
each serving the web view: the page reached through either plays a server of the other's shard,
is told to try again while that process is frozen, and plays again once its shard is taken
over."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from krigbot.config import shard_of
from krigbot.i18n import t
from tests.standin import DiscordStandIn
from tests.support.activity import sign_in
from tests.support.cluster import (
    IDENTIFY_SECONDS,
    AutoProcess,
    Claims,
    end_processes,
    guilds_on,
    seat_games,
)
from tests.support.players import text_of

pytestmark = [pytest.mark.slow, pytest.mark.activity]

WEB_SECRET = "the-activity-s-secret-of-enough-length"
ANSWER_SECONDS = 15.0
"""Longer than a call waits for the process holding the server (then: "try again")."""


@dataclass(frozen=True)
class Reached:
    """The web view of one process, as Discord's proxy reaches it."""

    base: str


def free_port() -> int:
    """Return a port of 127.0.0.1 free a moment ago."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
async def pair(
    standin: DiscordStandIn, tmp_path: Path, pg_dsn: str
) -> AsyncIterator[tuple[AutoProcess, AutoProcess, Claims]]:
    """Return two auto processes on one database, each with the Activity on its web view,
    holding one shard each."""
    (tmp_path / "data").mkdir()
    claims = Claims(standin)
    made = []
    for n in range(2):
        port = free_port()
        settings = {
            "KRIG_WEB_PORT": str(port),
            "KRIG_WEB_URL": f"http://127.0.0.1:{port}",
            "KRIG_WEB_SECRET": WEB_SECRET,
            "KRIG_ACTIVITY": "on",
            "KRIG_CLIENT_SECRET": standin.app.client_secret,
        }
        made.append(AutoProcess(standin, tmp_path, pg_dsn, f"bot-{n}", claims, settings))
    try:
        await made[0].start()
        await claims.settled([2])
        await made[1].start()
        await claims.settled([1, 1])
        yield made[0], made[1], claims
    finally:
        await end_processes(standin, made)


@pytest.mark.standin(shard_count=2, identify_interval=IDENTIFY_SECONDS)
async def test_the_activity_of_either_process_plays_the_other_s_server_and_after_its_takeover(
    standin: DiscordStandIn, pair: tuple[AutoProcess, AutoProcess, Claims]
) -> None:
    first, second, claims = pair
    held = await claims.settled([1, 1])
    (far,) = held[second.name]
    (table,) = await seat_games(standin, guilds_on(standin, range(far, far + 1), per_shard=1))
    channel = table.newest.channel
    assert channel.guild is not None
    guild = channel.guild.id
    assert shard_of(guild, 2) == far
    # Discord's proxy reaches the first process; the server is the second's.
    reached = Reached(first.settings["KRIG_WEB_URL"])
    alice = await sign_in(standin, reached, table.players[0])
    status, shown = await alice.table(guild, channel.id)
    assert (status, shown["game"], shown["player"]) == (200, str(table.game_id), True)
    before = len(standin.messages(channel, include_ephemeral=False))
    assert await alice.flip(guild, channel.id) == (200, {"played": True})
    posted = standin.messages(channel, include_ephemeral=False)
    assert len(posted) == before + 1
    assert "Alice 0" in text_of(posted[-1])
    # The second process freezes: nothing answers for its server, and the page is told so.
    second.pause()
    again = (503, {"error": t("en", "activity.try_again")})
    assert await asyncio.wait_for(alice.flip(guild, channel.id), ANSWER_SECONDS) == again
    # Its leases run out and the first takes its shard over: the Activity plays again.
    await claims.settled([2])
    assert await alice.flip(guild, channel.id) == (200, {"played": True})
    status, shown = await alice.table(guild, channel.id)
    assert (status, shown["game"]) == (200, str(table.game_id))
    assert len(standin.messages(channel, include_ephemeral=False)) == before + 2
