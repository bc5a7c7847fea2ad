"""The game service: the session parts built once, on one storage, clock and scheduler.

It holds the parts and nothing else; a caller takes the part it needs
(``service.play.flip(...)``, ``service.challenges.accept(...)``).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta

from krigbot.config import EVERY_SHARD, Shards
from krigbot.monitoring import Metrics
from krigbot.sessions.challenges import Challenges
from krigbot.sessions.choices import Choices
from krigbot.sessions.deadlines import Deadlines
from krigbot.sessions.handsfree import HandsFree
from krigbot.sessions.live import LiveHub
from krigbot.sessions.play import Play
from krigbot.sessions.recovery import Recovery
from krigbot.sessions.registry import Registry, Seeds, random_seed
from krigbot.sessions.results import utcnow
from krigbot.sessions.timelimit import TimeLimits
from krigbot.sessions.tournaments import Tournaments
from krigbot.storage import Storage


class GameService:
    """Every part of the session layer, each built once and given the parts it uses."""

    def __init__(
        self,
        storage: Storage,
        *,
        idle_after: timedelta = timedelta(hours=24),
        challenge_ttl: timedelta = timedelta(minutes=5),
        choice_ttl: timedelta = timedelta(seconds=60),
        clock: Callable[[], datetime] = utcnow,
        seeds: Seeds = random_seed,
        metrics: Metrics | None = None,
        shards: Shards = EVERY_SHARD,
        live: LiveHub | None = None,
    ) -> None:
        # Read at each look, so a clock set on the registry later (a test's) is the scheduler's.
        self.deadlines = Deadlines(lambda: self.registry.clock())
        """Every game's pending deadlines: the one scheduler."""
        self.registry = Registry(
            storage,
            clock=clock,
            seeds=seeds,
            metrics=metrics,
            shards=shards,
            deadlines=self.deadlines,
            live=live,
        )
        """The running games: locks, cache, reading and committing them (the shared core)."""
        self.time_limits = TimeLimits(self.registry, self.deadlines)
        """Time limits (rules §7): each game's deadline, and its end by counting."""
        self.challenges = Challenges(
            self.registry, self.deadlines, idle_after=idle_after, challenge_ttl=challenge_ttl
        )
        """Challenges: made, accepted, declined, expired; an accept deals the game."""
        self.play = Play(self.registry, self.time_limits, self.deadlines)
        """Rounds played: flips, forfeits, a cancel, rounds the game plays by itself."""
        self.choices = Choices(
            self.registry, self.time_limits, self.deadlines, choice_ttl=choice_ttl
        )
        """Steal War moves (rules §10) and their time-outs."""
        self.hands_free = HandsFree(self.registry)
        """Autoplay's state and requests to finish at once."""
        self.recovery = Recovery(self.registry, self.time_limits, self.challenges, self.choices)
        """Start-up: the games with deadlines read again, ends never shown."""
        self.tournaments = Tournaments(self.registry, self.deadlines, self.play)
        """Tournaments: sign-up, rounds of matches in threads, results, the champion."""
