"""A live page's stream of events (Server-Sent Events), read as a browser reads it."""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from typing import Any

import aiohttp

from krigbot.engine import Game, Rules

LONG_GAME_ROUNDS = 2500
"""Rounds of a game long enough to fill, with room to spare, a reader's connection that reads
nothing (on loopback the kernel's buffers on both sides take about 130 KiB, 1,000 rounds' worth
at times)."""
LONG_GAME_SEED = 137761
"""The first seed whose standard game lasts more than ``LONG_GAME_ROUNDS`` rounds, as
``long_deal(LONG_GAME_ROUNDS)`` finds it (in minutes, so it is written here)."""
WAIT_SECONDS = 10.0
"""How long a test waits for the next event before it fails."""


@dataclass(frozen=True)
class Event:
    """One event of a stream: its name, its id and its data read as JSON."""

    kind: str
    id: str
    data: Any


class Stream:
    """An open event stream, read one event at a time."""

    def __init__(self, answer: aiohttp.ClientResponse) -> None:
        self.answer = answer

    async def next(self) -> Event:
        """Return the next event (failing after ``WAIT_SECONDS`` without one)."""
        async with asyncio.timeout(WAIT_SECONDS):
            fields: dict[str, str] = {}
            while True:
                line = (await self.answer.content.readline()).decode()
                if line == "":
                    raise EOFError("the stream ended")
                line = line.rstrip("\n")
                if line == "":
                    if fields:
                        return Event(fields["event"], fields["id"], json.loads(fields["data"]))
                    continue
                name, _, value = line.partition(":")
                fields[name] = value.removeprefix(" ")

    async def take(self, count: int) -> list[Event]:
        """Return the next ``count`` events."""
        return [await self.next() for _ in range(count)]

    async def ended(self) -> bool:
        """Tell whether the server closed the stream (nothing more is read)."""
        async with asyncio.timeout(WAIT_SECONDS):
            return await self.answer.content.read() == b""


def live_address(page: str) -> str:
    """Return the address of the stream a page names in its head."""
    start = page.index('<link rel="alternate" type="text/event-stream" href="')
    href = page[start:].split('href="', 1)[1].split('"', 1)[0]
    return href.replace("&amp;", "&")


def lasts_past(seed: int, rounds: int) -> bool:
    """Tell whether the standard game dealt from ``seed`` lasts more than ``rounds`` rounds."""
    game = Game.new(Rules.preset("standard"), seed)
    while game.outcome is None and game.round <= rounds:
        game.play_round()
    return game.outcome is None


def long_deal(rounds: int) -> int:
    """Return the first seed whose standard game lasts more than ``rounds`` rounds."""
    seed = 0
    while not lasts_past(seed, rounds):
        seed += 1
    return seed
