"""Two processes of the bot holding one shard (a hand-off), each with its own copy of a game.

Both are the real bot on one database and one stand-in whose gateway keeps both sessions of the
shard (``Gateway.overlapping``), so the channel's interactions reach each in turn, and both
restore the same timers and the same autoplay.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from krigbot.bot import KrigBot
from krigbot.engine import load_game
from krigbot.i18n import t
from krigbot.render.embeds import names_of
from krigbot.render.steal import look_text
from tests.cogs.helpers import (
    UPDATE_MESSAGE,
    ChosenSeeds,
    flip_button,
    game_row,
    press,
    start_game,
    text_of,
)
from tests.cogs.play_helpers import command, edit_of, running_bot
from tests.cogs.test_autoplay import LONG_SEED, TITLE, round_shown
from tests.cogs.test_steal_war import STEAL_ONE, look_button, start_steal_war, table_id, top_buttons
from tests.conftest import BACKENDS
from tests.standin import DiscordStandIn
from tests.standin.fixtures import SampleWorld


def autoplaying(bot: KrigBot, channel_id: int) -> bool:
    """Tell whether autoplay plays in a channel in this process."""
    cog = bot.get_cog("Autoplay")
    assert cog is not None
    return bool(cog.playing(channel_id))  # type: ignore[attr-defined]


@pytest.mark.parametrize("backend", BACKENDS)
async def test_autoplay_both_processes_restored_is_played_by_one_and_the_other_says_nothing(
    standin: DiscordStandIn,
    world: SampleWorld,
    db_path: Path,
    database: str | Path,
    seeds: ChosenSeeds,
) -> None:
    standin.gateway.overlapping = True
    seeds.fix(LONG_SEED)
    channel = world.no_channel
    async with running_bot(standin, db_path, seeds, database=database) as first:
        table = await start_game(standin, channel, world.alice, world.bob)
        answer = await command(standin, channel, world.alice, "auto", speed="normal")
        message = answer.message
        assert message is not None
        await edit_of(standin, message, lambda text: t("nb", "table.title", round=2) in text)
        events = len(standin.channel_events)
        # The shard's new session comes up while the old one still plays: both restore it.
        async with running_bot(standin, db_path, seeds, database=database) as second:
            restored = (await game_row(second, table.game_id)).round
            await edit_of(
                standin,
                message,
                lambda text: TITLE.search(text) is not None and round_shown(text) >= restored + 8,
                start=events,
            )
            playing = [autoplaying(bot, channel.id) for bot in (first, second)]
            row = await game_row(second, table.game_id)

    edits = [
        text_of(event.revision)
        for event in standin.channel_events.items[events:]
        if event.kind == "edit" and event.message is message
    ]
    assert not [text for text in edits if t("nb", "auto.hand_flip") in text]
    assert playing.count(True) == 1, playing  # the step that lost left the game to the other
    assert row.extra["autoplay"]["state"] == "running"


@pytest.mark.parametrize("backend", BACKENDS)
async def test_steal_war_presses_reaching_either_process_are_each_made_once(
    standin: DiscordStandIn,
    world: SampleWorld,
    db_path: Path,
    database: str | Path,
    seeds: ChosenSeeds,
) -> None:
    standin.gateway.overlapping = True
    async with (
        running_bot(standin, db_path, seeds, database=database) as first,
        running_bot(standin, db_path, seeds, database=database),
    ):
        # The presses go to each process in turn (the stand-in's turns count every event, so
        # the Look, which posts nothing, makes the next press go to the other process): each
        # acts on a game the other one moved last.
        table, players = await start_steal_war(standin, world, seeds, STEAL_ONE)
        made = 0
        for _ in range(4):
            answer = await press(standin, table, flip_button(table), players[0])
            assert answer.type == UPDATE_MESSAGE, text_of(answer)
            made += 1
            # Bob looks at his next card: as the saved game has it, whoever answers.
            peek = await press(standin, table, look_button(table), players[1])
            row = await game_row(first, table_id(table))
            saved = load_game(row.state or {})
            assert peek.content == look_text(saved, 1, names_of(row), "sv"), text_of(peek)
            tops = top_buttons(table)
            if tops:
                custom_id = sorted(tops)[0]
                seat = int(custom_id.split(":")[4])
                answer = await press(standin, table, custom_id, players[seat])
                assert answer.type == UPDATE_MESSAGE, text_of(answer)
                made += 1
        row = await game_row(first, table_id(table))

    assert row.state is not None
    assert len(row.state["actions"]) == made  # every press, each once
