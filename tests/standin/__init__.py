"""A Discord stand-in (REST + gateway on 127.0.0.1) for testing the real discord.py bot offline.

Public API::

    from tests.standin import DiscordStandIn, run_bot
"""

from __future__ import annotations

from tests.standin.apps import SyncRecord
from tests.standin.client import NotConnectedError
from tests.standin.commands import (
    CommandNotAvailableError,
    OptionError,
    StandInError,
    UnknownCommandError,
    Upload,
)
from tests.standin.events import BotCrashed, Cursor, EventLog, StandInTimeout
from tests.standin.gateway import GatewayEvent
from tests.standin.harness import pointed_at, run_bot
from tests.standin.messages import Attachment, ChannelEvent, Message, MessageRevision
from tests.standin.records import InteractionRecord, InteractionResponse, RequestRecord
from tests.standin.server import SITECUSTOMIZE_DIR, DiscordStandIn
from tests.standin.store import MessageWatcher
from tests.standin.world import Channel, Guild, Member, Role, User, normalize_locale

__all__ = [
    "SITECUSTOMIZE_DIR",
    "Attachment",
    "BotCrashed",
    "Channel",
    "ChannelEvent",
    "CommandNotAvailableError",
    "Cursor",
    "DiscordStandIn",
    "EventLog",
    "GatewayEvent",
    "Guild",
    "InteractionRecord",
    "InteractionResponse",
    "Member",
    "Message",
    "MessageRevision",
    "MessageWatcher",
    "NotConnectedError",
    "OptionError",
    "RequestRecord",
    "Role",
    "StandInError",
    "StandInTimeout",
    "SyncRecord",
    "UnknownCommandError",
    "Upload",
    "User",
    "normalize_locale",
    "pointed_at",
    "run_bot",
]
