"""Shards: the settings that choose them, the bot running some of them, Discord's REST budget."""

from __future__ import annotations

import asyncio
import fcntl
import re
import signal
import threading
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from krigbot.adapter.identify import IdentifyPacer
from krigbot.bot import KrigBot
from krigbot.config import ConfigError, Settings, Shards, shard_of
from krigbot.i18n import t
from krigbot.monitoring.metrics import RestRate, is_exempt
from krigbot.storage import Storage
from tests.standin import DiscordStandIn, run_bot
from tests.standin.fixtures import SampleWorld
from tests.standin.world import Guild
from tests.support.autoplay import LONG_SEED
from tests.support.gateway import FLIP, connect
from tests.support.handsfree import command, running_bot
from tests.support.players import ChosenSeeds, answer_of, start_game, text_of
from tests.support.processes import SECRET, bot_env, closed_port, failure_line, run_once, spawn
from tests.support.settings import make_settings

__all__ = ["closed_port", "connect"]

TOKEN = "a-token"


def load(**env: str) -> Settings:
    """Return the settings read from ``env`` alone."""
    return Settings.load({"DISCORD_TOKEN": TOKEN, **env}, folder="/nonexistent")


# ------------------------------------------------------------------------------ settings


def test_nothing_set_runs_every_shard_of_discord_s_count() -> None:
    settings = load()
    assert settings.shards == Shards()
    assert settings.shards.owns(12345 << 22)
    assert settings.shards.runs_first
    assert settings.rest_share == 1.0


@pytest.mark.parametrize(
    ("written", "ids"),
    [
        ("0-7", tuple(range(8))),
        ("0,2,4", (0, 2, 4)),
        ("6, 0-2 ,9", (0, 1, 2, 6, 9)),
        ("11", (11,)),
    ],
)
def test_krig_shards_reads_ranges_lists_and_both(written: str, ids: tuple[int, ...]) -> None:
    settings = load(KRIG_SHARD_COUNT="12", KRIG_SHARDS=written)
    assert settings.shards == Shards(12, ids)
    assert settings.rest_share == len(ids) / 12


@pytest.mark.parametrize(
    ("env", "said"),
    [
        ({"KRIG_SHARDS": "0-3"}, "KRIG_SHARDS needs KRIG_SHARD_COUNT"),
        ({"KRIG_SHARD_COUNT": "0"}, "KRIG_SHARD_COUNT must be the number of shards"),
        ({"KRIG_SHARD_COUNT": "four"}, "KRIG_SHARD_COUNT must be the number of shards"),
        ({"KRIG_SHARD_COUNT": "4", "KRIG_SHARDS": "4"}, "shard 4 does not exist"),
        ({"KRIG_SHARD_COUNT": "4", "KRIG_SHARDS": "3-1"}, "runs backwards; write 1-3"),
        ({"KRIG_SHARD_COUNT": "4", "KRIG_SHARDS": "0-2,2"}, "names shard 2 twice"),
        ({"KRIG_SHARD_COUNT": "4", "KRIG_SHARDS": "0;1"}, "like 0-7 or 0,2,4"),
        ({"KRIG_SHARD_COUNT": "4", "KRIG_SHARDS": "1,"}, "like 0-7 or 0,2,4"),
        ({"KRIG_REST_SHARE": "0"}, "KRIG_REST_SHARE must be"),
        ({"KRIG_REST_SHARE": "1.5"}, "KRIG_REST_SHARE must be"),
        ({"KRIG_REST_SHARE": "half"}, "KRIG_REST_SHARE must be"),
        ({"KRIG_REST_PROXY": "proxy:8080"}, "KRIG_REST_PROXY must be the REST proxy's address"),
    ],
)
def test_malformed_shard_settings_say_what_to_write(env: dict[str, str], said: str) -> None:
    with pytest.raises(ConfigError, match=said):
        load(**env)


def test_a_process_owns_the_servers_of_its_shards_and_dms_belong_to_shard_0() -> None:
    shards = Shards(4, (1, 3))
    assert [shards.owns(n << 22) for n in range(8)] == [False, True, False, True] * 2
    assert not shards.owns(None)
    assert Shards(4, (0,)).owns(None)
    assert shard_of(None, 4) == 0
    assert not shards.runs_first
    assert str(shards) == "shards 1,3 of 4"
    assert str(Shards(16, (0, 1, 2, 3, 8))) == "shards 0-3,8 of 16"


