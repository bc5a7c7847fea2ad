"""Every figure of /krig stats, the leaderboard and history, recounted from the games themselves.

Random games of every preset (2, 3 and 4 players, teams, Steal War), with forfeits at random
points, draws (round limits, repeating games, players out together), best-of matches, and
challenges declined, expired or withdrawn and games cancelled or abandoned, are played through
the game service on a real SQLite database. Then every player's figures, as the storage gives
them to the bot, are compared with a recount from the stored games: their players, their result
(rules §7, and §9: a team's result is both members'), the counters in their saved state, and
for the shorter games the rounds replayed from the seed.
"""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, get_args

import pytest

from krigbot.cogs.boards import PERIODS
from krigbot.engine.replay import replay
from krigbot.engine.rules import PRESETS
from krigbot.i18n import fmt_list, t
from krigbot.render.play import history_line
from krigbot.sessions import GameService, Player, Refusal
from krigbot.sessions.matches import MatchInfo, MatchKeeper, begin_match
from krigbot.storage import (
    HISTORY_STATUSES,
    GameRow,
    GameStatus,
    HeadToHead,
    LeaderboardRow,
    MatchRecord,
    PartnerRecord,
    PlayerStats,
    Storage,
)
from tests.support.players import Clock

pytestmark = pytest.mark.slow

GUILDS = {10: tuple(range(1, 8)), 20: tuple(range(5, 11))}
"""Two servers with players in common: a server's figures hold only its own games."""
CHANNELS = 3
"""Channels per server; a game left running in one is abandoned by the next challenge there."""
REPLAYED_ROUNDS = 150
"""Games up to this long are replayed round by round to recount wars won and the biggest pot."""
EVERYTHING = 10**6
EVERY_STATUS: tuple[GameStatus, ...] = get_args(GameStatus)
Outcome = str


# ----------------------------------------------------------------------------- playing


@dataclass
class Table:
    """The service and what the random games are played with."""

    service: GameService
    clock: Clock
    rng: random.Random

    def player(self, user_id: int) -> Player:
        return Player(user_id, f"Player {user_id}")


def random_options(rng: random.Random, variant: str, players: int) -> dict[str, Any]:
    """Return options a challenge may set: round limits (draws), pickups, shortages."""
    options: dict[str, Any] = {}
    if rng.random() < 0.3:
        options["max_rounds"] = rng.choice((1, 2, 3, 5, 8, 13, 30, 60))
    if variant == "stjel":
        return options  # its other rules are fixed (rules §10)
    if PRESETS[variant].get("teams") and rng.random() < 0.5:
        # A team game with this pickup repeats forever in a third of the deals: a draw (RULES
        # §7), often with a member of each team out of cards since earlier rounds (§9).
        options["pickup"] = "table"
    elif rng.random() < (0.35 if players == 2 else 0.1):
        # Fewer for 3 players and more: finding their repetition ahead of time takes long.
        options["pickup"] = rng.choice(("winner_first", "table", "shuffled"))
    if rng.random() < 0.25:
        options["shortage"] = rng.choice(("lose", "last_card"))
    return options


async def play_session(table: Table, guild_id: int, channel_id: int) -> bool:
    """Challenge in a channel and play it out; return True if a game was left running there."""
    service, rng = table.service, table.rng
    variant = rng.choice(sorted(PRESETS))
    count = 4 if PRESETS[variant].get("teams") else rng.choice((2, 2, 3, 4))
    users = rng.sample(GUILDS[guild_id], count)
    challenger, *opponents = (table.player(user) for user in users)
    try:
        made = await service.challenges.challenge(
            guild_id=guild_id,
            channel_id=channel_id,
            challenger=challenger,
            opponents=opponents,
            variant=variant,
            options=random_options(rng, variant, count),
        )
    except Refusal as refusal:
        if refusal.key != "err.bad_option":  # options this preset does not take
            raise
        return False
    row = made.row
    if rng.random() < 0.15:
        row = await begin_match(service.registry, row, rng.choice((3, 5)))
    ending = rng.random()
    if ending < 0.03:
        await service.challenges.decline(row.id, opponents[0].user_id)
        return False
    if ending < 0.06:
        table.clock.advance(seconds=service.challenges.challenge_ttl.total_seconds() + 1)
        assert await service.challenges.expire(row.id) is not None
        return False
    if ending < 0.08:
        await service.play.cancel(channel_id, challenger.user_id, moderator=False)
        return False
    for opponent in opponents:
        await service.challenges.accept(row.id, opponent.user_id)
    return await play_out(table, channel_id)


