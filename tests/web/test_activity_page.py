"""The Activity's page in headless Chromium, with the Embedded App SDK's own DiscordSDKMock
standing in for Discord's client: it signs its user in through the web view and the stand-in's
OAuth2, asks nothing of any other site, and may be framed by Discord alone."""

from __future__ import annotations

import json
import socket
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from playwright.async_api import Browser, expect

from krigbot.engine import Game
from krigbot.i18n import Lang, t
from krigbot.storage import Storage
from krigbot.web.access import WebAccess
from krigbot.web.activity import ActivitySignIn, Unanswered
from krigbot.web.server import WebView
from tests.standin import DiscordStandIn
from tests.standin.fixtures import SampleWorld
from tests.standin.world import User
from tests.support.activity import sign_in
from tests.support.browser import DESKTOP, PHONE, Watched, chromium, open_page, screenshot
from tests.support.players import (
    ChosenSeeds,
    answer_of,
    press,
    public_messages,
    start_game,
    text_of,
)
from tests.support.web import SECRET, Web
from tests.support.web_games import BOB_WINS, STANDARD

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("standin_world")]

WAIT_MS = 20_000
SHOTS = Path("/tmp/activity-shots")


def mock_sdk(code: str, guild: int | None = None, channel: int | None = None) -> str:
    """The init script that hands the page the SDK's mock, opened in ``channel`` of ``guild``,
    whose authorize gives ``code``."""
    where = json.dumps(
        [None if guild is None else str(guild), None if channel is None else str(channel)]
    )
    return (
        "window.krigMakeSdk = (sdk, clientId) => {"
        f" const [guild, channel] = {where};"
        " const mock = new sdk.DiscordSDKMock(clientId, guild, channel, null);"
        f" mock._updateCommandMocks({{ authorize: async () => ({{ code: {json.dumps(code)} }}) }});"
        " return mock; };"
    )


@pytest.fixture
async def base(standin: DiscordStandIn, storage: Storage) -> AsyncIterator[str]:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    address = f"http://127.0.0.1:{sock.getsockname()[1]}"
    sign_in = ActivitySignIn(
        client_id=lambda: standin.app.id,
        client_secret=standin.app.client_secret,
        api_base=standin.api_base,
    )
    view = WebView(
        storage,
        WebAccess(storage, secret=SECRET, base_url=address),
        clock=lambda: None,  # type: ignore[arg-type,return-value]
        activity=sign_in,
    )
    await view.start("127.0.0.1", sock=sock)
    try:
        yield address
    finally:
        await view.stop()


@pytest.mark.activity
async def test_the_activity_signs_its_user_in_and_tells_what_the_channel_holds(
    web: Web, standin: DiscordStandIn, world: SampleWorld, tmp_path: Path
) -> None:
    stranger = standin.add_user("dave", "Dave")
    guild, channel = world.no_guild.id, world.no_channel.id
    async with chromium() as browser:
        # Discord's URL mapping may name the page with or without its last slash. A member is
        # told the channel has no game yet; someone from another server, that it is not theirs.
        shown = (
            (DESKTOP, "activity-no-game-1280", "/activity/", world.alice, "activity.no_game"),
            (PHONE, "activity-stranger-390", "/activity", stranger, "activity.not_member"),
        )
        for viewport, name, path, user, key in shown:
            code = standin.oauth.authorize(standin.app, user)
            watched = await open_page(browser, viewport, locale="sv-SE")
            await watched.page.add_init_script(mock_sdk(code, guild, channel))
            answer = await watched.page.goto(web.base + path)
            assert answer is not None
            assert answer.status == 200
            status = watched.page.locator("#activity-status")
            await expect(status).to_have_text(t("sv", key), timeout=WAIT_MS)
            assert code in standin.oauth.trades
            assert watched.foreign(web.base) == []
            await screenshot(watched.page, tmp_path, name, keep=SHOTS)


