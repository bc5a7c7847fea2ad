"""``KRIG_SHARDS=auto``: real `python bot.py` processes claim a sharded stand-in's shards in one
PostgreSQL database, spread them evenly, take a killed one's over and hand theirs over on SIGTERM.

Each process is the real one, as a user runs it; who holds which shard is read from their logs
as they write them, and the database from outside.
"""

from __future__ import annotations

import asyncio
import os
import random
import signal
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

import pytest

from krigbot.config import shard_of
from krigbot.i18n import t
from tests.standin import (
    DiscordStandIn,
    EventLog,
    GatewayEvent,
    InteractionRecord,
    Message,
    StandInTimeout,
)
from tests.support.cluster import (
    IDENTIFY_SECONDS,
    AutoProcess,
    Claims,
    deal,
    end_processes,
    guilds_on,
    seat_games,
)
from tests.support.flip_stream import Table, public_answer, round_shown
from tests.support.next_release import PROGRAM as NEXT
from tests.support.players import text_of
from tests.support.postgres import Cluster
from tests.support.processes import BOT, ROOT, failure_line
from tests.support.tcp_proxy import CuttableProxy

pytestmark = pytest.mark.slow

ANSWER_SECONDS = 60.0
"""The longest a flip's answer may take (a shard taken over connects first)."""
CHALLENGE_SECONDS = 25
"""How long a challenge waits: past a takeover (10-14 s), so the process taking over expires it."""


@pytest.fixture
def claims(standin: DiscordStandIn) -> Claims:
    """Return what the processes' logs say each holds."""
    return Claims(standin)


class MakeProcess(Protocol):
    """Makes an auto process on the test's database (at ``url``, if given: a way to it), of this
    release (``bot.py``) or of another (its script)."""

    def __call__(
        self,
        url: str | None = None,
        *,
        release: Path = BOT,
        settings: dict[str, str] | None = None,
    ) -> AutoProcess: ...


@pytest.fixture
async def processes(
    standin: DiscordStandIn, tmp_path: Path, postgres: Cluster, pg_dsn: str, claims: Claims
) -> AsyncIterator[MakeProcess]:
    """Return a maker of auto processes on one PostgreSQL database; every one is ended after."""
    (tmp_path / "data").mkdir()
    made: list[AutoProcess] = []

    def make(
        url: str | None = None, *, release: Path = BOT, settings: dict[str, str] | None = None
    ) -> AutoProcess:
        settings = {"KRIG_CHALLENGE_SECONDS": str(CHALLENGE_SECONDS), **(settings or {})}
        if release != BOT:
            # A script outside the checkout's top folder: the checkout on its path, after the
            # stand-in's own.
            path = standin.subprocess_env()["PYTHONPATH"]
            settings["PYTHONPATH"] = os.pathsep.join([path, str(ROOT)])
        name = f"bot-{len(made)}"
        process = AutoProcess(standin, tmp_path, url or pg_dsn, name, claims, settings, release)
        made.append(process)
        return process

    try:
        yield make
    finally:
        await end_processes(standin, made)


async def flip_everywhere(standin: DiscordStandIn, tables: list[Table]) -> None:
    """Flip once at every table and check that each answer shows the next round."""
    for table in tables:
        before = table.acknowledged
        rec = await standin.slash("flip", user=table.players[0], channel=table.newest.channel)
        table.newest = await public_answer(rec, ANSWER_SECONDS)
        assert round_shown(table.newest) == before + 1, text_of(table.newest)
        table.acknowledged = before + 1


def shard_of_table(standin: DiscordStandIn, table: Table) -> int:
    """Return the shard of a table's server."""
    guild = table.newest.channel.guild
    assert guild is not None
    return shard_of(guild.id, standin.shard_count)


