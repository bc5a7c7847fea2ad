"""The bots the stand-in hosts: each application with its bot user, token and synced commands.

Kept apart from the world so that what belongs to one bot is found from the request (its
``Authorization`` header, or the interaction it answers) instead of from single attributes of
the server: a second bot is then one more :class:`Application`, not a second set of fields.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from tests.standin.events import EventLog, Guard

if TYPE_CHECKING:
    from tests.standin.world import User

EMBEDDED = 1 << 17
"""The application flag of an app with an Activity (``EMBEDDED`` in Discord's documentation):
enabled in the Developer Portal, it lets an interaction be answered with ``LAUNCH_ACTIVITY``."""


@dataclass(frozen=True)
class SyncRecord:
    """One command sync (bulk overwrite) the bot made."""

    guild_id: int | None
    payload: list[dict[str, Any]]
    at: float


@dataclass(eq=False)
class Application:
    """One Discord application and its bot user (on Discord the bot's user id is the app id).

    ``token``: None accepts any bot token, as a stand-in for one bot need not check it.
    """

    bot_user: User
    owner: User
    token: str | None
    guard: Guard
    flags: int = 0
    client_secret: str = "standin-client-secret"
    """The OAuth2 client secret the application's server trades codes with."""
    #: Synced commands: None -> global list, guild id -> that guild's list.
    commands: dict[int | None, list[dict[str, Any]]] = field(default_factory=dict)
    #: The application's own emojis (``/applications/{app}/emojis``), by id, as Discord sends them.
    emojis: dict[int, dict[str, Any]] = field(default_factory=dict)
    syncs: EventLog[SyncRecord] = field(init=False)

    def __post_init__(self) -> None:
        self.syncs = EventLog(self.guard)

    @property
    def id(self) -> int:
        return self.bot_user.id

    def accepts(self, header_or_token: str | None) -> bool:
        """Whether ``Authorization: Bot <token>`` (or the bare token of IDENTIFY) is this bot's."""
        if header_or_token is None or header_or_token.startswith("Bearer "):
            return False  # a user's OAuth2 access token, not a bot's
        token = header_or_token.removeprefix("Bot ")
        return bool(token) and (self.token is None or token == self.token)


class Applications:
    """The hosted applications, found by the token a request carries."""

    def __init__(self) -> None:
        self._apps: list[Application] = []

    def __iter__(self) -> Iterator[Application]:
        return iter(self._apps)

    def add(self, app: Application) -> Application:
        self._apps.append(app)
        return app

    def by_token(self, header_or_token: str | None) -> Application | None:
        """The application a request's ``Authorization`` (or IDENTIFY's token) belongs to."""
        return next((app for app in self._apps if app.accepts(header_or_token)), None)
