"""``python bot.py`` on PostgreSQL: it plays there, and a SIGKILL loses no acknowledged round."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from krigbot.i18n import t
from krigbot.storage import Storage
from tests.support.players import answer_of
from tests.support.processes import BotProcess, three_rounds_played

pytestmark = pytest.mark.slow

if TYPE_CHECKING:
    from pathlib import Path

    from tests.standin import DiscordStandIn
    from tests.standin.fixtures import SampleWorld


async def test_a_bot_killed_between_flips_on_postgresql_keeps_every_round(
    standin: DiscordStandIn, standin_world: SampleWorld, tmp_path: Path, pg_dsn: str
) -> None:
    w = standin_world
    bot = BotProcess(standin, tmp_path, KRIG_DATABASE_URL=pg_dsn)
    try:
        await bot.start()
        table = await three_rounds_played(standin, w)
        await bot.kill()  # right after the third acknowledged flip
        await bot.start()
        pressed = await standin.click(table, "krig:flip:1:3", user=w.bob)
        after = await answer_of(standin, pressed, 10, shows=True)
        assert after.type == 7
        assert after.embeds[0]["title"] == t("nb", "table.title", round=4)
    finally:
        await bot.stop()
    # Nothing went to an SQLite file: the rounds are in PostgreSQL.
    assert not bot.db.exists()
    async with await Storage.open(pg_dsn) as storage:
        row = await storage.games.get_game(1)
    assert row is not None
    assert row.round == 4
