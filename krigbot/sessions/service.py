"""The game service: one object over the parts, as the bot, the web view and the tests use it."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta

from krigbot.config import EVERY_SHARD, Shards
from krigbot.monitoring import Metrics
from krigbot.sessions.handsfree import HandsFree
from krigbot.sessions.recovery import Recovery
from krigbot.sessions.registry import Seeds, random_seed
from krigbot.sessions.results import utcnow
from krigbot.storage import Storage


class GameService(Recovery, HandsFree):
    """Start, find, play and end the games of every channel."""

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
    ) -> None:
        super().__init__(storage, clock=clock, seeds=seeds, metrics=metrics, shards=shards)
        self.idle_after = idle_after
        self.challenge_ttl = challenge_ttl
        self.choice_ttl = choice_ttl
