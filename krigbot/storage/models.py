"""Row types returned by the storage, and the encoding of values into columns."""

from __future__ import annotations

import json
from dataclasses import dataclass, fields
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Final, Literal, TypeVar, get_args

import orjson

if TYPE_CHECKING:
    from collections.abc import Iterable

    from _typeshed import DataclassInstance

    from krigbot.storage.base import Row

GameStatus = Literal[
    "challenge", "running", "finished", "cancelled", "abandoned", "declined", "expired"
]
EndStatus = Literal["cancelled", "abandoned", "declined", "expired"]
Outcome = Literal["win", "loss", "draw"]
JSONDict = dict[str, Any]

ALL_STATUSES: Final[frozenset[str]] = frozenset(get_args(GameStatus))
ACTIVE_STATUSES: Final[tuple[GameStatus, ...]] = ("challenge", "running")
END_STATUSES: Final[frozenset[str]] = frozenset(get_args(EndStatus))
HISTORY_STATUSES: Final[tuple[GameStatus, ...]] = ("finished", "cancelled", "abandoned")
OUTCOMES: Final[frozenset[str]] = frozenset(get_args(Outcome))

# SQLite stores INTEGER as signed 64 bits; Discord snowflakes fit, arbitrary seeds may not.
_INT64_MIN: Final = -(2**63)
_INT64_MAX: Final = 2**63 - 1

RowType = TypeVar("RowType", bound="DataclassInstance")


@dataclass(frozen=True, slots=True)
class GameRow:
    """One game as stored; JSON columns are decoded, times are aware UTC datetimes."""

    id: int
    guild_id: int
    channel_id: int
    challenger_id: int
    status: GameStatus
    variant: str
    rules: JSONDict
    seed: int
    players: tuple[int, ...]
    names: tuple[str, ...]
    accepted: tuple[int, ...]
    state: JSONDict | None
    round: int
    table_message_id: int | None
    challenge_message_id: int | None
    result: JSONDict | None
    created_at: datetime
    updated_at: datetime
    last_activity_at: datetime
    finished_at: datetime | None
    extra: JSONDict

    @property
    def is_active(self) -> bool:
        """Tell whether the game still occupies its channel."""
        return self.status in ACTIVE_STATUSES

    @property
    def server_id(self) -> int | None:
        """Return the server the game is played in; None in a chat (a DM or a group DM).

        A chat's games belong to the chat: their ``guild_id`` is the channel's id.
        """
        return None if self.guild_id == self.channel_id else self.guild_id


@dataclass(frozen=True, slots=True)
class PlayerResult:
    """One player's line of a finished game, as handed to `finish_game`."""

    user_id: int
    seat: int
    outcome: Outcome
    rounds: int
    wars_won: int = 0
    biggest_pot: int = 0
    team: int | None = None
    against_krigbot: bool = False
    """Krigbot itself played: the result counts only in the player's own record against it."""

    def __post_init__(self) -> None:
        """Reject values the results table would refuse, with a clearer message."""
        if self.outcome not in OUTCOMES:
            raise ValueError(f"outcome must be one of {sorted(OUTCOMES)}, not {self.outcome!r}")
        for name in ("seat", "rounds", "wars_won", "biggest_pot"):
            if getattr(self, name) < 0:
                raise ValueError(f"{name} must not be negative")


@dataclass(frozen=True, slots=True)
class LeaderboardRow:
    """One player's record in a guild; win_rate is wins / games (draws count as not won)."""

    user_id: int
    games: int
    wins: int
    draws: int
    losses: int
    win_rate: float


@dataclass(frozen=True, slots=True)
class HeadToHead:
    """The games a player played against another user, by who won them.

    ``won`` the player won, ``lost`` the other user won, ``neither`` neither of them won (a draw,
    or a third player's win). The other user's record against the player mirrors it exactly:
    the same games, ``won`` and ``lost`` swapped, the same ``neither``.
    """

    user_id: int
    games: int
    won: int
    lost: int
    neither: int


@dataclass(frozen=True, slots=True)
class PartnerRecord:
    """The games a player played on the same team as another user, by the team's result."""

    user_id: int
    games: int
    wins: int
    draws: int
    losses: int


@dataclass(frozen=True, slots=True)
class KrigbotRecord:
    """A player's games against Krigbot itself, apart from every other figure."""

    games: int
    wins: int
    draws: int
    losses: int


