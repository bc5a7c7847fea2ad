"""Krigbot's storage: games, results, stats and guild settings, in SQLite or PostgreSQL.

``await Storage.open(location)`` opens the database a path or ``postgresql://`` URL names and
migrates it. The queries are asked of its parts, each holding the one shared
:class:`~krigbot.storage.base.Database` (connections, dialect, coalesced writes):

- ``storage.games`` (:class:`GameStore`): challenges, accepting, rounds, finishing, ending;
- ``storage.stats`` (:class:`StatsStore`): leaderboard, player stats, recent games;
- ``storage.settings`` (:class:`SettingsStore`): per-guild settings;
- ``storage.matches`` (:class:`MatchStore`): best-of matches and their records;
- ``storage.records`` (:class:`RecordStore`): a player's page (names, variants, rivals, pots);
- ``storage.tournaments`` (:class:`TournamentStore`): tournaments and their matches' games.
- ``storage.claims`` (:class:`ClaimStore`): the shards' leases (``KRIG_SHARDS=auto``, PostgreSQL).

``Storage`` itself opens, probes, checkpoints and closes the database.
"""

from __future__ import annotations

from krigbot.storage.claims import ClaimStore, Holding
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
from krigbot.storage.games import GameStore
from krigbot.storage.matches import MatchRecord, MatchStep, MatchStore, NextGame
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
from krigbot.storage.records import PotRecord, RecordStore, VariantRecord
from krigbot.storage.settings import SettingsStore
from krigbot.storage.stats import Everywhere, StatsStore, Tally
from krigbot.storage.tournaments import TournamentRecord, TournamentStore

__all__ = [
    "ACTIVE_STATUSES",
    "END_STATUSES",
    "HISTORY_STATUSES",
    "CannotOpenDatabaseError",
    "ChannelBusyError",
    "ClaimStore",
    "DatabaseCorruptError",
    "DatabaseLockedError",
    "DatabaseReadOnlyError",
    "DiskFullError",
    "EndStatus",
    "Everywhere",
    "GameRow",
    "GameStatus",
    "GameStore",
    "HeadToHead",
    "Holding",
    "JSONDict",
    "KrigbotRecord",
    "LeaderboardRow",
    "MatchRecord",
    "MatchStep",
    "MatchStore",
    "MigrationError",
    "NextGame",
    "NotADatabaseError",
    "Outcome",
    "PartnerRecord",
    "PlayerResult",
    "PlayerStats",
    "PotRecord",
    "RecordStore",
    "RoundConflictError",
    "SchemaTooNewError",
    "SettingsStore",
    "StatsStore",
    "Storage",
    "StorageClosedError",
    "StorageError",
    "Tally",
    "TournamentRecord",
    "TournamentStore",
    "VariantRecord",
]
