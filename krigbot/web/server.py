"""The web view's aiohttp application: routes, security headers, languages and the 404 page.

Every page is read from the storage and rendered on request; a page of a server whose
moderators have not turned the web view on, or an address whose signature does not hold,
is the same 404 as an address that never existed, so none of them tells anything.
"""

from __future__ import annotations

import asyncio
import functools
import io
import json
import logging
import re
import socket
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import aiohttp_jinja2
import jinja2
from aiohttp import web
from babel import Locale, UnknownLocaleError, negotiate_locale
from markupsafe import Markup
from yarl import URL

from krigbot.engine import CardError, EngineError, card_code, parse_card
from krigbot.engine.replay import Replaying
from krigbot.i18n import LANGS, Lang, fmt_date, fmt_number, fmt_percent, supported_lang, t
from krigbot.logs import about
from krigbot.monitoring.server import served_at
from krigbot.render.cards import card_back, card_face
from krigbot.sessions.live import LiveHub
from krigbot.web.access import PERIODS, Kind, Site, WebAccess
from krigbot.web.activity import ActivityGames, ActivityRoutes, ActivitySignIn, framed_headers
from krigbot.web.fonts import FontSlices, style_sheet
from krigbot.web.handover import RelayLink, can_relay
from krigbot.web.replay import replay_data
from krigbot.web.tournament import tournament_page

if TYPE_CHECKING:
    from concurrent.futures import Executor

    from krigbot.storage import GameRow, Storage

log = logging.getLogger(__name__)

HERE: Final = Path(__file__).parent
CARD_HEIGHT: Final = 264
"""Pixels of a card image: sharp at the size the table shows them on a phone's dense screen."""
WEB_FALLBACK: Final[Lang] = "en"
"""A browser asking for none of the four languages reads English (the bot's own is Norwegian)."""
STATIC_FILES: Final = frozenset(path.name for path in (HERE / "static").iterdir())
"""The files below /static/, by name: aiohttp's own static route answers a missing file with
an empty 404 and the folder itself with a 403, not with the 404 page every other address gets."""
KEPT_REPLAYS: Final = 16
UNSENT_BYTES: Final = 32_768
"""The bytes of a live stream that may wait unsent, in the event loop and in the kernel each
(the kernel counts double): past them its writes wait, and its rounds queue."""
KEPT_GROWING: Final = 256
"""The running games (in a language) whose rounds are kept for their next rebuild."""
GAME_FOUND: Final[web.RequestKey[GameRow]] = web.RequestKey("krig-game-found")
"""The request's key of a game a route found before the live stream reads it."""
KEPT_EVENTS: Final = 4096
"""The live events kept written (a round each, about 1 kB): the newest of every game watched."""
LEADERBOARD_SIZE: Final = 50
WINDOWS: Final[dict[str, timedelta | None]] = {
    "all": None,
    "month": timedelta(days=30),
    "week": timedelta(days=7),
}

CONTENT_SECURITY_POLICY: Final = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
    "connect-src 'self'; font-src 'self'; base-uri 'none'; form-action 'none'; "
    "frame-ancestors 'none'"
)
SECURITY_HEADERS: Final = {
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    "X-Content-Type-Options": "nosniff",
    # The addresses are the keys to the pages: never hand them to another site.
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
    "Cross-Origin-Opener-Policy": "same-origin",
    "Cross-Origin-Resource-Policy": "same-origin",
    "Permissions-Policy": "camera=(), microphone=(), geolocation=(), interest-cohort=()",
    "X-Robots-Tag": "noindex, nofollow",
}

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


_ACCEPTED: Final = re.compile(
    r"\s*(?P<tag>[A-Za-z]{1,8}(?:-[A-Za-z0-9]{1,8})*|\*)"
    r"(?:\s*;\s*[qQ]\s*=\s*(?P<q>0(?:\.[0-9]{0,3})?|1(?:\.0{0,3})?))?\s*"
)
"""One item of ``Accept-Language`` (RFC 9110, 12.5.4): a language range and its weight."""
MAX_ACCEPTED: Final = 32
"""The items of ``Accept-Language`` read; no browser sends more, and a client may send many."""
_CATALOG_TAGS: Final = ("nb", "no", "nn", "sv", "da", "en")
"""The tags Babel's negotiation matches a browser's languages against (no and nn read nb)."""


