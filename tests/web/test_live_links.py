"""Watch live: every message that shows a running game's table links the game's page, where the
server turned the web view on; a finished game's messages link its replay instead."""

from __future__ import annotations

from krigbot.i18n import t
from tests.standin import DiscordStandIn
from tests.standin.fixtures import SampleWorld
from tests.support.autoplay import LONG_SEED
from tests.support.handsfree import command
from tests.support.players import (
    ChosenSeeds,
    flip,
    flip_button,
    press,
    start_game,
    text_of,
)
from tests.support.versus import start_against_krigbot
from tests.support.web import Web
from tests.support.web_games import BOB_WINS, links, web_on

WATCH = t("nb", "web.watch_live")
REPLAY = t("nb", "web.watch")


async def test_autoplays_table_links_the_game_while_it_runs_paused_or_stopped(
    standin: DiscordStandIn, world: SampleWorld, web: Web, seeds: ChosenSeeds
) -> None:
    seeds.fix(LONG_SEED, LONG_SEED)
    await web_on(standin, world, web.bot)
    table = await start_game(standin, world.no_channel, world.alice, world.bob)
    page = await web.bot.web.game_url(world.no_guild.id, table.game_id)
    assert page is not None
    running = await command(standin, world.no_channel, world.alice, "auto")
    assert running.message is not None
    assert links(running) == {WATCH: page}
    paused = await press(standin, running.message, f"krig:auto:{table.game_id}:pause", world.bob)
    assert links(paused) == {WATCH: page}
    stopped = await press(standin, running.message, f"krig:auto:{table.game_id}:stop", world.bob)
    assert t("nb", "auto.stopped", name="Bob") in text_of(stopped)
    assert links(stopped) == {WATCH: page}
    # Where the server has no web view, autoplay's table has no link.
    await start_game(standin, world.sv_channel, world.alice, world.bob)
    elsewhere = await command(standin, world.sv_channel, world.alice, "auto")
    assert links(elsewhere) == {}


async def test_the_table_left_after_a_forfeit_links_the_game_that_plays_on(
    standin: DiscordStandIn, world: SampleWorld, web: Web
) -> None:
    await web_on(standin, world, web.bot)
    table = await start_game(standin, world.no_channel, world.alice, world.bob, world.carol)
    page = await web.bot.web.game_url(world.no_guild.id, table.game_id)
    confirm = await command(standin, world.no_channel, world.carol, "forfeit")
    assert confirm.message is not None
    watcher = standin.watch(world.no_channel)
    await press(
        standin, confirm.message, f"krig:forfeit:{table.game_id}:{world.carol.id}:yes", world.carol
    )
    announced = await watcher.next("create", predicate=lambda e: not e.message.ephemeral)
    assert t("nb", "forfeit.done", name="Carol") in text_of(announced.revision)
    assert links(announced.revision) == {WATCH: page}


async def test_steal_wars_table_links_the_game_between_battles_and_choices(
    standin: DiscordStandIn, world: SampleWorld, web: Web
) -> None:
    await web_on(standin, world, web.bot)
    table = await start_game(standin, world.no_channel, world.alice, world.bob, variant="stjel")
    page = await web.bot.web.game_url(world.no_guild.id, table.game_id)
    assert links(table.message) == {WATCH: page}
    battle = await press(standin, table.message, flip_button(table.message), world.alice)
    assert links(battle) == {WATCH: page}
    # Where the server has no web view, its table has none.
    other = await start_game(standin, world.sv_channel, world.alice, world.bob, variant="stjel")
    assert links(await press(standin, other.message, flip_button(other.message), world.bob)) == {}


async def test_a_matchs_next_game_is_linked_beside_the_replay_of_the_one_that_ended(
    standin: DiscordStandIn, world: SampleWorld, web: Web, seeds: ChosenSeeds
) -> None:
    seeds.fix(BOB_WINS, BOB_WINS)
    await web_on(standin, world, web.bot)
    first = await start_game(standin, world.no_channel, world.alice, world.bob, best_of=3)
    over = await flip(standin, world.no_channel, world.alice, count=30)
    replay = await web.bot.web.game_url(world.no_guild.id, first.game_id)
    shown = links(over)
    assert shown[REPLAY] == replay
    assert set(shown) == {REPLAY, WATCH}
    assert shown[WATCH] != replay  # the next game's page, which plays on
    assert over.message is not None
    nxt = await press(standin, over.message, flip_button(over), world.bob)
    assert links(nxt) == {WATCH: shown[WATCH]}


async def test_a_game_krigbot_accepts_links_its_page_from_the_deal(
    standin: DiscordStandIn, world: SampleWorld, web: Web
) -> None:
    await web_on(standin, world, web.bot)
    answer = await start_against_krigbot(standin, world, world.alice)
    assert t("nb", "krigbot.accepts", name="Krigbot") in text_of(answer)
    (page,) = links(answer).values()
    assert links(answer) == {WATCH: page}
