"""The monitoring endpoint, scraped while the real bot plays through the Discord stand-in."""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import pytest
from prometheus_client.parser import text_string_to_metric_families

from krigbot.bot import KrigBot
from krigbot.monitoring import Health, MonitorServer
from krigbot.monitoring.metrics import is_exempt
from krigbot.monitoring.server import link
from krigbot.storage import Storage
from tests.standin import DiscordStandIn
from tests.standin.fixtures import SampleWorld
from tests.support.players import flip, flip_button, forged_press, game_row, press, start_game

Samples = dict[tuple[str, tuple[tuple[str, str], ...]], float]


@pytest.fixture
async def endpoint(bot: KrigBot, storage: Storage) -> AsyncIterator[str]:
    """Serve the bot's metrics and health on a free port, as bot.py does; return its address."""
    server = MonitorServer(
        bot.metrics,
        Health(discord=bot.gateway_problem, database=storage.probe),
        host="127.0.0.1",
        port=0,
    )
    await server.start()
    yield f"http://127.0.0.1:{server.port}"
    await server.close()


def test_an_address_is_written_as_its_link_and_a_mistyped_host_as_it_was_set() -> None:
    # bot.py's "cannot serve ... on ..." line shows the setting even when no URL can hold it.
    assert link("::1", 9090) == "http://[::1]:9090/"
    assert link("0.0.0.0", 80) == "http://0.0.0.0/"
    assert link("krig host", 9090) == "krig host:9090"


async def scrape(endpoint: str) -> Samples:
    """Return every sample the endpoint serves, by name and labels."""
    async with aiohttp.ClientSession() as http, http.get(f"{endpoint}/metrics") as answer:
        assert answer.status == 200
        assert answer.headers["Content-Type"].startswith("text/plain")
        text = await answer.text()
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


async def health(endpoint: str) -> tuple[int, str]:
    """Return the health check's status and its line."""
    async with aiohttp.ClientSession() as http, http.get(f"{endpoint}/healthz") as answer:
        return answer.status, (await answer.text()).strip()


def moved(before: Samples, after: Samples, name: str, **labels: str) -> float:
    """Return how far one sample moved between two scrapes."""
    key = (name, tuple(sorted(labels.items())))
    return after.get(key, 0.0) - before.get(key, 0.0)


async def test_the_counters_move_by_exactly_the_interactions_sent(
    standin: DiscordStandIn, standin_world: SampleWorld, bot: KrigBot, endpoint: str
) -> None:
    world = standin_world
    before = await scrape(endpoint)

    table = await start_game(standin, world.no_channel, world.alice, world.bob)
    for _ in range(3):
        newest = (await flip(standin, world.no_channel, world.alice)).message
    refused = await flip(standin, world.no_channel, world.carol)  # not a player
    assert newest is not None
    await press(standin, newest, flip_button(newest), world.bob)
    after = await scrape(endpoint)

    assert refused.ephemeral
    count = "krig_interactions_total"
    assert moved(before, after, count, command="/krig start", outcome="answered") == 1
    assert moved(before, after, count, command="button:accept", outcome="answered") == 1
    assert moved(before, after, count, command="/flip", outcome="answered") == 3
    assert moved(before, after, count, command="/flip", outcome="refused") == 1
    assert moved(before, after, count, command="button:flip", outcome="answered") == 1
    every = sum(after[key] - before.get(key, 0.0) for key in after if key[0] == count)
    assert every == 7  # start, accept, three flips, the refused flip, the button
    # One first response per interaction, each timed from when Discord created it.
    assert moved(before, after, "krig_reply_seconds_count") == 7
    assert moved(before, after, "krig_games_started_total", variant="standard") == 1
    assert moved(before, after, "krig_rounds_total") == 4  # three flips and the button
    assert (await game_row(bot, table.game_id)).round == 4
    assert after[("krig_running_games", ())] >= 1
    assert moved(before, after, "krig_db_commit_seconds_count") >= 1
    assert after[("krig_gateway_state", (("shard", "0"), ("state", "connected")))] == 1


