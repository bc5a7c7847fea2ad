"""/krig table: the channel's running game opens at its table, as the Activity where the
application has one, else as the game's page of the web view (to the one who asked)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path

import pytest

from krigbot.bot import KrigBot
from krigbot.i18n import t
from krigbot.storage import Storage
from tests.standin import DiscordStandIn, run_bot
from tests.standin.apps import EMBEDDED
from tests.standin.fixtures import SampleWorld
from tests.standin.records import LAUNCH_ACTIVITY
from tests.support.handsfree import command
from tests.support.players import ChosenSeeds, answer_of, start_game
from tests.support.settings import make_settings
from tests.support.web import SECRET
from tests.support.web_games import links, web_on

PAGES = "https://krig.example.org"

BotMaker = Callable[..., AbstractAsyncContextManager[KrigBot]]


@pytest.fixture
def make_bot(
    standin: DiscordStandIn, storage: Storage, db_path: Path, seeds: ChosenSeeds
) -> BotMaker:
    """Return a maker of the real bot with the given settings, running on the stand-in."""

    @asynccontextmanager
    async def running(**settings: object) -> AsyncIterator[KrigBot]:
        krigbot = KrigBot(
            make_settings(db_path, **settings), storage, seeds=seeds, guild_ready_timeout=0.05
        )
        async with run_bot(krigbot, standin) as bot:
            yield bot

    return running


async def test_the_activity_opens_where_the_application_has_one(
    standin: DiscordStandIn, world: SampleWorld, make_bot: BotMaker
) -> None:
    standin.application_flags = EMBEDDED
    async with make_bot(activity=True, web_url=PAGES, web_secret=SECRET, web_port=9):
        await start_game(standin, world.no_channel, world.alice, world.bob)
        before = len(standin.messages(world.no_channel))
        rec = await standin.slash("krig table", user=world.carol, channel=world.no_channel)
        answer = await rec.response()
        assert answer.type == LAUNCH_ACTIVITY
        assert answer.message is None
        assert rec.rejected == []
        # Discord opens the Activity in the channel; the bot posts nothing.
        assert len(standin.messages(world.no_channel)) == before


async def test_a_refused_launch_answers_with_the_games_page(
    standin: DiscordStandIn, world: SampleWorld, make_bot: BotMaker
) -> None:
    # Set up as having an Activity, while the Developer Portal has none: Discord refuses.
    async with make_bot(activity=True, web_url=PAGES, web_secret=SECRET, web_port=9) as bot:
        await web_on(standin, world, bot)
        table = await start_game(standin, world.no_channel, world.alice, world.bob)
        page = await bot.web.game_url(world.no_guild.id, table.game_id)
        assert page is not None
        rec = await standin.slash("krig table", user=world.alice, channel=world.no_channel)
        answer = await answer_of(standin, rec)
        assert rec.rejected == [(400, 50035)]
        assert answer.ephemeral
        assert answer.content == t("nb", "table.link", url=page)
        assert links(answer) == {t("nb", "web.watch_live"): page}


async def test_without_an_activity_the_asker_gets_the_games_page_or_why_there_is_none(
    standin: DiscordStandIn, world: SampleWorld, make_bot: BotMaker
) -> None:
    async with make_bot(web_url=PAGES, web_secret=SECRET, web_port=9) as bot:
        await web_on(standin, world, bot)
        table = await start_game(standin, world.no_channel, world.alice, world.bob)
        page = await bot.web.game_url(world.no_guild.id, table.game_id)
        answer = await command(standin, world.no_channel, world.bob, "table")
        assert answer.type != LAUNCH_ACTIVITY
        assert answer.ephemeral
        assert answer.content == t("sv", "table.link", url=page)
        # The Swedish server has not turned its web view on.
        await start_game(standin, world.sv_channel, world.alice, world.bob)
        refused = await command(standin, world.sv_channel, world.bob, "table")
        assert refused.ephemeral
        assert refused.content == t("sv", "table.web_off")
        assert links(refused) == {}


async def test_a_bot_without_pages_says_the_table_is_in_the_channel_only(
    standin: DiscordStandIn, world: SampleWorld, make_bot: BotMaker
) -> None:
    async with make_bot():
        await start_game(standin, world.no_channel, world.alice, world.bob)
        answer = await command(standin, world.no_channel, world.carol, "table")
        assert answer.ephemeral
        assert answer.content == t("en", "table.no_pages")


async def test_no_running_game_launches_nothing(
    standin: DiscordStandIn, world: SampleWorld, make_bot: BotMaker
) -> None:
    standin.application_flags = EMBEDDED
    async with make_bot(activity=True, web_url=PAGES, web_secret=SECRET, web_port=9):
        answer = await command(standin, world.no_channel, world.alice, "table")
        assert answer.type != LAUNCH_ACTIVITY
        assert answer.ephemeral
        assert answer.content == t("nb", "table.none")
        # A challenge waiting for its answers is no game yet.
        await command(standin, world.no_channel, world.alice, "start", opponent=world.bob)
        waiting = await command(standin, world.no_channel, world.alice, "table")
        assert waiting.content == t("nb", "table.none")
