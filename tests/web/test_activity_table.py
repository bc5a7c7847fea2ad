"""The Activity's table: a server's members see the channel's running game and follow it live,
its players flip from inside and the channel's messages follow; anyone else is refused."""

from __future__ import annotations

import aiohttp
import pytest

from krigbot.i18n import t
from tests.standin import DiscordStandIn
from tests.standin.fixtures import SampleWorld
from tests.support.activity import Member, sign_in
from tests.support.live import Stream
from tests.support.players import (
    ChosenSeeds,
    enabled_buttons,
    flip,
    game_row,
    public_messages,
    start_game,
    text_of,
)
from tests.support.web import Web
from tests.support.web_games import BOB_WINS

pytestmark = pytest.mark.activity


async def test_the_servers_members_see_the_channels_game_and_no_one_else(
    standin: DiscordStandIn, world: SampleWorld, web: Web, seeds: ChosenSeeds
) -> None:
    seeds.fix(BOB_WINS)
    table = await start_game(standin, world.no_channel, world.alice, world.bob)
    await flip(standin, world.no_channel, world.alice, count=2)
    guild, channel = world.no_guild.id, world.no_channel.id
    alice = await sign_in(standin, web, world.alice)
    status, shown = await alice.table(guild, channel)
    assert status == 200
    assert shown["game"] == str(table.game_id)
    assert shown["player"] is True
    assert shown["choices"] is False
    assert len(shown["data"]["rounds"]) == 2
    assert 'id="replay"' in shown["html"]
    assert "Alice" in shown["html"]
    assert "Bob" in shown["html"]
    carol = await sign_in(standin, web, world.carol)
    status, watched = await carol.table(guild, channel)
    assert (status, watched["game"], watched["player"]) == (200, str(table.game_id), False)
    # Someone of another server only, or a channel named under another server: nothing.
    dave = standin.add_user("dave", "Dave")
    standin.add_member(world.sv_guild, dave)
    refused = (403, {"error": t("en", "activity.not_member")})
    assert await (await sign_in(standin, web, dave)).table(guild, channel) == refused
    assert await alice.table(world.sv_guild.id, channel) == refused
    assert (await Member(web, "forged").table(guild, channel))[0] == 401
    outside = (400, {"error": t("en", "activity.server_only")})
    assert await alice.table("null", channel) == outside  # the SDK outside a server
    status, none = await alice.table(world.sv_guild.id, world.sv_channel.id)
    assert (status, none) == (200, {"game": None, "note": t("en", "activity.no_game")})


async def test_the_live_link_follows_the_game_and_a_forged_or_old_one_opens_nothing(
    standin: DiscordStandIn, world: SampleWorld, web: Web, seeds: ChosenSeeds
) -> None:
    seeds.fix(BOB_WINS)
    await start_game(standin, world.no_channel, world.alice, world.bob)
    await flip(standin, world.no_channel, world.alice)
    carol = await sign_in(standin, web, world.carol)
    _, shown = await carol.table(world.no_guild.id, world.no_channel.id)
    live = carol.base + shown["live"]
    async with aiohttp.ClientSession() as session, session.get(live) as answer:
        assert answer.status == 200
        stream = Stream(answer)
        position = await stream.next()
        assert (position.kind, position.id) == ("position", "1")
        await flip(standin, world.no_channel, world.bob)
        played = await stream.next()
        assert (played.kind, played.id) == ("round", "2")
    game, until, signature = shown["live"].removeprefix("live/").split(".")
    forged = f"{carol.base}live/{game}.{int(until) + 1}.{signature}"
    async with aiohttp.ClientSession() as session, session.get(forged) as answer:
        assert answer.status == 404
    web.view.activity.clock = lambda: float(until) + 1
    async with aiohttp.ClientSession() as session, session.get(live) as answer:
        assert answer.status == 404


async def test_a_player_flips_in_the_activity_and_the_channel_shows_the_round(
    standin: DiscordStandIn, world: SampleWorld, web: Web, seeds: ChosenSeeds
) -> None:
    seeds.fix(BOB_WINS)
    table = await start_game(standin, world.no_channel, world.alice, world.bob)
    before = public_messages(standin, world.no_channel)
    guild, channel = world.no_guild.id, world.no_channel.id
    carol = await sign_in(standin, web, world.carol)
    assert await carol.flip(guild, channel) == (403, {"error": t("en", "err.not_player")})
    assert (await Member(web, "forged").flip(guild, channel))[0] == 401
    assert (await game_row(web.bot, table.game_id)).round == 0
    alice = await sign_in(standin, web, world.alice)
    asked = len(standin.requests.items)
    assert await alice.flip(guild, channel) == (200, {"played": True})
    assert (await game_row(web.bot, table.game_id)).round == 1
    shown = public_messages(standin, world.no_channel)
    assert len(shown) == len(before) + 1
    new = shown[-1]
    assert (await game_row(web.bot, table.game_id)).table_message_id == new.id
    assert "Alice" in text_of(new)
    assert f"krig:flip:{table.game_id}:1" in enabled_buttons(new)
    # The bot looked Alice up as a member once (it has no members' intent) and remembers her.
    assert await alice.flip(guild, channel) == (200, {"played": True})
    looked_up = f"^/guilds/{guild}/members/{world.alice.id}$"
    assert len(standin.requests_matching("GET", looked_up)) == 1
    # The table before it goes grey, as when a round is played below it.
    await standin.requests.wait(
        lambda request: request.method == "PATCH", start=asked, what="the dealt table greyed"
    )
    assert enabled_buttons(table.message) == []


async def test_steal_war_is_played_from_the_activity_look_by_look(
    standin: DiscordStandIn, world: SampleWorld, web: Web
) -> None:
    table = await start_game(standin, world.no_channel, world.alice, world.bob, variant="stjel")
    guild, channel = world.no_guild.id, world.no_channel.id
    alice = await sign_in(standin, web, world.alice)
    bob = await sign_in(standin, web, world.bob)
    carol = await sign_in(standin, web, world.carol)
    status, shown = await alice.table(guild, channel)
    assert (status, shown["player"], shown["choices"]) == (200, True, True)
    before = public_messages(standin, world.no_channel)
    assert await alice.flip(guild, channel) == (200, {"played": True})
    # The battle's table is at the bottom of the channel, with its Look button.
    battle = public_messages(standin, world.no_channel)
    assert len(battle) == len(before) + 1
    assert f"krig:look:{table.game_id}" in enabled_buttons(battle[-1])
    assert await carol.post("look", guild, channel) == (403, {"error": t("en", "err.not_player")})
    # Battle after battle from the Activity, until a look offers a choice (a steal, or the
    # top of a won battle's loot), which is made there as its button would make it.
    made = None
    for _ in range(80):
        for member in (alice, bob):
            status, look = await member.post("look", guild, channel)
            assert status == 200
            if look["options"]:
                made = (member, look["options"][0]["move"])
                break
        if made is not None:
            break
        assert await alice.flip(guild, channel) == (200, {"played": True})
    assert made is not None
    member, move = made
    asked = len(standin.requests.items)
    status, after = await member.post("choose", guild, channel, move=move)
    assert status == 200
    assert after["done"]
    await standin.requests.wait(
        lambda request: request.method == "PATCH", start=asked, what="the table showing the move"
    )
    # The same move again is stale: it changes nothing.
    assert (await member.post("choose", guild, channel, move=move))[0] == 403