@pytest.mark.standin(shard_count=4, identify_interval=IDENTIFY_SECONDS)
async def test_three_processes_share_four_shards_and_take_over_a_killed_one_s(
    standin: DiscordStandIn,
    processes: MakeProcess,
    claims: Claims,
    postgres: Cluster,
    pg_dsn: str,
) -> None:
    first, second, third = processes(), processes(), processes()
    await first.start()
    assert await claims.settled([4]) == {"bot-0": frozenset({0, 1, 2, 3})}
    await second.start()
    await claims.settled([2, 2])
    await third.start()
    held = await claims.settled([2, 1, 1])
    tables = await seat_games(standin, guilds_on(standin, range(4), per_shard=1))
    await flip_everywhere(standin, tables)

    # SIGKILL the process holding one shard: the others take it over when its lease runs out.
    lonely = next(p for p in (first, second, third) if len(held[p.name]) == 1)
    (shard,) = held[lonely.name]
    # A challenge open on its shard: its expiry is a deadline of the process that dies.
    guild = next(g for g in standin.guilds.values() if shard_of(g.id, 4) == shard)
    channel = standin.add_channel(guild, "open")
    alice, bob = standin.add_user("open-a", "Alice"), standin.add_user("open-b", "Bob")
    for user in (alice, bob):
        standin.add_member(guild, user)
    started = await standin.slash(
        "krig start", user=alice, channel=channel, options={"opponent": bob}
    )
    challenge = (await started.response(timeout=ANSWER_SECONDS)).message
    assert challenge is not None
    # Answered in the channel's turn after the challenge's, which remembers its message (what
    # a restored expiry edits) before it gives the turn up.
    status = await standin.slash("krig status", user=alice, channel=channel)
    await status.response(timeout=ANSWER_SECONDS)
    expired = standin.watch(channel)
    after = len(standin.gateway_events)
    await lonely.signal(signal.SIGKILL)
    await claims.settled([2, 2])

    def ready(e: GatewayEvent) -> bool:
        return e.kind == "ready" and e.shard[0] == shard

    await standin.gateway_events.wait(ready, start=after, timeout=ANSWER_SECONDS, what="ready")
    # The next /flip in each server is answered, by whoever holds its shard now, and plays the
    # next round: none was lost, none played twice.
    await flip_everywhere(standin, tables)
    survivors = [p for p in (first, second, third) if p is not lonely]
    taker = next(p for p in survivors if shard in claims.now[p.name].holds)
    assert "took over shards" in taker.log()
    # The dead process's deadline is the taker's: the challenge expires there, once.
    await expired.next(
        "edit", predicate=lambda e: e.message.id == challenge.id, timeout=ANSWER_SECONDS
    )
    assert f"took over shards {shard}: 1 open challenges" in taker.log()
    stored = postgres.psql(f"SELECT status FROM games WHERE channel_id = {channel.id}", pg_dsn)
    assert stored == "expired"

    # SIGTERM: the leaving process hands its shards over at once, before their leases run out.
    leaving = next(p for p in survivors if p is not taker)
    await leaving.signal(signal.SIGTERM)
    assert "handed shards" in leaving.log()
    await claims.settled([4])
    await flip_everywhere(standin, tables)

    # A rolling restart: each process in turn stops (handing its shards over) and starts again
    # (taking its part back from the busiest); every server answers between the two.
    await leaving.start()
    await claims.settled([2, 2])
    for process in (taker, leaving):
        await process.signal(signal.SIGTERM)
        await claims.settled([4])
        await flip_everywhere(standin, tables)
        await process.start()
        await claims.settled([2, 2])
        await flip_everywhere(standin, tables)

    rounds = postgres.psql(
        "SELECT string_agg(round::text, ',' ORDER BY id) FROM games WHERE status = 'running'",
        pg_dsn,
    )
    assert rounds == ",".join(str(table.acknowledged) for table in tables)
    assert {shard_of_table(standin, table) for table in tables} == {0, 1, 2, 3}


SLOW_IDENTIFY = 1.5
"""A pause between identifies that makes eight shards take longer to connect than a lease lasts
(Discord's own 5 s makes two or three do)."""


