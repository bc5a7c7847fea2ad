"""The Activity's calls for a server of another process's shard: answered by the process holding
it, its refusals raised as if made here, and nothing else waited on for ever; what they carry
fits in PostgreSQL's notes."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Any, cast

import pytest

from krigbot.adapter import forwarding
from krigbot.adapter.forwarding import NOTE_BYTES, Answer, Forwarding, encode
from krigbot.sessions import Refusal
from krigbot.storage.notes import NoteStore
from krigbot.web.activity import Unanswered
from tests.support.desk_notes import steal_war_answers


def test_every_steal_war_look_and_choice_answer_fits_in_a_note() -> None:
    notes = list(steal_war_answers(seeds=6))
    assert len(notes) > 1000
    assert None not in notes  # a look too long would be no answer: "try again", for ever


def test_a_note_longer_than_postgres_takes_is_not_sent() -> None:
    assert encode({"text": "x" * NOTE_BYTES}) is None
    assert encode({"text": "ø" * (NOTE_BYTES // 2)}) is None  # bytes, not characters
    assert encode({"text": "x" * 100}) == '{"text":"' + "x" * 100 + '"}'


class Bus:
    """PostgreSQL's notes between processes, in memory: each note reaches every listener of
    its channel, a moment after it is sent."""

    def __init__(self) -> None:
        self.listeners: dict[str, list[Callable[[str], None]]] = {}

    async def tell(self, channel: str, note: str) -> None:
        assert len(note.encode()) < 8000
        loop = asyncio.get_running_loop()
        for heard in self.listeners.get(channel, []):
            loop.call_soon(heard, note)

    async def hear(
        self, channel: str, heard: Callable[[str], None]
    ) -> Callable[[], Awaitable[None]]:
        self.listeners.setdefault(channel, []).append(heard)

        async def stop() -> None:
            self.listeners[channel].remove(heard)

        return stop


def process(bus: Bus, holds: set[int], answer: Answer) -> Forwarding:
    return Forwarding(cast(NoteStore, bus), 42, lambda guild: guild in holds, answer)


async def test_the_holder_answers_and_its_refusal_is_raised_at_the_asker() -> None:
    bus = Bus()
    made: list[tuple[str, int, dict[str, Any]]] = []

    async def holder_answer(call: str, guild: int, args: dict[str, Any]) -> Any:
        made.append((call, guild, args))
        if call == "flip":
            raise Refusal("err.not_player", name="Åsa")
        return {"text": "ø", "options": [{"label": "x", "move": {"card": 3}}]}

    async def never(call: str, guild: int, args: dict[str, Any]) -> Any:
        raise AssertionError("only the holder answers")

    asker = process(bus, {1}, never)
    other = process(bus, {3}, never)
    holder = process(bus, {2}, holder_answer)
    stops = [await each.start() for each in (asker, other, holder)]
    look = await asker.ask(0, 2, "look", channel=5, user=6, lang="sv")
    assert look == {"text": "ø", "options": [{"label": "x", "move": {"card": 3}}]}
    with pytest.raises(Refusal) as refused:
        await asker.ask(0, 2, "flip", channel=5, user=6)
    assert (refused.value.key, refused.value.fields) == ("err.not_player", {"name": "Åsa"})
    assert made == [
        ("look", 2, {"channel": 5, "user": 6, "lang": "sv"}),
        ("flip", 2, {"channel": 5, "user": 6}),
    ]
    for stop in stops:
        await stop()


async def test_no_holder_a_holder_not_ready_or_failing_is_unanswered(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(forwarding, "ANSWER_SECONDS", 0.2)
    bus = Bus()

    async def holder_answer(call: str, guild: int, args: dict[str, Any]) -> Any:
        if call == "connecting":
            raise Unanswered()
        if call == "heavy":
            return "x" * NOTE_BYTES
        raise RuntimeError("a bug")

    asker = process(bus, set(), holder_answer)
    holder = process(bus, {2}, holder_answer)
    stops = [await asker.start(), await holder.start()]
    for guild, call in ((7, "member"), (2, "connecting"), (2, "heavy"), (2, "bug")):
        with pytest.raises(Unanswered):
            await asker.ask(0, guild, call)
    for stop in stops:
        await stop()


async def test_a_call_heard_after_the_asker_gave_up_is_not_made(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(forwarding, "ANSWER_SECONDS", 0.2)
    bus = Bus()
    made: list[str] = []

    async def holder_answer(call: str, guild: int, args: dict[str, Any]) -> Any:
        made.append(call)

    asker = process(bus, set(), holder_answer)
    # The holder hears the call as a process held still for a while would: after its time.
    held_still = Forwarding(
        cast(NoteStore, bus), 42, lambda guild: True, holder_answer, clock=lambda: time.time() + 5
    )
    stops = [await asker.start(), await held_still.start()]
    with pytest.raises(Unanswered):
        await asker.ask(0, 2, "flip", channel=5, user=6)
    assert made == []  # the page was told to try again: the flip is not played behind its back
    for stop in stops:
        await stop()


async def test_a_call_the_holder_took_is_waited_for_past_the_time_to_find_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(forwarding, "ANSWER_SECONDS", 0.1)
    bus = Bus()
    release = asyncio.Event()

    async def slow_holder(call: str, guild: int, args: dict[str, Any]) -> Any:
        await release.wait()  # a round posted in a channel that waits for Discord's limits
        return "played"

    asker = process(bus, set(), slow_holder)
    holder = process(bus, {2}, slow_holder)
    stops = [await asker.start(), await holder.start()]
    asked = asyncio.create_task(asker.ask(0, 2, "flip", channel=5, user=6))
    with pytest.raises(TimeoutError):
        await asyncio.wait_for(asyncio.shield(asked), 0.5)  # past the 0.1 s: still waiting
    release.set()
    assert await asked == "played"
    for stop in stops:
        await stop()
