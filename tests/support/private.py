"""Private chats through the stand-in: a group DM, a long seed, short tokens, nothing refused."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from krigbot.adapter import surfaces
from tests.standin import Channel, DiscordStandIn
from tests.standin.contexts import add_group_dm, install_for
from tests.standin.fixtures import SampleWorld

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


@pytest.fixture
def group(standin: DiscordStandIn, world: SampleWorld) -> Iterator[Channel]:
    """A group DM of Alice (nb), Bob (sv) and Carol (en); Alice and Bob installed the bot."""
    install_for(standin, world.alice)
    install_for(standin, world.bob)
    yield add_group_dm(standin, world.alice, world.bob, world.carol, name="friends")
    nothing_refused(standin)