@pytest.mark.standin(shard_count=8, identify_interval=SLOW_IDENTIFY)
async def test_a_process_whose_shards_take_longer_than_a_lease_to_connect_keeps_them(
    standin: DiscordStandIn, processes: MakeProcess, claims: Claims
) -> None:
    slow = {"KRIG_IDENTIFY_SECONDS": str(SLOW_IDENTIFY)}
    first = processes(settings=slow)
    await first.start()
    # It renews its leases while its shards wait for their turns to connect, one by one.
    assert await claims.settled([8]) == {"bot-0": frozenset(range(8))}
    second = processes(settings=slow)
    await second.start()
    await claims.settled([4, 4])
    assert "stopped serving" not in first.log()
    # The second took only what the first had given up: never two sessions on one shard.
    assert overlaps(standin) == []


@pytest.mark.standin(shard_count=2, identify_interval=IDENTIFY_SECONDS)
async def test_a_process_paused_past_its_lease_writes_nothing_when_it_comes_back(
    standin: DiscordStandIn,
    processes: MakeProcess,
    claims: Claims,
    postgres: Cluster,
    pg_dsn: str,
) -> None:
    first, second = processes(), processes()
    await first.start()
    await second.start()
    held = await claims.settled([1, 1])
    tables = await seat_games(standin, guilds_on(standin, range(2), per_shard=1))
    await flip_everywhere(standin, tables)

    paused = first
    (shard,) = held[paused.name]
    (table,) = [each for each in tables if shard_of_table(standin, each) == shard]
    after = len(standin.gateway_events)
    paused.pause()
    # A flip that reaches the paused process: it lies unread until the process runs again.
    stale = await standin.slash("flip", user=table.players[1], channel=table.newest.channel)
    await claims.settled([2])

    def ready(e: GatewayEvent) -> bool:
        return e.kind == "ready" and e.shard[0] == shard

    await standin.gateway_events.wait(ready, start=after, timeout=ANSWER_SECONDS, what="ready")
    await flip_everywhere(standin, tables)  # the other process plays on in its server

    lapsed = paused.lines.cursor()
    paused.resume()
    # Back, it finds its lease gone and stops serving the shard. The flip it was sent is either
    # read first and played on its old copy of the game, and then the database refuses the
    # write (its lease's epoch is no longer the shard's), or dropped with the shard's
    # connection: either way the game stays as the other process left it.
    await lapsed.next(
        lambda line: "stopped serving shards" in line,
        timeout=ANSWER_SECONDS,
        what="the paused process stopping",
    )
    # Then it takes its part again, which it does only after it has run a while.
    await claims.settled([1, 1])
    assert not stale.acknowledged  # too late for Discord: nobody saw a round from it
    # The stand-in saw both connections on the shard at once: the database is what held the
    # paused process back.
    assert [e.shard[0] for e in overlaps(standin)] == [shard]
    rounds = postgres.psql("SELECT string_agg(round::text, ',' ORDER BY id) FROM games", pg_dsn)
    assert rounds == ",".join(str(each.acknowledged) for each in tables)

    # The next flips are answered wherever they land.
    await flip_everywhere(standin, tables)


def overlaps(standin: DiscordStandIn) -> list[GatewayEvent]:
    """Return every IDENTIFY of a shard another connection still served."""
    return [e for e in standin.gateway_events.items if e.kind == "overlap"]


def stored_rounds(postgres: Cluster, pg_dsn: str) -> str:
    """Return the rounds of the running games, in the order they were started."""
    return postgres.psql(
        "SELECT string_agg(round::text, ',' ORDER BY id) FROM games WHERE status = 'running'",
        pg_dsn,
    )


