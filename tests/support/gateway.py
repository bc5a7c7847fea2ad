"""A bare gateway client for the stand-in, and the interaction it sends."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import pytest

from tests.standin import DiscordStandIn

TOKEN = "fake-token"


FLIP = {"id": "1", "name": "flip", "type": 1}
"""A slash command's data, as the stand-in would send it for a synced /flip."""


class RawShard:
    """One websocket session, as a bot's shard opens it."""

    def __init__(self, ws: aiohttp.ClientWebSocketResponse) -> None:
        self.ws = ws

    async def identify(self, shard: tuple[int, int]) -> dict[str, Any]:
        """Send IDENTIFY for ``shard`` and return the gateway's answer (READY or op 9)."""
        await self.ws.send_json(
            {"op": 2, "d": {"token": TOKEN, "intents": 1, "shard": list(shard), "properties": {}}}
        )
        return await self.frame()

    async def frame(self) -> dict[str, Any]:
        """Return the next frame; a close is returned as ``{"close": code}``."""
        message = await self.ws.receive(timeout=5)
        if message.type in (aiohttp.WSMsgType.CLOSE, aiohttp.WSMsgType.CLOSED):
            return {"close": self.ws.close_code}
        frame: dict[str, Any] = json.loads(message.data)
        return frame

    async def next_event(self, name: str) -> dict[str, Any]:
        """Return the data of the next dispatch called ``name``, skipping others."""
        while True:
            frame = await self.frame()
            assert "close" not in frame, frame
            if frame.get("t") == name:
                data: dict[str, Any] = frame["d"]
                return data


@pytest.fixture
async def connect(standin: DiscordStandIn) -> AsyncIterator[Any]:
    """Return a function that opens a raw session to the stand-in (HELLO read)."""
    async with aiohttp.ClientSession() as http:
        opened: list[aiohttp.ClientWebSocketResponse] = []

        async def open_shard() -> RawShard:
            ws = await http.ws_connect(standin.gateway_url)
            opened.append(ws)
            raw = RawShard(ws)
            assert (await raw.frame())["op"] == 10  # HELLO
            return raw

        yield open_shard
        for ws in opened:
            await ws.close()
