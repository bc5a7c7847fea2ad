"""The web view in a real headless browser: what a visitor sees, and what the page never does."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from playwright.async_api import Locator, Page, expect

from krigbot.engine import Game, Rules, format_cards
from krigbot.i18n import fmt_percent, t
from tests.standin import DiscordStandIn
from tests.standin.fixtures import SampleWorld
from tests.support.browser import DESKTOP, PHONE, Watched, chromium, open_page, screenshot
from tests.support.handsfree import command
from tests.support.players import ChosenSeeds, Clock, flip, start_game
from tests.support.web import Web
from tests.support.web_games import (
    ALICE_WINS,
    BOB_WINS,
    STANDARD,
    bob_wins_on_the_web,
    links,
    play,
    web_on,
)

pytestmark = pytest.mark.slow

WAIT_MS = 20_000
"""How long the browser may take to do something a visitor would wait a moment for."""


def clean(watched: Watched, origin: str) -> None:
    """Fail if the page asked anything of another origin or complained in its console."""
    assert watched.foreign(origin) == []
    assert watched.errors == []


async def status(page: Page, url: str) -> int:
    """Open an address in the page and return the HTTP status it was answered with."""
    answer = await page.goto(url)
    assert answer is not None
    return answer.status


async def rows_of(table: Locator) -> list[list[str]]:
    """Return a table's body rows as the cells' texts."""
    return [
        [cell.strip() for cell in await row.locator("td").all_inner_texts()]
        for row in await table.locator("tbody tr").all()
    ]


async def board_rows(page: Page) -> list[list[str]]:
    """Return the leaderboard's rows as the cells' texts."""
    return await rows_of(page.locator("#leaderboard"))


async def test_the_leaderboard_shows_exactly_the_servers_results(
    standin: DiscordStandIn, world: SampleWorld, web: Web, seeds: ChosenSeeds
) -> None:
    clock = Clock()
    web.bot.service.registry.clock = clock
    seeds.fix(BOB_WINS, ALICE_WINS, BOB_WINS, BOB_WINS)
    await web_on(standin, world, web.bot)
    games = [
        await play(standin, world.no_channel, world.alice, world.bob),
        await play(standin, world.no_channel, world.alice, world.carol),
        await play(standin, world.no_channel, world.carol, world.bob),
        # The other server's game: not on this server's board, though Carol wins it.
        await play(standin, world.sv_channel, world.bob, world.carol),
    ]
    wins: Counter[str] = Counter()
    played: Counter[str] = Counter()
    for game in games[:3]:
        row = await web.bot.storage.games.get_game(game.game_id)
        assert row is not None
        assert row.result is not None
        played.update(row.names)
        wins.update(row.names[seat] for seat in row.result["winners"])
    expected = sorted(
        played, key=lambda name: (-wins[name], -wins[name] / played[name], -played[name])
    )
    url = await web.bot.web.leaderboard_url(world.no_guild.id)
    assert url is not None
    async with chromium() as browser:
        watched = await open_page(browser, DESKTOP, locale="en-GB")
        page = watched.page
        assert await status(page, url) == 200
        heading = f"{t('en', 'web.leaderboard')} {world.no_guild.name}"
        await expect(page.locator("h1")).to_have_text(heading)
        rows = await board_rows(page)
        assert rows == [
            [
                str(rank),
                name,
                str(wins[name]),
                str(played[name]),
                "0",
                str(played[name] - wins[name]),
                fmt_percent(wins[name] / played[name], "en"),
            ]
            for rank, name in enumerate(expected, start=1)
        ]
        # A week later the week's board is empty and the month's still has everyone.
        clock.advance(days=8)
        await page.get_by_role("link", name=t("en", "period.week")).click()
        await expect(page.locator(".empty")).to_have_text(t("en", "lb.empty"))
        await page.get_by_role("link", name=t("en", "period.month")).click()
        assert [row[1] for row in await board_rows(page)] == expected
        # The names lead to the players' pages, in the language chosen with the switch.
        await page.get_by_role("link", name="Svenska").click()
        await page.get_by_role("link", name="Alice", exact=True).click()
        await expect(page.locator("h1")).to_have_text(t("sv", "stats.title", name="Alice"))
        record = await web.bot.storage.stats.player_stats(world.no_guild.id, world.alice.id)
        figures = [
            record.games,
            record.wins,
            record.draws,
            record.losses,
            fmt_percent(record.wins / record.games, "sv"),
            record.wars_won,
            record.biggest_pot,
            record.longest_game,
        ]
        await expect(page.locator(".figure b")).to_have_text([str(f) for f in figures])
        # Alice met Bob and Carol once each: those games as her wins, draws and losses.
        rivals = page.locator(".card", has_text=t("sv", "web.player.rivals"))
        assert await rows_of(rivals) == [["Bob", "1", "0–0–1"], ["Carol", "1", "1–0–0"]]
        variants = page.locator(".card", has_text=t("sv", "web.player.variants"))
        assert await rows_of(variants) == [[t("sv", "variant.standard.name"), "2", "1–0–1"]]
        clean(watched, web.base)
        body = await page.content()
    for user in (world.alice, world.bob, world.carol):
        assert str(user.id) not in body  # display names only, never a user id


async def test_a_replay_played_to_the_end_shows_the_games_rounds_and_counts(
    standin: DiscordStandIn, world: SampleWorld, web: Web, seeds: ChosenSeeds
) -> None:
    url = (await bob_wins_on_the_web(standin, world, web.bot, seeds)).replay
    expected = Game.new(STANDARD, BOB_WINS)
    rounds = [expected.play_round() for _ in range(30)]
    assert expected.outcome is not None
    async with chromium() as browser:
        watched = await open_page(browser, PHONE, locale="nb-NO")
        page = watched.page
        await page.goto(url)
        replay = page.locator("#replay")
        await expect(replay).to_have_attribute("data-round", "0")
        await page.select_option("#speed", "20")
        await page.click("#play")
        await expect(replay).to_have_attribute("data-state", "ended", timeout=WAIT_MS)
        await expect(replay).to_have_attribute("data-round", "30")
        shown = await page.locator("[data-count]").all_inner_texts()
        assert [int(n) for n in shown] == list(expected.counts) == [0, 52]
        await expect(page.locator("#caption")).to_contain_text(t("nb", "over.winner", name="Bob"))

        # Step through it again: every round's cards and counts are the game's.
        await page.click("#first")
        for played in rounds:
            await page.click("#next")
            await expect(replay).to_have_attribute("data-round", str(played.number))
            for seat, card in played.battle:
                cards = page.locator(f'.seat[data-seat="{seat}"] [data-role="battle"]')
                await expect(cards).to_have_attribute("data-code", format_cards([card])[0])
            turned = [
                code
                for step in played.war_steps
                for code in format_cards(c for c in step.face_up if c is not None)
            ]
            war_cards = page.locator('[data-role="war"]')
            assert sorted(
                [str(await war_cards.nth(i).get_attribute("data-code")) for i in range(len(turned))]
            ) == sorted(turned)
            await expect(war_cards).to_have_count(len(turned))
            counts = await page.locator("[data-count]").all_inner_texts()
            assert [int(n) for n in counts] == list(played.counts)

        # "Next war" and the scrubber go where the game's wars and rounds are.
        first_war = next(played.number for played in rounds if played.war_steps)
        await page.click("#first")
        await page.click("#war")
        await expect(replay).to_have_attribute("data-round", str(first_war))
        await page.locator("#scrub").fill("17")
        await expect(replay).to_have_attribute("data-round", "17")
        counts = await page.locator("[data-count]").all_inner_texts()
        assert [int(n) for n in counts] == list(rounds[16].counts)
        # The arrow keys step, off the scrubber (which moves itself with them).
        await page.locator("h1").click()
        await page.keyboard.press("ArrowRight")
        await expect(replay).to_have_attribute("data-round", "18")
        await page.keyboard.press("ArrowLeft")
        await page.keyboard.press("ArrowLeft")
        await expect(replay).to_have_attribute("data-round", "16")
        clean(watched, web.base)


async def test_pages_of_a_server_without_the_web_view_are_not_found(
    standin: DiscordStandIn, world: SampleWorld, web: Web, seeds: ChosenSeeds
) -> None:
    seeds.fix(BOB_WINS, ALICE_WINS, BOB_WINS)
    await web_on(standin, world, web.bot)
    games = [
        await play(standin, world.no_channel, world.alice, world.bob),
        await play(standin, world.no_channel, world.bob, world.carol),
    ]
    elsewhere = await play(standin, world.sv_channel, world.alice, world.carol)
    access = web.bot.web
    site = await access.site(world.no_guild.id)
    assert site is not None
    pages = [access.leaderboard_path(site), access.leaderboard_path(site, "week")]
    pages += [access.game_path(site, game.game_id) for game in games]
    pages += [access.player_path(site, user.id) for user in (world.alice, world.bob)]
    async with chromium() as browser:
        watched = await open_page(browser, DESKTOP, locale="sv-SE")
        page = watched.page
        for path in pages:
            assert await status(page, web.base + path) == 200, path
        # Another server's game is not this server's, even signed with this server's key.
        assert await status(page, web.base + access.game_path(site, elsewhere.game_id)) == 404
        off = await command(standin, world.no_channel, world.moderator, "settings", web="off")
        assert off.content == t("nb", "settings.web_off")
        # Off: the same addresses, and every id with the signature it would have, are missing.
        guessed = [access.game_path(site, n) for n in range(1, 6)]
        guessed += [access.player_path(site, user.id) for user in (world.carol, world.owner)]
        for path in pages + guessed:
            assert await status(page, web.base + path) == 404, path
            await expect(page.locator("h1")).to_have_text(t("sv", "web.missing.title"))
        # And the server that never turned it on has no pages, whatever its key would be.
        for key in ("", "guess", site.key):
            signature = access.sign(world.sv_guild.id, key, "site", world.sv_guild.id)
            other = type(site)(world.sv_guild.id, key, f"{world.sv_guild.id}.{signature}")
            for path in (
                access.leaderboard_path(other),
                access.game_path(other, elsewhere.game_id),
            ):
                assert await status(page, web.base + path) == 404, path
        clean_404s(watched, web.base)


def clean_404s(watched: Watched, origin: str) -> None:
    """Like ``clean``, allowing the console's note of the 404 answers asked for."""
    assert watched.foreign(origin) == []
    assert [error for error in watched.errors if "404" not in error] == []


