"""Start-up: the games with deadlines read again, ends never shown, saved games that are broken."""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from krigbot.config import Shards
from krigbot.engine import Variant, load_game
from krigbot.logs import about
from krigbot.sessions.challenges import Challenges
from krigbot.sessions.choices import RESUMED_VARIANTS, Choices
from krigbot.sessions.handsfree import AUTOPLAY
from krigbot.sessions.registry import ENDING, UNREACHED, Registry
from krigbot.sessions.timelimit import DEALT_AT, TimeLimits
from krigbot.storage import GameRow

log = logging.getLogger(__name__)

RESUMED_EXTRA = (AUTOPLAY, DEALT_AT)
"""Keys in a game's extra that mean it has a timer of its own (autoplay, a time limit)."""
SHOW_ENDINGS_FOR = timedelta(days=7)
"""How long after it a restarted bot still shows the end of a game that was never shown."""


def _readable(row: GameRow) -> bool:
    """Tell whether a game's saved state can be read."""
    try:
        load_game(row.state or {})
    except Exception:
        return False
    return True


@dataclass(eq=False)
class Recovery:
    """Pick up after a restart what the bot was doing when it stopped."""

    registry: Registry
    time_limits: TimeLimits
    challenges: Challenges
    choices: Choices
    since: datetime | None = field(default=None, init=False)
    """When this process picked up the games (:meth:`restore`)."""

    def ended_before_restart(self, row: GameRow) -> bool:
        """Tell whether a finished game's end went unshown because the bot stopped.

        An end that nothing could reach the chat to show (its interactions' tokens had run out)
        is recorded as :data:`UNREACHED`, and one never shown that came after this process
        started was kept from its chat the same way: neither is a restart's doing.
        """
        if row.extra.get(ENDING) == UNREACHED:
            return False
        return self.since is None or row.finished_at is None or row.finished_at < self.since

    async def restore(self, shards: Shards | None = None) -> tuple[list[GameRow], list[GameRow]]:
        """Load the games with deadlines and set those; return (open challenges, unreadable ended).

        Those are open challenges (their expiry), Steal War games (the time-outs of their
        choices), games with a time limit and games under autoplay. Every other running game
        is read when it is first used, so a restart is ready at once however many games are
        running (reading 10,000 saved states takes seconds); :meth:`find_unreadable` checks
        them in the background. Only the games of servers on this process's shards: another
        process times out and autoplays the others.

        ``shards``: only the games of these, taken over from another process while this one
        runs (``KRIG_SHARDS=auto``); the start-up's moment stays the one of the start.
        """
        if shards is None:
            self.since = self.registry.clock()
            shards = self.registry.shards
        challenges: list[GameRow] = []
        broken: list[GameRow] = []
        resumed = await self.registry.storage.games.games_to_resume(
            variants=RESUMED_VARIANTS, extra_keys=RESUMED_EXTRA, shards=shards
        )
        for row in resumed:
            if row.status == "challenge":
                challenges.append(row)
                # Without its message (the bot stopped between showing it and storing which it
                # was), the expiry looks for the message before it marks it.
                self.challenges.watch_challenge(row, row.challenge_message_id)
                continue
            game = await self.registry.read(row)
            if game is None:
                broken.append(row)
                continue
            self.registry.hold(row, game)
            if not game.finished:
                # Those whose time ran out while the bot was down are due at once.
                self.time_limits.watch_time_limit(row)
                self.choices.watch_choices(row, game)
        return challenges, broken

    async def find_unreadable(self, *, page: int = 200) -> list[GameRow]:
        """Check every running game's saved state; end and return those that cannot be read.

        For the background after a restart: it lets the event loop run between games, skips
        games in memory (they were read), and reads a game again under its channel's lock
        before ending it, so a game played meanwhile is never touched.
        """
        broken: list[GameRow] = []
        after = 0
        while rows := await self.registry.storage.games.active_games_after(
            after, page, shards=self.registry.shards
        ):
            after = rows[-1].id
            for row in rows:
                await asyncio.sleep(0)  # interactions first: this is a background chore
                if row.status != "running" or self.registry.holds(row.channel_id):
                    continue
                if _readable(row):
                    continue
                async with self.registry.lock(row.channel_id):
                    fresh = await self.registry.storage.games.get_game(row.id)
                    if self.registry.holds(row.channel_id) or fresh is None:
                        continue
                    if fresh.status == "running" and not _readable(fresh):
                        await self.registry.read(fresh)  # ends it, and logs why
                        broken.append(fresh)
        return broken

    async def unshown_endings(self, shards: Shards | None = None) -> list[tuple[GameRow, Variant]]:
        """Return the games of this process's shards (or of ``shards``, taken over) that
        finished without their end shown."""
        since = self.registry.clock() - SHOW_ENDINGS_FOR
        found: list[tuple[GameRow, Variant]] = []
        for row in await self.registry.storage.games.finished_unshown(
            ENDING, since=since, shards=self.registry.shards if shards is None else shards
        ):
            try:
                game = load_game(row.state or {})
            except Exception:
                log.exception("the end of game %s cannot be read", row.id, extra=about(row))
                await self.registry.ending_shown(row.id)
                continue
            if game.outcome is not None:
                found.append((row, game))
        return found