async def open_in_no_channel(
    browser: Browser, web: Web, standin: DiscordStandIn, world: SampleWorld, user: User
) -> Watched:
    """Open the Activity as ``user`` in the sample world's ``no_channel``, on a phone, in
    English."""
    watched = await open_page(browser, PHONE, locale="en-GB")
    code = standin.oauth.authorize(standin.app, user)
    await watched.page.add_init_script(mock_sdk(code, world.no_guild.id, world.no_channel.id))
    await watched.page.goto(web.base + "/activity/")
    return watched


@pytest.mark.activity
async def test_a_game_started_while_the_activity_is_open_shows_up_on_it(
    web: Web, standin: DiscordStandIn, world: SampleWorld
) -> None:
    async with chromium() as browser:
        watched = await open_in_no_channel(browser, web, standin, world, world.alice)
        status = watched.page.locator("#activity-status")
        await expect(status).to_have_text(t("en", "activity.no_game"), timeout=WAIT_MS)
        # A game started in the channel afterwards: its table shows up, with Flip for its player.
        await start_game(standin, world.no_channel, world.alice, world.bob)
        await expect(watched.page.locator("#activity")).to_have_attribute(
            "data-state", "playing", timeout=WAIT_MS
        )
        await expect(watched.page.locator("#replay")).to_be_visible()
        await expect(watched.page.locator("#activity-flip")).to_be_visible()
        assert watched.foreign(web.base) == []
        assert watched.errors == [], watched.errors


@pytest.mark.activity
async def test_after_a_game_s_end_the_activity_shows_the_next_game_of_the_channel(
    web: Web, standin: DiscordStandIn, world: SampleWorld
) -> None:
    first = await start_game(standin, world.no_channel, world.alice, world.bob)
    async with chromium() as browser:
        watched = await open_in_no_channel(browser, web, standin, world, world.carol)
        activity = watched.page.locator("#activity")
        await expect(activity).to_have_attribute("data-state", "watching", timeout=WAIT_MS)
        # Bob gives up: the ended table stays on the page.
        asked = await answer_of(
            standin, await standin.slash("krig forfeit", user=world.bob, channel=world.no_channel)
        )
        assert asked.message is not None
        yes = f"krig:forfeit:{first.game_id}:{world.bob.id}:yes"
        await press(standin, asked.message, yes, world.bob)
        await expect(activity).to_have_attribute("data-state", "ended", timeout=WAIT_MS)
        replay = watched.page.locator("#replay")
        await expect(replay).to_have_attribute("data-state", "ended")
        # A new game in the channel, with Carol playing: it takes the ended one's place.
        await start_game(standin, world.no_channel, world.carol, world.alice)
        await expect(activity).to_have_attribute("data-state", "playing", timeout=WAIT_MS)
        await expect(replay).not_to_have_attribute("data-state", "ended")
        await expect(watched.page.locator("#activity-flip")).to_be_visible()
        assert watched.errors == [], watched.errors


async def test_a_refused_code_says_so_on_the_page(
    base: str, standin: DiscordStandIn, standin_world: SampleWorld
) -> None:
    async with chromium() as browser:
        watched = await open_page(browser, PHONE, locale="sv-SE")
        await watched.page.add_init_script(mock_sdk("made-up"))
        await watched.page.goto(base + "/activity/")
        activity = watched.page.locator("#activity")
        await expect(activity).to_have_attribute("data-state", "failed", timeout=WAIT_MS)
        await expect(watched.page.locator("#activity-status")).to_have_text(
            t("sv", "activity.failed")
        )
        assert standin.oauth.trades == []
        assert watched.foreign(base) == []


async def test_only_discord_may_frame_the_activity(base: str) -> None:
    for path in ("/activity/", "/activity", "/activity/me"):
        async with aiohttp.ClientSession() as session, session.get(base + path) as page:
            policy = page.headers["Content-Security-Policy"]
            assert "frame-ancestors https://discord.com" in policy
            assert "connect-src 'self'" in policy
            assert "X-Frame-Options" not in page.headers
    async with aiohttp.ClientSession() as session, session.get(base + "/s/1.x/") as other:
        assert other.headers["X-Frame-Options"] == "DENY"


