"""pytest fixtures for the Discord stand-in.

Import them where they are needed, e.g. in ``tests/conftest.py``::

    from tests.standin.fixtures import standin, standin_world  # noqa: F401
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass

import pytest

from tests.standin.server import DiscordStandIn
from tests.standin.world import Channel, Guild, Member, Role, User


@pytest.fixture
async def standin(request: pytest.FixtureRequest) -> AsyncIterator[DiscordStandIn]:
    """A running, empty :class:`DiscordStandIn` (with the options of a ``standin`` marker).

    At teardown the test fails if the bot hit routes the stand-in does not implement, sent a
    body Discord's OpenAPI description refuses (real Discord's 400 50035, which the bot may
    have swallowed), or the stand-in itself raised, so gaps in the double never pass silently.
    A test that probes unknown routes or bad bodies on purpose can clear
    ``standin.unknown_requests`` or ``standin.refused_bodies``.
    """
    marker = request.node.get_closest_marker("standin")
    async with DiscordStandIn(**(marker.kwargs if marker else {})) as server:
        yield server
        problems = []
        if server.unknown_requests:
            problems.append(
                f"the bot called routes the stand-in does not know: {server.unknown_requests}"
            )
        if server.refused_bodies:
            problems.append(
                "the bot sent bodies Discord's OpenAPI description refuses (400 50035):\n"
                + "\n".join(f"  {refusal}" for refusal in server.refused_bodies)
            )
        if server.internal_errors:
            problems.append("the stand-in failed internally:\n" + "\n".join(server.internal_errors))
        if problems:
            pytest.fail("\n".join(problems))


@dataclass
class SampleWorld:
    """Two guilds (Norwegian and Swedish) with an owner, a moderator and two players each."""

    no_guild: Guild
    sv_guild: Guild
    no_channel: Channel
    sv_channel: Channel
    owner: User
    moderator: User
    moderator_role: Role
    alice: User
    bob: User
    carol: User
    moderator_member: Member


def build_sample_world(standin: DiscordStandIn) -> SampleWorld:
    """Populate ``standin`` with a small, typical world (see :class:`SampleWorld`)."""
    owner = standin.add_user("owner", "Olav Owner", locale="nb")
    moderator = standin.add_user("moderator", "Mona Mod", locale="nb")
    alice = standin.add_user("alice", "Alice", locale="nb")
    bob = standin.add_user("bob", "Bob", locale="sv-SE")
    carol = standin.add_user("carol", "Carol", locale="en-US")
    no_guild = standin.add_guild("Krig Norge", locale="nb", owner=owner)
    sv_guild = standin.add_guild("Krig Sverige", locale="sv-SE", owner=owner)
    moderator_role = standin.add_role(no_guild, "Moderator", ["manage_messages"])
    moderator_member = standin.add_member(no_guild, moderator, roles=[moderator_role])
    for user in (alice, bob, carol):
        standin.add_member(no_guild, user)
        standin.add_member(sv_guild, user)
    standin.add_member(sv_guild, moderator)
    return SampleWorld(
        no_guild=no_guild,
        sv_guild=sv_guild,
        no_channel=standin.add_channel(no_guild, "krig"),
        sv_channel=standin.add_channel(sv_guild, "krig"),
        owner=owner,
        moderator=moderator,
        moderator_role=moderator_role,
        alice=alice,
        bob=bob,
        carol=carol,
        moderator_member=moderator_member,
    )


@pytest.fixture
def standin_world(standin: DiscordStandIn) -> SampleWorld:
    """``standin`` populated by :func:`build_sample_world`."""
    return build_sample_world(standin)