async def test_every_request_to_discord_is_counted_once_exempt_or_not(
    standin: DiscordStandIn, standin_world: SampleWorld, bot: KrigBot, endpoint: str
) -> None:
    world = standin_world
    await start_game(standin, world.no_channel, world.alice, world.bob)
    await bot.tables.close()  # the challenge's greying is out
    sent = len(standin.requests.items)
    before = await scrape(endpoint)

    for _ in range(3):
        await flip(standin, world.no_channel, world.alice)
    await bot.tables.close()  # each new table greys the one before it, through its token
    after = await scrape(endpoint)

    requests = standin.requests.items[sent:]
    exempt = [r for r in requests if is_exempt(r.path)]
    assert len(exempt) >= 3 + 2  # three answers, two tables greyed
    count = "krig_discord_requests_total"
    assert moved(before, after, count, kind="interaction") == len(exempt)
    assert moved(before, after, count, kind="global") == len(requests) - len(exempt)


async def test_health_is_503_while_the_gateway_is_away_and_200_when_it_is_back(
    standin: DiscordStandIn, bot: KrigBot, endpoint: str
) -> None:
    assert await health(endpoint) == (200, "ok")
    events = standin.gateway_events.cursor()
    standin.fail_fast_on_bot_errors = False  # discord.py logs each failed reconnect

    async with standin.gateway_away():
        await events.next(lambda event: event.kind == "refused", timeout=30)
        status, reason = await health(endpoint)
        assert (status, reason) == (503, "the connection to Discord is resuming")

    # A shard whose first try to resume failed identifies afresh (discord.py's AutoShardedBot).
    await events.next(lambda event: event.kind in ("resumed", "ready"), timeout=30)
    assert await health(endpoint) == (200, "ok")
    for error in standin.accept_bot_errors():
        assert error.getMessage().startswith("Attempting a reconnect"), error.getMessage()


async def test_health_is_503_while_the_database_is_locked_and_200_when_it_is_free(
    bot: KrigBot, db_path: Path, endpoint: str
) -> None:
    other = sqlite3.connect(db_path, isolation_level=None)
    try:
        other.execute("BEGIN EXCLUSIVE")
        status, reason = await health(endpoint)
        assert status == 503
        assert reason.startswith(f"the database {db_path} does not take writes")
        other.execute("ROLLBACK")
        assert await health(endpoint) == (200, "ok")
    finally:
        other.close()


async def test_forged_button_ids_share_one_label_and_add_no_series(
    standin: DiscordStandIn, standin_world: SampleWorld, bot: KrigBot, endpoint: str
) -> None:
    world = standin_world
    standin.fail_fast_on_bot_errors = False  # the bot warns of each button not on its message
    table = await start_game(standin, world.no_channel, world.alice, world.bob)
    before = await scrape(endpoint)
    forged = ["krig:abcdefgh:1", "krig:zz:1:2", "krig:flipx:1:1", "krig:", f"krig:{'q' * 16}:"]
    for custom_id in forged:
        answer = await forged_press(standin, table.message, custom_id, world.alice)
        assert answer.ephemeral
    after = await scrape(endpoint)

    count = "krig_interactions_total"
    assert moved(before, after, count, command="button:unknown", outcome="refused") == len(forged)
    labels = {dict(key[1])["command"] for key in after if key[0] == count}
    assert labels <= {"/krig start", "button:accept", "button:unknown"}, labels
    for error in standin.accept_bot_errors():
        assert error.getMessage().startswith("refused a button"), error.getMessage()


async def test_the_start_up_log_says_the_address_to_open(
    bot: KrigBot, storage: Storage, caplog: pytest.LogCaptureFixture
) -> None:
    server = MonitorServer(
        bot.metrics,
        Health(discord=bot.gateway_problem, database=storage.probe),
        host="127.0.0.1",
        port=0,
    )
    with caplog.at_level(logging.INFO, logger="krigbot.monitoring.server"):
        await server.start()
    try:
        messages = [r.getMessage() for r in caplog.records if r.name == "krigbot.monitoring.server"]
        assert messages == [f"monitoring on http://127.0.0.1:{server.port}/ (/metrics, /healthz)"]
        assert (await health(f"http://127.0.0.1:{server.port}"))[0] == 200
    finally:
        await server.close()
