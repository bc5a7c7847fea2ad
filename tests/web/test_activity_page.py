"""The Activity's page in headless Chromium, with the Embedded App SDK's own DiscordSDKMock
standing in for Discord's client: it signs its user in through the web view and the stand-in's
OAuth2, asks nothing of any other site, and may be framed by Discord alone."""

from __future__ import annotations

import json
import socket
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import pytest
from playwright.async_api import expect

from krigbot.i18n import t
from krigbot.storage import Storage
from krigbot.web.access import WebAccess
from krigbot.web.activity import ActivitySignIn
from krigbot.web.server import WebView
from tests.standin import DiscordStandIn
from tests.standin.fixtures import SampleWorld
from tests.support.browser import DESKTOP, PHONE, chromium, open_page, screenshot
from tests.support.web import SECRET

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("standin_world")]

WAIT_MS = 20_000


def mock_sdk(code: str) -> str:
    """The init script that hands the page the SDK's mock, whose authorize gives ``code``."""
    return (
        "window.krigMakeSdk = (sdk, clientId) => {"
        " const mock = new sdk.DiscordSDKMock(clientId, null, null, null);"
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


async def test_the_activity_signs_its_user_in_with_the_sdk(
    base: str, standin: DiscordStandIn, standin_world: SampleWorld, tmp_path: Path
) -> None:
    async with chromium() as browser:
        # Discord's URL mapping may name the page with or without its last slash.
        shown = ((DESKTOP, "activity-1280", "/activity/"), (PHONE, "activity-390", "/activity"))
        for viewport, name, path in shown:
            code = standin.oauth.authorize(standin.app, standin_world.alice)
            watched = await open_page(browser, viewport)
            await watched.page.add_init_script(mock_sdk(code))
            answer = await watched.page.goto(base + path)
            assert answer is not None
            assert answer.status == 200
            activity = watched.page.locator("#activity")
            await expect(activity).to_have_attribute("data-state", "signed-in", timeout=WAIT_MS)
            expected = t("nb", "activity.signed_in", name=standin_world.alice.display_name)
            await expect(watched.page.locator("#activity-status")).to_have_text(expected)
            assert code in standin.oauth.trades
            assert watched.foreign(base) == []
            assert watched.errors == []
            await screenshot(watched.page, tmp_path, name)


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