@pytest.mark.standin(shard_count=4, identify_interval=IDENTIFY_SECONDS)
@pytest.mark.parametrize("link", ["refused", "silent"])
async def test_a_process_cut_off_from_postgresql_gives_its_shards_up_and_takes_a_part_again(
    standin: DiscordStandIn,
    processes: MakeProcess,
    claims: Claims,
    postgres: Cluster,
    pg_dsn: str,
    link: str,
) -> None:
    async with CuttableProxy.to_postgres(postgres.socket_dir) as proxy:
        # It reaches PostgreSQL through the proxy, and Discord directly.
        cut = processes(proxy.url(pg_dsn))
        await cut.start()
        await claims.settled([4])
        others = processes(), processes()
        for process in others:
            await process.start()
        held = await claims.settled([2, 1, 1])
        tables = await seat_games(standin, guilds_on(standin, range(4), per_shard=1))
        await flip_everywhere(standin, tables)

        newest_epoch = int(postgres.psql("SELECT max(epoch) FROM shard_claims", pg_dsn))
        lines = cut.lines.cursor()
        after = len(standin.gateway_events)
        # Its connections closed and new ones refused, or every packet dropped (nothing closed).
        proxy.cut() if link == "refused" else proxy.stall()
        # It cannot renew: it stops serving its shards before their leases can run out...
        await lines.next(
            lambda line: "stopped serving shards" in line,
            timeout=ANSWER_SECONDS,
            what="the cut-off process stopping",
        )
        # ...and the others take them over once they have.
        await claims.settled([0, 2, 2])
        for shard in held[cut.name]:

            def ready(e: GatewayEvent, shard: int = shard) -> bool:
                return e.kind == "ready" and e.shard[0] == shard

            await standin.gateway_events.wait(
                ready, start=after, timeout=ANSWER_SECONDS, what=f"shard {shard} taken over"
            )
        # Every server answers, in the cut-off process's too, with the next round.
        await flip_everywhere(standin, tables)
        assert claims.now[cut.name].holds == frozenset()
        assert "could not renew the shards' leases" in cut.log()
        if link == "refused":
            assert proxy.refused > 0  # it kept trying to reach PostgreSQL meanwhile

        # Healed, it takes a fair part again, with new leases; every server answers.
        proxy.restore()
        again = await claims.settled([2, 1, 1])
        assert again[cut.name]
        assert cut.proc is not None
        epochs = postgres.psql(
            f"SELECT string_agg(epoch::text, ',') FROM shard_claims "
            f"WHERE owner LIKE '%:{cut.proc.pid}:%'",
            pg_dsn,
        )
        assert all(int(epoch) > newest_epoch for epoch in epochs.split(","))
        await flip_everywhere(standin, tables)
        assert stored_rounds(postgres, pg_dsn) == ",".join(
            str(table.acknowledged) for table in tables
        )
        # Never two connections serving one shard: the one cut off closed its own before the
        # others identified, and they theirs before it came back.
        assert overlaps(standin) == []


SET_UP_ERROR_STATUS = 2
"""bot.py's exit status for a start a person must mend (``SET_UP_ERROR``)."""

PROBE_SECONDS = 2.0
"""How long a stream waits for a flip's answer before it sends the next (a later answer still
counts: every answer is read again at the end)."""


@dataclass
class Flips:
    """One channel's stream of flips: each flip sent with the game it was for, each round shown."""

    table: Table
    sent: list[tuple[int, InteractionRecord]] = field(default_factory=list)
    answered: EventLog[int] = field(default_factory=EventLog)
    over: bool = False
    """Its game ended and the next was not dealt (yet)."""


async def keep_flipping(standin: DiscordStandIn, flips: Flips, stop: asyncio.Event) -> None:
    """Flip in one channel, one flip after the other, until ``stop``; deal anew at a game's end."""
    table = flips.table
    turn = random.Random(table.channel_index)
    while not stop.is_set():
        channel = table.newest.channel
        rec = await standin.slash("flip", user=table.players[turn.randrange(2)], channel=channel)
        flips.sent.append((table.game_id, rec))
        try:
            answer = await public_answer(rec, PROBE_SECONDS)
        except (StandInTimeout, AssertionError) as exc:
            if end_shown(standin, flips):
                pass  # the game's end came, to a flip answered after its stream stopped waiting
            elif no_game(exc):
                await ended_late(standin, flips)
            else:
                continue  # sent to a process just killed, or raced by a late answer: the next tells
        else:
            number = round_shown(answer)
            if number is not None:
                table.newest = answer
                flips.answered.append(number)
                continue
        alice, bob = table.players
        flips.over = True
        while not stop.is_set():  # the game is over: the same players start another
            try:
                table = flips.table = await deal(standin, channel, alice, bob, table.channel_index)
            except (StandInTimeout, AssertionError):
                continue  # lost with a process killed, or still open there until it expires
            flips.over = False
            flips.answered.append(0)
            break


