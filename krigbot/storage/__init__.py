"""Krigbot's storage: games, results, stats and guild settings, in SQLite or PostgreSQL."""

from __future__ import annotations

from krigbot.storage.database import Storage
from krigbot.storage.errors import (
    CannotOpenDatabaseError,
    ChannelBusyError,
    DatabaseCorruptError,
    DatabaseLockedError,
    DatabaseReadOnlyError,
    DiskFullError,
    MigrationError,
    NotADatabaseError,
    RoundConflictError,
    SchemaTooNewError,
    StorageClosedError,
    StorageError,
)
from krigbot.storage.matches import MatchRecord, MatchStep, NextGame
from krigbot.storage.models import (
    ACTIVE_STATUSES,
    END_STATUSES,
    HISTORY_STATUSES,
    EndStatus,
    GameRow,
    GameStatus,
    HeadToHead,
    JSONDict,
    KrigbotRecord,
    LeaderboardRow,
    Outcome,
    PartnerRecord,
    PlayerResult,
    PlayerStats,
)
from krigbot.storage.records import PotRecord, VariantRecord
from krigbot.storage.stats import Everywhere, Tally

__all__ = [
    "ACTIVE_STATUSES",
    "END_STATUSES",
    "HISTORY_STATUSES",
    "CannotOpenDatabaseError",
    "ChannelBusyError",
    "DatabaseCorruptError",
    "DatabaseLockedError",
    "DatabaseReadOnlyError",
    "DiskFullError",
    "EndStatus",
    "Everywhere",
    "GameRow",
    "GameStatus",
    "HeadToHead",
    "JSONDict",
    "KrigbotRecord",
    "LeaderboardRow",
    "MatchRecord",
    "MatchStep",
    "MigrationError",
    "NextGame",
    "NotADatabaseError",
    "Outcome",
    "PartnerRecord",
    "PlayerResult",
    "PlayerStats",
    "PotRecord",
    "RoundConflictError",
    "SchemaTooNewError",
    "Storage",
    "StorageClosedError",
    "StorageError",
    "Tally",
    "VariantRecord",
]
