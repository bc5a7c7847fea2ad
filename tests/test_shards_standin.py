"""The stand-in as a sharded Discord: routing by the shard formula, identify pacing, 4010/4011.

Raw websocket sessions (what discord.py sends, written out) hold the shards, so each rule of
the model is seen on its own; tests/test_shards.py runs the real bot against it.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

import aiohttp
import pytest

from tests.standin import DiscordStandIn
from tests.standin.gateway import INVALID_SESSION
from tests.support.gateway import FLIP, TOKEN, connect

__all__ = ["connect"]

INTERVAL = 0.3
"""The stand-in's pause between identifies in a bucket: short, so the tests need not wait 5 s."""


@pytest.mark.standin(shard_count=4)
async def test_each_guild_s_interactions_reach_the_shard_of_the_formula(
    standin: DiscordStandIn, connect: Any
) -> None:
    shards = [await connect() for _ in range(4)]
    for shard_id, raw in enumerate(shards):
        assert (await raw.identify((shard_id, 4)))["t"] == "READY"
    alice = standin.add_user("alice")
    for shard_id in (2, 0, 3, 1):
        guild = standin.add_guild(f"on {shard_id}", shard=shard_id)
        assert (guild.id >> 22) % 4 == shard_id
        standin.add_member(guild, alice)
        channel = standin.add_channel(guild, "games")
        await shards[shard_id].next_event("GUILD_CREATE")
        rec = await standin.send_interaction(2, FLIP, user=alice, channel=channel)
        got = await shards[shard_id].next_event("INTERACTION_CREATE")
        assert int(got["id"]) == rec.id
        assert int(got["guild_id"]) == guild.id


@pytest.mark.standin(shard_count=2)
async def test_events_without_a_guild_reach_shard_0(standin: DiscordStandIn, connect: Any) -> None:
    first, second = await connect(), await connect()
    await second.identify((1, 2))
    await first.identify((0, 2))
    alice = standin.add_user("alice")
    rec = await standin.send_interaction(2, FLIP, user=alice)  # in the DM with the bot
    got = await first.next_event("INTERACTION_CREATE")
    assert int(got["id"]) == rec.id
    assert "guild_id" not in got


@pytest.mark.standin(shard_count=4, max_concurrency=2, identify_interval=INTERVAL)
async def test_an_identify_before_its_bucket_s_turn_is_refused_and_other_buckets_go_at_once(
    standin: DiscordStandIn, connect: Any
) -> None:
    first = await connect()
    assert (await first.identify((0, 4)))["t"] == "READY"
    started = time.perf_counter()
    # Shard 2 is in bucket 0 too (2 % 2): too soon. Shard 1 is bucket 1's first.
    early = await connect()
    refused = await early.identify((2, 4))
    assert refused["op"] == INVALID_SESSION
    assert refused["d"] is False
    assert (await (await connect()).identify((1, 4)))["t"] == "READY"
    assert [e.detail for e in standin.gateway_events.items if e.kind == "identify_refused"] == [
        "too early"
    ]
    # The time itself is what is tested: the same identify, once the bucket's pause is over.
    await asyncio.sleep(max(0.0, INTERVAL - (time.perf_counter() - started)))
    assert (await (await connect()).identify((2, 4)))["t"] == "READY"


@pytest.mark.standin(max_guilds_per_shard=2)
async def test_too_many_guilds_for_one_shard_close_with_4011_and_two_shards_are_taken(
    standin: DiscordStandIn, connect: Any
) -> None:
    standin.shard_count = 2
    for shard_id in (0, 1, 1):
        standin.add_guild(f"on {shard_id} of 2", shard=shard_id)
    unsharded = await connect()
    assert await unsharded.identify((0, 1)) == {"close": 4011}
    for shard_id in (0, 1):
        assert (await (await connect()).identify((shard_id, 2)))["t"] == "READY"


@pytest.mark.parametrize("shard", [(2, 2), (5, 4), (-1, 4), (0, 0)])
async def test_a_shard_id_not_below_its_count_closes_with_4010(
    standin: DiscordStandIn, connect: Any, shard: tuple[int, int]
) -> None:
    raw = await connect()
    assert await raw.identify(shard) == {"close": 4010}


@pytest.mark.standin(shard_count=8, max_concurrency=4)
async def test_gateway_bot_recommends_the_shards_and_tells_the_concurrency(
    standin: DiscordStandIn,
) -> None:
    async with (
        aiohttp.ClientSession() as http,
        http.get(
            standin.api_base + "/gateway/bot", headers={"Authorization": f"Bot {TOKEN}"}
        ) as resp,
    ):
        body = await resp.json()
    assert body["shards"] == 8
    assert body["session_start_limit"]["max_concurrency"] == 4


@pytest.mark.standin(shard_count=2)
async def test_two_sessions_of_one_shard_both_receive_while_overlapping(
    standin: DiscordStandIn, connect: Any
) -> None:
    standin.gateway.overlapping = True
    old, new = await connect(), await connect()
    await old.identify((1, 2))
    await new.identify((1, 2))
    alice = standin.add_user("alice")
    guild = standin.add_guild("handed over", shard=1)
    standin.add_member(guild, alice)
    channel = standin.add_channel(guild, "games")
    sent = [await standin.send_interaction(2, FLIP, user=alice, channel=channel) for _ in range(2)]
    got = {int((await raw.next_event("INTERACTION_CREATE"))["id"]) for raw in (old, new)}
    assert got == {rec.id for rec in sent}
