"""Tournaments: one open per channel, writes refused over a newer version, match games dealt."""

from __future__ import annotations

import pytest

from krigbot.storage import ChannelBusyError, Storage
from krigbot.storage.tournaments import (
    MatchDeal,
    TournamentBusyError,
    TournamentConflictError,
    TournamentLeaseLostError,
    TournamentRecord,
    TournamentStatus,
)
from tests.support.postgres import Cluster
from tests.support.stored_games import at

GUILD, CHANNEL, THREAD = 7, 70, 71


async def test_a_channel_holds_one_open_tournament_and_a_closed_one_frees_it(
    storage: Storage,
) -> None:
    first = await storage.tournaments.create(
        guild_id=GUILD, channel_id=CHANNEL, state={"name": "Cup"}, now=at(0)
    )

    with pytest.raises(TournamentBusyError):
        await storage.tournaments.create(
            guild_id=GUILD, channel_id=CHANNEL, state={"name": "Again"}, now=at(1)
        )
    assert (await storage.tournaments.open_in(CHANNEL)) == first
    assert [row.id for row in await storage.tournaments.open_in_guild(GUILD)] == [first.id]

    await storage.tournaments.save(first, status="cancelled", state=first.state, now=at(2))

    assert await storage.tournaments.open_in(CHANNEL) is None
    second = await storage.tournaments.create(
        guild_id=GUILD, channel_id=CHANNEL, state={"name": "Again"}, now=at(3)
    )
    assert [row.id for row in await storage.tournaments.open_tournaments()] == [second.id]


async def test_a_write_over_a_version_another_writer_moved_is_refused(storage: Storage) -> None:
    row = await storage.tournaments.create(
        guild_id=GUILD, channel_id=CHANNEL, state={"players": []}, now=at(0)
    )
    mine = await storage.tournaments.save(
        row, status="signup", state={"players": [[1, "Ada"]]}, now=at(1)
    )

    with pytest.raises(TournamentConflictError):
        await storage.tournaments.save(
            row, status="signup", state={"players": [[2, "Bo"]]}, now=at(1)
        )
    stored = await storage.tournaments.get(row.id)
    assert stored is not None
    assert (stored.state, stored.version) == ({"players": [[1, "Ada"]]}, mine.version)


async def test_champions_are_counted_per_player_once_finished(storage: Storage) -> None:
    for channel in (1, 2, 3):
        row = await storage.tournaments.create(
            guild_id=GUILD, channel_id=channel, state={}, now=at(0)
        )
        status: TournamentStatus = "finished" if channel < 3 else "running"
        await storage.tournaments.save(row, status=status, state={}, now=at(1), champion_id=5)

    assert await storage.tournaments.champions(GUILD, [5, 6]) == {5: 2}


def deal(best_of: int) -> MatchDeal:
    return MatchDeal(
        guild_id=GUILD,
        channel_id=THREAD,
        players=(1, 2),
        names=("Ada", "Bo"),
        variant="standard",
        rules={"preset": "standard"},
        seed=42,
        state={"round": 0},
        extra={"tournament": {"id": 3, "round": 1, "match": 0}},
        best_of=best_of,
    )


async def test_a_match_game_is_dealt_running_and_a_best_of_three_is_its_first_game(
    storage: Storage,
) -> None:
    row = await storage.tournaments.deal(deal(3), now=at(0))

    assert (row.status, row.players, row.accepted, row.channel_id) == (
        "running",
        (1, 2),
        (1, 2),
        THREAD,
    )
    assert row.extra["match"] == {"id": row.id, "best_of": 3, "game": 1, "score": [0, 0]}
    assert row.extra["tournament"] == {"id": 3, "round": 1, "match": 0}
    assert await storage.games.active_game(THREAD) == row
    with pytest.raises(ChannelBusyError):
        await storage.tournaments.deal(deal(1), now=at(1))


async def test_a_single_game_match_has_no_match_entry(storage: Storage) -> None:
    row = await storage.tournaments.deal(deal(1), now=at(0))

    assert "match" not in row.extra


async def test_a_players_record_counts_the_finished_tournaments_they_started_in(
    storage: Storage,
) -> None:
    for channel, status in ((1, "finished"), (2, "finished"), (3, "running")):
        row = await storage.tournaments.create(
            guild_id=GUILD, channel_id=channel, state={}, now=at(0)
        )
        row = await storage.tournaments.save(
            row, status="running", state={}, now=at(1), entrants=[5, 6]
        )
        finished: TournamentStatus = "finished" if status == "finished" else "running"
        await storage.tournaments.save(
            row, status=finished, state={}, now=at(2), champion_id=5 if channel == 1 else 6
        )

    assert await storage.tournaments.record(GUILD, 5) == TournamentRecord(played=2, won=1)
    assert await storage.tournaments.record(GUILD, 6) == TournamentRecord(played=2, won=1)
    assert await storage.tournaments.record(GUILD + 1, 5) == TournamentRecord()


async def test_a_write_by_a_process_whose_lease_ran_out_is_refused_as_lost(
    pg_dsn: str, postgres: Cluster
) -> None:
    async with await Storage.open(pg_dsn) as a, await Storage.open(pg_dsn) as b:
        held = (await b.claims.beat("b", 1, 10.0)).held
        row = await b.tournaments.create(
            guild_id=GUILD, channel_id=CHANNEL, state={"players": []}, now=at(0)
        )
        mine = await b.tournaments.save(
            row, status="signup", state={"players": [[1, "Ada"]]}, now=at(1), fence=held[0]
        )
        # b is paused past its lease: even before anyone takes the shard, it writes nothing.
        postgres.psql(
            "UPDATE shard_claims SET expires_at = clock_timestamp() - INTERVAL '1 second'",
            pg_dsn,
        )

        with pytest.raises(TournamentLeaseLostError):
            await b.tournaments.save(
                mine, status="signup", state={"players": []}, now=at(2), fence=held[0]
            )
        taken = (await a.claims.beat("a", 1, 10.0)).held
        with pytest.raises(TournamentLeaseLostError):
            await b.tournaments.save(
                mine, status="cancelled", state={"players": []}, now=at(2), fence=held[0]
            )
        stored = await a.tournaments.get(row.id)
        assert stored is not None
        assert (stored.status, stored.state) == ("signup", {"players": [[1, "Ada"]]})
        # The process that holds the shard now writes over the same version.
        moved = await a.tournaments.save(
            stored, status="running", state={"players": []}, now=at(3), fence=taken[0]
        )
        assert moved.version == stored.version + 1


async def test_a_servers_tournaments_cancelled_since_a_moment_are_found(
    storage: Storage,
) -> None:
    tournaments = storage.tournaments
    early, late, finished, elsewhere, still = [
        await tournaments.create(guild_id=guild, channel_id=channel, state={}, now=at(0))
        for guild, channel in ((GUILD, 1), (GUILD, 2), (GUILD, 3), (GUILD + 1, 4), (GUILD, 5))
    ]
    await tournaments.save(early, status="cancelled", state={}, now=at(1))
    await tournaments.save(late, status="cancelled", state={"reason": "gone"}, now=at(5))
    await tournaments.save(finished, status="finished", state={}, now=at(6))
    await tournaments.save(elsewhere, status="cancelled", state={}, now=at(6))

    found = await tournaments.cancelled_in_guild(GUILD, at(4))

    assert [(row.id, row.state) for row in found] == [(late.id, {"reason": "gone"})]
    assert still.is_open
