"""Tournaments run through the game service without Discord: threads stood in by numbers."""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

from krigbot.sessions import GameService, Player
from krigbot.sessions.matches import MatchKeeper
from krigbot.sessions.tournaments import Tournament
from krigbot.storage import GameRow, Storage
from tests.support.players import Clock

GUILD, CHANNEL = 10, 100
ORGANISER = Player(500, "Org")


def entrants(count: int) -> list[Player]:
    """Return ``count`` players, named P1, P2, ..."""
    return [Player(1000 + n, f"P{n}") for n in range(1, count + 1)]


@dataclass
class Runner:
    """A game service (with its match keeper, as the bot has) that runs tournaments."""

    storage: Storage
    clock: Clock = field(default_factory=Clock)
    threads: itertools.count[int] = field(default_factory=lambda: itertools.count(50_000))

    def __post_init__(self) -> None:
        self.service = GameService(self.storage, clock=self.clock)
        self.keeper = MatchKeeper(self.service.registry)

    def restarted(self) -> Runner:
        """Return a new process's service on the same database and clock (nothing in memory)."""
        return Runner(self.storage, self.clock, self.threads)

    async def signed_up(self, count: int, **options: object) -> Tournament:
        """Create a tournament (the organiser starts it) and sign ``count`` players up."""
        made = await self.service.tournaments.create(
            guild_id=GUILD,
            channel_id=CHANNEL,
            organiser=ORGANISER,
            name="Cup",
            signup_minutes=0,
            **options,  # type: ignore[arg-type]
        )
        for player in entrants(count):
            made = await self.service.tournaments.join(made.id, player)
        return made

    async def open_round(self, tournament: Tournament) -> list[GameRow]:
        """Open a thread and deal a game for every match of the round still to play."""
        fresh = await self.service.tournaments.get(tournament.id)
        assert fresh is not None
        assert fresh.bracket is not None
        rows = []
        for number, pairing in enumerate(fresh.bracket.current):
            if pairing.done:
                continue
            thread = fresh.threads[number] or next(self.threads)
            dealt = await self.service.tournaments.open_match(fresh.id, number, thread)
            assert dealt is not None
            rows.append(dealt[0])
        return rows

    async def play_out(self, thread: int) -> GameRow:
        """Play the thread's game to its end, as players flipping would."""
        registry = self.service.registry
        async with registry.lock(thread):
            found = await registry.game_in(thread)
            assert found is not None
            row, game = found
            assert game is not None
            game.play_to_end()
            return await registry.commit(row, game)

    async def play_matches(self, thread: int) -> None:
        """Play every game of the thread's match (the next games dealt in the same thread)."""
        while await self.storage.games.active_game(thread) is not None:
            await self.play_out(thread)

    async def play_all(self, tournament_id: int) -> Tournament:
        """Play every round to the end; return the finished tournament."""
        while True:
            tournament = await self.service.tournaments.get(tournament_id)
            assert tournament is not None
            if tournament.status != "running":
                return tournament
            for row in await self.open_round(tournament):
                await self.play_matches(row.channel_id)