@dataclass(frozen=True, slots=True)
class PlayerStats:
    """A player's totals in one guild."""

    games: int
    wins: int
    draws: int
    losses: int
    wars_won: int
    biggest_pot: int
    longest_game: int
    top_opponent: HeadToHead | None
    top_partner: PartnerRecord | None
    against_krigbot: KrigbotRecord | None = None
    """Games against Krigbot, or None if there were none."""


def encode_time(moment: datetime) -> str:
    """Format an aware datetime as fixed-width ISO-8601 UTC text."""
    if moment.tzinfo is None or moment.utcoffset() is None:
        raise ValueError("naive datetime; pass an aware one such as datetime.now(UTC)")
    # Fixed width (always microseconds, always Z) so that text order equals time order,
    # which the range queries on these columns rely on. (isoformat() alone drops zero
    # microseconds; strftime is twice as slow, and this runs at every flip.)
    return moment.astimezone(UTC).isoformat(timespec="microseconds")[:-6] + "Z"


def decode_time(text: str) -> datetime:
    """Parse a timestamp written by `encode_time`."""
    return datetime.fromisoformat(text)


def encode_json(value: Any) -> str:
    """Serialise a JSON-safe value compactly, refusing NaN and infinities."""
    # orjson writes a game's state in a twelfth of json's time, but writes NaN and infinities
    # as null, and turns tuples, keys that are not strings and dataclasses into JSON too:
    # what does not read back as the very value goes through json, which refuses or writes
    # it as it always has. Reading back is a third of json's time.
    try:
        written = orjson.dumps(value)
    except orjson.JSONEncodeError:
        written = None  # beyond orjson (an integer over 64 bits, a key that is no string)
    if written is not None and orjson.loads(written) == value:
        return written.decode()
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def decode_dict(text: str) -> JSONDict:
    """Parse a JSON object column."""
    value = json.loads(text)
    if not isinstance(value, dict):
        raise TypeError(f"expected a JSON object, found {type(value).__name__}")
    return value


def check_int64(name: str, value: int) -> int:
    """Refuse integers that SQLite cannot store."""
    if not _INT64_MIN <= value <= _INT64_MAX:
        raise ValueError(f"{name} must fit in a signed 64-bit integer, got {value}")
    return value


def check_statuses(statuses: Iterable[str]) -> tuple[str, ...]:
    """Validate a collection of game statuses and return it as a non-empty tuple."""
    result = tuple(statuses)
    unknown = set(result) - ALL_STATUSES
    if unknown:
        raise ValueError(f"unknown game status(es): {sorted(unknown)}")
    if not result:
        raise ValueError("at least one status is required")
    return result


def from_columns(kind: type[RowType], row: Row, **computed: object) -> RowType:
    """Build a row type from the columns named as its fields, but for the ``computed`` ones."""
    columns = {field.name: row[field.name] for field in fields(kind) if field.name not in computed}
    return kind(**columns, **computed)


GAME_COLUMNS: Final = (
    "id, guild_id, channel_id, challenger_id, status, variant, rules, seed, players, names, "
    "accepted, state, round, table_message_id, challenge_message_id, result, created_at, "
    "updated_at, last_activity_at, finished_at, extra"
)


def game_from_row(row: Row) -> GameRow:
    """Build a GameRow from a row selected with GAME_COLUMNS."""
    state = row["state"]
    result = row["result"]
    finished_at = row["finished_at"]
    return GameRow(
        id=row["id"],
        guild_id=row["guild_id"],
        channel_id=row["channel_id"],
        challenger_id=row["challenger_id"],
        status=row["status"],
        variant=row["variant"],
        rules=decode_dict(row["rules"]),
        seed=row["seed"],
        players=tuple(int(p) for p in json.loads(row["players"])),
        names=tuple(str(n) for n in json.loads(row["names"])),
        accepted=tuple(int(p) for p in json.loads(row["accepted"])),
        state=None if state is None else decode_dict(state),
        round=row["round"],
        table_message_id=row["table_message_id"],
        challenge_message_id=row["challenge_message_id"],
        result=None if result is None else decode_dict(result),
        created_at=decode_time(row["created_at"]),
        updated_at=decode_time(row["updated_at"]),
        last_activity_at=decode_time(row["last_activity_at"]),
        finished_at=None if finished_at is None else decode_time(finished_at),
        extra=decode_dict(row["extra"]),
    )
