"""The stand-in keeps OAuth2's rules for an Activity's users: codes traded once, with the
application's own secret, for tokens that say who the user is until they run out."""

from __future__ import annotations

from typing import Any

import aiohttp
import pytest

from tests.standin import DiscordStandIn
from tests.standin.apps import Application
from tests.standin.fixtures import SampleWorld

pytestmark = pytest.mark.usefixtures("standin_world")


async def _trade(
    standin: DiscordStandIn, code: str, *, app: Application | None = None, secret: str | None = None
) -> tuple[int, dict[str, Any]]:
    app = app or standin.app
    form = {
        "grant_type": "authorization_code",
        "code": code,
        "client_id": str(app.id),
        "client_secret": app.client_secret if secret is None else secret,
    }
    async with (
        aiohttp.ClientSession() as session,
        session.post(f"{standin.api_base}/oauth2/token", data=form) as response,
    ):
        return response.status, await response.json()


async def _get(standin: DiscordStandIn, path: str, token: str) -> tuple[int, dict[str, Any]]:
    headers = {"Authorization": f"Bearer {token}"}
    async with (
        aiohttp.ClientSession() as session,
        session.get(f"{standin.api_base}{path}", headers=headers) as response,
    ):
        return response.status, await response.json()


async def test_a_code_buys_a_token_that_names_its_user_once(
    standin: DiscordStandIn, standin_world: SampleWorld
) -> None:
    code = standin.oauth.authorize(standin.app, standin_world.alice)
    status, body = await _trade(standin, code)
    assert status == 200
    assert body["token_type"] == "Bearer"
    assert body["scope"] == "identify"
    assert body["expires_in"] == 604800
    status, me = await _get(standin, "/users/@me", body["access_token"])
    assert (status, me["id"]) == (200, str(standin_world.alice.id))
    status, who = await _get(standin, "/oauth2/@me", body["access_token"])
    assert status == 200
    assert who["application"]["id"] == str(standin.app.id)
    assert who["user"]["id"] == str(standin_world.alice.id)
    # A code is good once.
    assert await _trade(standin, code) == (
        400,
        {"error": "invalid_grant", "error_description": 'Invalid "code" in request.'},
    )


async def test_a_wrong_secret_or_another_applications_code_buys_nothing(
    standin: DiscordStandIn, standin_world: SampleWorld
) -> None:
    code = standin.oauth.authorize(standin.app, standin_world.bob)
    assert await _trade(standin, code, secret="guessed") == (401, {"error": "invalid_client"})
    other = standin.applications.add(
        Application(
            standin.add_user("other-app", bot=True),
            standin_world.carol,
            "other-bot-token",
            standin.guard,
            client_secret="other-secret",
        )
    )
    status, body = await _trade(standin, code, app=other)
    assert (status, body["error"]) == (400, "invalid_grant")
    # Refused with the right secret, the code is still there to be traded by its application.
    assert (await _trade(standin, code))[0] == 200


async def test_an_expired_or_unknown_token_is_unauthorized_and_no_bot_token(
    standin: DiscordStandIn, standin_world: SampleWorld
) -> None:
    code = standin.oauth.authorize(standin.app, standin_world.alice)
    _, body = await _trade(standin, code)
    token = body["access_token"]
    standin.oauth.expire(token)
    unauthorized = (401, {"message": "401: Unauthorized", "code": 0})
    assert await _get(standin, "/users/@me", token) == unauthorized
    assert await _get(standin, "/oauth2/@me", token) == unauthorized
    assert await _get(standin, "/users/@me", "made-up") == unauthorized
    # A user's token opens none of the bot's routes.
    status, _ = await _get(standin, f"/channels/{standin_world.no_channel.id}", "made-up")
    assert status == 401