@asynccontextmanager
async def flipping(standin: DiscordStandIn, tables: list[Table]) -> AsyncIterator[list[Flips]]:
    """Keep a stream of flips going at each table for the block; return the streams."""
    flows = [Flips(table, answered=EventLog(standin.guard)) for table in tables]
    stop = asyncio.Event()
    streams = [asyncio.create_task(keep_flipping(standin, flow, stop)) for flow in flows]
    for stream in streams:
        standin.watch_task(stream)
    try:
        yield flows
    finally:
        stop.set()
        for stream in streams:
            standin.unwatch_task(stream)
        await asyncio.gather(*streams)


async def every_server_answers(flows: list[Flips], what: str) -> None:
    """Wait until every stream has had an answer to a flip sent after this moment."""
    # The second answer from now: the flip it answers was sent after this moment.
    marks = [len(flow.answered) for flow in flows]
    for flow, mark in zip(flows, marks, strict=True):
        await flow.answered.wait(start=mark + 1, timeout=ANSWER_SECONDS, what=what)


def shown_by(rec: InteractionRecord) -> list[Message]:
    """Return what a flip showed everyone, late answers included."""
    return [
        message
        for message in [rec.original, *rec.followups.items]
        if message is not None and not message.ephemeral and not message.loading
    ]


def end_shown(standin: DiscordStandIn, flips: Flips) -> bool:
    """Tell whether the channel was shown the stream's game's end: a flip answered with it (a
    table without Flip), or the message a process posts for an end whose answer was lost."""
    game_id = flips.table.game_id
    answered = any(
        round_shown(message) is None
        for game, rec in flips.sent
        if game == game_id
        for message in shown_by(rec)
    )
    channel = flips.table.newest.channel
    return answered or any(
        late_end(game_id, message) for message in standin.messages(channel, include_ephemeral=False)
    )


def late_end(game_id: int, message: Message) -> bool:
    """Tell whether a message is the end of a game shown after the process that ended it died."""
    return t("nb", "end.after_restart", game=game_id) in text_of(message)


def no_game(refused: BaseException) -> bool:
    """Tell whether a flip was refused because its channel's game had ended."""
    return t("nb", "err.no_game") in str(refused)


async def ended_late(standin: DiscordStandIn, flips: Flips) -> None:
    """Wait for the end of a game that a round ended whose answer was lost (its process was
    killed between the commit and the answer): whoever takes the shard over shows it."""
    game_id = flips.table.game_id
    await standin.channel_events.wait(
        lambda event: event.kind == "create" and late_end(game_id, event.message),
        timeout=ANSWER_SECONDS,
        what=f"the end of game {game_id}, shown after its process was killed",
    )


def rounds_shown(flips: list[Flips]) -> list[tuple[int, int]]:
    """Return every (game, round) an answer showed, late answers included, once per flip."""
    shown: list[tuple[int, int]] = []
    for each in flips:
        for game, rec in each.sent:
            numbers = {round_shown(message) for message in shown_by(rec)}
            shown.extend((game, number) for number in numbers if number is not None)
    return shown


@pytest.mark.standin(shard_count=4, identify_interval=IDENTIFY_SECONDS)
async def test_each_process_killed_in_turn_under_a_stream_of_flips_loses_and_doubles_no_round(
    standin: DiscordStandIn,
    processes: MakeProcess,
    claims: Claims,
    postgres: Cluster,
    pg_dsn: str,
) -> None:
    trio = [processes(), processes(), processes()]
    for process in trio:
        await process.start()
    await claims.settled([2, 1, 1])
    tables = await seat_games(standin, guilds_on(standin, range(4), per_shard=1))
    async with flipping(standin, tables) as flows:
        await every_server_answers(flows, "a first answer")
        for victim in trio:
            await victim.signal(signal.SIGKILL)
            # The survivors take its shards when its leases run out, and every server answers
            # again, those of its shards by whoever took them.
            await claims.settled([2, 2])
            await every_server_answers(flows, f"answers after {victim.name} was killed")
            await victim.start()
            await claims.settled([2, 1, 1])
            await every_server_answers(flows, f"answers after {victim.name} came back")

    await no_round_lost_or_doubled(standin, flows, postgres, pg_dsn)


