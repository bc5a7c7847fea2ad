"""Discord's OAuth2 as an Activity meets it: codes from ``authorize``, tokens for codes.

Inside Discord, the Embedded App SDK's ``authorize`` asks the user and hands the page a code
(the stand-in's :meth:`OAuth.authorize` plays that part); the application's server trades it at
``POST /oauth2/token`` with its client secret for an access token, which then answers for the
user at ``GET /users/@me`` and ``GET /oauth2/@me`` as ``Authorization: Bearer <token>``.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tests.standin.apps import Application
    from tests.standin.world import User

TOKEN_SECONDS = 604800
"""How long Discord's access tokens last: 7 days."""
CODE_SECONDS = 600.0
"""How long a code waits to be traded: Discord's last 10 minutes."""


@dataclass(eq=False)
class Grant:
    """What a user allowed one application: a code's, then its access token's."""

    application: Application
    user: User
    scopes: tuple[str, ...]
    expires_at: float
    """On the stand-in's clock (``time.monotonic`` unless a test sets another)."""


class OAuth:
    """The codes handed out and the access tokens they were traded for."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self._codes: dict[str, Grant] = {}
        self._tokens: dict[str, Grant] = {}
        self.trades: list[str] = []
        """The codes traded for tokens, in order (for tests)."""

    def authorize(
        self, application: Application, user: User, scopes: tuple[str, ...] = ("identify",)
    ) -> str:
        """Return the code Discord's client gives the page once ``user`` allows ``scopes``."""
        code = secrets.token_urlsafe(20)
        self._codes[code] = Grant(application, user, scopes, self.clock() + CODE_SECONDS)
        return code

    def trade(self, application: Application, code: str) -> tuple[str, Grant] | None:
        """Spend a code of ``application`` on a new access token; None for any other code."""
        grant = self._codes.get(code)
        if grant is None or grant.application is not application:
            return None
        del self._codes[code]  # each code is good once
        if grant.expires_at <= self.clock():
            return None
        token = secrets.token_urlsafe(24)
        self._tokens[token] = Grant(
            grant.application, grant.user, grant.scopes, self.clock() + TOKEN_SECONDS
        )
        self.trades.append(code)
        return token, self._tokens[token]

    def grant_of(self, header: str | None) -> Grant | None:
        """Return the live grant of an ``Authorization: Bearer <token>`` header, or None."""
        if header is None or not header.startswith("Bearer "):
            return None
        grant = self._tokens.get(header.removeprefix("Bearer "))
        if grant is None or grant.expires_at <= self.clock():
            return None
        return grant

    def expire(self, token: str) -> None:
        """Let an access token run out, as a week would."""
        self._tokens[token].expires_at = self.clock()
