"""What the web view's pages say over plain HTTP: running games, the replay's deal, the server's
name, the scores' one convention and the web fonts."""

from __future__ import annotations

import html
import re
from dataclasses import replace
from datetime import UTC, datetime

import aiohttp

from krigbot.engine import Game, Rules
from krigbot.i18n import t
from krigbot.web.replay import replay_data
from tests.standin import DiscordStandIn
from tests.standin.fixtures import SampleWorld
from tests.support.handsfree import command
from tests.support.players import ChosenSeeds, flip, start_game
from tests.support.rows import stored_row
from tests.support.web import Web
from tests.support.web_games import ALICE_WINS, BOB_WINS, bob_wins_on_the_web, links, play, web_on

SHORT_IN_WAR = 41
"""Standard: Alice wins in round 44, when Bob has no card left for a war."""


async def fetch(url: str, **headers: str) -> tuple[int, dict[str, str], bytes]:
    """GET an address; return its status, headers and body."""
    async with aiohttp.ClientSession() as session, session.get(url, headers=headers) as answer:
        return answer.status, dict(answer.headers), await answer.read()


async def page_text(url: str, lang: str = "en") -> str:
    """Return a page's HTML, asked for in ``lang``; fail unless it is found."""
    status, _, body = await fetch(url, **{"Accept-Language": lang})
    assert status == 200, url
    return body.decode()


def seat_counts(page: str) -> list[int]:
    """Return the card counts the replay's seats show before its script runs."""
    return [int(n) for n in re.findall(r'<span class="count" data-count>(\d+)</span>', page)]


async def test_a_running_games_table_links_its_page_which_shows_the_rounds_so_far(
    standin: DiscordStandIn, world: SampleWorld, web: Web, seeds: ChosenSeeds
) -> None:
    seeds.fix(BOB_WINS, BOB_WINS)
    await web_on(standin, world, web.bot)
    table = await start_game(standin, world.no_channel, world.alice, world.bob)
    watch = t("nb", "web.watch_live")
    dealt = links(table.message)
    assert list(dealt) == [watch]
    page = await page_text(dealt[watch])  # the deal, before anyone has flipped
    assert t("en", "web.game.running", count=0, n=0) in page
    assert seat_counts(page) == [26, 26]
    shown = await flip(standin, world.no_channel, world.alice, count=5)
    (url,) = links(shown).values()
    assert links(shown) == {watch: url}
    assert url == dealt[watch]  # one address for the game, dealt or played
    page = await page_text(url)
    assert t("en", "web.game.running", count=5, n=5) in page
    assert t("en", "over.title") not in page
    await flip(standin, world.no_channel, world.bob, count=2)
    page = await page_text(url)  # a reload shows the rounds played since
    assert t("en", "web.game.running", count=7, n=7) in page
    # A server that has not turned the web view on gets no link on its tables.
    elsewhere = await start_game(standin, world.sv_channel, world.alice, world.bob)
    assert links(elsewhere.message) == {}
    assert links(await flip(standin, world.sv_channel, world.alice)) == {}


async def test_a_replay_shows_the_deal_and_keeps_the_result_until_it_is_played(
    standin: DiscordStandIn, world: SampleWorld, web: Web, seeds: ChosenSeeds
) -> None:
    url = (await bob_wins_on_the_web(standin, world, web.bot, seeds)).replay
    page = await page_text(url)
    assert seat_counts(page) == [26, 26]  # the deal, not the end's 0 and 52
    result = re.search(r'<section class="card result"[^>]*>', page)
    assert result is not None
    assert " hidden" in result.group(0)  # shown once the replay reaches the end


