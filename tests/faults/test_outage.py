"""PostgreSQL stopped for a while in the middle of a game, then started again.

The test runs its own cluster (``Cluster.halt`` and ``resume``), so stopping it stops no other
test's database.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import asyncpg  # type: ignore[import-untyped]  # asyncpg ships no type hints
import pytest

from krigbot.bot import KrigBot
from krigbot.i18n import t
from krigbot.storage import Storage
from tests.standin import DiscordStandIn, InteractionResponse, run_bot
from tests.standin.fixtures import SampleWorld
from tests.support.players import (
    UPDATE_MESSAGE,
    ChosenSeeds,
    Table,
    answer_of,
    flip_button,
    press,
    start_game,
    text_of,
)
from tests.support.postgres import Cluster, cluster_running
from tests.support.settings import make_settings

pytestmark = pytest.mark.slow


@pytest.fixture
def own_cluster() -> Iterator[Cluster]:
    """Run a PostgreSQL cluster of this test's own, which it may stop and start."""
    with cluster_running() as cluster:
        yield cluster


@pytest.fixture
def own_url(own_cluster: Cluster) -> str:
    """Return the URL of the bot's database on the test's own cluster."""
    return own_cluster.create_database()


@pytest.fixture
async def pg_bot(
    standin: DiscordStandIn,
    standin_world: SampleWorld,
    own_url: str,
    db_path: Path,
    seeds: ChosenSeeds,
) -> AsyncIterator[KrigBot]:
    """Return the real bot on a database of the test's own cluster; its errors are claimed."""
    storage = await Storage.open(own_url)
    try:
        krigbot = KrigBot(make_settings(db_path), storage, seeds=seeds, guild_ready_timeout=0.05)
        async with run_bot(krigbot, standin) as running:
            standin.fail_fast_on_bot_errors = False
            yield running
            standin.accept_bot_errors()
    finally:
        await storage.close()


async def status(standin: DiscordStandIn, world: SampleWorld) -> InteractionResponse:
    """Run /krig status as Alice in the Norwegian channel."""
    return await answer_of(
        standin, await standin.slash("krig status", user=world.alice, channel=world.no_channel)
    )


async def flips_shown(
    standin: DiscordStandIn, world: SampleWorld, table: Table, how: str, times: int
) -> list[str]:
    """Flip ``times`` by ``/flip`` or the table's button; return each answer's title (or text)."""
    shown = []
    for _ in range(times):
        if how == "slash":
            rec = await standin.slash("flip", user=world.alice, channel=world.no_channel)
            answer = await answer_of(standin, rec)
        else:
            answer = await press(standin, table.message, flip_button(table.message), world.alice)
        shown.append(text_of(answer) if answer.ephemeral else answer.embeds[0]["title"])
    return shown


async def played_to(standin: DiscordStandIn, world: SampleWorld, table: Table, rounds: int) -> None:
    for _ in range(rounds):
        answer = await press(standin, table.message, flip_button(table.message), world.alice)
        assert answer.type == UPDATE_MESSAGE, text_of(answer)


async def test_during_an_outage_status_shows_the_game_and_every_press_after_it_plays(
    standin: DiscordStandIn, world: SampleWorld, pg_bot: KrigBot, own_cluster: Cluster
) -> None:
    table = await start_game(standin, world.no_channel, world.alice, world.bob)
    await played_to(standin, world, table, 6)

    await asyncio.to_thread(own_cluster.halt)
    refused = await press(standin, table.message, flip_button(table.message), world.alice)
    during = await status(standin, world)
    await asyncio.to_thread(own_cluster.resume)
    # Where no copy is held (the other channel has no game in memory), it says why not.
    await asyncio.to_thread(own_cluster.halt)
    elsewhere = await answer_of(
        standin, await standin.slash("krig status", user=world.bob, channel=world.sv_channel)
    )
    board = await answer_of(
        standin, await standin.slash("krig leaderboard", user=world.bob, channel=world.sv_channel)
    )
    await asyncio.to_thread(own_cluster.resume)
    shown = []
    for _ in range(3):
        answer = await press(standin, table.message, flip_button(table.message), world.alice)
        shown.append(answer.embeds[0]["title"])

    assert refused.ephemeral
    assert refused.content == t("nb", "err.storage")
    # A read needs no write: the table held here, and why it may be behind.
    assert during.ephemeral
    assert during.content == t("nb", "status.unreachable")
    assert t("nb", "status.round", round=6) in text_of(during)
    assert elsewhere.ephemeral
    assert elsewhere.content == t("sv", "status.unreachable_none")
    assert board.ephemeral
    assert board.content == t("sv", "err.storage_read")
    assert shown == [t("nb", "table.title", round=n) for n in (7, 8, 9)]


