"""Running games: one per channel, each change committed before anyone is told of it.

The session layer knows the engine and the storage, never Discord. Expected refusals are raised
as :class:`Refusal` with a catalog key, and the Discord layer turns them into translated,
ephemeral answers. Changes in one channel are serialised by a lock; channels run in parallel.

The parts, each with one reason to change: :mod:`.registry` (locks, cache, load, commit),
:mod:`.challenges`, :mod:`.play`, :mod:`.choices` (Steal War moves), :mod:`.timelimit`,
:mod:`.recovery` (start-up), :mod:`.matches`, :mod:`.deadlines` (the one scheduler),
:mod:`.authority` (who may act), :mod:`.handsfree` (autoplay and finish votes);
:class:`GameService` is all of them in one object.
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
    ChallengeResult,
    Choice,
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
    "ChallengeResult",
    "Choice",
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