async def test_a_tampered_or_rotated_link_is_not_found(
    standin: DiscordStandIn, world: SampleWorld, web: Web, seeds: ChosenSeeds
) -> None:
    seeds.fix(BOB_WINS, BOB_WINS)
    await web_on(standin, world, web.bot)
    game = await play(standin, world.no_channel, world.alice, world.bob)
    elsewhere = await play(standin, world.sv_channel, world.alice, world.bob)
    (url,) = links(game.over).values()
    site_part, _, game_part = url.removeprefix(web.base + "/s/").partition("/game/")
    number, _, signature = game_part.partition(".")
    changed = "A" if signature[0] != "A" else "B"
    tampered = [
        url[:-1] + ("x" if url[-1] != "x" else "y"),  # the game's signature
        url.replace(f"/game/{number}.", f"/game/{elsewhere.game_id}."),  # another game's id
        url.replace(f"/game/{number}.", f"/game/{int(number) + 100}."),
        url.replace(f"/game/{number}.{signature}", f"/game/{number}.{changed}{signature[1:]}"),
        url.replace(site_part, site_part[:-2] + "zz"),  # the server's signature
        url.replace(site_part, f"{world.sv_guild.id}.{site_part.partition('.')[2]}"),
        url.replace(f"/game/{number}.{signature}", f"/game/{number}"),
    ]
    async with chromium() as browser:
        watched = await open_page(browser, PHONE, locale="da-DK")
        page = watched.page
        assert await status(page, url) == 200
        for address in tampered:
            assert await status(page, address) == 404, address
            await expect(page.locator("h1")).to_have_text(t("da", "web.missing.title"))
        rotated = await command(
            standin, world.no_channel, world.moderator, "settings", web="rotate"
        )
        new_board = await web.bot.web.leaderboard_url(world.no_guild.id)
        assert new_board is not None
        assert rotated.content == t("nb", "settings.web_rotated", url=new_board)
        assert await status(page, url) == 404  # the old link leads nowhere now
        assert await status(page, new_board) == 200
        clean_404s(watched, web.base)