async def play_out(table: Table, channel_id: int) -> bool:
    """Play the channel's game, and the next ones of its match, with random moves."""
    service, rng = table.service, table.rng
    while True:
        found = await service.registry.game_in(channel_id)
        if found is None:
            return False
        row, game = found
        assert game is not None
        table.clock.advance(minutes=rng.randint(0, 20))
        move = rng.random()
        if move < 0.01:
            return True  # left to be abandoned
        if move < 0.02:
            await service.play.cancel(channel_id, row.challenger_id, moderator=True)
            return False
        if move < 0.12:
            seat = rng.choice([s for s in range(len(row.players)) if game.in_game[s]])
            try:
                await service.play.forfeit(channel_id, row.players[seat], row.id)
            except Refusal as refusal:
                if refusal.key != "steal.forfeit_in_battle":
                    raise
        elif move < 0.35:
            await service.play.play_on(channel_id, row.id, to_end=True)
        elif move < 0.5:
            seat = rng.choice([s for s in range(len(row.players)) if game.in_game[s]])
            await service.play.flip(channel_id, row.players[seat], rng.randint(1, 50))
        else:
            await service.play.play_on(channel_id, row.id, count=rng.choice((1, 10, 100, 400)))


async def play_many(storage: Storage, seed: int, sessions: int) -> Clock:
    """Play ``sessions`` challenges spread over the servers' channels; return the clock."""
    clock = Clock()
    service = GameService(storage, clock=clock)
    MatchKeeper(service.registry)
    table = Table(service, clock, random.Random(seed))
    left: set[int] = set()
    channels = [(guild, guild * 100 + n) for guild in GUILDS for n in range(CHANNELS)]
    for _ in range(sessions):
        guild_id, channel_id = table.rng.choice(channels)
        if channel_id in left:
            # An idle game is abandoned by the next challenge in its channel.
            clock.advance(seconds=service.challenges.idle_after.total_seconds() + 60)
            left.discard(channel_id)
        else:
            clock.advance(minutes=table.rng.randint(0, 60))
        if await play_session(table, guild_id, channel_id):
            left.add(channel_id)
    return clock


# ----------------------------------------------------------------------------- recount


@dataclass(frozen=True)
class Line:
    """One player's result of one finished game, recounted."""

    game: GameRow
    finished_at: datetime
    user_id: int
    seat: int
    team: int | None
    outcome: Outcome
    wars_won: int
    biggest_pot: int
    rounds: int


def team_result(row: GameRow, seat: int) -> Outcome:
    """Return a seat's result from the stored outcome: in a team game the team's (rules §9)."""
    assert row.result is not None
    seats = (seat % 2, seat % 2 + 2) if row.rules.get("teams") else (seat,)
    if any(s in row.result["winners"] for s in seats):
        return "win"
    if any(s in row.result["drawn"] for s in seats):
        return "draw"
    return "loss"


def recount_lines(row: GameRow) -> list[Line]:
    """Return every player's line of a finished game, from its saved state and result."""
    assert row.state is not None
    assert row.result is not None
    assert row.finished_at is not None
    wars, pots = row.state["wars_won"], row.state["biggest_pot"]
    if row.round <= REPLAYED_ROUNDS:
        rounds = list(replay(row.state))
        assert len(rounds) == row.round, row.id
        wars = [
            sum(1 for r in rounds if r.war_steps and r.winner == seat)
            for seat in range(len(row.players))
        ]
        pots = [
            max((r.taken for r in rounds if r.winner == seat), default=0)
            for seat in range(len(row.players))
        ]
    assert row.result["rounds"] == row.round, row.id
    teams = bool(row.rules.get("teams"))
    return [
        Line(
            row,
            row.finished_at,
            user_id,
            seat,
            seat % 2 if teams else None,
            team_result(row, seat),
            wars[seat],
            pots[seat],
            row.round,
        )
        for seat, user_id in enumerate(row.players)
    ]