@pytest.mark.activity
async def test_a_whole_game_is_played_from_the_activity_while_a_member_watches(
    standin: DiscordStandIn, world: SampleWorld, web: Web, seeds: ChosenSeeds, tmp_path: Path
) -> None:
    seeds.fix(BOB_WINS)
    await start_game(standin, world.no_channel, world.alice, world.bob)
    rounds = 0
    game = Game.new(STANDARD, BOB_WINS)
    while game.outcome is None:
        game.play_round()
        rounds += 1
    guild, channel = world.no_guild.id, world.no_channel.id
    async with chromium() as browser:
        player = await open_page(browser, DESKTOP)
        watcher = await open_page(browser, PHONE, locale="en-GB")
        for watched, user in ((player, world.alice), (watcher, world.carol)):
            code = standin.oauth.authorize(standin.app, user)
            await watched.page.add_init_script(mock_sdk(code, guild, channel))
            await watched.page.goto(web.base + "/activity/")
        await expect(player.page.locator("#activity")).to_have_attribute(
            "data-state", "playing", timeout=WAIT_MS
        )
        await expect(watcher.page.locator("#activity")).to_have_attribute(
            "data-state", "watching", timeout=WAIT_MS
        )
        await expect(watcher.page.locator("#activity-status")).to_have_text(
            t("en", "activity.watching")
        )
        # The watcher has no Flip; one forced onto the page is refused, and the page says why.
        await expect(watcher.page.locator("#activity-flip")).to_be_hidden()
        await watcher.page.evaluate("document.getElementById('activity-flip').hidden = false")
        await watcher.page.click("#activity-flip")
        await expect(watcher.page.locator("#activity-refusal")).to_have_text(
            t("en", "err.not_player")
        )
        assert [error for error in watcher.errors if "403" not in error] == []
        watcher.errors.clear()  # the browser's own line for the refused call
        await watcher.page.evaluate("document.getElementById('activity-flip').hidden = true")
        flip = player.page.locator("#activity-flip")
        await expect(flip).to_have_text(t("nb", "table.flip"))
        for n in range(1, rounds + 1):
            async with player.page.expect_response(lambda answer: answer.url.endswith("/flip")):
                await flip.click()
            await expect(player.page.locator("#replay")).to_have_attribute(
                "data-round", str(n), timeout=WAIT_MS
            )
            if n == 6:  # the first war
                await expect(watcher.page.locator("#replay")).to_have_attribute(
                    "data-round", "6", timeout=WAIT_MS
                )
                await expect(player.page.locator(".c[data-code]:not(.up)")).to_have_count(0)
                await expect(watcher.page.locator("#activity-refusal")).to_be_hidden()
                await screenshot(player.page, tmp_path, "activity-playing-1280", keep=SHOTS)
                await screenshot(watcher.page, tmp_path, "activity-watching-390", keep=SHOTS)
        for watched in (player, watcher):
            replay = watched.page.locator("#replay")
            await expect(replay).to_have_attribute("data-state", "ended", timeout=WAIT_MS)
            await expect(replay).to_have_attribute("data-round", str(rounds))
            await expect(watched.page.locator("#result")).to_be_visible()
            await expect(watched.page.locator("#activity-flip")).to_be_hidden()
        await expect(watcher.page.locator("#result")).to_contain_text(
            t("en", "over.winner", name="Bob").removeprefix("🏆").strip()
        )
        await expect(player.page.locator("#activity-status")).to_have_text(
            t("nb", "activity.ended")
        )
        # The channel saw every round as a table of its own, and the end.
        assert "🏆" in text_of(public_messages(standin, world.no_channel)[-1])
        await screenshot(player.page, tmp_path, "activity-ended-1280", keep=SHOTS)
        await screenshot(watcher.page, tmp_path, "activity-ended-390", keep=SHOTS)
        for watched in (player, watcher):
            assert watched.foreign(web.base) == []
            assert watched.errors == [], watched.errors


