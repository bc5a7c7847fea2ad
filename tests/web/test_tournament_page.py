"""A tournament's page on the web view: linked from its bracket, its rounds and its champion."""

from __future__ import annotations

import aiohttp

from krigbot.i18n import t
from tests.standin import DiscordStandIn
from tests.standin.fixtures import SampleWorld
from tests.support.handsfree import command
from tests.support.players import ChosenSeeds, answer_of, buttons, flip, settled, text_of
from tests.support.web import Web
from tests.support.web_games import ALICE_WINS, links, web_on


async def page(url: str, lang: str = "en") -> tuple[int, str]:
    async with (
        aiohttp.ClientSession() as session,
        session.get(url, headers={"Accept-Language": lang}) as answer,
    ):
        return answer.status, (await answer.read()).decode()


async def test_the_bracket_links_the_tournaments_page_with_its_rounds_and_champion(
    standin: DiscordStandIn, world: SampleWorld, web: Web, seeds: ChosenSeeds
) -> None:
    seeds.fix(7, ALICE_WINS)
    await web_on(standin, world, web.bot)
    signup = await command(
        standin,
        world.no_channel,
        world.moderator,
        "tournament create",
        name="Vårcup",
        signup_minutes=0,
    )
    assert signup.message is not None
    tournament_id = int(next(iter(buttons(signup))).split(":")[2])
    for user in (world.alice, world.bob):
        await answer_of(
            standin, await standin.click(signup.message, f"krig:tjoin:{tournament_id}", user=user)
        )
    await command(standin, world.no_channel, world.moderator, "tournament start")
    await settled()
    (thread,) = standin.threads(world.no_channel)
    row = await web.bot.storage.games.active_game(thread.id)
    assert row is not None
    player = world.alice if row.players[0] == world.alice.id else world.bob
    await flip(standin, thread, player, count=50)
    await settled()

    (board,) = [
        m
        for m in standin.messages(world.no_channel, include_ephemeral=False)
        if t("nb", "tournament.round", round=1, total=1) in text_of(m)
    ]
    url = links(board)[t("nb", "web.open_tournament")]
    status, html = await page(url)
    forged = url.rsplit(".", 1)[0] + ".AAAAAAAAAAAAAAAAAAAAAA"
    missing, _ = await page(forged)

    assert status == 200
    assert "Vårcup" in html
    assert t("en", "tournament.round", round=1, total=1) in html
    assert t("en", "web.tournament.champion", name=player.display_name) in html
    assert "Alice – Bob" in html or "Bob – Alice" in html
    assert missing == 404
