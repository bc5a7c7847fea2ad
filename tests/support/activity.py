"""The Activity's page as its calls reach the web view: signed in through the stand-in's OAuth2."""

from __future__ import annotations

from typing import Any, Protocol

import aiohttp

from tests.standin import DiscordStandIn, User


class Served(Protocol):
    """A web view serving the Activity: at ``base``."""

    @property
    def base(self) -> str: ...


class Member:
    """One user's Activity, signed in through the stand-in's OAuth2, calling as its page does."""

    def __init__(self, web: Served, token: str) -> None:
        self.base = web.base + "/activity/"
        self.headers = {"Authorization": f"Bearer {token}"}

    async def table(self, guild: int | str, channel: int) -> tuple[int, dict[str, Any]]:
        url = f"{self.base}channel/{channel}?guild={guild}"
        async with (
            aiohttp.ClientSession() as session,
            session.get(url, headers=self.headers) as answer,
        ):
            return answer.status, await answer.json()

    async def flip(self, guild: int, channel: int) -> tuple[int, dict[str, Any]]:
        return await self.post("flip", guild, channel)

    async def post(
        self, route: str, guild: int, channel: int, **body: Any
    ) -> tuple[int, dict[str, Any]]:
        body |= {"guild": str(guild), "channel": str(channel)}
        async with (
            aiohttp.ClientSession() as session,
            session.post(self.base + route, json=body, headers=self.headers) as answer,
        ):
            return answer.status, await answer.json()


async def sign_in(standin: DiscordStandIn, web: Served, user: User) -> Member:
    """Return ``user``'s Activity, signed in with a code from the stand-in's ``authorize``."""
    code = standin.oauth.authorize(standin.app, user)
    async with (
        aiohttp.ClientSession() as session,
        session.post(web.base + "/activity/token", json={"code": code}) as answer,
    ):
        assert answer.status == 200
        return Member(web, (await answer.json())["access_token"])
