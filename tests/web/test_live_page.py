"""A running game's page in headless Chromium follows the game: each round played through the
bot appears on it, played out as the replay plays it, without a reload."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.async_api import expect

from krigbot.engine import Game, format_cards
from krigbot.i18n import t
from tests.standin import DiscordStandIn
from tests.standin.fixtures import SampleWorld
from tests.support.browser import DESKTOP, PHONE, chromium, open_page, screenshot
from tests.support.players import ChosenSeeds, flip, start_game
from tests.support.web import Web
from tests.support.web_games import BOB_WINS, STANDARD, web_on

pytestmark = pytest.mark.slow

WAIT_MS = 20_000


async def test_a_running_games_page_shows_each_new_round_as_it_is_played(
    standin: DiscordStandIn, world: SampleWorld, web: Web, seeds: ChosenSeeds, tmp_path: Path
) -> None:
    seeds.fix(BOB_WINS)
    await web_on(standin, world, web.bot)
    table = await start_game(standin, world.no_channel, world.alice, world.bob)
    await flip(standin, world.no_channel, world.alice, count=2)
    url = await web.bot.web.game_url(world.no_guild.id, table.game_id)
    assert url is not None
    expected = Game.new(STANDARD, BOB_WINS)
    rounds = [expected.play_round() for _ in range(30)]
    async with chromium() as browser:
        phone = await open_page(browser, PHONE, locale="en-GB")
        desk = await open_page(browser, DESKTOP, locale="sv-SE")
        for watched in (phone, desk):
            await watched.page.goto(url)
            await expect(watched.page.locator("#replay")).to_have_attribute("data-round", "2")
            # Anything set on the page now is gone if it reloads.
            await watched.page.evaluate("window.openedOnce = true")
        page = phone.page
        replay = page.locator("#replay")
        for played in rounds[2:6]:
            n = played.number
            await flip(standin, world.no_channel, world.alice)
            await expect(replay).to_have_attribute("data-round", str(n), timeout=WAIT_MS)
            await expect(page.locator("#where")).to_contain_text(f"{n} / {n}")
            for seat, card in played.battle:
                shown = page.locator(f'.seat[data-seat="{seat}"] [data-role="battle"]')
                await expect(shown).to_have_attribute("data-code", format_cards([card])[0])
            # The cards turn over as the replay turns them, then the counts are the game's.
            await expect(page.locator(".c[data-code]:not(.up)")).to_have_count(0)
            counts = await page.locator("[data-count]").all_inner_texts()
            assert [int(c) for c in counts] == list(played.counts)
            await expect(page.locator("#scrub")).to_have_attribute("max", str(n))
        await expect(desk.page.locator("#replay")).to_have_attribute("data-round", "6")
        await screenshot(page, tmp_path, "following-phone")
        await screenshot(desk.page, tmp_path, "following-desktop")
        # Looking back stays where it is while the game goes on.
        await desk.page.click("#first")
        await flip(standin, world.no_channel, world.bob, count=24)
        await expect(replay).to_have_attribute("data-state", "ended", timeout=WAIT_MS)
        await expect(replay).to_have_attribute("data-round", "30")
        await expect(page.locator("#result")).to_be_visible()
        await expect(page.locator("#result")).to_contain_text(
            t("en", "over.winner", name="Bob").removeprefix("🏆").strip()
        )
        assert [int(c) for c in await page.locator("[data-count]").all_inner_texts()] == [0, 52]
        await expect(desk.page.locator("#scrub")).to_have_attribute("max", "30")
        await expect(desk.page.locator("#replay")).to_have_attribute("data-round", "0")
        await expect(desk.page.locator("#result")).to_be_hidden()
        await screenshot(page, tmp_path, "following-ended-phone")
        for watched in (phone, desk):
            assert await watched.page.evaluate("window.openedOnce") is True  # never reloaded
            assert watched.foreign(web.base) == []
            assert watched.errors == []