@pytest.mark.activity
async def test_a_steal_war_player_looks_and_chooses_in_the_activity(
    standin: DiscordStandIn, world: SampleWorld, web: Web, tmp_path: Path
) -> None:
    await start_game(standin, world.no_channel, world.alice, world.bob, variant="stjel")
    guild, channel = world.no_guild.id, world.no_channel.id
    bob = await sign_in(standin, web, world.bob)
    async with chromium() as browser:
        alice = await open_page(browser, PHONE, locale="en-GB")
        code = standin.oauth.authorize(standin.app, world.alice)
        await alice.page.add_init_script(mock_sdk(code, guild, channel))
        await alice.page.goto(web.base + "/activity/")
        page = alice.page
        await expect(page.locator("#activity")).to_have_attribute(
            "data-state", "playing", timeout=WAIT_MS
        )
        await expect(page.locator("#activity-look")).to_have_text(t("en", "steal.look"))
        # Battle after battle, Bob playing his card from his own Activity, until Alice's look
        # offers her a choice of her own, which she makes on the page.
        options = page.locator("#activity-options button")
        for _ in range(80):
            async with page.expect_response(lambda answer: answer.url.endswith("/look")):
                await page.click("#activity-look")
            await expect(page.locator("#activity-choices")).to_be_visible()
            await expect(page.locator("#activity-look-text")).to_contain_text(
                t("en", "steal.your_card", card="").removesuffix("****").strip()
            )
            if await options.count():
                break
            _, look = await bob.post("look", guild, channel)
            for option in look["options"]:
                if option["move"]["choice"] in ("play", "top"):
                    await bob.post("choose", guild, channel, move=option["move"])
                    break
            async with page.expect_response(lambda answer: answer.url.endswith("/flip")):
                await page.click("#activity-flip")
        assert await options.count()
        await screenshot(page, tmp_path, "activity-steal-look-390", keep=SHOTS)
        async with page.expect_response(lambda answer: answer.url.endswith("/choose")) as chosen:
            await options.first.click()
        assert (await chosen.value).status == 200
        await expect(page.locator("#activity-done")).not_to_be_empty()
        await screenshot(page, tmp_path, "activity-steal-chosen-390", keep=SHOTS)
        assert [error for error in alice.errors if "403" not in error] == []
        assert alice.foreign(web.base) == []


class HolderAway:
    """The bot's side of the Activity while the process running the server does not answer:
    at the first question, then answering again."""

    def __init__(self) -> None:
        self.asked = 0

    async def member(self, guild_id: int, channel_id: int, user_id: int) -> bool:
        self.asked += 1
        if self.asked == 1:
            raise Unanswered()
        return True

    async def flip(self, guild_id: int, channel_id: int, user_id: int) -> None:
        raise Unanswered()

    async def look(
        self, guild_id: int, channel_id: int, user_id: int, lang: Lang
    ) -> dict[str, Any]:
        raise Unanswered()

    async def choose(
        self, guild_id: int, channel_id: int, user_id: int, move: dict[str, Any], lang: Lang
    ) -> dict[str, Any]:
        raise Unanswered()


async def test_the_page_says_to_try_again_when_the_server_s_process_is_away_and_does(
    standin: DiscordStandIn, standin_world: SampleWorld, storage: Storage
) -> None:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    address = f"http://127.0.0.1:{sock.getsockname()[1]}"
    games = HolderAway()
    view = WebView(
        storage,
        WebAccess(storage, secret=SECRET, base_url=address),
        clock=lambda: None,  # type: ignore[arg-type,return-value]
        activity=ActivitySignIn(
            client_id=lambda: standin.app.id,
            client_secret=standin.app.client_secret,
            api_base=standin.api_base,
        ),
        games=games,
    )
    await view.start("127.0.0.1", sock=sock)
    world = standin_world
    try:
        async with chromium() as browser:
            watched = await open_page(browser, PHONE, locale="da-DK")
            code = standin.oauth.authorize(standin.app, world.alice)
            await watched.page.add_init_script(
                mock_sdk(code, world.no_guild.id, world.no_channel.id)
            )
            await watched.page.goto(address + "/activity/")
            status = watched.page.locator("#activity-status")
            await expect(status).to_have_text(t("da", "activity.try_again"), timeout=WAIT_MS)
            # Asked again a moment later, the page shows what the channel holds.
            await expect(status).to_have_text(t("da", "activity.no_game"), timeout=WAIT_MS)
            assert games.asked == 2
            assert [error for error in watched.errors if "503" not in error] == []
    finally:
        await view.stop()
