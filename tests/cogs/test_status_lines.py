"""/krig status says what the table says: the round under way, whom it waits for, autoplay."""

from __future__ import annotations

import re
from pathlib import Path

from krigbot.bot import KrigBot
from krigbot.i18n import fmt_list, t
from tests.standin import DiscordStandIn
from tests.standin.fixtures import SampleWorld
from tests.support.handsfree import command, edit_of, running_bot
from tests.support.players import ChosenSeeds, answer_of, press, settled, start_game, text_of
from tests.support.steal_war import STEAL_ONE, play_to_choice, start_steal_war
from tests.support.texts import pattern

LONG_SEED = 17
"""Standard: 117 rounds."""


async def test_status_in_a_steal_war_battle_shows_its_round_and_whom_it_waits_for(
    standin: DiscordStandIn, world: SampleWorld, bot: KrigBot, seeds: ChosenSeeds
) -> None:
    plan = STEAL_ONE
    table, players = await start_steal_war(standin, world, seeds, plan)
    await play_to_choice(standin, table, plan, players)
    title = text_of(table).splitlines()[0]  # "Krig — runde N", the battle under way

    status = await command(standin, world.no_channel, players[0], "status")

    shown = text_of(status)
    shown_title = pattern("nb", "table.title", round=re.compile(r"\d+")).fullmatch(title)
    assert shown_title is not None
    battle = shown_title["round"]
    assert t("nb", "status.round", round=battle) in shown
    chooser = players[plan.choice.seat].display_name
    assert t("nb", "steal.waiting", names=f"**{chooser}**") in shown


async def test_status_says_whether_the_bot_plays_and_what_a_finish_waits_for(
    standin: DiscordStandIn, world: SampleWorld, db_path: Path, seeds: ChosenSeeds
) -> None:
    seeds.fix(LONG_SEED)
    async with running_bot(standin, db_path, seeds):
        table = await start_game(standin, world.no_channel, world.alice, world.bob)
        auto = (await command(standin, world.no_channel, world.alice, "auto", speed="slow")).message
        assert auto is not None
        await edit_of(standin, auto, lambda text: t("nb", "table.title", round=1) in text)
        running = t("nb", "auto.running", speed=t("nb", "speed.slow"), name="Alice")

        playing = await command(standin, world.no_channel, world.alice, "status")
        await command(standin, world.no_channel, world.alice, "finish")
        stop = await answer_of(
            standin, await standin.click(auto, f"krig:auto:{table.game_id}:stop", user=world.bob)
        )
        await settled()
        stopped = await command(standin, world.no_channel, world.alice, "status")

    assert running in text_of(playing)
    assert pattern("nb", "table.title").search(text_of(stop))
    assert running not in text_of(stopped)
    assert t("nb", "finish.waiting", players="Bob") in text_of(stopped)


async def test_a_finish_request_stops_waiting_for_a_player_who_gives_up(
    standin: DiscordStandIn, world: SampleWorld, bot: KrigBot
) -> None:
    table = await start_game(standin, world.no_channel, world.alice, world.bob, world.carol)
    request = (await command(standin, world.no_channel, world.alice, "finish")).message
    assert request is not None
    assert t("nb", "finish.waiting", players=fmt_list(["Bob", "Carol"], "nb")) in text_of(request)
    confirm = (await command(standin, world.no_channel, world.carol, "forfeit")).message
    assert confirm is not None

    await press(standin, confirm, f"krig:forfeit:{table.game_id}:{world.carol.id}:yes", world.carol)
    await settled()

    assert t("nb", "finish.waiting", players="Bob") in text_of(request)
    assert "Carol" not in text_of(request)
