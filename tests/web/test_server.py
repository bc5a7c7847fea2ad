"""The web view over plain HTTP: signatures, 404s, security headers, languages and card images."""

from __future__ import annotations

import io
import logging
import re
from datetime import UTC, datetime

import aiohttp
import pytest
from PIL import Image

from krigbot.engine import parse_card
from krigbot.i18n import fmt_date, t
from krigbot.render.cards import card_face
from krigbot.storage import Storage, StorageError
from krigbot.web.access import WebAccess
from krigbot.web.server import CARD_HEIGHT, CONTENT_SECURITY_POLICY, WebView
from tests.standin import DiscordStandIn
from tests.standin.fixtures import SampleWorld
from tests.support.players import ChosenSeeds
from tests.support.web import SECRET, Web
from tests.support.web_games import bob_wins_on_the_web, web_on

EXPECTED_HEADERS = {
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
}


async def fetch(url: str, **headers: str) -> tuple[int, dict[str, str], bytes]:
    """GET an address; return its status, headers and body."""
    async with aiohttp.ClientSession() as session, session.get(url, headers=headers) as answer:
        return answer.status, dict(answer.headers), await answer.read()


async def test_a_signature_holds_only_for_its_server_key_kind_and_subject(
    storage: Storage,
) -> None:
    access = WebAccess(storage, secret=SECRET, base_url="https://krig.example")
    token = access.sign(1, "key", "game", 42)
    assert access.check(1, "key", "game", 42, token)
    for other in [(2, "key", "game", 42), (1, "other", "game", 42), (1, "key", "player", 42)]:
        assert not access.check(*other, token)  # type: ignore[arg-type]
    assert not access.check(1, "key", "game", 43, token)
    unkeyed = WebAccess(storage, secret="another-secret-entirely", base_url=None)
    assert not unkeyed.check(1, "key", "game", 42, token)


async def test_a_server_without_the_web_view_has_no_links(storage: Storage) -> None:
    access = WebAccess(storage, secret=SECRET, base_url="https://krig.example")
    assert await access.site(5) is None
    assert await access.game_url(5, 1) is None
    await access.set_on(5, True)
    board = await access.leaderboard_url(5, "week")
    assert board is not None
    assert board.startswith("https://krig.example/s/5.")
    assert board.endswith("/?period=week")
    await access.set_on(5, False)
    assert await access.leaderboard_url(5) is None
    await access.set_on(5, True)
    assert await access.leaderboard_url(5, "week") == board  # on again: the same links
    await access.rotate(5)
    assert await access.leaderboard_url(5, "week") not in (None, board)


async def test_every_answer_carries_the_security_headers(
    standin: DiscordStandIn, world: SampleWorld, web: Web, seeds: ChosenSeeds
) -> None:
    board, _, url = await bob_wins_on_the_web(standin, world, web.bot, seeds)
    for address in (
        board,
        url,
        web.base + "/cards/nb/QD.png",
        web.base + "/static/replay.js",
        web.base + "/static/krig.css",
        web.base + "/nothing/here",
        web.base + "/s/1.abc/",
    ):
        status, headers, _ = await fetch(address)
        assert status in (200, 404), address
        assert {key: headers.get(key) for key in EXPECTED_HEADERS} == EXPECTED_HEADERS, address
    for address in (board, url):
        _, headers, body = await fetch(address)
        assert headers["Cache-Control"] == "no-store"
        page = body.decode()
        # No inline script (only the replay's JSON data block) and nothing from elsewhere.
        scripts = re.findall(r"<script\b[^>]*>", page)
        assert all('src="/static/' in tag or 'type="application/json"' in tag for tag in scripts)
        assert re.findall(r"""(?:src|href)=["']?(?:https?:)?//""", page) == []
        assert re.findall(r"\bstyle=", page) == []
        for user in (world.alice, world.bob, world.moderator):
            assert str(user.id) not in page


async def test_unknown_and_malformed_addresses_are_not_found(
    standin: DiscordStandIn, world: SampleWorld, web: Web, seeds: ChosenSeeds
) -> None:
    board, game, url = await bob_wins_on_the_web(standin, world, web.bot, seeds)
    site = board.removeprefix(web.base).removesuffix("/")
    for path in (
        "/",
        "/s/",
        "/s/abc/",
        "/s/../",
        f"{site}/player/",
        f"{site}/player/{'A' * 22}",
        f"{site}/game/{game.game_id}",
        f"{site}/game/x.{'A' * 22}",
        f"{site}/game/{'9' * 30}.{'A' * 22}",
        f"{site}/?period=year",
        "/cards/de/QD.png",
        "/cards/nb/ZZ.png",
        "/cards/nb/qd.png",
        "/static/../server.py",
    ):
        status, _, body = await fetch(web.base + path, **{"Accept-Language": "da"})
        assert status == 404, path
        if path.startswith("/s/"):
            assert t("da", "web.missing.title") in body.decode()
    assert (await fetch(url))[0] == 200


