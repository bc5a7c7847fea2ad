"""A running game's page follows it live: the events of its stream, over plain HTTP."""

from __future__ import annotations

import asyncio
import socket

import aiohttp
import pytest
from yarl import URL

from krigbot.engine import Game, Round
from krigbot.i18n import t
from krigbot.sessions.live import Viewer
from krigbot.web.replay import replay_data
from tests.standin import DiscordStandIn
from tests.standin.fixtures import SampleWorld
from tests.support.handsfree import command
from tests.support.live import (
    LONG_GAME_ROUNDS,
    LONG_GAME_SEED,
    Stream,
    lasts_past,
    live_address,
)
from tests.support.players import ChosenSeeds, flip, game_id_of, start_game
from tests.support.steal_war import STEAL_ONE, play_to_choice, start_steal_war
from tests.support.web import Web
from tests.support.web_games import BOB_WINS, STANDARD, web_on

EVENT_STREAM = "text/event-stream"

# Each test twice: the streams written by the relay process (which starts a process: slow),
# and by the bot's own.
pytestmark = pytest.mark.parametrize(
    "relay",
    [pytest.param(True, marks=pytest.mark.slow, id="relay"), pytest.param(False, id="in-process")],
)


def bob_wins_rounds() -> list[Round]:
    """Return the 30 rounds of ``BOB_WINS``, as the engine plays them."""
    game = Game.new(STANDARD, BOB_WINS)
    return [game.play_round() for _ in range(30)]


async def stream_of(web: Web, world: SampleWorld, game_id: int) -> str:
    """Return the address of a running game's stream, as its page names it."""
    url = await web.bot.web.game_url(world.no_guild.id, game_id)
    assert url is not None
    async with aiohttp.ClientSession() as session, session.get(url) as answer:
        assert answer.status == 200
        return web.base + live_address(await answer.text())


async def test_a_viewer_joining_late_gets_the_position_then_each_round_as_it_is_played(
    standin: DiscordStandIn, world: SampleWorld, web: Web, seeds: ChosenSeeds
) -> None:
    seeds.fix(BOB_WINS)
    await web_on(standin, world, web.bot)
    table = await start_game(standin, world.no_channel, world.alice, world.bob)
    await flip(standin, world.no_channel, world.alice, count=3)
    rounds = bob_wins_rounds()
    address = await stream_of(web, world, table.game_id)
    async with aiohttp.ClientSession() as session, session.get(address) as answer:
        assert answer.status == 200
        assert answer.content_type == EVENT_STREAM
        stream = Stream(answer)
        position = await stream.next()
        assert (position.kind, position.id) == ("position", "3")
        assert [r["counts"] for r in position.data["rounds"]] == [
            list(r.counts) for r in rounds[:3]
        ]
        await flip(standin, world.no_channel, world.bob, count=2)
        played = await stream.take(2)
        assert [(e.kind, e.id) for e in played] == [("round", "4"), ("round", "5")]
        assert [e.data["counts"] for e in played] == [list(r.counts) for r in rounds[3:5]]
        assert [len(e.data["steps"]) for e in played] == [len(r.war_steps) for r in rounds[3:5]]


async def test_a_dropped_connection_resumes_after_its_last_event_with_none_lost_or_repeated(
    standin: DiscordStandIn, world: SampleWorld, web: Web, seeds: ChosenSeeds
) -> None:
    seeds.fix(BOB_WINS)
    await web_on(standin, world, web.bot)
    table = await start_game(standin, world.no_channel, world.alice, world.bob)
    rounds = bob_wins_rounds()
    address = await stream_of(web, world, table.game_id)
    async with aiohttp.ClientSession() as session:
        async with session.get(address) as answer:
            stream = Stream(answer)
            assert (await stream.next()).id == "0"  # the deal
            await flip(standin, world.no_channel, world.alice, count=2)
            assert [e.id for e in await stream.take(2)] == ["1", "2"]
        # Gone while three rounds are played; back with the last event it had.
        await flip(standin, world.no_channel, world.bob, count=3)
        async with session.get(address, headers={"Last-Event-ID": "2"}) as answer:
            stream = Stream(answer)
            back = await stream.take(3)
            assert [(e.kind, e.id) for e in back] == [
                ("round", "3"),
                ("round", "4"),
                ("round", "5"),
            ]
            assert [e.data["counts"] for e in back] == [list(r.counts) for r in rounds[2:5]]
            await flip(standin, world.no_channel, world.alice)
            assert (await stream.next()).id == "6"


async def test_the_end_closes_the_stream_and_a_reconnect_after_it_is_told_there_is_no_more(
    standin: DiscordStandIn, world: SampleWorld, web: Web, seeds: ChosenSeeds
) -> None:
    seeds.fix(BOB_WINS)
    await web_on(standin, world, web.bot)
    table = await start_game(standin, world.no_channel, world.alice, world.bob)
    await flip(standin, world.no_channel, world.alice, count=27)
    address = await stream_of(web, world, table.game_id)
    async with aiohttp.ClientSession() as session:
        async with session.get(address, headers={"Last-Event-ID": "27"}) as answer:
            stream = Stream(answer)
            await flip(standin, world.no_channel, world.bob, count=3)
            events = await stream.take(4)
            assert [(e.kind, e.id) for e in events] == [
                ("round", "28"),
                ("round", "29"),
                ("round", "30"),
                ("end", "end"),
            ]
            assert events[-1].data["final"] == [0, 52]
            assert t("en", "over.winner", name="Bob") in events[-1].data["result"][0]
            assert await stream.ended()
        # Written a round at a time as the game went on, the rounds say what the replay says.
        row = await web.bot.storage.games.get_game(table.game_id)
        assert row is not None
        replayed = replay_data(row, "en")["rounds"]
        assert [e.data["text"] for e in events[:3]] == [r["text"] for r in replayed[27:30]]
        async with session.get(address, headers={"Last-Event-ID": "end"}) as answer:
            assert answer.status == 204  # an EventSource stops asking here


