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
import socket
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final
from urllib.parse import urlencode

import aiohttp_jinja2
import jinja2
from aiohttp import web
from babel import Locale
from markupsafe import Markup

from krigbot.engine import CardError, EngineError, card_code, parse_card
from krigbot.i18n import LANGS, Lang, fmt_date, fmt_number, fmt_percent, supported_lang, t
from krigbot.logs import about
from krigbot.render.cards import card_back, card_face
from krigbot.web.access import PERIODS, Site, WebAccess
from krigbot.web.replay import replay_data

if TYPE_CHECKING:
    from krigbot.storage import GameRow, Storage

log = logging.getLogger(__name__)

HERE: Final = Path(__file__).parent
CARD_HEIGHT: Final = 264
"""Pixels of a card image: sharp at the size the table shows them on a phone's dense screen."""
WEB_FALLBACK: Final[Lang] = "en"
"""A browser asking for none of the four languages reads English (the bot's own is Norwegian)."""
KEPT_REPLAYS: Final = 16
LEADERBOARD_SIZE: Final = 50
WINDOWS: Final[dict[str, timedelta | None]] = {
    "all": None,
    "month": timedelta(days=30),
    "week": timedelta(days=7),
}

CONTENT_SECURITY_POLICY: Final = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
    "connect-src 'none'; font-src 'none'; base-uri 'none'; form-action 'none'; "
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


def negotiate(query_lang: str | None, accept_language: str | None) -> Lang:
    """Pick the page's language: the one the address asks for, else the browser's best.

    >>> negotiate(None, "de-DE,de;q=0.9,sv;q=0.8,en;q=0.7")
    'sv'
    >>> negotiate("da", "sv"), negotiate(None, "fr"), negotiate(None, "nn-NO")
    ('da', 'en', 'nb')
    """
    if query_lang in LANGS:
        return query_lang
    ranked: list[tuple[float, int, Lang]] = []
    for position, part in enumerate((accept_language or "").split(",")):
        tag, _, params = part.strip().partition(";")
        weight = 1.0
        if params.strip().startswith("q="):
            try:
                weight = float(params.strip()[2:])
            except ValueError:
                continue
        lang = supported_lang(tag.strip()) if tag.strip() else None
        if lang is not None and weight > 0:
            ranked.append((-weight, position, lang))
    return min(ranked)[2] if ranked else WEB_FALLBACK


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
    response.headers.update(SECURITY_HEADERS)
    if request.path.startswith("/s/"):
        response.headers["Cache-Control"] = "no-store"
    return response


def _missing(request: web.Request) -> web.Response:
    lang = negotiate(request.query.get("lang"), request.headers.get("Accept-Language"))
    return aiohttp_jinja2.render_template(
        "missing.html", request, _base_context(request, lang), status=404
    )


def _page_url(request: web.Request, path: str, **query: str) -> str:
    """Return an address on this site that keeps a language chosen with the switch."""
    chosen = request.query.get("lang")
    if chosen in LANGS:
        query.setdefault("lang", chosen)
    return path + ("?" + urlencode(query) if query else "")


def _base_context(request: web.Request, lang: Lang) -> dict[str, Any]:
    here = {key: value for key, value in request.query.items() if key != "lang"}
    return {
        "lang": lang,
        "_": functools.partial(t, lang),
        "number": lambda n: fmt_number(n, lang),
        "percent": lambda x: fmt_percent(x, lang),
        "date": lambda d: fmt_date(d, lang),
        "languages": [
            (code, autonym(code), request.path + "?" + urlencode({**here, "lang": code}))
            for code in LANGS
        ],
        "url": functools.partial(_page_url, request),
    }


