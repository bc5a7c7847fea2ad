"""Games in chats outside servers: their language after a restart, their records, who moderates."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from krigbot.i18n import t
from tests.cogs.helpers import ChosenSeeds, answer_of, flip_button, press, start_game, text_of
from tests.cogs.play_helpers import running_bot
from tests.cogs.test_private import LONG_SEED, nothing_refused
from tests.standin import Channel, DiscordStandIn
from tests.standin.contexts import add_group_dm, install_for
from tests.standin.fixtures import SampleWorld


@pytest.fixture
def group(standin: DiscordStandIn, world: SampleWorld) -> Iterator[Channel]:
    """A group DM of Alice (nb), Bob (sv) and Carol (en); Alice and Bob installed the bot."""
    install_for(standin, world.alice)
    install_for(standin, world.bob)
    yield add_group_dm(standin, world.alice, world.bob, world.carol, name="friends")
    nothing_refused(standin)


async def test_a_group_dms_table_keeps_its_language_after_a_restart_whoever_presses(
    standin: DiscordStandIn, world: SampleWorld, group: Channel, db_path: Path, seeds: ChosenSeeds
) -> None:
    seeds.fix(LONG_SEED)
    async with running_bot(standin, db_path, seeds):
        table = await start_game(standin, group, world.alice, world.bob)
        shown = await press(standin, table.message, flip_button(table.message), world.alice)
        assert t("nb", "table.title", round=1) in text_of(shown)

    async with running_bot(standin, db_path, seeds):
        # Bob reads Swedish; the game was challenged in Norwegian. First a button...
        shown = await press(standin, table.message, flip_button(shown), world.bob)
        assert t("nb", "table.title", round=2) in text_of(shown)
        assert t("sv", "table.title", round=2) not in text_of(shown)

    async with running_bot(standin, db_path, seeds):
        # ... then, after another restart, a command.
        flipped = await answer_of(
            standin, await standin.slash("flip", user=world.bob, channel=group)
        )
        assert t("nb", "table.title", round=3) in text_of(flipped)