@dataclass(frozen=True, slots=True)
class Reader:
    """What a visitor reads: the page's language, and the locale its dates are written for."""

    lang: Lang
    dates: str
    """A locale such as ``"en-GB"`` (1 Dec 2026) or ``"en"`` (Dec 1, 2026, as on Discord)."""


def accepted_languages(header: str | None) -> list[str]:
    """Return the language tags of an ``Accept-Language`` header, the most wanted first.

    Items with ``q=0`` (not wanted), the wildcard and malformed items are left out; equal
    weights keep the header's order.

    >>> accepted_languages("da;q=0.5, en-GB , de;q=0.9, sv;q=0, *;q=0.1, ??, nb;q=2")
    ['en-GB', 'de', 'da']
    """
    ranked: list[tuple[float, int, str]] = []
    for position, item in enumerate((header or "").split(",", MAX_ACCEPTED)[:MAX_ACCEPTED]):
        found = _ACCEPTED.fullmatch(item)
        if found is None or found["tag"] == "*":
            continue
        weight = float(found["q"] or 1)
        if weight > 0:
            ranked.append((-weight, position, found["tag"]))
    return [tag for _, _, tag in sorted(ranked)]


def negotiate(query_lang: str | None, accept_language: str | None) -> Reader:
    """Pick the page's language: the one the address asks for, else the browser's best; and
    the browser's own locale of that language for the dates, as the bot follows Discord's.

    >>> negotiate(None, "de-DE,de;q=0.9,sv;q=0.8,en;q=0.7")
    Reader(lang='sv', dates='sv')
    >>> [negotiate(None, header).dates for header in ("en-GB,en;q=0.9", "en-US", "fr", "nn-NO")]
    ['en-GB', 'en-US', 'en', 'nn-NO']
    >>> negotiate("en", "nb-NO, en-GB;q=0.5"), negotiate("da", "sv")
    (Reader(lang='en', dates='en-GB'), Reader(lang='da', dates='da'))
    """
    preferred = accepted_languages(accept_language)
    if query_lang in LANGS:
        lang: Lang = query_lang
    else:
        best = negotiate_locale(preferred, _CATALOG_TAGS, sep="-")
        lang = supported_lang(best) or WEB_FALLBACK
    tag = next((tag for tag in preferred if supported_lang(tag) == lang), lang)
    return Reader(lang, _date_locale(tag, lang))


@functools.lru_cache(maxsize=256)
def _date_locale(tag: str, lang: Lang) -> str:
    """Return the locale Babel knows for a browser's tag (``"EN-gb"`` -> ``"en-GB"``).

    Only a locale Babel has comes out, so however many tags browsers make up, the dates'
    own cache of locales (``krigbot.i18n``) holds a bounded few.
    """
    try:
        locale = Locale.parse(tag, sep="-")
    except (ValueError, UnknownLocaleError):
        return lang
    return locale.language if locale.territory is None else f"{locale.language}-{locale.territory}"


def json_script(value: Any) -> Markup:
    """Return JSON safe inside ``<script type="application/json">`` (no tag can end it)."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    text = text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    return Markup(text.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029"))


@functools.cache
def card_png(code: str, lang: Lang) -> bytes:
    """Return a card face (or the back, for "back") as PNG, drawn as the table pictures draw it."""
    image = (
        card_back(CARD_HEIGHT) if code == "back" else card_face(parse_card(code), CARD_HEIGHT, lang)
    )
    out = io.BytesIO()
    image.save(out, format="PNG", optimize=True)
    return out.getvalue()


@functools.cache
def autonym(lang: Lang) -> str:
    """Return a language's name in itself ("Norsk bokmål"), for the language switch."""
    name = Locale.parse({"en": "en_GB"}.get(lang, lang)).get_language_name(lang) or lang
    return name[:1].upper() + name[1:]


