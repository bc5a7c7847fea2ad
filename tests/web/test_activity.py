"""The Activity's sign-in on the web view: the page's code traded with Discord for a token,
and the token proving who calls; another application's, an expired or a made-up token is no one."""

from __future__ import annotations

import logging
import socket
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import pytest

from bot import activity_sign_in
from krigbot.config import client_secret
from krigbot.storage import Storage
from krigbot.web.access import WebAccess
from krigbot.web.activity import REMEMBER_SECONDS, ActivitySignIn
from krigbot.web.server import WebView
from tests.standin import DiscordStandIn
from tests.standin.apps import Application
from tests.standin.fixtures import SampleWorld
from tests.support.settings import make_settings
from tests.support.web import SECRET

pytestmark = pytest.mark.usefixtures("standin_world")


async def _body(response: aiohttp.ClientResponse) -> dict[str, Any]:
    """The JSON answer; a missing page's HTML is none."""
    if response.content_type != "application/json":
        return {}
    body: dict[str, Any] = await response.json()
    return body


class Clock:
    """The sign-in's clock, moved by hand (seconds)."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


class Page:
    """The Activity's page as it calls the web view, and the sign-in's clock."""

    def __init__(self, base: str, clock: Clock) -> None:
        self.base = base
        self.clock = clock

    async def post(self, path: str, body: Any) -> tuple[int, dict[str, Any]]:
        async with (
            aiohttp.ClientSession() as session,
            session.post(self.base + path, json=body) as response,
        ):
            return response.status, await _body(response)

    async def token(self, code: str) -> tuple[int, dict[str, Any]]:
        return await self.post("/activity/token", {"code": code})

    async def me(self, token: str) -> tuple[int, dict[str, Any]]:
        headers = {"Authorization": f"Bearer {token}"}
        async with (
            aiohttp.ClientSession() as session,
            session.get(self.base + "/activity/me", headers=headers) as response,
        ):
            return response.status, await _body(response)


async def _serve(storage: Storage, sign_in: ActivitySignIn | None) -> tuple[WebView, str]:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    base = f"http://127.0.0.1:{sock.getsockname()[1]}"
    access = WebAccess(storage, secret=SECRET, base_url=base)
    view = WebView(storage, access, clock=lambda: None, activity=sign_in)  # type: ignore[arg-type,return-value]
    await view.start("127.0.0.1", sock=sock)
    return view, base


@pytest.fixture
async def page(standin: DiscordStandIn, storage: Storage) -> AsyncIterator[Page]:
    """Return the page of an application whose Activity is set up, on the stand-in's Discord."""
    clock = Clock()
    sign_in = ActivitySignIn(
        client_id=lambda: standin.app.id,
        client_secret=standin.app.client_secret,
        api_base=standin.api_base,
        clock=clock,
    )
    view, base = await _serve(storage, sign_in)
    try:
        yield Page(base, clock)
    finally:
        await view.stop()


async def test_the_pages_code_signs_its_user_in(
    page: Page, standin: DiscordStandIn, standin_world: SampleWorld
) -> None:
    code = standin.oauth.authorize(standin.app, standin_world.alice)
    status, granted = await page.token(code)
    assert status == 200
    assert granted["token_type"] == "Bearer"
    assert standin.oauth.trades == [code]
    assert await page.me(granted["access_token"]) == (
        200,
        {"id": str(standin_world.alice.id), "name": standin_world.alice.display_name},
    )
    # Asked again within the minute, the web view remembers instead of asking Discord.
    assert (await page.me(granted["access_token"]))[0] == 200
    assert len(standin.requests_matching("GET", "^/oauth2/@me$")) == 1


async def test_a_spent_made_up_or_missing_code_signs_no_one_in(
    page: Page, standin: DiscordStandIn, standin_world: SampleWorld
) -> None:
    code = standin.oauth.authorize(standin.app, standin_world.bob)
    assert (await page.token(code))[0] == 200
    assert await page.token(code) == (403, {"error": "Discord refused the code"})
    assert (await page.token("made-up"))[0] == 403
    assert (await page.post("/activity/token", {}))[0] == 400
    assert (await page.post("/activity/token", "not an object"))[0] == 400