async def test_a_connection_the_stopping_server_left_out_of_step_is_a_storage_failure(
    standin: DiscordStandIn,
    world: SampleWorld,
    pg_bot: KrigBot,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # What asyncpg raises when the server's goodbye arrives in the middle of a statement (seen
    # when PostgreSQL stops under a flip); it cannot be timed from outside, so it is injected.
    table = await start_game(standin, world.no_channel, world.alice, world.bob)
    await played_to(standin, world, table, 2)
    execute = asyncpg.Connection.execute
    broken: list[asyncpg.Connection] = []

    async def out_of_step(self: asyncpg.Connection, query: str, *args: object) -> str:
        if not broken and query.lstrip().startswith("UPDATE games"):
            broken.append(self)
            raise asyncpg.InternalClientError(
                "cannot switch to state 12; another operation (2) is in progress"
            )
        return str(await execute(self, query, *args))

    monkeypatch.setattr(asyncpg.Connection, "execute", out_of_step)
    refused = await press(standin, table.message, flip_button(table.message), world.alice)
    after = await press(standin, table.message, flip_button(table.message), world.alice)

    assert refused.ephemeral
    assert refused.content == t("nb", "err.storage")  # a database failure, told as one
    assert broken[0].is_closed()  # never handed out again
    assert after.embeds[0]["title"] == t("nb", "table.title", round=3)


@pytest.mark.parametrize("how", ["slash", "button"])
async def test_a_round_the_database_lost_is_not_played_again(
    standin: DiscordStandIn,
    world: SampleWorld,
    pg_bot: KrigBot,
    own_cluster: Cluster,
    own_url: str,
    how: str,
) -> None:
    # A server that commits without waiting for the disk loses its last commits when it stops
    # at once (the process test stops one so); the database is put back a round here instead,
    # which no timing decides.
    table = await start_game(standin, world.no_channel, world.alice, world.bob)
    await played_to(standin, world, table, 5)
    own_cluster.psql("CREATE TABLE kept AS SELECT id, state, round, moves FROM games", own_url)
    await played_to(standin, world, table, 1)
    sixth = table.message.embeds[0]["title"]
    own_cluster.psql(
        "UPDATE games SET state = kept.state, round = kept.round, moves = kept.moves "
        "FROM kept WHERE games.id = kept.id",
        own_url,
    )
    shown = await flips_shown(standin, world, table, how, 3)

    assert sixth == t("nb", "table.title", round=6)
    assert shown == [t("nb", "table.title", round=n) for n in (7, 8, 9)]
    assert own_cluster.psql("SELECT round FROM games", own_url) == "9"


@pytest.mark.parametrize("how", ["slash", "button"])
async def test_a_save_committed_whose_answer_was_lost_still_lets_the_next_press_play(
    standin: DiscordStandIn,
    world: SampleWorld,
    pg_bot: KrigBot,
    own_cluster: Cluster,
    own_url: str,
    monkeypatch: pytest.MonkeyPatch,
    how: str,
) -> None:
    # The connection drops after the server committed the round and before its answer came:
    # the bot tells the player the save failed and holds the game as it was.
    table = await start_game(standin, world.no_channel, world.alice, world.bob)
    await played_to(standin, world, table, 3)
    execute = asyncpg.Connection.execute
    lost: list[str] = []

    async def answer_lost(self: asyncpg.Connection, query: str, *args: object) -> str:
        done = str(await execute(self, query, *args))
        if not lost and query.lstrip().startswith("UPDATE games SET state"):
            lost.append(done)
            self.terminate()
            raise asyncpg.ConnectionDoesNotExistError("connection was closed in the middle")
        return done

    monkeypatch.setattr(asyncpg.Connection, "execute", answer_lost)
    refused = await press(standin, table.message, flip_button(table.message), world.alice)
    committed = own_cluster.psql("SELECT round FROM games", own_url)
    shown = await flips_shown(standin, world, table, how, 2)

    assert refused.ephemeral
    assert refused.content == t("nb", "err.storage")
    assert committed == "4"  # the round the refused press played is in the database
    # Each press plays one round, on the game as stored.
    assert shown == [t("nb", "table.title", round=n) for n in (5, 6)]
    assert own_cluster.psql("SELECT round FROM games", own_url) == "6"