@web.middleware
async def _guard(request: web.Request, handler: Handler) -> web.StreamResponse:
    """Add the security headers to every answer, and answer every missing page alike."""
    try:
        response = await handler(request)
    except web.HTTPNotFound:
        response = _missing(request)
    except web.HTTPException as refused:
        response = web.Response(status=refused.status, text=refused.reason)
    except Exception:
        # A broken page must not take the bot with it, nor go out without the headers.
        # The route, not the address: an address holds the signatures that open the pages.
        resource = request.match_info.route.resource
        log.exception("the web view failed on %s", resource.canonical if resource else "?")
        response = web.Response(status=500, text="500")
    if response.prepared:
        return response  # a live stream, which sent these headers itself
    response.headers.update(SECURITY_HEADERS)
    if request.path == "/activity" or request.path.startswith("/activity/"):
        framed_headers(response)
    if request.path.startswith("/s/"):
        response.headers["Cache-Control"] = "no-store"
    return response


def _missing(request: web.Request) -> web.Response:
    reader = negotiate(request.query.get("lang"), request.headers.get("Accept-Language"))
    return aiohttp_jinja2.render_template(
        "missing.html", request, _base_context(request, reader), status=404
    )


def same_site_path(path: str) -> str:
    r"""Return a request's path as one that can only lead to this site.

    A path such as ``//evil.example/x`` or ``/\evil.example`` would, written as a link, be
    read by browsers as another host; empty, ``.`` and ``..`` segments go, so the path has
    exactly one leading slash (and keeps a trailing one).

    >>> same_site_path("//evil.example/x"), same_site_path("/\\evil/../.."), same_site_path("/s/a/")
    ('/evil.example/x', '/%5Cevil', '/s/a/')
    """
    parts = [part for part in path.split("/") if part not in ("", ".", "..")]
    tail = "/" if parts and path.endswith("/") else ""
    built = URL.build(path="/" + "/".join(parts) + tail)
    return built.raw_path


def _link(path: str, query: Mapping[str, str]) -> str:
    """Return a link to ``path`` (one of this site's, without a query) with ``query``."""
    return str(URL.build(path=same_site_path(path), query=dict(query), encoded=False))


def _page_url(request: web.Request, path: str, **query: str) -> str:
    """Return an address on this site that keeps a language chosen with the switch."""
    chosen = request.query.get("lang")
    if chosen in LANGS:
        query.setdefault("lang", chosen)
    return _link(path, query)


def _base_context(
    request: web.Request, reader: Reader, here: Mapping[str, str] | None = None
) -> dict[str, Any]:
    """Return what every page's template needs; ``here`` is the page's own query (its period),
    which the language switch keeps."""
    lang = reader.lang
    return {
        "lang": lang,
        "_": functools.partial(t, lang),
        "number": lambda n: fmt_number(n, lang),
        "percent": lambda x: fmt_percent(x, lang),
        "date": lambda d: fmt_date(d, reader.dates),
        "languages": [
            (code, autonym(code), _link(request.path, {**(here or {}), "lang": code}))
            for code in LANGS
        ],
        "url": functools.partial(_page_url, request),
    }


