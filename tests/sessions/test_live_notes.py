"""On PostgreSQL, the rounds of a game go to the other processes only while one watches it."""

from __future__ import annotations

import asyncio

import pytest

from krigbot.sessions.live import CHANNEL, LOOK, LiveHub, across_processes
from krigbot.storage import Storage

pytestmark = pytest.mark.slow

BOT = 42
GAME = 7


async def test_a_round_goes_to_another_process_only_once_a_viewer_there_watches(
    pg_dsn: str,
) -> None:
    here, there, spy = await asyncio.gather(*(Storage.open(pg_dsn) for _ in range(3)))
    notes: list[str] = []
    last = asyncio.Event()

    def note(text: str) -> None:
        notes.append(text)
        if text.startswith("r:") and text.endswith(":2"):
            last.set()

    playing, watching = LiveHub(), LiveHub()
    stops = [
        await across_processes(playing, here, BOT),
        await across_processes(watching, there, BOT),
    ]
    unspy = await spy.notes.hear(CHANNEL.format(bot=BOT), note)
    try:
        playing.committed(GAME, 1)  # nobody watches it anywhere: nothing is told
        viewer = watching.watch(GAME)
        # The process that plays it heard of the viewer, and had it look at the storage once.
        async with asyncio.timeout(30):
            assert await viewer.next() == LOOK
        playing.committed(GAME, 2)
        async with asyncio.timeout(30):
            assert await viewer.next() == 2
        watching.leave(viewer)
        async with asyncio.timeout(30):
            await last.wait()  # the spy hears the notes in the order they were sent

        rounds = [text.split(":")[3] for text in notes if text.startswith("r:")]
        assert rounds == [str(LOOK), "2"]
        assert any(text.startswith("w:") for text in notes)
    finally:
        await unspy()
        for stop in stops:
            assert stop is not None
            await stop()
        for storage in (here, there, spy):
            await storage.close()
