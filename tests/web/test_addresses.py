"""Hostile addresses: every wrong, changed or foreign one is the same quiet 404, on both backends.

An address is anyone's to make up. Whatever is in it (digits of another script, an id past
64 bits, letters outside ASCII in a signature, doubled slashes), the answer must not tell a
server with its pages on from one without, and nothing may end in a traceback in the log.
"""

from __future__ import annotations

import logging
import re
from urllib.parse import quote

import aiohttp
import pytest
from yarl import URL

from krigbot.i18n import LANGS, t
from krigbot.web.access import Site
from tests.standin import DiscordStandIn
from tests.standin.fixtures import SampleWorld
from tests.support.players import ChosenSeeds
from tests.support.settings import BACKENDS
from tests.support.web import Web
from tests.support.web_games import bob_wins_on_the_web

ARABIC_INDIC = str.maketrans("0123456789", "٠١٢٣٤٥٦٧٨٩")
FULL_WIDTH = str.maketrans("0123456789", "０１２３４５６７８９")
BIGINT_MAX = 2**63 - 1
"""The largest id a 64-bit signed column holds (every Discord snowflake fits)."""
HOSTILE_ACCEPT_LANGUAGE = [
    "é",
    "en-GB;q=nan, da;q=0",
    "sv;q=inf",
    "nb;q=1e400",
    "da;q=-1",
    "en-GB-oxendict-" + "x" * 8 * 100,
    "sv;;q=1",
    ",".join(["zz-ZZ"] * 500) + ",da",
    "*",
]
"""Accept-Language headers no browser sends: each is read as no wish, and the page is English."""
_LANGUAGE_SWITCH = re.compile(r'<nav class="langs".*?</nav>', re.DOTALL)


async def fetch(base: str, path: str, **headers: str) -> tuple[int, str]:
    """GET ``path`` exactly as written (percent-encoded, never normalised); status and page."""
    url = URL(base + quote(path, safe="/.?=&%:"), encoded=True)
    async with aiohttp.ClientSession() as session, session.get(url, headers=headers) as answer:
        return answer.status, (await answer.read()).decode(errors="replace")


def hostile(site: Site, game: str, player: str, other_guild: int) -> list[str]:
    """Return wrong and changed addresses of every route, built from real ones."""
    guild, signature = site.token.split(".")
    game_id, game_signature = game.split(".")
    forged = "é" * len(signature)
    site_segments = [
        f"{guild}.{forged}",
        f"{other_guild}.{forged}",
        f"{guild.translate(ARABIC_INDIC)}.{signature}",
        f"{guild.translate(FULL_WIDTH)}.{signature}",
        f"¹.{signature}",
        f"{guild}¹.{signature}",
        f"{BIGINT_MAX + 1}.{signature}",
        f"{'9' * 19}.{signature}",
        f"{'9' * 20}.{signature}",
        f"{'9' * 400}.{signature}",
        f"0{guild}.{signature}",
        f"-{guild}.{signature}",
        f"{guild}.{signature}\x00",
        f"{guild}.{signature[:-1]}\u0130",
        f"{guild}.{signature}.{signature}",
    ]
    paths = []
    for segment in site_segments:
        paths += [f"/s/{segment}/", f"/s/{segment}/player/{player}", f"/s/{segment}/game/{game}"]
    for segment in (
        f"{game_id}.{'é' * len(game_signature)}",
        f"{game_id.translate(ARABIC_INDIC)}.{game_signature}",
        f"{game_id.translate(FULL_WIDTH)}.{game_signature}",
        f"{game_id}¹.{game_signature}",
        f"¹.{game_signature}",
        f"{BIGINT_MAX + 1}.{game_signature}",
        f"{'9' * 20}.{game_signature}",
        f"{game_id}.{game_signature}\x00",
    ):
        paths.append(f"/s/{site.token}/game/{segment}")
    for segment in ("é" * len(player), player + "é", player[:-1] + "\u0130", "¹", "\x00"):
        paths.append(f"/s/{site.token}/player/{segment}")
    paths += [
        f"/s/{site.token}/?period=é",
        f"/s/{site.token}/?lang=é&period=%FF",
        "/cards/nb/ QD.png",
        "/cards/nb/QD .png",
        "/cards/nb/\tQD.png",
        "/cards/nb/Q¹.png",
        "/cards/nb/١D.png",
        "/cards/é/QD.png",
        "/cards/nb/back .png",
        "/static/",
        "/static/.",
        "/static/krig.css/",
        "/static/é",
        "/static/krig.css\x00",
        "/static/..%2Fserver.py",
        "/static/%2e%2e/server.py",
        "//evil.example/x",
    ]
    return paths


