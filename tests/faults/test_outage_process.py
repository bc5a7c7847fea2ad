"""PostgreSQL stopped for a while in the middle of a game, with the real ``python bot.py``.

The server here commits without waiting for the disk (``synchronous_commit=off``, as the test
clusters run, and as some servers are set up for speed), so an immediate stop (``pg_ctl stop
-m immediate``, a crash, a power cut) loses the commits of the last moments: the database
comes back a round behind what the players were shown. The bot still holds that round; the
first press after the outage must play the next one on it, not play the lost round again.
"""

from __future__ import annotations

import asyncio
import signal
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from krigbot.i18n import t
from tests.standin import DiscordStandIn, InteractionRecord, Message
from tests.standin.fixtures import SampleWorld
from tests.support.players import answer_of, flip_button, text_of
from tests.support.postgres import Cluster, start_cluster
from tests.support.processes import BotProcess

pytestmark = pytest.mark.slow

WAL_WRITER_DELAY = ("-c", "wal_writer_delay=10s")
"""The server flushes unwaited commits this long after them: the round before a stop is lost."""


@pytest.fixture
def lossy_cluster() -> Iterator[Cluster]:
    """Run a cluster of the test's own that loses the commits of its last seconds on a crash."""
    cluster = start_cluster(settings=WAL_WRITER_DELAY)
    try:
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture
async def pg_process(
    standin: DiscordStandIn, tmp_path: Path, lossy_cluster: Cluster
) -> AsyncIterator[BotProcess]:
    (tmp_path / "data").mkdir(parents=True, exist_ok=True)
    url = lossy_cluster.create_database()
    process = BotProcess(standin, tmp_path, KRIG_DATABASE_URL=url)
    try:
        yield process
    finally:
        await process.stop()


def crash(cluster: Cluster) -> None:
    """Stop the server as ``pg_ctl stop -m immediate`` does: no checkpoint, no flush."""
    cluster.process.send_signal(signal.SIGQUIT)
    cluster.process.wait(timeout=30)


def title(shown: Message | None) -> str:
    assert shown is not None
    return str(shown.embeds[0]["title"]) if shown.embeds else text_of(shown)


@pytest.mark.parametrize("how", ["slash", "button"])
async def test_after_an_immediate_stop_every_flip_plays_the_next_round(
    standin: DiscordStandIn,
    standin_world: SampleWorld,
    pg_process: BotProcess,
    lossy_cluster: Cluster,
    how: str,
) -> None:
    w = standin_world
    await pg_process.start()
    challenge = await standin.slash(
        "krig start", user=w.alice, channel=w.no_channel, options={"opponent": w.bob}
    )
    table = (await answer_of(standin, challenge, 10, shows=True)).message
    assert table is not None
    accepted = await standin.click(table, "krig:accept:1", user=w.bob)
    await answer_of(standin, accepted, 10, shows=True)

    async def flip() -> Message:
        """Flip as the player would, and return the message the answer shows."""
        nonlocal table
        assert table is not None
        rec: InteractionRecord
        if how == "slash":
            rec = await standin.slash("flip", user=w.alice, channel=w.no_channel)
        else:
            rec = await standin.click(table, flip_button(table), user=w.alice)
        answer = await answer_of(standin, rec, 15)
        shown = answer.message if answer.message is not None else rec.original
        assert shown is not None
        if not answer.ephemeral:
            table = shown
        return shown

    for _ in range(5):
        await flip()
    # Everything up to round 5 reaches the disk; round 6 is committed, shown, then lost.
    lossy_cluster.psql("SET synchronous_commit = on; CREATE TABLE flushed ()")
    sixth = title(await flip())  # a pressed message is edited later: its title now
    await asyncio.to_thread(crash, lossy_cluster)
    refused = await flip()
    await asyncio.to_thread(lossy_cluster.resume)
    url = pg_process.settings["KRIG_DATABASE_URL"]
    lost_to = lossy_cluster.psql("SELECT round FROM games", url)
    after = [title(await flip()) for _ in range(6)]

    assert sixth == t("nb", "table.title", round=6)
    assert refused.ephemeral
    assert text_of(refused) == t("nb", "err.storage")
    assert lost_to == "5"  # the stop did lose the sixth round's commit
    assert after == [t("nb", "table.title", round=n) for n in range(7, 13)]
    assert lossy_cluster.psql("SELECT round FROM games", url) == "12"