async def no_round_lost_or_doubled(
    standin: DiscordStandIn, flows: list[Flips], postgres: Cluster, pg_dsn: str
) -> None:
    """Check the streams' games against the database: no round shown twice, none shown but not
    stored, each running game where its last answer left it; and never two sessions on a shard."""
    # One more flip in each channel, answered: every flip before it has been played or dropped.
    for flow in flows:
        table = flow.table
        if flow.over or end_shown(standin, flow):
            continue  # nothing to flip: an answer (maybe a late one) showed its game's end
        rec = await standin.slash("flip", user=table.players[0], channel=table.newest.channel)
        flow.sent.append((table.game_id, rec))
        try:
            await public_answer(rec, ANSWER_SECONDS)
        except AssertionError as exc:
            if not no_game(exc):
                raise
            await ended_late(standin, flow)  # its last round's answer was lost with a process
    shown = rounds_shown(flows)
    assert len(shown) == len(set(shown)), "a round was shown twice"
    stored = postgres.psql("SELECT string_agg(id || ':' || round, ',') FROM games", pg_dsn)
    rounds = {int(game): int(at) for game, at in (item.split(":") for item in stored.split(","))}
    newest: dict[int, int] = {}
    for game, number in shown:
        newest[game] = max(newest.get(game, 0), number)
    lost = {
        game: (rounds[game], number) for game, number in newest.items() if rounds[game] < number
    }
    assert lost == {}, "a round shown is not in the database (stored, shown)"
    # Each channel's running game stands where its last answer left it.
    running = [flow.table.game_id for flow in flows if not (flow.over or end_shown(standin, flow))]
    assert [rounds[game] for game in running] == [newest[game] for game in running]
    assert overlaps(standin) == []


@pytest.mark.standin(shard_count=4, identify_interval=IDENTIFY_SECONDS)
async def test_a_rolling_upgrade_across_a_migration_loses_and_doubles_no_round(
    standin: DiscordStandIn,
    processes: MakeProcess,
    claims: Claims,
    postgres: Cluster,
    pg_dsn: str,
) -> None:
    # The release before (`python bot.py`) serves the shards on its schema.
    olds = [processes(), processes(), processes()]
    for process in olds:
        await process.start()
    await claims.settled([2, 1, 1])
    before = int(postgres.psql("SELECT max(version) FROM krig_schema_version", pg_dsn))
    tables = await seat_games(standin, guilds_on(standin, range(4), per_shard=1))
    async with flipping(standin, tables) as flows:
        await every_server_answers(flows, "a first answer")
        # The next release starts beside them and migrates the database as they go on serving.
        news = [processes(release=NEXT)]
        await news[0].start()
        await claims.settled([1, 1, 1, 1])
        after = int(postgres.psql("SELECT max(version) FROM krig_schema_version", pg_dsn))
        assert after == before + 1
        await every_server_answers(flows, "answers once the database was migrated")

        # The release before, started now, refuses the newer schema in one line.
        late = processes()
        await late.start()
        assert late.proc is not None
        assert await asyncio.wait_for(late.proc.wait(), ANSWER_SECONDS) == SET_UP_ERROR_STATUS
        said = failure_line(late.log())
        assert f"schema version {after}" in said, said
        assert f"versions up to {before}" in said, said

        # Each process of the release before is replaced in turn by one of the next.
        for old in olds:
            await old.signal(signal.SIGTERM)
            await claims.settled([2, 1, 1])
            await every_server_answers(flows, f"answers after {old.name} stopped")
            news.append(processes(release=NEXT))
            await news[-1].start()
            await claims.settled([1, 1, 1, 1])
            await every_server_answers(flows, f"answers after {old.name} was replaced")
        for old in olds:
            assert "Traceback" not in old.log(), old.log()
            assert "ERROR" not in old.log(), old.log()

    await no_round_lost_or_doubled(standin, flows, postgres, pg_dsn)