async def test_a_stream_opens_only_with_its_games_signature(
    standin: DiscordStandIn, world: SampleWorld, web: Web, seeds: ChosenSeeds
) -> None:
    seeds.fix(BOB_WINS, BOB_WINS)
    await web_on(standin, world, web.bot)
    table = await start_game(standin, world.no_channel, world.alice, world.bob)
    elsewhere = await start_game(standin, world.sv_channel, world.alice, world.bob)
    access = web.bot.web
    site = await access.site(world.no_guild.id)
    assert site is not None
    address = await stream_of(web, world, table.game_id)
    refused = [
        address.replace("/live", "x/live"),  # the game's signature changed
        web.base + access.game_path(site, elsewhere.game_id) + "/live",  # another server's
        web.base + access.game_path(site, table.game_id + 1000) + "/live",
    ]
    async with aiohttp.ClientSession() as session:
        for wrong in refused:
            async with session.get(wrong) as answer:
                assert answer.status == 404, wrong
                assert answer.content_type != EVENT_STREAM
        await web.bot.web.rotate(world.no_guild.id)
        async with session.get(address) as answer:
            assert answer.status == 404  # a rotated key retires the stream's address too


async def test_steal_wars_battles_and_choices_stream_each_round_once_in_order(
    standin: DiscordStandIn, world: SampleWorld, web: Web, seeds: ChosenSeeds
) -> None:
    await web_on(standin, world, web.bot)
    table, players = await start_steal_war(standin, world, seeds, STEAL_ONE)
    game_id = game_id_of(table)
    address = await stream_of(web, world, game_id)
    async with aiohttp.ClientSession() as session, session.get(address) as answer:
        stream = Stream(answer)
        assert (await stream.next()).id == "0"
        # Battles, and the top cards their winners choose (saved without a new round).
        await play_to_choice(standin, table, STEAL_ONE, players)
        row = await web.bot.storage.games.get_game(game_id)
        assert row is not None
        assert row.round >= 1
        played = await stream.take(row.round)
        assert [e.id for e in played] == [str(n) for n in range(1, row.round + 1)]
        assert {e.kind for e in played} == {"round"}


async def test_a_cancelled_game_ends_its_stream(
    standin: DiscordStandIn, world: SampleWorld, web: Web, seeds: ChosenSeeds
) -> None:
    seeds.fix(BOB_WINS)
    await web_on(standin, world, web.bot)
    table = await start_game(standin, world.no_channel, world.alice, world.bob)
    await flip(standin, world.no_channel, world.alice, count=4)
    address = await stream_of(web, world, table.game_id)
    async with aiohttp.ClientSession() as session, session.get(address) as answer:
        stream = Stream(answer)
        assert (await stream.next()).id == "4"
        await command(standin, world.no_channel, world.moderator, "cancel")
        ended = await stream.next()
        assert (ended.kind, ended.id) == ("end", "end")
        assert ended.data["result"] == []  # nobody won
        assert await stream.ended()


async def test_a_viewer_that_reads_too_slowly_is_dropped_not_buffered_for(
    standin: DiscordStandIn, world: SampleWorld, web: Web, seeds: ChosenSeeds
) -> None:
    assert lasts_past(LONG_GAME_SEED, LONG_GAME_ROUNDS)  # the game outlasts the flips below
    seeds.fix(LONG_GAME_SEED)
    await web_on(standin, world, web.bot)
    table = await start_game(standin, world.no_channel, world.alice, world.bob)
    path = (await stream_of(web, world, table.game_id)).removeprefix(web.base)
    base = URL(web.base)
    assert base.host is not None
    assert base.port is not None
    # Told when the game is watched (by the viewer, or by the relay for it), and when its
    # last viewer (or the relay, for all of its viewers) stops watching.
    hub = web.bot.live
    watched, stopped = asyncio.Event(), asyncio.Event()
    watch, leave = hub.watch, hub.leave

    def watching(game_id: int, viewer: Viewer | None = None) -> Viewer:
        watched.set()
        return watch(game_id, viewer)

    def left(viewer: Viewer) -> None:
        stopped.set()
        leave(viewer)

    hub.watch = watching  # type: ignore[method-assign]
    hub.leave = left  # type: ignore[method-assign]
    # A browser that asks for the stream and then reads nothing of it (its window kept tiny).
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1024)
    sock.setblocking(False)
    loop = asyncio.get_running_loop()
    await loop.sock_connect(sock, (base.host, base.port))
    await loop.sock_sendall(sock, f"GET {path} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
    try:
        received = b""
        async with asyncio.timeout(10):
            await watched.wait()
            while b"\n\n" not in received.partition(b"event: position")[2]:
                received += await loop.sock_recv(sock, 65536)  # it reads where the game is
        for _ in range(LONG_GAME_ROUNDS):
            await web.bot.service.play.flip(world.no_channel.id, world.alice.id)
            if hub.watching(table.game_id) == 0:
                break  # dropped (the relay tells the bot a moment later: it may go on)
        # Dropped while it read nothing (a reader draining it now would keep it)...
        async with asyncio.timeout(10):
            await stopped.wait()
        # ...its connection closed: what was sent before the drop, then nothing more.
        async with asyncio.timeout(10):
            while chunk := await loop.sock_recv(sock, 65536):
                received += chunk
        assert hub.watching(table.game_id) == 0  # dropped, the game still running
        row = await web.bot.storage.games.get_game(table.game_id)
        assert row is not None
        assert row.status == "running"
        assert received.count(b"event: round") < row.round
    finally:
        sock.close()
