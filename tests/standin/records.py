"""What the stand-in records: requests, injected faults, interactions and their responses."""

# The public waits take ``timeout=`` (``await rec.response(timeout=5)``) on purpose: tests
# read better that way than wrapped in ``asyncio.timeout``, and the guard needs the value.
# ruff: noqa: ASYNC109

from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from tests.standin.events import EventLog, Guard
from tests.standin.messages import EPHEMERAL, Message, MessageRevision

if TYPE_CHECKING:
    from tests.standin.apps import Application
    from tests.standin.world import Channel, Guild, User

# Interaction callback types (https://discord.com/developers/docs/interactions/receiving-and-responding)
CHANNEL_MESSAGE = 4
DEFERRED_CHANNEL_MESSAGE = 5
DEFERRED_UPDATE_MESSAGE = 6
UPDATE_MESSAGE = 7
AUTOCOMPLETE_RESULT = 8
MODAL = 9
LAUNCH_ACTIVITY = 12

# Interaction types
PING = 1
APPLICATION_COMMAND = 2
MESSAGE_COMPONENT = 3
APPLICATION_COMMAND_AUTOCOMPLETE = 4
MODAL_SUBMIT = 5


@dataclass
class RequestRecord:
    """One HTTP request the bot made. ``path`` is relative to ``/api/v10`` when under it."""

    method: str
    path: str
    query: dict[str, str]
    at: float
    status: int | None = None
    json: Any = None
    fault: Fault | None = None
    delayed: float = 0.0
    finished: asyncio.Event = field(default_factory=asyncio.Event)
    """Set once the stand-in is done with the request (answered, or the client hung up)."""

    def __repr__(self) -> str:
        return f"<{self.method} {self.path} -> {self.status}>"


@dataclass(eq=False)
class Fault:
    """An injected failure: the next ``times`` requests matching ``method`` and ``pattern`` fail."""

    method: str
    pattern: re.Pattern[str]
    status: int
    times: int
    retry_after: float
    code: int | None
    message: str | None
    is_global: bool
    via: bool
    body: Any
    drop: bool = False
    """Carry the request out, then close the connection unanswered (``status`` unused)."""
    hits: list[RequestRecord] = field(default_factory=list)

    def matches(self, method: str, path: str) -> bool:
        return (
            self.times > 0
            and self.method in ("*", method)
            and self.pattern.search(path) is not None
        )

    @property
    def exhausted(self) -> bool:
        return self.times <= 0


@dataclass(eq=False)
class Delay:
    """Artificial latency added before answering requests matching ``method`` and ``pattern``."""

    method: str
    pattern: re.Pattern[str]
    seconds: float
    times: int | None = None

    def matches(self, method: str, path: str) -> bool:
        if self.times is not None and self.times <= 0:
            return False
        return self.method in ("*", method) and self.pattern.search(path) is not None


@dataclass(eq=False)
class InteractionResponse:
    """The bot's first answer to an interaction (its callback), parsed.

    ``message`` is the stand-in message the callback created or updated (types 4, 5 and 7),
    live: later edits show up on it. ``content``/``embeds``/... are what the callback itself sent.
    """

    type: int
    data: dict[str, Any]
    files: list[tuple[str, bytes]]
    dispatched_at: float
    received_at: float
    message: Message | None = None

    @property
    def latency(self) -> float:
        """Seconds from dispatching the interaction to the callback arriving."""
        return self.received_at - self.dispatched_at

    @property
    def content(self) -> str:
        return self.data.get("content") or ""

    @property
    def embeds(self) -> list[dict[str, Any]]:
        return list(self.data.get("embeds") or [])

    @property
    def components(self) -> list[dict[str, Any]]:
        return list(self.data.get("components") or [])

    @property
    def flags(self) -> int:
        return int(self.data.get("flags") or 0)

    @property
    def ephemeral(self) -> bool:
        return bool(self.flags & EPHEMERAL)

    @property
    def allowed_mentions(self) -> dict[str, Any] | None:
        return self.data.get("allowed_mentions")

    @property
    def choices(self) -> list[dict[str, Any]]:
        """Autocomplete choices (callback type 8)."""
        return list(self.data.get("choices") or [])

    @property
    def deferred(self) -> bool:
        return self.type in (DEFERRED_CHANNEL_MESSAGE, DEFERRED_UPDATE_MESSAGE)


