"""Fixtures for the cog tests: the sample world, a clock the test moves, a bot with short timers."""

from __future__ import annotations

from tests.support.bot_fixtures import clock, errors_expected, quick_bot, world

__all__ = ["clock", "errors_expected", "quick_bot", "world"]
