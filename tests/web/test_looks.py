"""The web view's pages in a real browser at a phone's and a desktop's width: names that wrap
between words, names in any script drawn with the site's own fonts, and a replay that keeps
its result until it is played."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.async_api import Page, expect

from krigbot.i18n import t
from tests.standin import DiscordStandIn
from tests.standin.fixtures import SampleWorld
from tests.support.browser import DESKTOP, PHONE, Watched, chromium, open_page, screenshot
from tests.support.players import ChosenSeeds, flip, start_game
from tests.support.web import Web
from tests.support.web_games import ALICE_WINS, BOB_WINS, links, play, web_on

pytestmark = pytest.mark.slow

WAIT_MS = 20_000

BROKEN_WORDS = """(selector) => {
  const broken = [];
  for (const element of document.querySelectorAll(selector)) {
    const walker = document.createTreeWalker(element, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      for (const word of node.data.matchAll(/[^\\s\\-]+/g)) {
        const range = document.createRange();
        range.setStart(node, word.index);
        range.setEnd(node, word.index + word[0].length);
        const lines = new Set([...range.getClientRects()].map((r) => Math.round(r.bottom)));
        if (lines.size > 1) broken.push(word[0]);
      }
    }
  }
  return broken;
}"""
"""The words (a hyphen ends one) of the elements a selector finds that break across lines."""

LOADED_FONTS = """() => [...document.fonts]
  .filter((face) => face.family.replaceAll('"', "") === "Krig Text" && face.status === "loaded")
  .map((face) => face.unicodeRange)"""


async def broken_words(page: Page, selector: str) -> list[str]:
    """Return the words inside ``selector`` that are split over two lines."""
    await expect(page.locator(selector).first).to_be_visible()
    found: list[str] = await page.evaluate(BROKEN_WORDS, selector)
    return found


def clean(watched: Watched, origin: str) -> None:
    """Fail if the page asked anything of another origin or complained in its console."""
    assert watched.foreign(origin) == []
    assert watched.errors == []


async def drawn_with(page: Page, selector: str) -> dict[str, bool]:
    """Return the fonts the browser draws an element's text with: family -> from the page."""
    cdp = await page.context.new_cdp_session(page)
    await cdp.send("DOM.enable")
    await cdp.send("CSS.enable")
    root = await cdp.send("DOM.getDocument")
    found = await cdp.send(
        "DOM.querySelector", {"nodeId": root["root"]["nodeId"], "selector": selector}
    )
    fonts = await cdp.send("CSS.getPlatformFontsForNode", {"nodeId": found["nodeId"]})
    await cdp.detach()
    return {font["familyName"]: font["isCustomFont"] for font in fonts["fonts"]}


def in_range(code: int, ranges: str) -> bool:
    """Tell whether a ``unicode-range`` value holds a code point."""
    for part in ranges.split(","):
        first, _, last = part.strip().removeprefix("U+").partition("-")
        if int(first, 16) <= code <= int(last or first, 16):
            return True
    return False


async def test_names_wrap_only_between_words_on_a_phone(
    standin: DiscordStandIn, world: SampleWorld, web: Web, seeds: ChosenSeeds
) -> None:
    asa = standin.add_user("asa", "Åsa Lindqvist", locale="sv-SE")
    long = standin.add_user("long", "Bartholomew Fitzgerald-Wellingtonshire", locale="en-GB")
    for user in (asa, long):
        standin.add_member(world.no_guild, user)
    seeds.fix(BOB_WINS, ALICE_WINS)
    await web_on(standin, world, web.bot)
    await play(standin, world.no_channel, asa, long)
    game = await play(standin, world.no_channel, world.alice, asa)
    (url,) = links(game.over).values()
    board = await web.bot.web.leaderboard_url(world.no_guild.id)
    assert board is not None
    async with chromium() as browser:
        watched = await open_page(browser, PHONE, locale="sv-SE")
        page = watched.page
        await page.goto(board)
        assert await broken_words(page, ".board .name") == []
        await page.get_by_role("link", name="Åsa Lindqvist").click()
        assert await broken_words(page, "h1, .list td, .games .vs") == []
        await page.goto(url)
        await page.click("#last")
        assert await broken_words(page, "h1, #caption p, .result p") == []
        assert await page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
        clean(watched, web.base)