class WebView:
    """The pages of every server that turned them on, served from the bot's own process."""

    def __init__(
        self,
        storage: Storage,
        access: WebAccess,
        *,
        clock: Callable[[], datetime],
        font_cutter: Executor | None = None,
        live: LiveHub | None = None,
        activity: ActivitySignIn | None = None,
        games: ActivityGames | None = None,
        relay: bool = True,
    ) -> None:
        """``relay``: the live streams are written by a process of their own (where the system
        and the database allow it: not on SQLite's ``:memory:``); without, by this one."""
        self.storage = storage
        self.live = LiveHub() if live is None else live
        """The viewers of running games, told of each round the bot commits."""
        self.activity = ActivityRoutes(
            activity,
            lambda request: self._reader(request).lang,
            storage=storage,
            access=access,
            table=self._activity_table,
            games=games,
        )
        """The Activity's sign-in and table (``activity`` None: the application has none set
        up; ``games``: the bot, which knows the servers' members and plays the moves)."""
        self.access = access
        self.clock = clock
        self._replays: OrderedDict[tuple[int, int, str, Lang], asyncio.Future[dict[str, Any]]] = (
            OrderedDict()
        )
        """(game, rounds played, status, language) -> its replay: a running game's grows.
        Kept as it is being built, so the viewers of a round all wait on one rebuild."""
        self._events: OrderedDict[tuple[int, Lang, int], bytes] = OrderedDict()
        """(game, language, round) -> the round's live event, as its viewers are sent it."""
        self._growing: OrderedDict[tuple[int, Lang], list[dict[str, Any]]] = OrderedDict()
        """(game, language) -> a running game's rounds as last rebuilt, which its next rebuild
        keeps (only the rounds since are written): the games watched most lately."""
        self._replaying: OrderedDict[int, Replaying] = OrderedDict()
        """A running game's rounds as last played, which its next rebuild plays on from (not
        from its seed): the games watched most lately."""
        self._reads: dict[int, asyncio.Future[GameRow | None]] = {}
        """A game's read from the storage in progress, which its live viewers share."""
        self._fonts = FontSlices(cutter=font_cutter)
        """The web fonts' slices, cut in ``font_cutter`` (the drawing workers) where given."""
        self._players: dict[tuple[int, str], dict[str, int]] = {}
        """(guild, key) -> player signature -> user id: the players a key's links name."""
        self._runner: web.AppRunner | None = None
        where = storage.database.opens_at
        self.relay = (
            RelayLink(where, self.live) if relay and where is not None and can_relay() else None
        )
        """The process the live streams are handed to; None where this one writes them."""

    # ------------------------------------------------------------------ serving

    def app(self) -> web.Application:
        """Return the aiohttp application with every route."""
        app = web.Application(middlewares=[_guard])
        aiohttp_jinja2.setup(
            app,
            loader=jinja2.FileSystemLoader(HERE / "templates"),
            autoescape=True,
            undefined=jinja2.StrictUndefined,
            filters={"json_script": json_script},
        )
        app.router.add_get("/s/{site}/", self.leaderboard)
        app.router.add_get("/s/{site}/player/{player}", self.player)
        app.router.add_get("/s/{site}/game/{game}", self.game)
        app.router.add_get("/s/{site}/game/{game}/live", self.follow)
        app.router.add_get("/s/{site}/tournament/{tournament}", self.tournament)
        app.router.add_get("/cards/{lang}/{code}.png", self.card)
        app.router.add_get("/static/{name}", self.static)
        app.router.add_get("/fonts/krig.css", self.font_faces)
        app.router.add_get("/fonts/{name}", self.font)
        app.router.add_get("/activity/", self.activity.page)
        app.router.add_get("/activity", self.activity.page)
        app.router.add_post("/activity/token", self.activity.token)
        app.router.add_get("/activity/me", self.activity.me)
        app.router.add_get("/activity/channel/{channel}", self.activity.channel)
        app.router.add_post("/activity/flip", self.activity.flip)
        app.router.add_post("/activity/look", self.activity.look)
        app.router.add_post("/activity/choose", self.activity.choose)
        app.router.add_get("/activity/live/{ticket}", self.follow_in_activity)
        return app

    async def start(self, host: str, port: int = 0, *, sock: socket.socket | None = None) -> None:
        """Start serving on ``host:port`` (or on an already bound socket)."""
        # A live page's viewer who leaves ends its stream's handler there, not at the next round.
        self._runner = web.AppRunner(self.app(), access_log=None, handler_cancellation=True)
        await self._runner.setup()
        site: web.BaseSite = (
            web.SockSite(self._runner, sock)
            if sock is not None
            else web.TCPSite(self._runner, host, port)
        )
        await site.start()
        log.info("web view serving on %s", served_at(self._runner.addresses))

    async def stop(self) -> None:
        """Stop serving."""
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None
        if self.activity.sign_in is not None:
            await self.activity.sign_in.close()
        if self.relay is not None:
            await self.relay.stop()

    # ------------------------------------------------------------------ pages

    async def _site(self, request: web.Request) -> Site:
        site = await self.access.open_site(request.match_info["site"])
        if site is None:
            raise web.HTTPNotFound
        return site

    async def _signed(self, request: web.Request, kind: Kind) -> tuple[Site, int]:
        """Return the site and the id a signed address names; a missing page otherwise."""
        site = await self._site(request)
        parts = self.access.split(request.match_info[kind])
        if parts is None or not self.access.check(site.guild_id, site.key, kind, *parts):
            raise web.HTTPNotFound
        return site, parts[0]

    @staticmethod
    def _reader(request: web.Request) -> Reader:
        return negotiate(request.query.get("lang"), request.headers.get("Accept-Language"))

    async def leaderboard(self, request: web.Request) -> web.Response:
        """A server's best players, for all time, the last 30 or the last 7 days."""
        site = await self._site(request)
        period = request.query.get("period", "all")
        if period not in PERIODS:
            raise web.HTTPNotFound
        reader = self._reader(request)
        window = WINDOWS[period]
        since = None if window is None else self.clock() - window
        rows = await self.storage.stats.leaderboard(
            site.guild_id, since=since, limit=LEADERBOARD_SIZE
        )
        names = await self.storage.records.display_names(
            site.guild_id, [row.user_id for row in rows]
        )
        here = {} if period == "all" else {"period": period}
        context = _base_context(request, reader, here) | {
            "server": site.name,
            "period": period,
            "periods": [
                (
                    name,
                    _page_url(
                        request,
                        self.access.leaderboard_path(site),
                        **({} if name == "all" else {"period": name}),
                    ),
                )
                for name in PERIODS
            ],
            "rows": [
                (row, names.get(row.user_id, "?"), self.access.player_path(site, row.user_id))
                for row in rows
            ],
        }
        return aiohttp_jinja2.render_template("leaderboard.html", request, context)

    async def _player_id(self, site: Site, token: str) -> int | None:
        key = (site.guild_id, site.key)
        known = self._players.get(key)
        if known is None or token not in known:
            # New players since the last look: sign them all again (a few thousand at most).
            known = {
                self.access.sign(site.guild_id, site.key, "player", user): user
                for user in await self.storage.records.guild_players(site.guild_id)
            }
            self._players = {key: known}  # keys of other servers are rebuilt when asked
        return known.get(token)

    async def player(self, request: web.Request) -> web.Response:
        """A player's record, variants, biggest wars, recent games and head-to-head."""
        site = await self._site(request)
        user_id = await self._player_id(site, request.match_info["player"])
        if user_id is None:
            raise web.HTTPNotFound
        reader = self._reader(request)
        lang = reader.lang
        guild = site.guild_id
        record = await self.storage.stats.player_stats(guild, user_id)
        variants = await self.storage.records.variant_records(guild, user_id)
        pots = await self.storage.records.biggest_pots(guild, user_id)
        recent = await self.storage.stats.recent_games(guild, user_id=user_id, limit=10)
        rivals = await self.storage.records.head_to_head(guild, user_id)
        names = await self.storage.records.display_names(
            guild, [user_id, *(r.user_id for r in rivals)]
        )
        context = _base_context(request, reader) | {
            "name": names.get(user_id, "?"),
            "record": record,
            "rate": record.wins / record.games if record.games else 0.0,
            "variants": [(_variant_name(v.variant, lang), v) for v in variants],
            "pots": [(pot, self.access.game_path(site, pot.game_id)) for pot in pots],
            "recent": [
                _game_line(row, user_id, lang, self.access.game_path(site, row.id))
                for row in recent
            ],
            "rivals": [
                (names.get(r.user_id, "?"), r, self.access.player_path(site, r.user_id))
                for r in rivals
            ],
            "board": self.access.leaderboard_path(site),
        }
        return aiohttp_jinja2.render_template("player.html", request, context)

    async def _game_row(self, request: web.Request) -> GameRow:
        """Return the game a signed address names, as stored; a missing page otherwise (or the
        one a route found before, under ``GAME_FOUND``: the Activity's live stream)."""
        if GAME_FOUND in request:
            return request[GAME_FOUND]
        site, game_id = await self._signed(request, "game")
        row = await self.storage.games.get_game(game_id)
        if row is None or row.guild_id != site.guild_id:
            raise web.HTTPNotFound
        if row.state is None or (row.round == 0 and not row.is_active):
            raise web.HTTPNotFound
        return row

    async def game(self, request: web.Request) -> web.Response:
        """A game with its replay: the whole of an ended one, a running one's rounds so far."""
        site = await self._site(request)
        row = await self._game_row(request)
        reader = self._reader(request)
        lang = reader.lang
        try:
            data = await self._replay(row, lang)
        except EngineError:
            log.exception("game %s cannot be replayed on the web", row.id, extra=about(row))
            raise web.HTTPNotFound from None
        when = row.finished_at or row.updated_at
        context = (
            _base_context(request, reader)
            | _table_context(row, data)
            | {
                "row": row,
                "variant": _variant_name(row.variant, lang),
                "when": when,
                "board": self.access.leaderboard_path(site),
                "live": _page_url(request, request.path + "/live") if row.is_active else None,
            }
        )
        return aiohttp_jinja2.render_template("game.html", request, context)

    async def follow(self, request: web.Request) -> web.StreamResponse:
        """A running game's rounds as they are played: Server-Sent Events, one per round.

        Each round's event has the round's number as its id, the end's is ``end``. A browser
        that reconnects names the last it had (``Last-Event-ID``), and gets every round after
        it, read from the storage, so none is lost or repeated; one that names none (a viewer
        joining) gets the position first (``position``, the replay so far), then the rounds.
        The page itself asks with ``after``, the rounds it was served with.

        Once the address is checked, the connection is handed to the live relay, which writes
        the stream (``web/handover.py``); this process writes it only where none can run.
        """
        row = await self._game_row(request)
        last = request.headers.get("Last-Event-ID", request.query.get("after"))
        if last == END_ID:
            return web.Response(status=204)  # the stream is over: the browser stops asking
        after = int(last) if last is not None and last.isascii() and last.isdigit() else None
        lang = self._reader(request).lang
        if self.relay is not None and await self.relay.ready():
            connection = _connection(request)
            if connection is not None and self.relay.hand(connection, row.id, lang, after):
                # The relay writes the stream on its own copy of the connection; this process
                # lets go of its copy without a byte written (closing it ends nothing).
                request.protocol.force_close()
                return _HandedOver()
        # Watching before reading: a round committed from here on is told, none falls between.
        viewer = self.live.watch(row.id)
        response = web.StreamResponse(
            headers={
                **SECURITY_HEADERS,
                "Content-Type": "text/event-stream; charset=utf-8",
                "Cache-Control": "no-store",
                "X-Accel-Buffering": "no",
            }
        )
        transport = request.transport
        # A viewer too slow for its queue: its connection goes, which ends a write it waits on.
        viewer.on_drop = transport.abort if transport is not None else None
        if transport is not None:
            # What waits unsent for a viewer stays small: the kernel's buffer as the event
            # loop's, so a reader that falls behind stalls its stream (and is dropped) soon.
            transport.set_write_buffer_limits(high=UNSENT_BYTES)
            connection = transport.get_extra_info("socket")
            if connection is not None:
                connection.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, UNSENT_BYTES)
        try:
            await response.prepare(request)
            data = await self._replay(row, lang)
            if after is None:
                sent = len(data["rounds"])
                await response.write(sse_event("position", sent, data))
            else:
                sent = min(after, len(data["rounds"]))
            while True:
                for played in data["rounds"][sent:]:
                    await response.write(self._round_event(row.id, lang, played))
                sent = len(data["rounds"])
                if not row.is_active:
                    ended = end_of(data) | {"title": t(lang, "over.title")}
                    await response.write(sse_event("end", END_ID, ended))
                    break
                told = await viewer.next()
                if told is None:
                    break
                fresh = await self._latest(row.id)
                if fresh is not None and fresh.round < told:
                    fresh = await self._latest(row.id)  # a read begun before that commit
                if fresh is None:
                    break
                viewer.taken(fresh.round)
                if fresh.round != row.round or fresh.status != row.status:
                    row = fresh
                    data = await self._replay(row, lang)
        except (ConnectionResetError, EngineError):
            pass  # the viewer left (or was dropped); a broken game has no more to show
        finally:
            self.live.leave(viewer)
        return response

    async def follow_in_activity(self, request: web.Request) -> web.StreamResponse:
        """A running game's live stream for the Activity, by a short-lived signed link: as
        ``follow``, but for a server whose moderators have not turned its pages on too (the
        Activity shows it only to the server's members)."""
        row = await self.activity.ticket_game(request.match_info["ticket"])
        if row is None:
            raise web.HTTPNotFound
        request[GAME_FOUND] = row
        return await self.follow(request)

    async def _activity_table(self, row: GameRow, request: web.Request) -> dict[str, Any]:
        """Return a running game's table for the Activity: its markup and its replay data."""
        reader = self._reader(request)
        data = await self._replay(row, reader.lang)
        context = _base_context(request, reader) | _table_context(row, data)
        html = aiohttp_jinja2.render_string("table.html", request, context)
        return {"html": html, "data": data}

    def _round_event(self, game_id: int, lang: Lang, played: dict[str, Any]) -> bytes:
        """Return a round's event, written once for all its viewers in a language."""
        key = (game_id, lang, int(played["n"]))
        event = self._events.get(key)
        if event is None:
            event = self._events[key] = sse_event("round", played["n"], played)
            while len(self._events) > KEPT_EVENTS:
                self._events.popitem(last=False)
        return event

    async def _latest(self, game_id: int) -> GameRow | None:
        """Read a game as stored; the viewers asking at once share one read."""
        pending = self._reads.get(game_id)
        if pending is None:
            pending = asyncio.ensure_future(self.storage.games.get_game(game_id))
            self._reads[game_id] = pending
            pending.add_done_callback(lambda _: self._reads.pop(game_id, None))
        return await asyncio.shield(pending)

    async def tournament(self, request: web.Request) -> web.Response:
        """A tournament: its rounds, its standings (Swiss, round robin), its champion."""
        site, tournament_id = await self._signed(request, "tournament")
        row = await self.storage.tournaments.get(tournament_id)
        if row is None or row.guild_id != site.guild_id:
            raise web.HTTPNotFound
        reader = self._reader(request)
        context = _base_context(request, reader) | tournament_page(row, reader.lang)
        context["board"] = self.access.leaderboard_path(site)
        return aiohttp_jinja2.render_template("tournament.html", request, context)

    async def _replay(self, row: GameRow, lang: Lang) -> dict[str, Any]:
        key = (row.id, row.round, row.status, lang)
        built = self._replays.get(key)
        if built is None:
            # A long game takes a moment to rebuild; the bot keeps answering Discord meanwhile.
            known = self._earlier_rounds(row, lang)
            replaying = self._replaying_of(row)
            built = asyncio.ensure_future(
                asyncio.to_thread(replay_data, row, lang, known, replaying)
            )
            self._replays[key] = built
            while len(self._replays) > KEPT_REPLAYS:
                self._replays.popitem(last=False)
        self._replays.move_to_end(key)
        try:
            data = await asyncio.shield(built)
        except Exception:
            if self._replays.get(key) is built:
                del self._replays[key]  # asked again, it is built again
            raise
        self._grown(row, lang, data["rounds"])
        return data

    def _replaying_of(self, row: GameRow) -> Replaying | None:
        """Return what plays a running game on from its last rebuild (None: an ended game,
        rebuilt once from its seed)."""
        if not row.is_active:
            self._replaying.pop(row.id, None)
            return None
        replaying = self._replaying.get(row.id)
        if replaying is None:
            replaying = self._replaying[row.id] = Replaying()
            while len(self._replaying) > KEPT_GROWING:
                self._replaying.popitem(last=False)
        self._replaying.move_to_end(row.id)
        return replaying

    def _earlier_rounds(self, row: GameRow, lang: Lang) -> list[dict[str, Any]] | None:
        """Return the rounds of the game's latest replay built in ``lang`` while it ran, if any:
        a running game's replay grows by a round at each flip, and only that round is new."""
        rounds = self._growing.get((row.id, lang))
        return rounds if rounds is not None and len(rounds) <= row.round else None

    def _grown(self, row: GameRow, lang: Lang, rounds: list[dict[str, Any]]) -> None:
        """Keep a running game's rounds for its next replay; forget an ended game's."""
        key = (row.id, lang)
        if not row.is_active:
            self._growing.pop(key, None)
            return
        known = self._growing.get(key)
        if known is None or len(known) < len(rounds):
            self._growing[key] = rounds
        self._growing.move_to_end(key)
        while len(self._growing) > KEPT_GROWING:
            self._growing.popitem(last=False)

    async def static(self, request: web.Request) -> web.StreamResponse:
        """The pages' style sheet and script."""
        name = request.match_info["name"]
        if name not in STATIC_FILES:
            raise web.HTTPNotFound
        return web.FileResponse(HERE / "static" / name)

    async def font_faces(self, request: web.Request) -> web.Response:
        """The web fonts' style sheet: every slice of the pictures' fonts, by its characters."""
        response = web.Response(
            text=style_sheet(),
            content_type="text/css",
            headers={"Cache-Control": "public, max-age=86400"},
        )
        response.enable_compression()
        return response

    async def font(self, request: web.Request) -> web.Response:
        """One slice of a font, as WOFF2; its address changes with the fonts, so it keeps."""
        data = await self._fonts.get(request.match_info["name"])
        if data is None:
            raise web.HTTPNotFound
        return web.Response(
            body=data,
            content_type="font/woff2",
            headers={"Cache-Control": "public, max-age=31536000, immutable"},
        )

    async def card(self, request: web.Request) -> web.Response:
        """A card face as the table pictures draw it, in a language's letters (or the back)."""
        lang = request.match_info["lang"]
        code = request.match_info["code"]
        if lang not in LANGS:
            raise web.HTTPNotFound
        if code != "back":
            try:
                code = _card_code(code)
            except CardError:
                raise web.HTTPNotFound from None
        png = await asyncio.to_thread(card_png, code, lang)
        return web.Response(
            body=png,
            content_type="image/png",
            headers={"Cache-Control": "public, max-age=604800, immutable"},
        )


