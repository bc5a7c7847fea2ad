"""Nothing but a challenge pings anyone, and a challenge pings only the players it challenges."""

from __future__ import annotations

from pathlib import Path

from tests.standin import DiscordStandIn, Message
from tests.standin.fixtures import SampleWorld
from tests.support.handsfree import command, running_bot
from tests.support.players import (
    ChosenSeeds,
    challenge_message,
    flip,
    flip_button,
    game_id_of,
    press,
    settled,
    start_game,
    text_of,
)

ALICE_WINS = 132
"""Standard: 34 rounds, Alice (seat 0) takes every card."""


async def test_over_a_whole_game_with_every_kind_of_message_only_challenges_ping(
    standin: DiscordStandIn, world: SampleWorld, db_path: Path, seeds: ChosenSeeds
) -> None:
    seeds.fix(7, 8, ALICE_WINS, 9)
    channel = world.no_channel
    alice, bob, carol = world.alice, world.bob, world.carol
    async with running_bot(standin, db_path, seeds):
        # A game of three: accepted, flipped by command and by button, autoplay started and
        # stopped, a finish request, a forfeit, and the finish agreed: the game is over.
        table = await start_game(standin, channel, alice, bob, carol)
        game = table.game_id
        challenged = {table.message.id: {bob.id, carol.id}}
        newest = (await flip(standin, channel, alice)).message
        assert newest is not None
        await press(standin, newest, flip_button(newest), bob)
        auto = (await command(standin, channel, alice, "auto")).message
        assert auto is not None
        await settled()
        await press(standin, auto, f"krig:auto:{game}:stop", bob)
        request = (await command(standin, channel, alice, "finish")).message
        assert request is not None
        confirm = (await command(standin, channel, carol, "forfeit")).message
        assert confirm is not None
        await press(standin, confirm, f"krig:forfeit:{game}:{carol.id}:yes", carol)
        await press(standin, request, f"krig:finish:{game}:yes", bob)
        await settled()
        rematch = next(
            message
            for message in reversed(standin.messages(channel))
            if f"krig:rematch:{game}" in message.custom_ids()
        )
        assert "🏆" in text_of(rematch)

        # The rematch is a challenge of its own: it pings the two it challenges.
        again = (await press(standin, rematch, f"krig:rematch:{game}", bob)).message
        assert again is not None
        challenged[again.id] = {alice.id, carol.id}
        await command(standin, channel, bob, "cancel")

        # A match: its first game ends with the next one dealt, on a Flip button.
        match = await challenge_message(standin, channel, alice, bob, best_of=3)
        challenged[match.id] = {bob.id}
        await press(standin, match, f"krig:accept:{game_id_of(match)}", bob)
        end = (await flip(standin, channel, alice, count=50)).message
        assert end is not None
        assert "🏆" in text_of(end)
        await settled()

    messages: list[Message] = standin.messages(channel)
    assert len(messages) >= 10
    for message in messages:
        notified = {user.id for user in message.pinged}
        assert notified == challenged.get(message.id, set()), text_of(message)
        assert not message.mention_everyone
        assert message.mention_role_ids == []
        for revision in [*message.history, message.revision()]:
            assert set(revision.mentioned) <= challenged.get(message.id, set()), text_of(message)