def test_the_settings_never_show_the_token_but_show_the_shards() -> None:
    settings = load(KRIG_SHARD_COUNT="8", KRIG_SHARDS="4-7", KRIG_REST_SHARE="0.4")
    assert TOKEN not in repr(settings)
    assert "Shards(count=8, ids=(4, 5, 6, 7), auto=False)" in repr(settings)
    assert settings.rest_share == 0.4


# ------------------------------------------------------------------------------ the REST budget


class Ticks:
    """A clock the test moves."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_the_global_rate_counts_the_last_second_only() -> None:
    ticks = Ticks()
    rate = RestRate(ticks)
    for _ in range(10):
        rate.count()
        ticks.now += 0.1
    ticks.now -= 0.05
    assert rate.per_second() == 10  # the last one 0.05 s ago, the first 0.95 s
    ticks.now += 0.5
    assert rate.per_second() == 5  # the first five are more than a second old
    ticks.now += 1.0
    assert rate.per_second() == 0


def test_room_under_the_limit_comes_when_the_oldest_request_leaves_the_last_second() -> None:
    ticks = Ticks()
    rate = RestRate(ticks)
    budget = 50 * 0.1  # a tenth of Discord's global limit: 4 a second before slowing
    for _ in range(3):
        rate.count()
        ticks.now += 0.125
    assert rate.room_in(budget) == 0.0  # three in the last second: room for a fourth
    rate.count()
    assert rate.room_in(budget) == 0.625  # when the first is a second old
    ticks.now += 0.625
    assert rate.room_in(budget) == 0.0


def test_a_turn_counts_at_once_and_its_request_is_not_counted_again() -> None:
    ticks = Ticks()
    rate = RestRate(ticks)
    budget = 50 * 0.05  # 2 a second before slowing
    assert rate.take_turn(budget) == 0.0
    assert rate.take_turn(budget) == 0.0
    assert rate.take_turn(budget) == 1.0  # a third waiter finds no room, however soon it asks
    rate.count()  # the first turn's request
    rate.count()  # the second's
    assert rate.per_second() == 2
    rate.count()  # a request of another kind: counted
    assert rate.per_second() == 3


@pytest.mark.parametrize(
    ("path", "exempt"),
    [
        ("/api/v10/interactions/123/tok-en/callback", True),
        ("/api/v10/webhooks/42/tok-en", True),
        ("/api/v10/webhooks/42/tok-en/messages/@original", True),
        ("/api/v10/channels/9/messages", False),
        ("/api/v10/channels/9/messages/10", False),
        ("/api/v10/applications/42/commands", False),
    ],
)
def test_interaction_answers_are_left_out_of_the_global_count(path: str, exempt: bool) -> None:
    assert is_exempt(path) is exempt


# ------------------------------------------------------------------------------ a bot of shards


@pytest.fixture
async def sharded_bot(
    standin: DiscordStandIn, storage: Storage, db_path: Path
) -> AsyncIterator[KrigBot]:
    """Return the real bot running shards 1 and 3 of 4, connected to the stand-in."""
    settings = make_settings(db_path, shards=Shards(4, (1, 3)), identify_seconds=0.05)
    bot = KrigBot(settings, storage, guild_ready_timeout=0.05)
    async with run_bot(bot, standin) as running:
        yield running


@pytest.mark.standin(shard_count=4)
async def test_a_bot_of_shards_1_and_3_answers_their_servers_and_never_sees_the_others(
    standin: DiscordStandIn, connect: Any, sharded_bot: KrigBot
) -> None:
    # The other process of the bot: raw sessions of shards 0 and 2.
    others = {shard: await connect() for shard in (0, 2)}
    for shard, raw in others.items():
        assert (await raw.identify((shard, 4)))["t"] == "READY"
    assert sorted(s.shard for s in standin.gateway.active_sessions()) == [
        (0, 4),
        (1, 4),
        (2, 4),
        (3, 4),
    ]
    alice = standin.add_user("alice", locale="nb")
    bob = standin.add_user("bob", locale="nb")
    guilds: dict[int, Guild] = {}
    for shard in range(4):
        guilds[shard] = standin.add_guild(f"on {shard}", shard=shard, locale="nb")
        for user in (alice, bob):
            standin.add_member(guilds[shard], user)
    for shard in (1, 3):
        channel = standin.add_channel(guilds[shard], "krig")
        flipped = await standin.send_interaction(2, FLIP, user=alice, channel=channel)
        answer = await answer_of(standin, flipped, 10)
        assert text_of(answer) == t("nb", "err.no_game")
    for shard, raw in others.items():
        channel = standin.add_channel(guilds[shard], "krig")
        await raw.next_event("GUILD_CREATE")
        rec = await standin.send_interaction(2, FLIP, user=alice, channel=channel)
        assert int((await raw.next_event("INTERACTION_CREATE"))["id"]) == rec.id
    assert {guild.id for guild in sharded_bot.guilds} == {guilds[1].id, guilds[3].id}
    assert sharded_bot.gateway_problem() is None
    assert len(standin.syncs) == 0  # the process running shard 0 syncs the commands


async def test_interaction_answers_and_other_requests_are_counted_apart(
    standin: DiscordStandIn, standin_world: SampleWorld, bot: KrigBot
) -> None:
    def counted(kind: str) -> float:
        value = bot.metrics.registry.get_sample_value("krig_discord_requests_total", {"kind": kind})
        return value or 0.0

    before = {kind: counted(kind) for kind in ("interaction", "global")}
    world = standin_world
    await (await standin.slash("krig rules", user=world.alice, channel=world.no_channel)).response()
    await bot.get_partial_messageable(world.no_channel.id).send("posted")
    moved = {kind: counted(kind) - before[kind] for kind in before}
    assert moved == {"interaction": 1, "global": 1}
    assert bot.metrics.rest.per_second() >= 1


@pytest.mark.slow
async def test_autoplay_keeps_the_process_under_its_share_of_the_global_limit(
    standin: DiscordStandIn, standin_world: SampleWorld, db_path: Path, seeds: ChosenSeeds
) -> None:
    world = standin_world
    seeds.fix(LONG_SEED)
    # A twentieth of Discord's 50 a second: 2.5, so autoplay keeps to 2 edits a second, where
    # its own pace (an edit each 0.02 s) would make dozens.
    async with running_bot(standin, db_path, seeds, autoplay_seconds=0.02, rest_share=0.05) as bot:
        await start_game(standin, world.no_channel, world.alice, world.bob)
        edits = standin.requests.cursor()
        answer = await command(standin, world.no_channel, world.alice, "auto", speed="fast")
        assert answer.message is not None
        edited = rf"^/channels/\d+/messages/{answer.message.id}$"
        for _ in range(7):
            await edits.next(
                lambda r: r.method == "PATCH" and re.match(edited, r.path) is not None, timeout=10
            )
        times = [r.at for r in standin.requests_matching("PATCH", edited)]
        assert bot.rest_turn() > 0.0  # the next edit waits for room
    # Some slack for the moments a request was counted and when it arrived.
    busiest = max(sum(1 for other in times if at - 0.9 < other <= at) for at in times)
    assert busiest <= 2, times


# ------------------------------------------------------------------------------ bot.py


@pytest.mark.standin(max_guilds_per_shard=1)
async def test_too_many_servers_for_one_shard_exits_with_one_line_saying_what_to_set(
    standin: DiscordStandIn, tmp_path: Path
) -> None:
    standin.add_guild("one")
    standin.add_guild("two")
    env = bot_env(
        standin.subprocess_env(),
        DISCORD_TOKEN=SECRET,
        KRIG_DB=str(tmp_path / "krig.db"),
        KRIG_SHARD_COUNT="1",
        KRIG_RENDER_PROCESSES="0",
    )
    status, out, err = await asyncio.to_thread(run_once, env, tmp_path)
    assert status == 2
    line = failure_line(err)
    assert "Discord requires more shards" in line
    assert "KRIG_SHARD_COUNT" in line
    assert SECRET not in out + err


async def test_a_rest_proxy_carries_every_request_to_discord(
    standin: DiscordStandIn, tmp_path: Path, closed_port: int
) -> None:
    # Discord itself is out of reach: only the proxy (here the stand-in) can answer.
    env = bot_env(
        standin.subprocess_env(),
        DISCORD_TOKEN=SECRET,
        KRIG_DB=str(tmp_path / "krig.db"),
        KRIG_RENDER_PROCESSES="0",
        KRIG_TEST_DISCORD_URL=f"http://127.0.0.1:{closed_port}",
        KRIG_REST_PROXY=standin.url + "/",
    )
    proc = await spawn(env, tmp_path, tmp_path / "stderr.txt")
    try:
        watcher = asyncio.create_task(proc.wait())
        standin.watch_task(watcher)
        try:
            await standin.wait_for_ready(timeout=30)
        finally:
            standin.unwatch_task(watcher)
            watcher.cancel()
    finally:
        proc.send_signal(signal.SIGTERM)
        assert await proc.wait() == 0
    assert standin.requests_matching("GET", r"^/users/@me$")
    assert standin.requests_matching("GET", r"^/gateway/bot$")
    assert "Traceback" not in (tmp_path / "stderr.txt").read_text()


async def test_identify_turns_without_a_usable_folder_are_taken_in_the_process_alone(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    not_a_folder = tmp_path / "krig.db"
    not_a_folder.write_text("a file where the turns' folder should be")
    pacer = IdentifyPacer(not_a_folder, interval=0.05)
    await pacer.wait_turn(0)
    await pacer.wait_turn(0)
    assert caplog.text.count("pacing alone") == 1
    assert pacer.folder is None
    assert not_a_folder.read_text() == "a file where the turns' folder should be"


async def test_a_bucket_s_turns_are_kept_in_its_lock_file(tmp_path: Path) -> None:
    first, second = IdentifyPacer(tmp_path, interval=0.05), IdentifyPacer(tmp_path, interval=0.05)
    await first.wait_turn(1)
    taken = float((tmp_path / ".krig-identify-1.lock").read_text())
    await second.wait_turn(1)  # another process's pacer: it waits for the first's turn
    assert float((tmp_path / ".krig-identify-1.lock").read_text()) >= taken + 0.05
    assert not (tmp_path / ".krig-identify-0.lock").exists()


async def test_a_process_waiting_for_another_s_identify_turn_can_stop_at_once(
    tmp_path: Path,
) -> None:
    held = (tmp_path / ".krig-identify-0.lock").open("a+", encoding="ascii")
    fcntl.flock(held, fcntl.LOCK_EX)  # another process is taking bucket 0's turn
    threads = threading.active_count()
    waiting = asyncio.create_task(IdentifyPacer(tmp_path, interval=0.05).wait_turn(0))
    done, _ = await asyncio.wait({waiting}, timeout=0.2)
    assert not done  # its turn stays taken while the other holds the lock

    waiting.cancel()  # a stop (SIGTERM) cancels every task
    with pytest.raises(asyncio.CancelledError):
        await waiting
    # Nothing is left blocked on the lock that a stop would have to wait for.
    assert threading.active_count() == threads
    held.close()


async def test_with_auto_shards_the_live_processes_share_the_global_limit_evenly(
    db_path: Path,
) -> None:
    # A fixed share would be wrong both ways: too little alone, too much beside three others.
    settings = make_settings(db_path, shards=Shards(4, (), auto=True), render_processes=0)
    async with await Storage.open(db_path) as storage:
        bot = KrigBot(settings, storage)  # never started: only its turns are taken
        assert bot.leases is not None
        bot.leases.members = 4  # a quarter of 50: autoplay keeps to 80 % of 12.5 a second
        assert [bot.rest_turn() for _ in range(11)][-2:] == [0.0, pytest.approx(1.0, abs=0.1)]
        bot.leases.members = 1  # alone: the whole 50, of which 40 a second
        assert [bot.rest_turn() for _ in range(29)] == [0.0] * 29


async def test_a_process_with_auto_shards_holding_none_is_healthy(db_path: Path) -> None:
    # Five processes for four shards: one holds none, and waits for a share; nothing is wrong.
    settings = make_settings(db_path, shards=Shards(4, (), auto=True), render_processes=0)
    async with await Storage.open(db_path) as storage:
        bot = KrigBot(settings, storage)  # never started: only its health is asked
        assert bot.gateway_problem() is None