async def test_the_page_speaks_the_browsers_language_unless_another_is_chosen(
    standin: DiscordStandIn, world: SampleWorld, web: Web
) -> None:
    board = await web_on(standin, world, web.bot)
    cases = [
        ({"Accept-Language": "sv-SE,sv;q=0.9,en;q=0.8"}, "", "sv"),
        ({"Accept-Language": "de-DE,da;q=0.5"}, "", "da"),
        ({"Accept-Language": "fr-FR"}, "", "en"),
        ({"Accept-Language": "nb-NO"}, "", "nb"),
        ({"Accept-Language": "sv-SE"}, "?lang=en", "en"),
    ]
    for headers, query, lang in cases:
        status, _, body = await fetch(board + query, **headers)
        assert status == 200
        page = body.decode()
        assert f'<html lang="{lang}">' in page
        assert f"<h1>{t(lang, 'web.leaderboard')} <small" in page
        assert t(lang, "lb.empty") in page


async def test_card_images_are_the_table_pictures_cards(web: Web) -> None:
    status, headers, body = await fetch(web.base + "/cards/da/JH.png")
    assert status == 200
    assert headers["Content-Type"] == "image/png"
    served = Image.open(io.BytesIO(body)).convert("RGBA")
    drawn = card_face(parse_card("JH"), CARD_HEIGHT, "da").convert("RGBA")
    assert served.size == drawn.size
    assert served.tobytes() == drawn.tobytes()
    status, _, back = await fetch(web.base + "/cards/nb/back.png")
    assert status == 200
    assert Image.open(io.BytesIO(back)).size == drawn.size


async def test_a_page_that_fails_answers_500_with_the_headers_and_logs_no_address(
    standin: DiscordStandIn, world: SampleWorld, web: Web, monkeypatch: pytest.MonkeyPatch
) -> None:
    standin.fail_fast_on_bot_errors = False
    board = await web_on(standin, world, web.bot)

    async def broken(*args: object, **kwargs: object) -> None:
        raise StorageError("the disk is on fire")

    monkeypatch.setattr(web.bot.storage.stats, "leaderboard", broken)
    status, headers, _ = await fetch(board)
    assert status == 500
    assert {key: headers.get(key) for key in EXPECTED_HEADERS} == EXPECTED_HEADERS
    (logged,) = standin.accept_bot_errors()
    assert "/s/{site}/" in logged.getMessage()
    assert board.removeprefix(web.base) not in logged.getMessage()


async def test_dates_follow_the_browsers_locale_as_the_bot_follows_discords(
    standin: DiscordStandIn, world: SampleWorld, web: Web, seeds: ChosenSeeds
) -> None:
    _, game, url = await bob_wins_on_the_web(standin, world, web.bot, seeds)
    row = await web.bot.storage.games.get_game(game.game_id)
    assert row is not None
    assert row.finished_at is not None
    site = await web.bot.web.site(world.no_guild.id)
    assert site is not None
    player = web.base + web.bot.web.player_path(site, world.alice.id)
    when = row.finished_at
    written = {locale: fmt_date(when, locale) for locale in ("en-GB", "en-US", "nb")}
    assert len(set(written.values())) == 3  # 1 Dec 2026, Dec 1, 2026, 1. des. 2026
    cases = [
        ("en-GB,en;q=0.9", "", "en-GB"),
        ("en-gb", "", "en-GB"),
        ("en-US,en;q=0.9", "", "en-US"),
        ("en", "", "en-US"),  # plain English is Discord's default English
        ("de-DE, en-GB;q=0.8", "", "en-GB"),
        ("en-US;q=0.5, en-GB;q=0.9", "", "en-GB"),
        ("nb-NO,nb;q=0.9,en-GB;q=0.5", "", "nb"),
        ("nb-NO, en-GB;q=0.5", "?lang=en", "en-GB"),  # the switch, and the browser's English
        ("en-GB", "?lang=nb", "nb"),
    ]
    for header, query, locale in cases:
        for address in (url, player):
            status, _, body = await fetch(address + query, **{"Accept-Language": header})
            assert status == 200
            page = body.decode()
            assert written[locale] in page, (header, query, address)
            others = {text for other, text in written.items() if other != locale}
            assert not any(text in page for text in others), (header, query, address)


async def test_the_start_up_log_says_the_address_to_open(
    storage: Storage, caplog: pytest.LogCaptureFixture
) -> None:
    view = WebView(
        storage, WebAccess(storage, secret=SECRET, base_url=None), clock=lambda: datetime.now(UTC)
    )
    with caplog.at_level(logging.INFO, logger="krigbot.web.server"):
        await view.start("127.0.0.1", 0)
    try:
        (started,) = [r.getMessage() for r in caplog.records if r.name == "krigbot.web.server"]
        prefix = "web view serving on http://127.0.0.1:"
        assert started.startswith(prefix), started
        port = started.removeprefix(prefix).removesuffix("/")
        assert started == f"{prefix}{int(port)}/"
        status, _, _ = await fetch(f"http://127.0.0.1:{port}/cards/en/AS.png")
        assert status == 200
    finally:
        await view.stop()