@dataclass(eq=False)
class InteractionRecord:
    """An interaction the stand-in dispatched, and everything the bot did with its token.

    Await :meth:`response`, :meth:`followup` and :meth:`original_edit` to get what the bot
    sent; they wait on events with a timeout and fail fast if the bot task dies.
    """

    id: int
    token: str
    type: int
    payload: dict[str, Any]
    user: User
    channel: Channel | None
    guild: Guild | None
    locale: str
    dispatched_at: float
    #: The bot the interaction was sent to: its answers are that bot's messages and webhook.
    application: Application
    guard: Guard | None = None
    #: For component interactions: the message whose component was used.
    source_message: Message | None = None
    #: The message ``@original`` refers to, once there is one.
    original: Message | None = None
    acknowledged: bool = False
    callbacks: EventLog[InteractionResponse] = field(init=False)
    followups: EventLog[Message] = field(init=False)
    original_edits: EventLog[MessageRevision] = field(init=False)
    #: Callback/webhook requests Discord would have refused (e.g. 40060, 10062): (status, code).
    rejected: list[tuple[int, int]] = field(default_factory=list)
    #: Whether the first follow-up has been used to fill a deferred "thinking" response.
    defer_filled: bool = False
    #: Whether Discord made a response ephemeral ("Use External Apps" denied in the server).
    forced_ephemeral: bool = False

    def __post_init__(self) -> None:
        self.callbacks = EventLog(self.guard)
        self.followups = EventLog(self.guard)
        self.original_edits = EventLog(self.guard)

    @property
    def data(self) -> dict[str, Any]:
        """The ``data`` of the dispatched interaction."""
        return self.payload.get("data") or {}

    @property
    def responded_at(self) -> float | None:
        return self.callbacks.items[0].received_at if self.callbacks.items else None

    @property
    def latency(self) -> float | None:
        """Seconds until the callback arrived (None if not yet)."""
        at = self.responded_at
        return None if at is None else at - self.dispatched_at

    async def response(self, timeout: float = 5.0) -> InteractionResponse:
        """Wait for the bot's callback to this interaction and return it parsed."""
        return await self.callbacks.wait(timeout=timeout, what=f"a response to {self._describe()}")

    async def followup(self, n: int = 0, timeout: float = 30.0) -> Message:
        """Wait for the ``n``-th (0-based) follow-up message and return it.

        After a deferred "thinking" response Discord turns the *first* follow-up into the
        deferred message itself (same id, ephemeral as deferred); that message is follow-up 0.
        """
        index = await self.followups.wait_index(
            n, lambda _m: True, timeout, f"follow-up #{n} to {self._describe()}"
        )
        return self.followups.items[index]

    async def original_edit(self, n: int = 0, timeout: float = 30.0) -> MessageRevision:
        """Wait for the ``n``-th (0-based) edit of ``@original``; return the state it produced."""
        index = await self.original_edits.wait_index(
            n, lambda _r: True, timeout, f"edit #{n} of the original response to {self._describe()}"
        )
        return self.original_edits.items[index]

    def _describe(self) -> str:
        data = self.data
        if self.type == APPLICATION_COMMAND:
            return f"command {command_line(data)!r} (interaction {self.id})"
        if self.type == MESSAGE_COMPONENT:
            return f"component {data.get('custom_id')!r} (interaction {self.id})"
        if self.type == MODAL_SUBMIT:
            return f"modal {data.get('custom_id')!r} (interaction {self.id})"
        return f"interaction {self.id} of type {self.type}"


def command_line(data: dict[str, Any]) -> str:
    """``"krig start"`` for an application-command data object with nested subcommands."""
    parts = [str(data.get("name"))]
    options = data.get("options") or []
    while options and options[0].get("type") in (1, 2):
        parts.append(str(options[0].get("name")))
        options = options[0].get("options") or []
    return " ".join(parts)