async def test_pages_look_right_on_a_phone_and_a_desktop(
    standin: DiscordStandIn, world: SampleWorld, web: Web, tmp_path: Path, seeds: ChosenSeeds
) -> None:
    seeds.fix(BOB_WINS, ALICE_WINS)
    mallory = standin.add_user("mallory", "<img src=/x onerror=alert(1)></script>", locale="en-US")
    standin.add_member(world.no_guild, mallory)
    await web_on(standin, world, web.bot)
    await play(standin, world.no_channel, world.alice, world.bob)
    game = await play(standin, world.no_channel, world.alice, mallory)
    (url,) = links(game.over).values()
    board = await web.bot.web.leaderboard_url(world.no_guild.id)
    assert board is not None
    shots = []
    async with chromium() as browser:
        for size, viewport in (("phone", PHONE), ("desktop", DESKTOP)):
            watched = await open_page(browser, viewport, locale="en-GB")
            page = watched.page
            await page.goto(board)
            await expect(page.locator("#leaderboard")).to_contain_text(mallory.display_name or "")
            shots.append(await screenshot(page, tmp_path, f"leaderboard-{size}"))
            await page.get_by_role("link", name="Alice", exact=True).click()
            await expect(page.locator("h1")).to_have_text(t("en", "stats.title", name="Alice"))
            shots.append(await screenshot(page, tmp_path, f"player-{size}"))
            await page.goto(url)
            await expect(page.locator(".seat-name").nth(1)).to_have_text(mallory.display_name or "")
            await page.click("#war")
            # The war on the table once every card of it is turned up.
            await expect(page.locator(".c[data-code]:not(.up)")).to_have_count(0)
            await expect(page.locator(".seat.winner")).to_have_count(1)
            shots.append(await screenshot(page, tmp_path, f"game-{size}"))
            wide = await page.evaluate("document.documentElement.scrollWidth")
            assert wide <= viewport["width"]  # nothing runs off the side of the screen
            assert await status(page, web.base + "/s/1.nothing/") == 404
            await expect(page.locator("h1")).to_have_text(t("en", "web.missing.title"))
            shots.append(await screenshot(page, tmp_path, f"missing-{size}"))
            clean_404s(watched, web.base)
    assert all(shot.stat().st_size > 10_000 for shot in shots)


