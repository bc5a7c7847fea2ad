"""Fixtures for the fault tests: the cog tests' world, clock and bots, shared as they are."""

from __future__ import annotations

from tests.support.bot_fixtures import clock, errors_expected, quick_bot, world

__all__ = ["clock", "errors_expected", "quick_bot", "world"]