async def test_names_in_any_script_are_drawn_with_the_sites_own_fonts(
    standin: DiscordStandIn, world: SampleWorld, web: Web, seeds: ChosenSeeds, tmp_path: Path
) -> None:
    han = standin.add_user("han", "王小明", locale="en-US")
    gamer = standin.add_user("gamer", "Kari 🎮", locale="nb")
    for user in (han, gamer):
        standin.add_member(world.no_guild, user)
    seeds.fix(BOB_WINS)
    await web_on(standin, world, web.bot)
    await play(standin, world.no_channel, han, gamer)
    board = await web.bot.web.leaderboard_url(world.no_guild.id)
    assert board is not None
    async with chromium() as browser:
        watched = await open_page(browser, DESKTOP, locale="en-GB")
        page = watched.page
        # The first visit cuts the slices (a few seconds each); the text shows meanwhile.
        await page.goto(board, wait_until="domcontentloaded")
        await expect(page.locator(".board .name").first).to_be_visible()
        await page.evaluate("document.fonts.ready.then(() => true)")
        loaded: list[str] = await page.evaluate(LOADED_FONTS)
        for char in "王小明🎮":
            assert any(in_range(ord(char), ranges) for ranges in loaded), char
        fonts = [url for url in watched.requests if url.endswith(".woff2")]
        assert all(url.startswith(web.base + "/fonts/") for url in fonts)
        # Only the slices of the letters shown: not the hundreds the style sheet offers.
        assert 0 < len(fonts) < 12, fonts
        # Every letter of the names is drawn with the page's own fonts, not as a missing glyph.
        for row, faces in ((1, {"Noto Emoji"}), (2, {"Noto Sans CJK JP"})):
            drawn = await drawn_with(page, f".board tbody tr:nth-child({row}) .name a")
            assert {family for family, own in drawn.items() if own} == faces, drawn
        await screenshot(page, tmp_path, "board-names-desktop")
        await page.get_by_role("link", name="王小明").click()
        await expect(page.locator("h1")).to_contain_text("王小明")
        await expect(page.locator("h1")).to_be_visible()  # laid out: its fonts are asked for
        await page.evaluate("document.fonts.ready.then(() => true)")
        drawn = await drawn_with(page, "h1")
        assert {family for family, own in drawn.items() if own} == {"Noto Sans CJK JP"}, drawn
        await screenshot(page, tmp_path, "player-names-desktop")
        clean(watched, web.base)


async def test_a_replay_shows_the_deal_and_reveals_the_result_only_at_its_end(
    standin: DiscordStandIn, world: SampleWorld, web: Web, seeds: ChosenSeeds, tmp_path: Path
) -> None:
    asa = standin.add_user("asa", "Åsa Lindqvist", locale="sv-SE")
    standin.add_member(world.no_guild, asa)
    seeds.fix(BOB_WINS, ALICE_WINS, BOB_WINS)
    await web_on(standin, world, web.bot)
    await play(standin, world.no_channel, world.alice, asa)
    game = await play(standin, world.no_channel, world.alice, world.bob)
    (url,) = links(game.over).values()
    board = await web.bot.web.leaderboard_url(world.no_guild.id)
    assert board is not None
    live = await start_game(standin, world.no_channel, asa, world.carol)
    shown = await flip(standin, world.no_channel, asa, count=4)
    (live_url,) = links(shown).values()
    winner = t("en", "over.winner", name="Alice")
    async with chromium() as browser:
        for size, viewport in (("phone", PHONE), ("desktop", DESKTOP)):
            watched = await open_page(browser, viewport, locale="en-GB")
            page = watched.page
            await page.goto(url)
            replay = page.locator("#replay")
            await expect(replay).to_have_attribute("data-round", "0")
            # Before Play: each player's dealt pile, and nothing that tells who wins.
            await expect(page.locator('[data-role="deal"]')).to_have_count(2)
            await expect(page.locator("[data-count]")).to_have_text(["26", "26"])
            await expect(page.locator("#result")).to_be_hidden()
            assert winner not in await page.locator("body").inner_text()
            await screenshot(page, tmp_path, f"replay-start-{size}")
            await page.click("#last")
            await expect(replay).to_have_attribute("data-state", "ended")
            await expect(page.locator("#result")).to_be_visible()
            await expect(page.locator("#result .headline")).to_have_text(winner)
            await screenshot(page, tmp_path, f"replay-end-{size}")
            await page.click("#prev")
            await expect(page.locator("#result")).to_be_hidden()
            # A game under way: its latest round, and that it is under way.
            await page.goto(live_url)
            await expect(replay).to_have_attribute("data-round", "4")
            await expect(page.locator("#running")).to_contain_text(
                t("en", "web.game.running", count=4, n=4)
            )
            await screenshot(page, tmp_path, f"live-{size}")
            await page.goto(board)
            await screenshot(page, tmp_path, f"board-{size}")
            await page.get_by_role("link", name="Åsa Lindqvist").click()
            await screenshot(page, tmp_path, f"player-{size}")
            clean(watched, web.base)
    assert live.game_id != game.game_id
