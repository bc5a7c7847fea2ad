"""Best-of matches (rules §11: 002's "best av 3 eller 5"): after each game, the next deal.

A match is a run of games between the same players with the same rules; each game's place in it
is a :class:`~krigbot.engine.match.MatchInfo` in its ``extra["match"]``. When a match game
finishes, the registry's finish hook counts it and, in one transaction, either records the
match's winners or deals the next game. If the bot stops between the finished game and that
write, :meth:`MatchKeeper.recover` does it at start-up.
"""

from __future__ import annotations

import dataclasses
import logging
from typing import TYPE_CHECKING, Any

from krigbot.engine import Outcome, Rules, new_game
from krigbot.engine.game import outcome_from_dict

# The match values are the engine's; they are re-exported for the code that still finds them here.
from krigbot.engine.match import BEST_OF as BEST_OF
from krigbot.engine.match import MatchInfo as MatchInfo
from krigbot.engine.match import first_game as first_game
from krigbot.logs import about
from krigbot.sessions.authority import seat_of
from krigbot.sessions.results import ChallengeResult, Player, Refusal
from krigbot.sessions.timelimit import dealt_extra
from krigbot.storage import ChannelBusyError, MatchStep, NextGame, StorageError

if TYPE_CHECKING:
    from krigbot.config import Shards
    from krigbot.engine import Variant
    from krigbot.sessions.challenges import Challenges
    from krigbot.sessions.registry import Registry
    from krigbot.storage import GameRow

log = logging.getLogger(__name__)

LAST_GAME = "last_game"
"""Set in a match game's extra to make it the match's last, whatever the score: a tournament's
round ended, or a player left it. The match is then won by whoever has won a majority, if
anyone (its tournament judges it by the score)."""
CARRIED = ("lang", "reach", "tournament")
"""The keys of a game's extra that the match's next game keeps."""


async def begin_match(registry: Registry, row: GameRow, best_of: int) -> GameRow:
    """Make a new challenge the first game of a best-of match (its id is the match's)."""
    match = first_game(row.id, best_of, len(row.players))
    extra = await registry.change_extra(
        row.channel_id, row.id, lambda _: {"match": match.to_extra()}
    )
    return dataclasses.replace(row, extra=extra)


async def rematch(
    registry: Registry,
    challenges: Challenges,
    game_id: int,
    presser: Player,
    *,
    guild_id: int | None,
    channel_id: int,
    extra: dict[str, Any] | None = None,
) -> ChallengeResult:
    """Challenge the players of a finished game (or match) to the same again, the presser first."""
    row = await registry.storage.games.get_game(game_id)
    if row is None or row.guild_id != guild_id:
        raise Refusal("err.game_over")
    seat = seat_of(row, presser.user_id)
    # The presser challenges (seat 0); the seats turn round with them, so that teams
    # (seats 0 and 2 against 1 and 3) stay the same teams.
    count = len(row.players)
    others = [(seat + step) % count for step in range(1, count)]
    rules = Rules.from_dict(row.rules)
    # Every option the game set, so the new game is played by exactly the same rules.
    options = rules.settings()
    result = await challenges.challenge(
        guild_id=row.guild_id,
        channel_id=channel_id,
        challenger=presser,
        opponents=[Player(row.players[s], row.names[s]) for s in others],
        variant=rules.preset_name,
        options=options,
        extra=extra,
    )
    match = MatchInfo.of(row.extra)
    if match is None:
        return result
    return dataclasses.replace(result, row=await begin_match(registry, result.row, match.best_of))


class MatchKeeper:
    """Move matches on when their games finish: the next deal, or the match's winners."""

    def __init__(self, registry: Registry) -> None:
        self.registry = registry
        self.storage = registry.storage
        registry.on_finish.append(self._finished)

    async def _finished(self, row: GameRow, game: Variant) -> None:
        # Called by the registry under the channel's lock, right after the game was committed.
        assert game.outcome is not None
        await self.advance(row, game.outcome)

    async def advance(self, row: GameRow, outcome: Outcome) -> GameRow | None:
        """Count a finished game in its match; return the next game if one was dealt.

        The caller holds the channel's lock (the next game takes the channel).
        """
        match = MatchInfo.of(row.extra)
        if match is None:
            return None
        score = match.after(outcome.winners)
        step = MatchStep(
            match_id=match.id,
            guild_id=row.guild_id,
            channel_id=row.channel_id,
            best_of=match.best_of,
            players=row.players,
            score=score,
            games=match.game,
        )
        now = self.registry.clock()
        winners = match.decided(score)
        if not match.goes_on(outcome) or row.extra.get(LAST_GAME):
            # Won, or stopped: a game nobody played (or the last one allowed) ends the match,
            # with a winner only if someone has won a majority.
            await self.storage.matches.finish_match(
                step, [row.players[seat] for seat in winners], game_id=row.id, now=now
            )
            return None
        rules = Rules.from_dict(row.rules)
        seed = self.registry.seeds()
        game = new_game(rules, seed=seed)
        extra = {key: value for key, value in row.extra.items() if key in CARRIED}
        extra["match"] = MatchInfo(match.id, match.best_of, match.game + 1, score).to_extra()
        extra.update(dealt_extra(rules, now) or {})  # each game has its own time limit
        following = NextGame(
            challenger_id=row.challenger_id,
            names=row.names,
            variant=row.variant,
            rules=row.rules,
            seed=seed,
            state=game.to_dict(),
            extra=extra,
        )
        try:
            dealt = await self.storage.matches.advance_match(step, following, now=now)
        except ChannelBusyError:
            # Someone started another game here first; the match waits (start-up tries again).
            log.warning("match %s: channel %s is busy, no next game", match.id, row.channel_id)
            return None
        if dealt is not None:
            self.registry.adopt(dealt, game)
        return dealt

    async def recover(self, shards: Shards | None = None) -> list[tuple[GameRow, GameRow | None]]:
        """Count match games that finished just before the bot stopped (of ``shards``: just
        before the process that ran them died, taken over).

        Returns each such game with the next game dealt for it, if any (None: the match ended).
        """
        owns = self.registry.owns if shards is None else shards.owns
        recovered: list[tuple[GameRow, GameRow | None]] = []
        for row in await self.storage.matches.unadvanced_match_games():
            if row.result is None or not owns(row.server_id):
                continue
            try:
                outcome = outcome_from_dict(row.result)
                async with self.registry.lock(row.channel_id):
                    dealt = await self.advance(row, outcome)
            except (KeyError, TypeError, ValueError, StorageError):
                log.exception("match game %s cannot be counted", row.id, extra=about(row))
                continue
            recovered.append((row, dealt))
        return recovered
