"""Records for a player's page: names, players, variants, head-to-head and biggest pots."""

from __future__ import annotations

from krigbot.storage import HeadToHead, Storage
from tests.support.stored_games import at, new_game, pr, record_game

A, B, C, D = 1, 2, 3, 4


async def test_display_names_are_the_latest_a_player_played_under_in_the_guild(
    storage: Storage,
) -> None:
    first = await record_game(storage, [pr(A, "win"), pr(B, "loss")], now=at(0))
    second = await record_game(storage, [pr(B, "win"), pr(A, "loss")], now=at(1))
    assert first.names == ("user1", "user2")
    # The names are stored with each game; make the newer game carry new ones.
    renamed = await new_game(storage, players=(A, C), names=["Ada", "Cy"], channel_id=9)
    assert renamed.id > second.id
    assert await storage.records.display_names(1, [A, B, C, 99]) == {A: "user1", B: "user2"}
    await storage.games.end_game(renamed.id, "cancelled", at(2))
    assert await storage.records.display_names(1, [A, B, C]) == {A: "Ada", B: "user2", C: "Cy"}
    assert await storage.records.display_names(2, [A]) == {}
    assert await storage.records.display_names(1, []) == {}


async def test_guild_players_are_everyone_with_a_finished_game_there(storage: Storage) -> None:
    await record_game(storage, [pr(A, "win"), pr(B, "loss")])
    await record_game(storage, [pr(C, "win"), pr(A, "loss")])
    await record_game(storage, [pr(D, "win"), pr(A, "loss")], guild_id=2)
    assert await storage.records.guild_players(1) == [A, B, C]
    assert await storage.records.guild_players(2) == [A, D]


async def test_head_to_head_counts_each_opponents_games_by_who_won_them(
    storage: Storage,
) -> None:
    await record_game(storage, [pr(A, "win"), pr(B, "loss")])
    await record_game(storage, [pr(A, "loss"), pr(B, "win")])
    await record_game(storage, [pr(A, "win"), pr(B, "loss")])
    await record_game(storage, [pr(A, "draw"), pr(C, "draw")])
    # A team game: the partner is no opponent.
    await record_game(storage, [pr(A, "win", team=0), pr(D, "loss", team=1), pr(C, "win", team=0)])
    assert await storage.records.head_to_head(1, A) == [
        HeadToHead(B, games=3, won=2, lost=1, neither=0),
        HeadToHead(C, games=1, won=0, lost=0, neither=1),
        HeadToHead(D, games=1, won=1, lost=0, neither=0),
    ]
    assert await storage.records.head_to_head(1, A, limit=1) == [HeadToHead(B, 3, 2, 1, 0)]
    # The same games seen from the other side: the record mirrors.
    assert (await storage.records.head_to_head(1, B))[0] == HeadToHead(A, 3, 1, 2, 0)
    assert await storage.records.head_to_head(2, A) == []


async def test_variant_records_and_the_biggest_wars_pots(storage: Storage) -> None:
    await record_game(storage, [pr(A, "win", pot=12), pr(B, "loss", pot=4)], now=at(0))
    big = await record_game(storage, [pr(A, "loss", pot=20), pr(B, "win", pot=30)], now=at(1))
    await record_game(storage, [pr(A, "draw", pot=4), pr(B, "draw")], now=at(2))
    (classic,) = await storage.records.variant_records(1, A)
    assert (classic.variant, classic.games, classic.wins, classic.draws, classic.losses) == (
        "classic",
        3,
        1,
        1,
        1,
    )
    pots = await storage.records.biggest_pots(1, A)
    assert [(pot.game_id, pot.biggest_pot, pot.outcome) for pot in pots] == [
        (big.id, 20, "loss"),
        (big.id - 1, 12, "win"),
    ]  # four cards at most is a round without a war: no war's pot
    assert pots[0].finished_at == at(1)
    assert await storage.records.biggest_pots(1, A, limit=1) == pots[:1]
