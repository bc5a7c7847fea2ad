"""Running games: one per channel, each change committed before anyone is told of it.

The session layer knows the engine and the storage, never Discord. Expected refusals are raised
as :class:`Refusal` with a catalog key, and the Discord layer turns them into translated,
ephemeral answers. Changes in one channel are serialised by a lock; channels run in parallel.

The parts are small services, each with one reason to change and none built on another: each
is given the parts it uses in its constructor. :class:`~.registry.Registry` is the shared core
(locks, cache, load, commit); :class:`~.deadlines.Deadlines` is the one scheduler;
:class:`~.timelimit.TimeLimits` (rules §7), :class:`~.challenges.Challenges`,
:class:`~.play.Play`, :class:`~.choices.Choices` (Steal War moves, rules §10),
:class:`~.handsfree.HandsFree` (autoplay and finish votes) and :class:`~.recovery.Recovery`
(start-up) work through the registry. :mod:`.matches` follows the games of a match and
:mod:`.authority` says who may act.

:class:`GameService` is the composition root: it builds every part once and holds them as
``registry``, ``deadlines``, ``time_limits``, ``challenges``, ``play``, ``choices``,
``hands_free`` and ``recovery``. A caller takes the part it needs:
``service.play.flip(...)``, ``service.challenges.accept(...)``, ``service.registry.game_in(...)``.
"""

from krigbot.sessions.authority import Actor, Seated, authorize, may_cancel, may_moderate, seat_of
from krigbot.sessions.choices import RESUMED_VARIANTS
from krigbot.sessions.deadlines import Deadline, DeadlineKind, Deadlines
from krigbot.sessions.handsfree import Autoplay, FinishRequest, stopped_by
from krigbot.sessions.play import MAX_FLIPS, RaceAnswer
from krigbot.sessions.recovery import RESUMED_EXTRA, SHOW_ENDINGS_FOR
from krigbot.sessions.registry import ENDING, Seeds, random_seed
from krigbot.sessions.results import (
    AcceptResult,
    ChallengeExpired,
    ChallengeResult,
    Choice,
    ChoiceOptions,
    ChoiceResult,
    FlipResult,
    LostWrite,
    Player,
    Refusal,
    player_results,
    utcnow,
)
from krigbot.sessions.service import GameService
from krigbot.sessions.timelimit import DEALT_AT, dealt_extra

__all__ = [
    "DEALT_AT",
    "ENDING",
    "MAX_FLIPS",
    "RESUMED_EXTRA",
    "RESUMED_VARIANTS",
    "SHOW_ENDINGS_FOR",
    "AcceptResult",
    "Actor",
    "Autoplay",
    "ChallengeExpired",
    "ChallengeResult",
    "Choice",
    "ChoiceOptions",
    "ChoiceResult",
    "Deadline",
    "DeadlineKind",
    "Deadlines",
    "FinishRequest",
    "FlipResult",
    "GameService",
    "LostWrite",
    "Player",
    "RaceAnswer",
    "Refusal",
    "Seated",
    "Seeds",
    "authorize",
    "dealt_extra",
    "may_cancel",
    "may_moderate",
    "player_results",
    "random_seed",
    "seat_of",
    "stopped_by",
    "utcnow",
]
