"""Challenges: made in a channel, accepted or declined by the challenged, expired in time."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator, Sequence
from dataclasses import KW_ONLY, dataclass
from datetime import timedelta
from typing import Any

from krigbot.engine import FixedOptionError, Rules, RulesError, Variant, new_game
from krigbot.logs import about
from krigbot.sessions.deadlines import Deadline, Deadlines
from krigbot.sessions.registry import Registry
from krigbot.sessions.results import (
    AcceptResult,
    ChallengeExpired,
    ChallengeResult,
    Player,
    Refusal,
)
from krigbot.sessions.timelimit import dealt_extra
from krigbot.storage import ChannelBusyError, GameRow, StorageError

log = logging.getLogger(__name__)


@dataclass(eq=False)
class Challenges:
    """Make, answer and expire the challenges of every channel."""

    registry: Registry
    deadlines: Deadlines
    _: KW_ONLY
    idle_after: timedelta = timedelta(hours=24)
    """How long a running game may sit untouched before a new challenge replaces it."""
    challenge_ttl: timedelta = timedelta(minutes=5)
    """How long a challenge waits for its answers."""

    async def challenge(
        self,
        *,
        guild_id: int,
        channel_id: int,
        challenger: Player,
        opponents: Sequence[Player],
        variant: str,
        options: dict[str, Any],
        extra: dict[str, Any] | None = None,
    ) -> ChallengeResult:
        """Create a challenge in a channel, refusing what cannot be played.

        Krigbot itself (``krigbot_id``) may be one of the opponents: it accepts at once, and when
        nobody else is challenged the game is dealt in the same call (``ChallengeResult.game``).
        ``extra`` is stored with the game in the same write (the language of its messages).
        """
        seen: set[int] = {challenger.user_id}
        for opponent in opponents:
            if opponent.user_id == challenger.user_id:
                raise Refusal("err.self")
            if opponent.bot and opponent.user_id != self.registry.krigbot_id:
                raise Refusal("err.bot")
            if opponent.user_id in seen:
                raise Refusal("err.duplicate", name=opponent.name)
            seen.add(opponent.user_id)
        players = [challenger, *opponents]
        rules = self._rules(variant, len(players), options)
        async with self.registry.lock(channel_id):
            replaced = await self._clear_stale(channel_id)
            now = self.registry.clock()
            try:
                row = await self.registry.storage.games.create_game(
                    guild_id=guild_id,
                    channel_id=channel_id,
                    challenger_id=challenger.user_id,
                    players=[p.user_id for p in players],
                    names=[p.name for p in players],
                    variant=rules.preset_name,
                    rules=rules.to_dict(),
                    seed=self.registry.seeds(),
                    now=now,
                    extra=extra,
                )
            except ChannelBusyError as exc:
                existing = await self.registry.storage.games.get_game(exc.game_id)
                raise Refusal("err.busy", game=existing) from None
            krigbot = self.registry.krigbot_id
            if krigbot is None or krigbot not in row.players:
                return ChallengeResult(row, replaced)
            # Krigbot accepts its own challenge at once; with nobody else to wait for, it deals.
            accepted = await self.registry.storage.games.accept(row.id, krigbot, now)
            if accepted is None:
                raise Refusal("err.challenge_over")
            seat = row.players.index(krigbot)
            if set(accepted.accepted) != set(accepted.players):
                return ChallengeResult(accepted, replaced, krigbot=seat)
            started, game = await self._deal(accepted)
            return ChallengeResult(started, replaced, krigbot=seat, game=game)

    @staticmethod
    def _rules(variant: str, players: int, options: dict[str, Any]) -> Rules:
        base = Rules.preset(variant)
        if base.teams and players != 4:
            raise Refusal("err.players", variant=variant, n=4)
        try:
            return Rules.preset(variant, players=players, **options)
        except FixedOptionError as exc:
            raise Refusal(f"err.fixed.{exc.option}", variant=exc.variant) from None
        except RulesError as exc:
            raise Refusal("err.bad_option", reason=str(exc)) from None

    async def challenge_shown(self, row: GameRow, message_id: int) -> None:
        """Time a challenge out once its message is out, and remember the message."""
        self.watch_challenge(row, message_id)
        try:
            await self.registry.storage.games.set_challenge_message(row.id, message_id)
        except StorageError as exc:
            # The challenge is out and its buttons work; after a restart its expiry looks
            # for its message in the channel.
            log.warning(
                "could not remember the message of challenge %s: %s", row.id, exc, extra=about(row)
            )

    def watch_challenge(self, row: GameRow, message_id: int | None) -> None:
        """Set the expiry of a challenge shown in ``message_id`` (None: not known)."""
        at = row.created_at + self.challenge_ttl
        self.deadlines.set(
            Deadline("challenge", row.id, row.channel_id, at, message_id, row.server_id)
        )

    async def _clear_stale(self, channel_id: int) -> GameRow | None:
        """End a channel's expired challenge or idle game; refuse if a live one is there."""
        row = await self.registry.storage.games.active_game(channel_id)
        if row is None:
            return None
        now = self.registry.clock()
        if row.status == "challenge" and now - row.created_at >= self.challenge_ttl:
            await self.registry.storage.games.end_game(
                row.id, "expired", now, fence=self.registry.fence(row)
            )
            return None
        if row.status == "running" and now - row.last_activity_at >= self.idle_after:
            await self.registry.storage.games.end_game(
                row.id, "abandoned", now, fence=self.registry.fence(row)
            )
            self.registry.forget(channel_id)
            self.deadlines.cancel(row.id)
            self.registry.count_abandoned(row)
            return row
        raise Refusal("err.busy", game=row)

    async def _open_challenge(self, game_id: int) -> GameRow:
        row = await self.registry.storage.games.get_game(game_id)
        if row is not None and row.status == "cancelled":
            raise Refusal("err.challenge_withdrawn")
        if row is not None and row.status == "expired":
            raise ChallengeExpired(row)
        if row is None or row.status != "challenge":
            raise Refusal("err.challenge_over")
        if self.registry.clock() - row.created_at >= self.challenge_ttl:
            await self.registry.storage.games.end_game(
                row.id, "expired", self.registry.clock(), fence=self.registry.fence(row)
            )
            raise ChallengeExpired(row)
        return row

    @contextlib.asynccontextmanager
    async def _answering(
        self, game_id: int, user_id: int, channel_id: int | None
    ) -> AsyncIterator[GameRow]:
        """Hold the challenge's channel while ``user_id`` answers it there; refuse otherwise."""
        row = await self.registry.storage.games.get_game(game_id)
        if row is None:
            raise Refusal("err.challenge_over")
        if channel_id is not None and row.channel_id != channel_id:
            raise Refusal("err.elsewhere")
        async with self.registry.lock(row.channel_id):
            row = await self._open_challenge(game_id)
            if user_id not in row.players or user_id == row.challenger_id:
                raise Refusal("err.not_challenged")
            yield row

    async def accept(
        self,
        game_id: int,
        user_id: int,
        *,
        table_message_id: int | None = None,
        channel_id: int | None = None,
    ) -> AcceptResult:
        """Record an accept; deal the cards when everyone has accepted.

        ``table_message_id`` is the message that will show the dealt table (the challenge's own).
        ``channel_id`` is where the button was pressed: a challenge is answered in its channel.
        """
        async with self._answering(game_id, user_id, channel_id) as row:
            everyone = set(row.accepted) == set(row.players)
            if user_id in row.accepted and not everyone:
                raise Refusal("challenge.already_accepted")
            # Everyone has accepted already only if dealing failed after the last accept was
            # saved (the database refused the write): then this press deals.
            updated = (
                row
                if everyone
                else await self.registry.storage.games.accept(
                    game_id, user_id, self.registry.clock()
                )
            )
            if updated is None:
                raise Refusal("err.challenge_over")
            if set(updated.accepted) != set(updated.players):
                return AcceptResult(updated)
            started, game = await self._deal(updated, table_message_id)
            return AcceptResult(started, game)

    async def _deal(
        self, row: GameRow, table_message_id: int | None = None
    ) -> tuple[GameRow, Variant]:
        """Deal a challenge everyone has accepted (the caller holds its channel's lock)."""
        game = new_game(Rules.from_dict(row.rules), seed=row.seed)
        now = self.registry.clock()
        started = await self.registry.storage.games.start_game(
            row.id,
            state=game.to_dict(),
            now=now,
            extra=dealt_extra(game.rules, now),
            fence=self.registry.fence(row),
        )
        if started is None:
            raise Refusal("err.challenge_over")
        self.deadlines.cancel(row.id, "challenge")
        self.registry.dealt(started)
        if table_message_id is not None:
            started = await self.registry.set_table(started, table_message_id)
        self.registry.hold(started, game)
        if self.registry.metrics is not None:
            self.registry.metrics.games_started.labels(started.variant).inc()
        return started, game

    async def decline(
        self, game_id: int, user_id: int, *, channel_id: int | None = None
    ) -> GameRow:
        """Let a challenged player turn the challenge down (in its channel)."""
        async with self._answering(game_id, user_id, channel_id) as row:
            if not await self.registry.storage.games.end_game(
                game_id, "declined", self.registry.clock(), fence=self.registry.fence(row)
            ):
                raise Refusal("err.challenge_over")
            self.deadlines.cancel(game_id, "challenge")
            return row

    async def expire(self, game_id: int) -> GameRow | None:
        """End a challenge whose time ran out; return it unless it was answered or withdrawn.

        A challenge already ended as expired (by a press or a new challenge that came after its
        time) is returned too: its message still shows the buttons and must say it expired.
        """
        row = await self.registry.storage.games.get_game(game_id)
        if row is None or row.status not in ("challenge", "expired"):
            return None
        if row.status == "expired":
            return row
        async with self.registry.lock(row.channel_id):
            ok = await self.registry.storage.games.end_game(
                game_id,
                "expired",
                self.registry.clock(),
                expected_statuses=("challenge",),
                fence=self.registry.fence(row),
            )
        return row if ok else None