async def test_another_applications_an_expired_or_a_forged_token_is_no_one(
    page: Page, standin: DiscordStandIn, standin_world: SampleWorld
) -> None:
    other = standin.applications.add(
        Application(
            standin.add_user("other-app", bot=True),
            standin_world.carol,
            "other-bot-token",
            standin.guard,
            client_secret="other-secret",
        )
    )
    theirs = standin.oauth.trade(other, standin.oauth.authorize(other, standin_world.alice))
    assert theirs is not None
    assert (await page.me(theirs[0]))[0] == 401
    assert (await page.me("forged-token"))[0] == 401
    _, granted = await page.token(standin.oauth.authorize(standin.app, standin_world.alice))
    token = granted["access_token"]
    assert (await page.me(token))[0] == 200
    standin.oauth.expire(token)
    page.clock.advance(REMEMBER_SECONDS)
    assert (await page.me(token))[0] == 401


async def test_a_wrong_client_secret_is_logged_without_the_secret(
    standin: DiscordStandIn,
    standin_world: SampleWorld,
    storage: Storage,
    caplog: pytest.LogCaptureFixture,
) -> None:
    secret = "a-wrong-secret-to-look-for"
    sign_in = ActivitySignIn(
        client_id=lambda: standin.app.id, client_secret=secret, api_base=standin.api_base
    )
    assert secret not in repr(sign_in)
    view, base = await _serve(storage, sign_in)
    try:
        page = Page(base, Clock())
        with caplog.at_level(logging.DEBUG):
            code = standin.oauth.authorize(standin.app, standin_world.alice)
            assert (await page.token(code))[0] == 503
        assert "KRIG_CLIENT_SECRET" in caplog.text
        assert secret not in caplog.text
    finally:
        await view.stop()


async def test_a_discord_out_of_reach_signs_no_one_in(
    storage: Storage, caplog: pytest.LogCaptureFixture
) -> None:
    with socket.socket() as closed:  # a port nothing listens on once it is closed
        closed.bind(("127.0.0.1", 0))
        api_base = f"http://127.0.0.1:{closed.getsockname()[1]}/api/v10"
    sign_in = ActivitySignIn(client_id=lambda: 1, client_secret="s3cret", api_base=api_base)
    view, base = await _serve(storage, sign_in)
    try:
        page = Page(base, Clock())
        with caplog.at_level(logging.WARNING):
            assert await page.token("a-code") == (502, {"error": "Discord is out of reach"})
            assert await page.me("a-token") == (401, {"error": "no valid access token"})
        assert "could not ask Discord for a code's token" in caplog.text
        assert "could not ask Discord whose a token is" in caplog.text
        assert "s3cret" not in caplog.text
    finally:
        await view.stop()


async def test_without_an_activity_its_routes_do_not_exist(storage: Storage) -> None:
    view, base = await _serve(storage, None)
    try:
        page = Page(base, Clock())
        assert (await page.token("anything"))[0] == 404
        assert (await page.me("anything"))[0] == 404
    finally:
        await view.stop()


def test_the_sign_in_is_set_up_from_the_environment_only(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert client_secret({"KRIG_CLIENT_SECRET": " s3cret "}) == "s3cret"
    assert client_secret({}) is None
    (tmp_path / ".env").write_text("DISCORD_TOKEN=x\nKRIG_CLIENT_SECRET=from-the-file\n")
    monkeypatch.delenv("KRIG_CLIENT_SECRET", raising=False)
    monkeypatch.chdir(tmp_path)
    assert client_secret() is None
    on = make_settings(tmp_path / "db", activity=True)
    assert activity_sign_in(on, lambda: 1, "http://proxy.example/api/v10") is None
    monkeypatch.setenv("KRIG_CLIENT_SECRET", "s3cret")
    made = activity_sign_in(on, lambda: 1, "http://proxy.example/api/v10")
    assert made is not None
    assert made.api_base == "http://proxy.example/api/v10"
    assert activity_sign_in(make_settings(tmp_path / "db"), lambda: 1, "x") is None
