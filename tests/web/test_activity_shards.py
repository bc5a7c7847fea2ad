"""The Activity on a bot of two processes sharing PostgreSQL, each holding one of two shards:
Discord's proxy reaches one of them, and the servers of the other's shard are answered all the
same (the process holding them is asked), until that process is gone and the page is told to
try again."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import aiohttp
import pytest

from krigbot.bot import KrigBot
from krigbot.config import Shards, shard_of
from krigbot.i18n import t
from krigbot.storage import Storage
from krigbot.web.activity import ActivitySignIn
from krigbot.web.server import WebView
from tests.standin import DiscordStandIn, run_bot
from tests.standin.fixtures import SampleWorld
from tests.support.activity import sign_in
from tests.support.live import Stream
from tests.support.players import game_row, public_messages, start_game, text_of
from tests.support.settings import make_settings
from tests.support.web import SECRET, Web

pytestmark = [pytest.mark.slow, pytest.mark.activity]

ANSWER_SECONDS = 15.0
"""Longer than a call waits for the holder before the page is told to try again."""


@asynccontextmanager
async def process_of(
    standin: DiscordStandIn, url: str, folder: Path, name: str, shard: int, *, web: bool = False
) -> AsyncIterator[Web]:
    """Run a bot holding ``shard`` of 2 on the database at ``url``, with the Activity's web
    view on a free port of 127.0.0.1 where ``web``."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    base = f"http://127.0.0.1:{sock.getsockname()[1]}"
    settings = make_settings(
        folder / name / "krig.db",
        shards=Shards(2, (shard,)),
        web_port=sock.getsockname()[1],
        web_url=base,
        web_secret=SECRET,
        activity=True,
    )
    storage = await Storage.open(url)
    bot = KrigBot(settings, storage, guild_ready_timeout=0.05)
    view = WebView(
        storage,
        bot.web,
        clock=lambda: bot.service.registry.clock(),
        live=bot.live,
        activity=ActivitySignIn(
            client_id=lambda: standin.app.id,
            client_secret=standin.app.client_secret,
            api_base=standin.api_base,
        ),
        games=bot.activity_desk,
    )
    if web:
        await view.start("127.0.0.1", sock=sock)
    else:
        sock.close()
    try:
        async with run_bot(bot, standin) as running:
            yield Web(running, base, view)
    finally:
        if web:
            await view.stop()
        await storage.close()


@pytest.mark.standin(shard_count=2)
async def test_the_activity_on_the_process_without_the_server_answers_through_its_holder(
    standin: DiscordStandIn, standin_world: SampleWorld, pg_dsn: str, tmp_path: Path
) -> None:
    world = standin_world
    guild = standin.add_guild("far", shard=1)
    channel = standin.add_channel(guild, "krig")
    for user in (world.alice, world.bob, world.carol):
        standin.add_member(guild, user)
    assert shard_of(guild.id, 2) == 1
    for name in ("holder", "reached"):
        (tmp_path / name).mkdir()
    async with (
        process_of(standin, pg_dsn, tmp_path, "holder", 1) as holder,
        process_of(standin, pg_dsn, tmp_path, "reached", 0, web=True) as reached,
    ):
        assert holder.bot.get_guild(guild.id) is not None
        assert reached.bot.get_guild(guild.id) is None  # the proxy reaches the other process
        table = await start_game(standin, channel, world.alice, world.bob)
        alice = await sign_in(standin, reached, world.alice)
        status, shown = await alice.table(guild.id, channel.id)
        assert status == 200, shown
        assert (shown["game"], shown["player"]) == (str(table.game_id), True)
        assert "Alice" in shown["html"]
        # A refusal made at the holder reads as one made here; a stranger sees nothing.
        carol = await sign_in(standin, reached, world.carol)
        refused = await carol.flip(guild.id, channel.id)
        assert refused == (403, {"error": t("en", "err.not_player")})
        dave = standin.add_user("dave", "Dave")
        standin.add_member(world.sv_guild, dave)
        stranger = await (await sign_in(standin, reached, dave)).table(guild.id, channel.id)
        assert stranger[0] == 403
        # Alice flips here; the holder plays the round and the channel's table follows, and
        # the live link this process gave follows it too.
        before = public_messages(standin, channel)
        async with (
            aiohttp.ClientSession() as session,
            session.get(alice.base + shown["live"]) as live,
        ):
            assert live.status == 200
            stream = Stream(live)
            assert (await stream.next()).kind == "position"
            assert await alice.flip(guild.id, channel.id) == (200, {"played": True})
            played = await asyncio.wait_for(stream.next(), ANSWER_SECONDS)
            assert (played.kind, played.id) == ("round", "1")
        assert (await game_row(reached.bot, table.game_id)).round == 1
        shown_now = public_messages(standin, channel)
        assert len(shown_now) == len(before) + 1
        assert "Alice" in text_of(shown_now[-1])
        # The holder is gone: no answer comes, and the page is told to try again in time.
        await holder.bot.close()
        again = (503, {"error": t("en", "activity.try_again")})
        assert await asyncio.wait_for(alice.flip(guild.id, channel.id), ANSWER_SECONDS) == again
        assert await asyncio.wait_for(alice.table(guild.id, channel.id), ANSWER_SECONDS) == again
        assert (await game_row(reached.bot, table.game_id)).round == 1


@pytest.mark.standin(shard_count=2)
async def test_steal_war_is_played_from_the_activity_of_the_process_without_the_server(
    standin: DiscordStandIn, standin_world: SampleWorld, pg_dsn: str, tmp_path: Path
) -> None:
    world = standin_world
    guild = standin.add_guild("far", shard=1, locale="nb")
    channel = standin.add_channel(guild, "krig")
    for user in (world.alice, world.bob, world.carol):
        standin.add_member(guild, user)
    for name in ("holder", "reached"):
        (tmp_path / name).mkdir()
    async with (
        process_of(standin, pg_dsn, tmp_path, "holder", 1) as holder,
        process_of(standin, pg_dsn, tmp_path, "reached", 0, web=True) as reached,
    ):
        table = await start_game(standin, channel, world.alice, world.bob, variant="stjel")
        alice = await sign_in(standin, reached, world.alice)
        bob = await sign_in(standin, reached, world.bob)
        carol = await sign_in(standin, reached, world.carol)
        assert await alice.flip(guild.id, channel.id) == (200, {"played": True})
        refused = await carol.post("look", guild.id, channel.id)
        assert refused == (403, {"error": t("en", "err.not_player")})
        # Battle after battle, until a look offers a choice, made from here as its button
        # would be made in the channel; the holder plays it and edits the channel's table.
        made = None
        for _ in range(80):
            for member in (alice, bob):
                status, look = await member.post("look", guild.id, channel.id)
                assert status == 200, look
                assert look["text"]
                if look["options"]:
                    made = (member, look["options"][0]["move"])
                    break
            if made is not None:
                break
            assert await alice.flip(guild.id, channel.id) == (200, {"played": True})
        assert made is not None
        member, move = made
        asked = len(standin.requests.items)
        status, after = await member.post("choose", guild.id, channel.id, move=move)
        assert status == 200, after
        assert after["done"]
        await standin.requests.wait(
            lambda request: request.method == "PATCH", start=asked, what="the table showing it"
        )
        # The same move again is stale at the holder: its refusal comes back.
        assert (await member.post("choose", guild.id, channel.id, move=move))[0] == 403
        assert holder.bot.get_guild(guild.id) is not None
        assert (await game_row(reached.bot, table.game_id)).round >= 1