def ranked(rows: Iterable[LeaderboardRow]) -> list[LeaderboardRow]:
    """Order leaderboard rows as the bot promises: wins, win rate, games, user id."""
    return sorted(rows, key=lambda r: (-r.wins, -r.win_rate, -r.games, r.user_id))


def expected_board(lines: Sequence[Line]) -> list[LeaderboardRow]:
    by_user: dict[int, list[Line]] = defaultdict(list)
    for line in lines:
        by_user[line.user_id].append(line)
    board = []
    for user_id, mine in by_user.items():
        wins = sum(line.outcome == "win" for line in mine)
        board.append(
            LeaderboardRow(
                user_id=user_id,
                games=len(mine),
                wins=wins,
                draws=sum(line.outcome == "draw" for line in mine),
                losses=sum(line.outcome == "loss" for line in mine),
                win_rate=wins / len(mine),
            )
        )
    return ranked(board)


def most_shared(counts: dict[int, list[tuple[Line, Line]]]) -> int | None:
    """Return the other user sharing the most games (ties: the lower user id)."""
    if not counts:
        return None
    return min(counts, key=lambda other: (-len(counts[other]), other))


def expected_stats(lines: Sequence[Line], user_id: int) -> PlayerStats:
    mine = [line for line in lines if line.user_id == user_id]
    by_game: dict[int, list[Line]] = defaultdict(list)
    for line in lines:
        by_game[line.game.id].append(line)
    against: dict[int, list[tuple[Line, Line]]] = defaultdict(list)
    beside: dict[int, list[tuple[Line, Line]]] = defaultdict(list)
    for me in mine:
        for other in by_game[me.game.id]:
            if other.user_id == user_id:
                continue
            partners = me.team is not None and me.team == other.team
            (beside if partners else against)[other.user_id].append((me, other))
    opponent = most_shared(against)
    partner = most_shared(beside)
    top_opponent = None
    if opponent is not None:
        shared = against[opponent]
        won = sum(me.outcome == "win" and other.outcome != "win" for me, other in shared)
        lost = sum(other.outcome == "win" and me.outcome != "win" for me, other in shared)
        top_opponent = HeadToHead(opponent, len(shared), won, lost, len(shared) - won - lost)
    top_partner = None
    if partner is not None:
        shared = beside[partner]
        top_partner = PartnerRecord(
            partner,
            len(shared),
            sum(me.outcome == "win" for me, _ in shared),
            sum(me.outcome == "draw" for me, _ in shared),
            sum(me.outcome == "loss" for me, _ in shared),
        )
    return PlayerStats(
        games=len(mine),
        wins=sum(line.outcome == "win" for line in mine),
        draws=sum(line.outcome == "draw" for line in mine),
        losses=sum(line.outcome == "loss" for line in mine),
        wars_won=sum(line.wars_won for line in mine),
        biggest_pot=max((line.biggest_pot for line in mine), default=0),
        longest_game=max((line.rounds for line in mine), default=0),
        top_opponent=top_opponent,
        top_partner=top_partner,
    )


def expected_matches(
    games: Sequence[GameRow], lines: Sequence[Line]
) -> list[tuple[datetime, int, bool]]:
    """Return every match played to its end as (when, user, won) per player, from its games."""
    won_by: dict[int, set[int]] = defaultdict(set)
    for line in lines:
        if line.outcome == "win":
            won_by[line.game.id].add(line.user_id)
    matches: dict[int, list[tuple[MatchInfo, GameRow]]] = defaultdict(list)
    for row in games:
        match = MatchInfo.of(row.extra)
        if match is not None:
            matches[match.id].append((match, row))
    records = []
    for rows in matches.values():
        rows.sort(key=lambda pair: pair[0].game)
        target = rows[0][0].target
        score = dict.fromkeys(rows[0][1].players, 0)
        for number, (info, row) in enumerate(rows, start=1):
            assert info.game == number, "a match's games are numbered 1, 2, 3 ..."
            assert info.score == tuple(score[user] for user in row.players)
            if row.status != "finished":
                assert number == len(rows), "a match ends with a game that was not played out"
                break
            for user in won_by[row.id]:
                score[user] += 1
            winners = {user for user, won in score.items() if won >= target}
            if winners:
                assert number == len(rows), "no game is dealt after a match is decided"
                assert row.finished_at is not None
                records += [(row.finished_at, user, user in winners) for user in score]
    return records