@pytest.mark.parametrize("backend", BACKENDS)
async def test_every_hostile_address_is_the_same_404_without_a_traceback(
    standin: DiscordStandIn,
    world: SampleWorld,
    web: Web,
    seeds: ChosenSeeds,
    caplog: pytest.LogCaptureFixture,
) -> None:
    played = (await bob_wins_on_the_web(standin, world, web.bot, seeds)).game
    access = web.bot.web
    site = await access.site(world.no_guild.id)
    assert site is not None
    game = access.game_path(site, played.game_id).rsplit("/", 1)[1]
    player = access.player_path(site, world.alice.id).rsplit("/", 1)[1]
    for real in (f"/s/{site.token}/", f"/s/{site.token}/game/{game}", "/cards/nb/QD.png"):
        assert (await fetch(web.base, real))[0] == 200, real
    assert (await fetch(web.base, f"/s/{site.token}/player/{player}"))[0] == 200

    _, never_was = await fetch(web.base, "/nothing/here", **{"Accept-Language": "da"})
    expected = _LANGUAGE_SWITCH.sub("", never_was)
    assert t("da", "web.missing.title") in expected
    caplog.clear()
    with caplog.at_level(logging.DEBUG):
        for path in hostile(site, game, player, world.sv_guild.id):
            status, page = await fetch(web.base, path, **{"Accept-Language": "da"})
            assert status == 404, path
            assert _LANGUAGE_SWITCH.sub("", page) == expected, path
        for header in HOSTILE_ACCEPT_LANGUAGE:
            status, page = await fetch(web.base, f"/s/{site.token}/", **{"Accept-Language": header})
            assert status == 200, header
            assert '<html lang="en">' in page, header
    tracebacks = [record for record in caplog.records if record.exc_info or record.exc_text]
    assert tracebacks == []
    assert [r for r in caplog.records if r.levelno >= logging.WARNING] == []


async def test_the_language_links_stay_on_this_site_whatever_the_path(
    standin: DiscordStandIn, world: SampleWorld, web: Web, seeds: ChosenSeeds
) -> None:
    board, played, _ = await bob_wins_on_the_web(standin, world, web.bot, seeds)
    site = board.removeprefix(web.base).removesuffix("/")
    access = web.bot.web
    opened = await access.site(world.no_guild.id)
    assert opened is not None
    game = access.game_path(opened, played.game_id)
    player = access.player_path(opened, world.alice.id)
    for path in (
        "//evil.example/x",
        "///evil.example/x",
        "/\\evil.example/x",
        "/%5Cevil.example/x",
        "/%2F%2Fevil.example/x",
        "/./%2Fevil.example",
        "//evil.example/x?period=week&lang=sv",
        "/https://evil.example/",
        f"{site}//evil.example",
        f"{site}/?period=week&lang=sv",
        f"{site}/?period=week&x=%22%3E%3Cscript%3E",
        f"{game}?lang=da",
        player,
    ):
        _, page = await fetch(web.base, path)
        switch = _LANGUAGE_SWITCH.search(page)
        assert switch is not None, path
        hrefs = re.findall(r'href="([^"]*)"', switch[0])
        assert len(hrefs) == len(LANGS), path
        for href in hrefs:
            link = URL(href.replace("&amp;", "&"))
            assert not link.is_absolute(), (path, href)
            assert link.raw_path.startswith("/"), (path, href)
            assert not link.raw_path.startswith(("//", "/\\")), (path, href)
            assert set(link.query) <= {"lang", "period"}, (path, href)
            # The browser reads it as an address on the same origin.
            assert URL(web.base).join(link).origin() == URL(web.base), (path, href)
    # The period of a leaderboard stays when its language changes.
    _, page = await fetch(web.base, f"{site}/?period=week")
    switch = _LANGUAGE_SWITCH.search(page)
    assert switch is not None
    assert f'href="{site}/?period=week&amp;lang=sv"' in switch[0]