async def test_the_leaderboard_names_its_own_server_only(
    standin: DiscordStandIn, world: SampleWorld, web: Web, seeds: ChosenSeeds
) -> None:
    norwegian = await web_on(standin, world, web.bot)
    await command(standin, world.sv_channel, world.owner, "settings", web="on")
    swedish = await web.bot.web.leaderboard_url(world.sv_guild.id)
    assert swedish is not None
    for url, name, other in (
        (norwegian, world.no_guild.name, world.sv_guild.name),
        (swedish, world.sv_guild.name, world.no_guild.name),
    ):
        page = await page_text(url)
        heading = re.search(r"<h1>(.*?)</h1>", page, re.S)
        assert heading is not None
        assert html.escape(name) in heading.group(1)
        assert html.escape(other) not in page
        assert f"<title>{t('en', 'web.leaderboard')} · {html.escape(name)}" in page


async def test_the_player_page_writes_every_score_as_wins_draws_losses(
    standin: DiscordStandIn, world: SampleWorld, web: Web, seeds: ChosenSeeds
) -> None:
    seeds.fix(BOB_WINS, ALICE_WINS)
    await web_on(standin, world, web.bot)
    await play(standin, world.no_channel, world.alice, world.bob)
    await play(standin, world.no_channel, world.alice, world.carol)
    site = await web.bot.web.site(world.no_guild.id)
    assert site is not None
    for lang in ("en", "nb", "sv", "da"):
        page = await page_text(web.base + web.bot.web.player_path(site, world.alice.id), lang)
        score = t(lang, "web.col.score")
        headers = re.findall(r'<th class="num" scope="col">([^<]*)</th>', page)
        assert headers.count(score) == 2, headers  # the variants' and the opponents'
        # Alice lost to Bob and beat Carol: as wins–draws–losses, like the variants' column.
        assert re.search(r">Bob</a></td><td[^>]*>1</td><td[^>]*>0–0–1<", page)
        assert re.search(r">Carol</a></td><td[^>]*>1</td><td[^>]*>1–0–0<", page)
        assert html.escape(t(lang, "web.player.versus_note", name="Alice")) in page


async def test_the_leaderboard_of_a_chat_or_an_unnamed_server_has_a_neutral_title(
    standin: DiscordStandIn, world: SampleWorld, web: Web
) -> None:
    access = web.bot.web
    await access.set_on(4242, True)  # a server the bot holds no name for
    url = await access.leaderboard_url(4242)
    assert url is not None
    page = await page_text(url)
    assert f"<h1>{t('en', 'web.leaderboard')}</h1>" in page


def test_a_war_that_runs_a_player_out_names_them_in_the_replay_and_the_result() -> None:
    rules = Rules.preset("standard")
    game = Game.new(rules, SHORT_IN_WAR)
    while game.outcome is None:
        game.play_round()
    assert (game.outcome.reason, game.outcome.winners) == ("war_shortage", (0,))
    row = replace(
        stored_row(rules, [1, 2], ["Alice", "Bob"], at=datetime.now(UTC), status="finished"),
        seed=SHORT_IN_WAR,
        state=game.to_dict(),
        round=game.round,
    )
    for lang in ("en", "nb", "sv", "da"):
        data = replay_data(row, lang)
        # Bob has no card for the war: Alice places nothing, because of him, and wins by it.
        alone = f"• {t(lang, 'table.fighter.unneeded', name='Alice', out='Bob')}"
        assert alone in data["rounds"][-1]["text"]
        assert "Bob" in alone
        assert data["result"] == [
            t(lang, "over.winner", name="Alice"),
            t(lang, "over.reason.war_shortage", name="Bob"),
        ]
        assert "Bob" in data["result"][1]


async def test_a_renamed_server_keeps_its_new_name_only_while_its_pages_are_on(
    standin: DiscordStandIn, world: SampleWorld, web: Web
) -> None:
    access = web.bot.web
    await access.set_on(77, True, name="Old <b>Name</b>")
    url = await access.leaderboard_url(77)
    assert url is not None
    assert "Old &lt;b&gt;Name&lt;/b&gt;" in await page_text(url)  # a name is text, never markup
    await access.rename(77, "New Name")
    page = await page_text(url)
    assert "New Name" in page
    assert "Old" not in page
    await access.rename(78, "Never On")  # a server without pages: nothing kept
    assert await web.bot.storage.settings.get_settings(78) == {}
