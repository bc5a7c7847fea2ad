"""The Activity's sign-in: a code from Discord's ``authorize`` traded for an access token, and
the user a token belongs to on every later call.

Inside Discord, the Activity's page asks the Embedded App SDK's ``authorize`` for a code and
posts it to ``POST /activity/token``; the web view trades it at Discord's ``POST /oauth2/token``
with the application's client secret (``KRIG_CLIENT_SECRET``, which only this module holds and
no log line shows) and hands the access token back, for the SDK's ``authenticate`` and for the
page's own calls. Each of those carries ``Authorization: Bearer <token>``; Discord's
``GET /oauth2/@me`` tells whose it is and for which application, and the answer is remembered
for a minute. A token made for another application, an expired one or a made-up one is no one.

Signed in, the page asks for the table of the channel Discord opened it in
(``GET /activity/channel/{channel}?guild={guild}``): only a member of that server, in a channel
of that server, is shown its running game, with a short-lived signed link to the game's live
stream (an ``EventSource`` sends no ``Authorization``). ``POST /activity/flip`` plays a round for
one of the game's players, through the bot (:class:`ActivityGames`), which shows it in the
channel as it shows any round. Where the server is another process's and that process does not
answer in time (:class:`Unanswered`), the page is answered 503 and told to try again.
"""

from __future__ import annotations

import functools
import hashlib
import logging
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from dataclasses import KW_ONLY, dataclass
from datetime import UTC, datetime
from typing import Any, Final, Protocol

import aiohttp
import aiohttp_jinja2
from aiohttp import web

from krigbot.engine import variants_with_choices
from krigbot.i18n import Lang, t
from krigbot.sessions import Refusal
from krigbot.storage import GameRow, Storage
from krigbot.web.access import MAX_ID, WebAccess

log = logging.getLogger(__name__)

REMEMBER_SECONDS: Final = 60.0
"""How long a token's user is remembered before Discord is asked again."""
REMEMBERED: Final = 4096
"""At most this many tokens are remembered (the least recently used go first)."""
TIMEOUT: Final = aiohttp.ClientTimeout(total=10)
"""A Discord that does not answer within this is out of reach for this sign-in."""
TICKET_SECONDS: Final = 600
"""How long a link to a game's live stream opens it (a stream open by then goes on)."""


class SignInError(Exception):
    """Discord would not trade the code (``status``: what the page is answered)."""

    def __init__(self, status: int, reason: str) -> None:
        super().__init__(reason)
        self.status = status


@dataclass(frozen=True, slots=True)
class ActivityUser:
    """Who an access token belongs to."""

    id: int
    name: str
    """Their display name (or user name) on Discord."""