class _HandedOver(web.StreamResponse):
    """A stream handed to the live relay: nothing of it is written from here."""

    async def prepare(self, request: web.BaseRequest) -> None:
        return None

    async def write_eof(self, data: bytes = b"") -> None:
        return None


def _connection(request: web.Request) -> int | None:
    """Return a request's connection (its file descriptor), if it may be handed to another
    process: a GET (a HEAD is answered here, without a body), open, with nothing of this
    process's waiting to be written to it."""
    transport = request.transport
    if request.method != "GET" or transport is None or transport.is_closing():
        return None
    if transport.get_write_buffer_size():
        return None
    connection = transport.get_extra_info("socket")
    return None if connection is None else int(connection.fileno())


END_ID: Final = "end"
"""The id of a live stream's last event, the game's end."""


def sse_event(kind: str, event_id: int | str, data: Any) -> bytes:
    """Return one Server-Sent Event: its name, its id and its data as one line of JSON."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    return f"event: {kind}\nid: {event_id}\ndata: {text}\n\n".encode()


def _table_context(row: GameRow, data: dict[str, Any]) -> dict[str, Any]:
    """Return what the table's markup (``table.html``) shows of a game: its seats and state."""
    counts = data["final" if row.is_active else "deal"]
    return {
        "running": row.is_active,
        "data": data,
        "players": [
            (name, data["colours"][seat], counts[seat]) for seat, name in enumerate(row.names)
        ],
    }