async def check_figures(storage: Storage, now: datetime) -> int:
    """Compare every figure with the recount; return how many games were finished."""
    finished = 0
    for guild_id, users in GUILDS.items():
        games = await storage.stats.recent_games(guild_id, limit=EVERYTHING, statuses=EVERY_STATUS)
        lines = [line for row in games if row.status == "finished" for line in recount_lines(row)]
        finished += sum(row.status == "finished" for row in games)
        matches = expected_matches(games, lines)
        for period, window in PERIODS.items():
            since = None if window is None else now - window
            kept = [line for line in lines if since is None or line.finished_at >= since]
            board = expected_board(kept)
            assert await storage.stats.leaderboard(guild_id, since=since, limit=EVERYTHING) == board
            assert await storage.stats.leaderboard(guild_id, since=since, limit=10) == board[:10]
            records: dict[int, MatchRecord] = {}
            for when, user, won in matches:
                if since is None or when >= since:
                    had = records.get(user, MatchRecord())
                    records[user] = MatchRecord(had.matches + 1, had.wins + won)
            assert await storage.matches.match_records(guild_id, users, since=since) == records, (
                period
            )
            tops: dict[int, HeadToHead | None] = {}
            for user in users:
                stats = await storage.stats.player_stats(guild_id, user, since=since)
                assert stats == expected_stats(kept, user), (period, user)
                tops[user] = stats.top_opponent
            for user, top in tops.items():
                back = None if top is None else tops.get(top.user_id)
                if top is not None and back is not None and back.user_id == user:
                    # Two players who are each other's most frequent opponent see one record.
                    assert (back.games, back.won, back.lost) == (top.games, top.lost, top.won)
                    assert back.neither == top.neither
        check_history(games, lines)
        ended = [row for row in games if row.status in HISTORY_STATUSES]
        newest = sorted(ended, key=lambda row: (row.finished_at, row.id), reverse=True)
        assert await storage.stats.recent_games(guild_id, limit=EVERYTHING) == newest
        for user in users:
            theirs = [row for row in newest if user in row.players]
            assert (
                await storage.stats.recent_games(guild_id, user_id=user, limit=EVERYTHING) == theirs
            )
    return finished


def check_history(games: Sequence[GameRow], lines: Sequence[Line]) -> None:
    """Each history line names as winners, or as drawn, exactly the players who won or drew."""
    by_game: dict[int, list[Line]] = defaultdict(list)
    for line in lines:
        by_game[line.game.id].append(line)
    for row in games:
        if row.status != "finished":
            assert row.result is None or "winners" not in row.result
            continue
        assert row.result is not None
        mine = by_game[row.id]
        won = [line.seat for line in mine if line.outcome == "win"]
        drew = [line.seat for line in mine if line.outcome == "draw"]
        assert set(row.result["winners"]) == set(won), row.id
        shown = history_line(row, "en")
        if won:
            assert "🏆 " + fmt_list([row.names[seat] for seat in won], "en") in shown
        elif len(drew) == len(row.players):
            assert t("en", "history.draw") in shown
        else:
            names = fmt_list([row.names[seat] for seat in drew], "en")
            assert t("en", "history.draw_among", names=names) in shown


async def play_and_recount(path: Path, seed: int, sessions: int) -> int:
    """Play random games on a new database and check every figure; return the games finished."""
    storage = await Storage.open(path)
    try:
        clock = await play_many(storage, seed=seed, sessions=sessions)
        return await check_figures(storage, clock())
    finally:
        await storage.close()


async def test_every_figure_matches_a_recount_of_thousands_of_random_games(
    tmp_path: Path,
) -> None:
    assert await play_and_recount(tmp_path / "krig.db", seed=16, sessions=1500) > 1800


@pytest.mark.timeout(600)
@pytest.mark.parametrize("seed", [1, 2])
async def test_every_figure_matches_a_recount_of_more_random_games(
    tmp_path: Path, seed: int
) -> None:
    assert await play_and_recount(tmp_path / "krig.db", seed=seed, sessions=4000) > 4500
