"""When a state ends, the buttons of its messages go grey and their text says what happened."""

from __future__ import annotations

import pytest

from krigbot.bot import KrigBot
from krigbot.i18n import t
from tests.standin import DiscordStandIn, Message, User
from tests.standin.fixtures import SampleWorld
from tests.support.players import (
    ChosenSeeds,
    answer_of,
    challenge_message,
    enabled_buttons,
    flip,
    press,
    settled,
    start_game,
    text_of,
)
from tests.support.steal_war import STEAL_ONE, choose_top, play_to_choice, start_steal_war

LONG_SEED = 17
"""Standard: 117 rounds."""


async def ask(standin: DiscordStandIn, world: SampleWorld, command: str, user: User) -> Message:
    """Run ``/krig <command>`` in the Norwegian channel and return the message it answered with."""
    rec = await standin.slash(f"krig {command}", user=user, channel=world.no_channel)
    message = (await answer_of(standin, rec)).message
    assert message is not None
    return message


def yes(game_id: int) -> str:
    return f"krig:finish:{game_id}:yes"


async def test_a_finish_request_goes_grey_and_says_so_when_the_game_is_cancelled(
    standin: DiscordStandIn, world: SampleWorld, bot: KrigBot
) -> None:
    table = await start_game(standin, world.no_channel, world.alice, world.bob)
    await flip(standin, world.no_channel, world.alice)
    request = await ask(standin, world, "finish", world.alice)
    assert enabled_buttons(request) == [yes(table.game_id), f"krig:finish:{table.game_id}:no"]

    await ask(standin, world, "cancel", world.moderator)
    await settled()

    assert enabled_buttons(request) == []
    assert t("nb", "finish.game_ended") in text_of(request)
    assert "Venter på" not in text_of(request)


async def test_a_finish_request_and_a_forfeit_confirmation_go_grey_when_the_game_ends_otherwise(
    standin: DiscordStandIn, world: SampleWorld, bot: KrigBot, monkeypatch: pytest.MonkeyPatch
) -> None:
    table = await start_game(standin, world.no_channel, world.alice, world.bob)
    request = await ask(standin, world, "finish", world.alice)
    confirm = await ask(standin, world, "forfeit", world.alice)
    asked = await ask(standin, world, "forfeit", world.bob)

    # Bob gives up: the game is over, so Alice's confirmation and the request can do nothing.
    await press(standin, asked, f"krig:forfeit:{table.game_id}:{world.bob.id}:yes", world.bob)
    await settled()

    assert enabled_buttons(request) == []
    assert t("nb", "finish.game_ended") in text_of(request)
    assert enabled_buttons(confirm) == []
    assert confirm.content == t("nb", "forfeit.game_ended")


async def test_a_newer_finish_request_greys_the_older_one(
    standin: DiscordStandIn, world: SampleWorld, bot: KrigBot
) -> None:
    await start_game(standin, world.no_channel, world.alice, world.bob)
    older = await ask(standin, world, "finish", world.alice)

    newer = await ask(standin, world, "finish", world.bob)
    await settled()

    assert enabled_buttons(older) == []
    assert t("nb", "finish.replaced") in text_of(older)
    assert len(enabled_buttons(newer)) == 2


async def test_a_rematch_button_goes_grey_once_a_new_game_is_challenged(
    standin: DiscordStandIn, world: SampleWorld, bot: KrigBot
) -> None:
    table = await start_game(standin, world.no_channel, world.alice, world.bob)
    asked = await ask(standin, world, "forfeit", world.bob)
    await press(standin, asked, f"krig:forfeit:{table.game_id}:{world.bob.id}:yes", world.bob)
    await settled()
    (end,) = [m for m in standin.messages(world.no_channel) if enabled_buttons(m)]
    assert enabled_buttons(end) == [f"krig:rematch:{table.game_id}"]

    await challenge_message(standin, world.no_channel, world.carol, world.bob)
    await settled()

    assert enabled_buttons(end) == []


async def test_a_steal_war_table_played_out_by_finish_stops_waiting_and_counting_down(
    standin: DiscordStandIn, world: SampleWorld, bot: KrigBot, seeds: ChosenSeeds
) -> None:
    plan = STEAL_ONE
    table, players = await start_steal_war(standin, world, seeds, plan)
    await play_to_choice(standin, table, plan, players)
    waiting = t("nb", "steal.waiting", names="")[:8]
    assert waiting in text_of(table)  # a battle waits for a choice, with its countdown
    request = await ask(standin, world, "finish", players[0])
    game_id = int(yes_id(request).split(":")[2])

    await press(standin, request, yes(game_id), players[1])
    await settled()

    assert enabled_buttons(table) == []
    shown = text_of(table)
    assert waiting not in shown
    assert "<t:" not in shown  # no countdown left
    assert t("nb", "steal.superseded") in shown


def yes_id(message: Message) -> str:
    """Return the custom id of a finish request's Yes button."""
    (custom_id,) = [c for c in message.custom_ids() if c.endswith(":yes")]
    return custom_id


async def test_a_steal_war_table_a_newer_battle_replaced_keeps_its_own_battle(
    standin: DiscordStandIn, world: SampleWorld, bot: KrigBot, seeds: ChosenSeeds
) -> None:
    plan = STEAL_ONE
    _, players = await start_steal_war(standin, world, seeds, plan)
    first = (await flip(standin, world.no_channel, players[0])).message
    assert first is not None
    for card in plan.tops[:1]:
        if card is not None:
            await choose_top(standin, first, players, card)
    before = text_of(first).splitlines()[0]  # "Krig — runde 1"

    second = (await flip(standin, world.no_channel, players[1])).message
    await settled()

    assert second is not None
    assert text_of(first).splitlines()[0] == before
    assert text_of(second).splitlines()[0] != before
    assert t("nb", "steal.superseded") in text_of(first)
    assert enabled_buttons(first) == []
    assert enabled_buttons(second)