async def test_a_team_game_replays_with_four_seats_in_team_colours(
    standin: DiscordStandIn, world: SampleWorld, web: Web, tmp_path: Path, seeds: ChosenSeeds
) -> None:
    dave = standin.add_user("dave", "Dave", locale="da")
    standin.add_member(world.no_guild, dave)
    rounds = 40
    seeds.fix(7)
    await web_on(standin, world, web.bot)
    players = (world.alice, world.bob, world.carol, dave)
    table = await start_game(standin, world.no_channel, *players, variant="lag", rounds=rounds)
    over = await flip(standin, world.no_channel, world.alice, count=rounds)
    (url,) = links(over).values()
    expected = Game.new(Rules.preset("lag", players=4, max_rounds=rounds), 7)
    while expected.outcome is None:
        expected.play_round()
    row = await web.bot.storage.games.get_game(table.game_id)
    assert row is not None
    async with chromium() as browser:
        for size, viewport in (("phone", PHONE), ("desktop", DESKTOP)):
            watched = await open_page(browser, viewport, locale="da-DK")
            page = watched.page
            await page.goto(url)
            await expect(page.locator(".seat-name")).to_have_text(list(row.names))
            # Partners share a colour, as in the table pictures (seats 0+2 and 1+3).
            colours = await page.locator(".seat .dot").evaluate_all(
                "dots => dots.map(dot => getComputedStyle(dot).backgroundColor)"
            )
            assert colours[0] == colours[2] != colours[1] == colours[3]
            await page.click("#last")
            await expect(page.locator("#replay")).to_have_attribute("data-state", "ended")
            counts = await page.locator("[data-count]").all_inner_texts()
            assert [int(n) for n in counts] == list(expected.counts)
            await page.click("#first")
            await page.click("#war")
            await expect(page.locator(".c[data-code]:not(.up)")).to_have_count(0)
            await screenshot(page, tmp_path, f"game-team-{size}")
            wide = await page.evaluate("document.documentElement.scrollWidth")
            assert wide <= viewport["width"]
            clean(watched, web.base)
