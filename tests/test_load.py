"""The bot's measure of its own backlog: when a command defers before its work starts."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from contextlib import AbstractContextManager

import pytest

from krigbot.load import BACKLOG_SECONDS, BUSY, PROBE_SECONDS, Load

HELD = 0.3
"""Seconds a test holds up the event loop."""


@pytest.fixture
async def load() -> AsyncIterator[Load]:
    measured = Load()
    measured.start()
    yield measured
    measured.stop()


def answer(load: Load, commands: int) -> None:
    """Count ``commands`` commands as answered, just now."""
    for _ in range(commands):
        with load.command():
            pass


def hold(load: Load, commands: int) -> list[AbstractContextManager[None]]:
    """Keep ``commands`` commands in progress until the returned list is dropped."""
    held: list[AbstractContextManager[None]] = []
    for _ in range(commands):
        progress = load.command()
        progress.__enter__()
        held.append(progress)
    return held


def hold_up_the_loop(seconds: float) -> None:
    """Keep the running event loop from running anything else, as a long synchronous step would."""
    time.sleep(seconds)


async def test_a_quiet_bot_is_not_backlogged(load: Load) -> None:
    held = hold(load, BUSY - 1)  # many at once, but fewer than BUSY: each may take its second

    assert load.in_progress == len(held)
    assert not load.backlogged()


async def test_a_burst_at_a_bot_that_answered_little_lately_is_a_backlog(load: Load) -> None:
    answer(load, 10)

    held = hold(load, BUSY)

    assert load.in_progress == len(held)
    assert load.backlogged()


async def test_commands_in_progress_that_the_bot_answers_fast_enough_are_no_backlog(
    load: Load,
) -> None:
    # 1,000 answered in the last moment: 200 in progress wait a fifth of a second at most.
    answer(load, 1000)
    held = hold(load, 200)

    assert load.answered_per_second() * BACKLOG_SECONDS > len(held)
    assert not load.backlogged()


async def test_a_loop_held_up_by_a_long_step_shows_in_its_lag_but_defers_nothing(
    load: Load,
) -> None:
    hold_up_the_loop(HELD)

    # Before the late probe has even run, the lag shows the hold-up (the metric reads it).
    assert load.lag() >= HELD - PROBE_SECONDS  # the probe fell due within its interval
    # The step is over: it left no backlog for a command that starts now.
    assert not load.backlogged()


async def test_a_stopped_load_reads_no_lag(load: Load) -> None:
    hold_up_the_loop(HELD)
    load.stop()

    assert load.lag() == 0.0
    assert load.answered_per_second() == 0.0
