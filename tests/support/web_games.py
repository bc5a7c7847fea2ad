"""Games played through the Discord stand-in for the web view's tests, and what they showed."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NamedTuple

from krigbot.engine import Rules
from krigbot.i18n import t
from tests.standin.messages import walk_components
from tests.support.handsfree import command
from tests.support.players import flip, start_game, text_of

if TYPE_CHECKING:
    from krigbot.bot import KrigBot
    from tests.standin import Channel, DiscordStandIn, User
    from tests.standin.fixtures import SampleWorld
    from tests.support.players import ChosenSeeds, Shown

STANDARD = Rules.preset("standard")
BOB_WINS = 1146
"""Standard: 30 rounds, seat 1 wins, six wars (the first in round 6)."""
ALICE_WINS = 1230
"""Standard: 30 rounds, seat 0 wins."""
LINK = 5
"""Discord's button style for a link."""


@dataclass
class Played:
    """A finished game: its id and its game-over message as the channel saw it."""

    game_id: int
    over: Shown


async def play(
    standin: DiscordStandIn, channel: Channel, first: User, second: User, **options: Any
) -> Played:
    """Play a 30-round game to its end with one /flip and return its game-over message."""
    table = await start_game(standin, channel, first, second, **options)
    over = await flip(standin, channel, first, count=30)
    assert "🏆" in text_of(over), text_of(over)
    return Played(table.game_id, over)


async def web_on(standin: DiscordStandIn, world: SampleWorld, bot: KrigBot) -> str:
    """Have the moderator turn the web view on for the Norwegian server; return its board's link."""
    answer = await command(standin, world.no_channel, world.moderator, "settings", web="on")
    url = await bot.web.leaderboard_url(world.no_guild.id)
    assert url is not None
    assert answer.ephemeral
    assert answer.content == t("nb", "settings.web_on", url=url)
    return url


def links(shown: Shown) -> dict[str, str]:
    """Return the link buttons of a message: label -> address."""
    return {
        str(item.get("label")): str(item["url"])
        for item in walk_components(list(shown.components))
        if item.get("type") == 2 and item.get("style") == LINK
    }


class OnTheWeb(NamedTuple):
    """A game Bob won where the web view is on: the server's board, the game, its replay's link."""

    board: str
    game: Played
    replay: str


async def bob_wins_on_the_web(
    standin: DiscordStandIn, world: SampleWorld, bot: KrigBot, seeds: ChosenSeeds
) -> OnTheWeb:
    """Turn the web view on for the Norwegian server and play ``BOB_WINS`` there to its end; the
    game-over message carries the link to the replay, as the channel saw it."""
    seeds.fix(BOB_WINS)
    board = await web_on(standin, world, bot)
    game = await play(standin, world.no_channel, world.alice, world.bob)
    (replay,) = links(game.over).values()
    return OnTheWeb(board, game, replay)
