"""Games against Krigbot through the stand-in: starting one, forfeiting, reading the table."""

from __future__ import annotations

from krigbot.engine import Rules
from tests.standin import DiscordStandIn, InteractionResponse, Message, User
from tests.standin.fixtures import SampleWorld
from tests.support.players import answer_of, challenge, text_of

ONE_ROUND = Rules.preset("standard", max_rounds=1)


async def start_against_krigbot(
    standin: DiscordStandIn, world: SampleWorld, player: User, **options: object
) -> InteractionResponse:
    """Run ``/krig start opponent:@Krigbot`` and return the public answer."""
    answer = await answer_of(
        standin, await challenge(standin, world.no_channel, player, standin.bot_user, **options)
    )
    assert not answer.ephemeral, text_of(answer)
    return answer


def table_of(answer: InteractionResponse) -> Message:
    """Return the message an answer put in the channel."""
    assert answer.message is not None
    return answer.message


def forfeit_yes(game_id: int, user: User) -> str:
    return f"krig:forfeit:{game_id}:{user.id}:yes"