def end_of(data: dict[str, Any]) -> dict[str, Any]:
    """Return what the end of a live game shows: who won and why, and the game's figures."""
    return {"final": data["final"], "result": data["result"], "summary": data["summary"]}


def _card_code(code: str) -> str:
    # Only the code exactly as written ("QD", never " qd "): each spelling would be another
    # address of the same picture, and another entry in card_png's cache.
    if card_code(parse_card(code)) != code:
        raise CardError(code)
    return code


def _variant_name(variant: str, lang: Lang) -> str:
    try:
        return t(lang, f"variant.{variant}.name")
    except KeyError:
        return variant


def _game_line(row: GameRow, user_id: int, lang: Lang, path: str) -> dict[str, Any]:
    """Return what a player's list of games shows of one game."""
    result = row.result or {}
    seat = row.players.index(user_id) if user_id in row.players else -1
    winners = [int(s) for s in result.get("winners", ())]
    if row.status != "finished":
        outcome = "ended"
    elif not winners:
        outcome = "draw"
    else:
        outcome = "win" if seat in winners else "loss"
    return {
        "id": row.id,
        "when": row.finished_at or row.updated_at,
        "others": [name for s, name in enumerate(row.names) if s != seat],
        "outcome": outcome,
        "status": row.status,
        "rounds": row.round,
        "variant": _variant_name(row.variant, lang),
        "path": path if row.state is not None and row.round > 0 else None,
    }
