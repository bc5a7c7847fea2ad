"""The live relay, the process that writes the live pages' streams: one that dies is started
again and its viewers resume where they were; it never outlives the bot."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import socket
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from krigbot.storage import Storage
from krigbot.web.access import WebAccess
from tests.standin import DiscordStandIn
from tests.standin.fixtures import SampleWorld
from tests.support.cluster import ClusterDatabase, ShardProcess, end_processes, seat_games
from tests.support.live import WAIT_SECONDS, Stream, live_address
from tests.support.players import ChosenSeeds, flip, start_game
from tests.support.web import Web
from tests.support.web_games import BOB_WINS, web_on

pytestmark = pytest.mark.slow

WEB_SECRET = "the-live-relay-secret-of-enough-length"
MANY = 400
"""Viewers opening a game's stream at once."""


async def ended(pid: int) -> None:
    """Wait until the process ``pid`` (not a child of this one) has ended."""
    try:
        handle = os.pidfd_open(pid)
    except ProcessLookupError:
        return
    gone = asyncio.Event()
    loop = asyncio.get_running_loop()
    loop.add_reader(handle, gone.set)  # readable once the process has ended
    try:
        async with asyncio.timeout(WAIT_SECONDS):
            await gone.wait()
    finally:
        loop.remove_reader(handle)
        os.close(handle)


def children(pid: int) -> list[int]:
    """Return the processes ``pid`` started and that still run."""
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        found += [int(child) for child in (task / "children").read_text().split()]
    return found


async def test_a_relay_that_dies_is_started_again_and_its_viewers_resume_where_they_were(
    standin: DiscordStandIn,
    world: SampleWorld,
    web: Web,
    seeds: ChosenSeeds,
    caplog: pytest.LogCaptureFixture,
) -> None:
    seeds.fix(BOB_WINS)
    await web_on(standin, world, web.bot)
    table = await start_game(standin, world.no_channel, world.alice, world.bob)
    url = await web.bot.web.game_url(world.no_guild.id, table.game_id)
    assert url is not None
    relay = web.view.relay
    assert relay is not None
    async with aiohttp.ClientSession() as session:
        async with session.get(url) as answer:
            address = web.base + live_address(await answer.text())
        async with session.get(address) as answer:
            stream = Stream(answer)
            assert (await stream.next()).id == "0"
            first = relay.pid
            assert first is not None
            await flip(standin, world.no_channel, world.alice, count=2)
            assert [e.id for e in await stream.take(2)] == ["1", "2"]
            os.kill(first, signal.SIGKILL)
            with pytest.raises(EOFError):
                await stream.next()  # the viewer's connection went with the relay
        await flip(standin, world.no_channel, world.bob, count=2)
        # The browser asks again with the last event it had; another relay answers.
        async with session.get(address, headers={"Last-Event-ID": "2"}) as answer:
            stream = Stream(answer)
            assert [(e.kind, e.id) for e in await stream.take(2)] == [
                ("round", "3"),
                ("round", "4"),
            ]
            await flip(standin, world.no_channel, world.alice)
            assert (await stream.next()).id == "5"
    assert relay.pid not in (None, first)
    assert relay.starts == 2
    # Each connection handed over is let go of quietly by the bot's web server.
    assert [r.getMessage() for r in caplog.records if r.name.startswith("aiohttp")] == []