class ActivitySignIn:
    """Trade codes for tokens with the client secret, and tell whose a token is.

    ``client_id``: the application's id (the bot's, known once it has logged in; None before).
    ``api_base``: Discord's API, e.g. ``https://discord.com/api/v10`` or a REST proxy's.
    """

    def __init__(
        self,
        *,
        client_id: Callable[[], int | None],
        client_secret: str,
        api_base: str,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.client_id = client_id
        self._secret = client_secret
        self.api_base = api_base.rstrip("/")
        self.clock = clock
        self._users: OrderedDict[bytes, tuple[ActivityUser, float]] = OrderedDict()
        self._session: aiohttp.ClientSession | None = None

    def __repr__(self) -> str:
        return f"ActivitySignIn(api_base={self.api_base!r}, client_secret=<hidden>)"

    def _http(self) -> aiohttp.ClientSession:
        if self._session is None or self._session.closed:
            self._session = aiohttp.ClientSession(timeout=TIMEOUT)
        return self._session

    async def close(self) -> None:
        """Close the connection to Discord."""
        if self._session is not None:
            await self._session.close()
            self._session = None

    async def trade(self, code: str) -> dict[str, Any]:
        """Trade a code from ``authorize`` for an access token (Discord's answer: the token,
        its type, lifetime and scopes); raise :class:`SignInError` where Discord refuses."""
        client_id = self.client_id()
        if client_id is None:
            raise SignInError(503, "the bot has not logged in yet")
        form = {
            "grant_type": "authorization_code",
            "code": code,
            "client_id": str(client_id),
            "client_secret": self._secret,
        }
        answer = await self._discord("POST", "/oauth2/token", "for a code's token", data=form)
        if answer is None:
            raise SignInError(502, "Discord is out of reach")
        status, body = answer
        if status == 200 and isinstance(body, dict) and isinstance(body.get("access_token"), str):
            return {
                "access_token": body["access_token"],
                "token_type": body.get("token_type", "Bearer"),
                "expires_in": body.get("expires_in"),
                "scope": body.get("scope", ""),
            }
        error = body.get("error") if isinstance(body, dict) else None
        if status == 401 or error == "invalid_client":
            # The secret is wrong: the owner's to fix, and worth a line in the log (without it).
            log.warning("Discord refused the Activity's client secret (KRIG_CLIENT_SECRET)")
            raise SignInError(503, "the Activity is not set up")
        raise SignInError(403, "Discord refused the code")

    async def user(self, token: str) -> ActivityUser | None:
        """Return whose an access token is, or None: unknown, expired or another application's."""
        key = hashlib.sha256(token.encode()).digest()
        now = self.clock()
        known = self._users.get(key)
        if known is not None and known[1] > now:
            self._users.move_to_end(key)
            return known[0]
        self._users.pop(key, None)
        found, until = await self._ask(token)
        if found is not None:
            self._users[key] = (found, min(now + REMEMBER_SECONDS, now + until))
            while len(self._users) > REMEMBERED:
                self._users.popitem(last=False)
        return found

    async def _ask(self, token: str) -> tuple[ActivityUser | None, float]:
        """Ask Discord whose the token is; return the user and the seconds the token has left."""
        headers = {"Authorization": f"Bearer {token}"}
        answer = await self._discord("GET", "/oauth2/@me", "whose a token is", headers=headers)
        if answer is None:
            return None, 0.0
        status, body = answer
        if status != 200 or not isinstance(body, dict):
            return None, 0.0
        application = body.get("application") or {}
        user = body.get("user") or {}
        if str(application.get("id")) != str(self.client_id()) or not user.get("id"):
            return None, 0.0  # a token another application was given
        try:
            left = (datetime.fromisoformat(body["expires"]) - datetime.now(UTC)).total_seconds()
        except (KeyError, TypeError, ValueError):
            return None, 0.0
        if left <= 0:
            return None, 0.0
        name = user.get("global_name") or user.get("username") or str(user["id"])
        return ActivityUser(int(user["id"]), str(name)), left

    async def _discord(
        self, method: str, path: str, asking: str, **sent: Any
    ) -> tuple[int, Any] | None:
        """Send a request to Discord's API; return its answer's status and JSON body, or None
        where Discord is out of reach or answers no JSON (logged as ``asking`` it failing)."""
        try:
            async with self._http().request(method, f"{self.api_base}{path}", **sent) as answer:
                return answer.status, await answer.json(content_type=None)
        except (aiohttp.ClientError, TimeoutError, ValueError) as exc:
            log.warning("could not ask Discord %s: %s", asking, type(exc).__name__)
            return None

    async def user_of(self, request: web.Request) -> ActivityUser | None:
        """Return who a request of the Activity's page comes from (its bearer token), or None."""
        header = request.headers.get("Authorization", "")
        if not header.startswith("Bearer "):
            return None
        token = header.removeprefix("Bearer ").strip()
        return await self.user(token) if token else None


class Unanswered(Exception):
    """No process of the bot that holds the server's shard answered in time (it is stopping,
    or another is taking its shards over): the page is told to try again in a moment."""


class ActivityGames(Protocol):
    """What the Activity asks of the bot: who belongs where, and the moves of its players.

    Each call may raise :class:`Unanswered` where the server is another process's and no
    answer came from it.
    """

    async def member(self, guild_id: int, channel_id: int, user_id: int) -> bool:
        """Tell whether the user is a member of the server and the channel is the server's."""
        ...

    async def flip(self, guild_id: int, channel_id: int, user_id: int) -> None:
        """Play a round of the channel's game for the user; raise ``Refusal`` where they may not."""
        ...

    async def look(
        self, guild_id: int, channel_id: int, user_id: int, lang: Lang
    ) -> dict[str, Any]:
        """Return a Steal War player's next card (``text``) and the moves open to them
        (``options``, each a ``label`` and the ``move`` to post back)."""
        ...

    async def choose(
        self, guild_id: int, channel_id: int, user_id: int, move: dict[str, Any], lang: Lang
    ) -> dict[str, Any]:
        """Make a Steal War move ``look`` offered; return what was done (``done``) and the look
        after it."""
        ...


Table = Callable[[GameRow, web.Request], Awaitable[dict[str, Any]]]
"""What the web view shows of a game in a request's language: the table's markup (``html``)
and its replay data (``data``)."""


FRAMED_BY: Final = "https://discord.com https://*.discord.com https://*.discordsays.com"
"""Where Discord's clients frame an Activity (its proxy serves the page on discordsays.com)."""
PAGE_POLICY: Final = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
    "connect-src 'self'; font-src 'self'; base-uri 'none'; form-action 'none'; "
    f"frame-ancestors {FRAMED_BY}"
)
"""The Activity page's Content-Security-Policy: the web view's own, except that Discord may
frame it and it calls the web view's ``/activity/`` routes (nothing of any other site)."""