class WebView:
    """The pages of every server that turned them on, served from the bot's own process."""

    def __init__(
        self, storage: Storage, access: WebAccess, *, clock: Callable[[], datetime]
    ) -> None:
        self.storage = storage
        self.access = access
        self.clock = clock
        self._replays: OrderedDict[tuple[int, Lang], dict[str, Any]] = OrderedDict()
        self._players: dict[tuple[int, str], dict[str, int]] = {}
        """(guild, key) -> player signature -> user id: the players a key's links name."""
        self._runner: web.AppRunner | None = None

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
        app.router.add_get("/cards/{lang}/{code}.png", self.card)
        app.router.add_static("/static/", HERE / "static", append_version=False)
        return app

    async def start(self, host: str, port: int = 0, *, sock: socket.socket | None = None) -> None:
        """Start serving on ``host:port`` (or on an already bound socket)."""
        self._runner = web.AppRunner(self.app(), access_log=None)
        await self._runner.setup()
        site: web.BaseSite = (
            web.SockSite(self._runner, sock)
            if sock is not None
            else web.TCPSite(self._runner, host, port)
        )
        await site.start()
        log.info("web view serving on %s", ", ".join(map(str, self._runner.addresses)))

    async def stop(self) -> None:
        """Stop serving."""
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    # ------------------------------------------------------------------ pages

    async def _site(self, request: web.Request) -> Site:
        site = await self.access.open_site(request.match_info["site"])
        if site is None:
            raise web.HTTPNotFound
        return site

    @staticmethod
    def _lang(request: web.Request) -> Lang:
        return negotiate(request.query.get("lang"), request.headers.get("Accept-Language"))

    async def leaderboard(self, request: web.Request) -> web.Response:
        """A server's best players, for all time, the last 30 or the last 7 days."""
        site = await self._site(request)
        period = request.query.get("period", "all")
        if period not in PERIODS:
            raise web.HTTPNotFound
        lang = self._lang(request)
        window = WINDOWS[period]
        since = None if window is None else self.clock() - window
        rows = await self.storage.leaderboard(site.guild_id, since=since, limit=LEADERBOARD_SIZE)
        names = await self.storage.display_names(site.guild_id, [row.user_id for row in rows])
        context = _base_context(request, lang) | {
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
                for user in await self.storage.guild_players(site.guild_id)
            }
            self._players = {key: known}  # keys of other servers are rebuilt when asked
        return known.get(token)

    async def player(self, request: web.Request) -> web.Response:
        """A player's record, variants, biggest wars, recent games and head-to-head."""
        site = await self._site(request)
        user_id = await self._player_id(site, request.match_info["player"])
        if user_id is None:
            raise web.HTTPNotFound
        lang = self._lang(request)
        guild = site.guild_id
        record = await self.storage.player_stats(guild, user_id)
        variants = await self.storage.variant_records(guild, user_id)
        pots = await self.storage.biggest_pots(guild, user_id)
        recent = await self.storage.recent_games(guild, user_id=user_id, limit=10)
        rivals = await self.storage.head_to_head(guild, user_id)
        names = await self.storage.display_names(guild, [user_id, *(r.user_id for r in rivals)])
        context = _base_context(request, lang) | {
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

    async def game(self, request: web.Request) -> web.Response:
        """An ended game with its whole replay."""
        site = await self._site(request)
        parts = self.access.split(request.match_info["game"])
        if parts is None or not self.access.check(site.guild_id, site.key, "game", *parts):
            raise web.HTTPNotFound
        row = await self.storage.get_game(parts[0])
        if row is None or row.guild_id != site.guild_id or row.is_active:
            raise web.HTTPNotFound
        if row.state is None or row.round == 0:
            raise web.HTTPNotFound
        lang = self._lang(request)
        try:
            data = await self._replay(row, lang)
        except EngineError:
            log.exception("game %s cannot be replayed on the web", row.id, extra=about(row))
            raise web.HTTPNotFound from None
        when = row.finished_at or row.updated_at
        context = _base_context(request, lang) | {
            "row": row,
            "variant": _variant_name(row.variant, lang),
            "when": when,
            "data": data,
            "players": [
                (name, data["colours"][seat], data["final"][seat])
                for seat, name in enumerate(row.names)
            ],
            "board": self.access.leaderboard_path(site),
        }
        return aiohttp_jinja2.render_template("game.html", request, context)

    async def _replay(self, row: GameRow, lang: Lang) -> dict[str, Any]:
        key = (row.id, lang)
        data = self._replays.get(key)
        if data is None:
            # A long game takes a moment to rebuild; the bot keeps answering Discord meanwhile.
            data = await asyncio.to_thread(replay_data, row, lang)
            self._replays[key] = data
            while len(self._replays) > KEPT_REPLAYS:
                self._replays.popitem(last=False)
        self._replays.move_to_end(key)
        return data

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
