"""Private chats through the stand-in: a long seed, tokens that run out soon, nothing refused."""

from __future__ import annotations

import pytest

from krigbot.adapter import surfaces
from tests.standin import DiscordStandIn

LONG_SEED = 17
"""Standard: 117 rounds: autoplay meets several token expiries before the end."""


TOKEN_SECONDS = 1.5
"""The bot's use of a token here, short enough to run out several times in one game."""


def nothing_refused(standin: DiscordStandIn) -> None:
    """Assert that Discord would have refused nothing the bot did."""
    assert standin.world.refused == []
    rejected = {r.id: r.rejected for r in standin.interaction_log.items if r.rejected}
    assert rejected == {}


@pytest.fixture
def short_tokens(standin: DiscordStandIn, monkeypatch: pytest.MonkeyPatch) -> None:
    """Make the bot's tokens run out after TOKEN_SECONDS, and Discord's soon after."""
    monkeypatch.setattr(surfaces, "TOKEN_SECONDS", TOKEN_SECONDS)
    standin.token_lifetime = TOKEN_SECONDS + 1.0