async def test_viewers_handed_over_while_the_relay_is_behind_all_wait_for_it(
    standin: DiscordStandIn, world: SampleWorld, web: Web, seeds: ChosenSeeds
) -> None:
    seeds.fix(BOB_WINS)
    await web_on(standin, world, web.bot)
    table = await start_game(standin, world.no_channel, world.alice, world.bob)
    url = await web.bot.web.game_url(world.no_guild.id, table.game_id)
    assert url is not None
    relay = web.view.relay
    assert relay is not None
    handed = 0
    all_handed = asyncio.Event()
    hand = relay.hand

    def counted(*args: Any) -> bool:
        nonlocal handed
        handed += 1
        if handed == MANY + 1:
            all_handed.set()
        return hand(*args)

    relay.hand = counted  # type: ignore[method-assign,assignment]
    connector = aiohttp.TCPConnector(limit=0)
    async with aiohttp.ClientSession(connector=connector) as session:
        async with session.get(url) as answer:
            address = web.base + live_address(await answer.text())
        async with contextlib.AsyncExitStack() as opened:
            first = await opened.enter_async_context(session.get(address))
            assert (await Stream(first).next()).id == "0"  # the relay runs
            assert relay.pid is not None
            # The relay stops reading while more viewers come than its socket holds.
            os.kill(relay.pid, signal.SIGSTOP)
            try:
                coming = asyncio.gather(
                    *(opened.enter_async_context(session.get(address)) for _ in range(MANY))
                )
                async with asyncio.timeout(WAIT_SECONDS):
                    await all_handed.wait()
            finally:
                os.kill(relay.pid, signal.SIGCONT)
            answers = await coming
            positions = [await Stream(answer).next() for answer in answers]
            assert {(e.kind, e.id) for e in positions} == {("position", "0")}
            # The relay alone watches the game for the bot's process: one viewer, not hundreds.
            assert web.bot.live.watching(table.game_id) == 1
            await flip(standin, world.no_channel, world.alice)
            rounds = [await Stream(answer).next() for answer in [first, *answers]]
            assert {(e.kind, e.id) for e in rounds} == {("round", "1")}


async def test_a_relay_that_cannot_start_leaves_the_stream_to_the_bot(
    standin: DiscordStandIn,
    world: SampleWorld,
    web: Web,
    seeds: ChosenSeeds,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    seeds.fix(BOB_WINS)
    await web_on(standin, world, web.bot)
    table = await start_game(standin, world.no_channel, world.alice, world.bob)
    url = await web.bot.web.game_url(world.no_guild.id, table.game_id)
    assert url is not None
    relay = web.view.relay
    assert relay is not None
    # A database the relay cannot open: it says so in one line and ends before it is ready.
    (tmp_path / "a-file").write_text("")
    monkeypatch.setattr(relay, "_location", str(tmp_path / "a-file" / "krig.db"))
    async with aiohttp.ClientSession() as session:
        async with session.get(url) as answer:
            address = web.base + live_address(await answer.text())
        async with session.get(address) as answer:
            stream = Stream(answer)
            assert (await stream.next()).id == "0"
            await flip(standin, world.no_channel, world.alice)
            assert (await stream.next()).id == "1"
            assert relay.pid is None  # the bot's process wrote the stream
            assert relay.starts == 1


async def test_the_relay_ends_with_the_bot_killed_outright(
    standin: DiscordStandIn, tmp_path: Path
) -> None:
    path = tmp_path / "data" / "krig.db"
    path.parent.mkdir(parents=True)
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    there = f"http://127.0.0.1:{port}"
    settings = {"KRIG_WEB_PORT": str(port), "KRIG_WEB_URL": there, "KRIG_WEB_SECRET": WEB_SECRET}
    bot = ShardProcess(standin, tmp_path, ClusterDatabase("sqlite", path), "0", "bot", settings)
    guild = standin.add_guild("server", shard=0, locale="nb")
    async with await Storage.open(path) as storage:
        access = WebAccess(storage, secret=WEB_SECRET, base_url=there)
        await access.set_on(guild.id, True)  # before the bot starts: it reads it then
    try:
        await bot.start()
        (table,) = await seat_games(standin, [guild])
        async with await Storage.open(path) as storage:
            access = WebAccess(storage, secret=WEB_SECRET, base_url=there)
            page = await access.game_url(guild.id, table.game_id)
        assert page is not None
        assert bot.proc is not None
        async with aiohttp.ClientSession() as session:
            async with session.get(page) as answer:
                address = there + live_address(await answer.text())
            async with session.get(address) as answer:
                stream = Stream(answer)
                assert (await stream.next()).id == "0"  # written by the relay
                (relay,) = children(bot.proc.pid)
                await bot.kill()
                await ended(relay)
                assert await stream.ended()  # the viewer is not left hanging on an orphan
    finally:
        await end_processes(standin, [bot])