@dataclass(eq=False)
class ActivityRoutes:
    """The Activity's page and its calls (``/activity/...``, routed by the web view); all of
    them are missing pages where no Activity is set up."""

    sign_in: ActivitySignIn | None
    """The sign-in (None: the application has no Activity)."""
    language: Callable[[web.Request], Lang]
    """The language a request's reader gets (the web view's own choice, for every page)."""
    _: KW_ONLY
    storage: Storage
    access: WebAccess
    table: Table
    games: ActivityGames | None = None
    clock: Callable[[], float] = time.time
    """Seconds since the epoch, for the live links' expiry."""

    def _set_up(self) -> ActivitySignIn:
        if self.sign_in is None:
            raise web.HTTPNotFound()
        return self.sign_in

    async def page(self, request: web.Request) -> web.Response:
        """The page Discord opens as the Activity: it signs its user in and shows the table."""
        client_id = self._set_up().client_id()
        lang = self.language(request)
        context = {
            "lang": lang,
            "_": functools.partial(t, lang),
            "client_id": "" if client_id is None else str(client_id),
        }
        response = aiohttp_jinja2.render_template("activity.html", request, context)
        response.headers["Cache-Control"] = "no-store"
        return response

    async def token(self, request: web.Request) -> web.Response:
        """Trade the page's code for an access token."""
        sign_in = self._set_up()
        body = await _body(request)
        code = body.get("code")
        if not isinstance(code, str) or not code or len(code) > 512:
            return _refusal(400, "a code from authorize is needed")
        try:
            granted = await sign_in.trade(code)
        except SignInError as refused:
            return _refusal(refused.status, str(refused))
        return _json(granted)

    async def me(self, request: web.Request) -> web.Response:
        """Say who the page's bearer token belongs to."""
        user = await self._set_up().user_of(request)
        if user is None:
            return _refusal(401, "no valid access token")
        return _json({"id": str(user.id), "name": user.name})

    async def _member(
        self, request: web.Request, guild: Any, channel: Any
    ) -> tuple[ActivityUser, int, int] | web.Response:
        """Return who asks, and the server and channel they may see; or the refusal."""
        sign_in = self._set_up()
        if self.games is None:
            raise web.HTTPNotFound()  # no bot answers for the servers
        user = await sign_in.user_of(request)
        if user is None:
            return _refusal(401, "no valid access token")
        guild_id, channel_id = _snowflake(guild), _snowflake(channel)
        if guild_id is None or channel_id is None:
            # Opened outside a server (a DM, a group DM): the bot knows no members there.
            return _refusal(400, t(self.language(request), "activity.server_only"))
        try:
            member = await self.games.member(guild_id, channel_id, user.id)
        except Unanswered:
            return _refusal(503, t(self.language(request), "activity.try_again"))
        if not member:
            return _refusal(403, t(self.language(request), "activity.not_member"))
        return user, guild_id, channel_id

    async def channel(self, request: web.Request) -> web.Response:
        """The running game of the channel Discord opened the Activity in, for its members."""
        asked = await self._member(
            request, request.query.get("guild"), request.match_info["channel"]
        )
        if isinstance(asked, web.Response):
            return asked
        user, guild_id, channel_id = asked
        lang = self.language(request)
        row = await self.storage.games.active_game(channel_id)
        if row is None or row.guild_id != guild_id or row.status != "running" or row.state is None:
            return _json({"game": None, "note": t(lang, "activity.no_game")})
        shown = await self.table(row, request)
        return _json(
            shown
            | {
                "game": str(row.id),
                "live": f"live/{self.ticket(row)}",
                "player": user.id in row.players,
                # Steal War's players look at their next card and choose (rules §10).
                "choices": row.variant in variants_with_choices(),
            }
        )

    async def flip(self, request: web.Request) -> web.Response:
        """Play a round of the channel's game for one of its players (a battle in Steal War)."""
        return await self._move(
            request, lambda games, guild, channel, user, _: games.flip(guild, channel, user)
        )

    async def look(self, request: web.Request) -> web.Response:
        """A Steal War player's next card and choices, for them alone."""
        return await self._move(
            request,
            lambda games, guild, channel, user, lang: games.look(guild, channel, user, lang),
        )

    async def choose(self, request: web.Request) -> web.Response:
        """Make a Steal War choice the player's look offered."""
        move = (await _body(request)).get("move")
        if not isinstance(move, dict):
            return _refusal(400, "a move from the look is needed")
        return await self._move(
            request,
            lambda games, guild, channel, user, lang: games.choose(
                guild, channel, user, move, lang
            ),
        )

    async def _move(
        self,
        request: web.Request,
        make: Callable[[ActivityGames, int, int, int, Lang], Awaitable[dict[str, Any] | None]],
    ) -> web.Response:
        """Make a player's move in the channel's game, once they are known to be its member."""
        body = await _body(request)
        asked = await self._member(request, body.get("guild"), body.get("channel"))
        if isinstance(asked, web.Response):
            return asked
        user, guild_id, channel_id = asked
        assert self.games is not None
        lang = self.language(request)
        try:
            answer = await make(self.games, guild_id, channel_id, user.id, lang)
        except Refusal as refusal:
            return _refusal(403, t(lang, refusal.key, **refusal.fields))
        except Unanswered:
            return _refusal(503, t(lang, "activity.try_again"))
        return _json({"played": True} if answer is None else answer)

    # ------------------------------------------------------------------ the live stream's links

    def ticket(self, row: GameRow) -> str:
        """Return the path segment that opens a game's live stream for a while."""
        until = int(self.clock()) + TICKET_SECONDS
        signature = self.access.sign(row.guild_id, str(until), "activity", row.id)
        return f"{row.id}.{until}.{signature}"

    async def ticket_game(self, ticket: str) -> GameRow | None:
        """Return the game a live stream's link opens, or None (forged, or too old to open)."""
        if self.sign_in is None or self.games is None:
            return None
        game, _, rest = ticket.partition(".")
        until, _, signature = rest.partition(".")
        game_id, expires = _snowflake(game), _snowflake(until)
        if game_id is None or expires is None or expires <= self.clock():
            return None
        row = await self.storage.games.get_game(game_id)
        if row is None or row.state is None:
            return None
        if not self.access.check(row.guild_id, str(expires), "activity", game_id, signature):
            return None
        return row


def _snowflake(value: Any) -> int | None:
    """Return an id given as a string of ASCII digits (as the SDK and the page send them)."""
    if not isinstance(value, str) or not value.isascii() or not value.isdigit():
        return None
    number = int(value)
    return number if 0 < number <= MAX_ID else None


async def _body(request: web.Request) -> dict[str, Any]:
    """Return a request's JSON object (empty where it sent none)."""
    try:
        body = await request.json()
    except ValueError:
        return {}
    return body if isinstance(body, dict) else {}


def framed_headers(response: web.StreamResponse) -> None:
    """Let Discord frame an Activity's answer, which the web view's headers otherwise forbid."""
    response.headers["Content-Security-Policy"] = PAGE_POLICY
    response.headers.pop("X-Frame-Options", None)


def _json(body: dict[str, Any], status: int = 200) -> web.Response:
    response = web.json_response(body, status=status)
    response.headers["Cache-Control"] = "no-store"  # a token is no one else's to keep
    return response


def _refusal(status: int, reason: str) -> web.Response:
    return _json({"error": reason}, status)
