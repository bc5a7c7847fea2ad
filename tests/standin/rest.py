"""How every REST request is served: auth, injected delays and faults, rate-limit headers, errors.

The route modules (``tests/standin/routes/``) only say what a resource answers; everything that
is the same for all of them lives here, above all the one lookup for ids (:func:`find`), so an
unknown channel, message or interaction is refused with Discord's own 404 body in every route,
and the one reading of bodies (:func:`read_body`), which holds each against Discord's schema.
"""

from __future__ import annotations

import asyncio
import enum
import logging
import math
import re
import time
import traceback
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from aiohttp import web

from tests.standin import schema, wire
from tests.standin.messages import FormErrors
from tests.standin.records import Fault, RequestRecord

if TYPE_CHECKING:
    from tests.standin.apps import Application
    from tests.standin.server import DiscordStandIn

log = logging.getLogger("tests.standin")

API_PREFIX = "/api/v10"
STANDIN_KEY: web.AppKey[Serving] = web.AppKey("standin")
RECORD_KEY = web.RequestKey("standin_record", RequestRecord)
APPLICATION_KEY: web.RequestKey[Application] = web.RequestKey("standin_application")
BODY_KEY: web.RequestKey[tuple[Any, list[UploadedFile]]] = web.RequestKey("standin_body")

K = TypeVar("K")
T = TypeVar("T")


def json_response(
    data: Any, status: int = 200, headers: Mapping[str, str] | None = None
) -> web.Response:
    """A JSON body with ``Content-Type: application/json`` exactly."""
    # Exactly "application/json": discord.py compares the header verbatim and treats
    # "application/json; charset=utf-8" (aiohttp's default for json_response) as text.
    return web.Response(
        body=wire.dump_bytes(data),
        status=status,
        headers={"Content-Type": "application/json", **(headers or {})},
    )


def no_content() -> web.Response:
    """A 204 with no body."""
    # No Content-Type at all: discord.py would try to JSON-decode an empty application/json body.
    return web.Response(status=204)


class DiscordError(Exception):
    """A refusal in Discord's JSON error shape; raise it from a route, the middleware answers it."""

    def __init__(
        self, status: int, code: int, message: str, errors: FormErrors | None = None
    ) -> None:
        super().__init__(f"{status} {code} {message}")
        self.status, self.code, self.message, self.errors = status, code, message, errors

    def response(self) -> web.Response:
        body: dict[str, Any] = {"message": self.message, "code": self.code}
        if self.errors:
            body["errors"] = self.errors.tree
        return json_response(body, self.status)


def invalid_form(errors: FormErrors | None = None) -> DiscordError:
    """Discord's 400 "Invalid Form Body" (50035), with the field errors if any."""
    return DiscordError(400, 50035, "Invalid Form Body", errors)


class Unknown(enum.Enum):
    """Discord's 404 for an id that names nothing it may see: (JSON error code, message)."""

    APPLICATION = (10002, "Unknown Application")
    CHANNEL = (10003, "Unknown Channel")
    GUILD = (10004, "Unknown Guild")
    MEMBER = (10007, "Unknown Member")
    MESSAGE = (10008, "Unknown Message")
    ROLE = (10011, "Unknown Role")
    USER = (10013, "Unknown User")
    EMOJI = (10014, "Unknown Emoji")
    WEBHOOK = (10015, "Unknown Webhook")
    INTERACTION = (10062, "Unknown interaction")

    def error(self) -> DiscordError:
        code, message = self.value
        return DiscordError(404, code, message)


def snowflake(raw: str | None) -> int | None:
    """The id in a path segment, or None where the segment is no id at all."""
    return int(raw) if raw is not None and raw.isdigit() else None


def find(
    table: Mapping[K, T],
    key: K | None,
    unknown: Unknown,
    *,
    where: Callable[[T], bool] | None = None,
) -> T:
    """``table[key]`` if it exists (and passes ``where``); else raise Discord's 404 ``unknown``."""
    item = None if key is None else table.get(key)
    if item is None or (where is not None and not where(item)):
        raise unknown.error()
    return item


def path_id(request: web.Request, name: str) -> int | None:
    """The snowflake in the path segment ``name`` (None if it is not one)."""
    return snowflake(request.match_info.get(name))


@dataclass
class Serving:
    """The stand-in an aiohttp application serves; emptied when the stand-in closes.

    aiohttp keeps each application, with its handlers and middlewares, in a cache of its own for
    the life of the process: holding the stand-in there directly kept every one ever started,
    and everything it recorded, alive (and a benchmark's stand-in slower with each run).
    """

    standin: DiscordStandIn | None


def standin_of(request: web.Request) -> DiscordStandIn:
    """The stand-in serving ``request``."""
    standin = request.app[STANDIN_KEY].standin
    if standin is None:
        raise web.HTTPServiceUnavailable(text="the stand-in has closed")
    return standin


def application_of(request: web.Request) -> Application:
    """The bot whose token authorized ``request`` (routes under ``/interactions``, ``/webhooks``
    carry no token and find theirs through the interaction)."""
    return request[APPLICATION_KEY]


def application_in_path(request: web.Request) -> Application:
    """The calling bot, which the path's ``{app_id}`` names (else 10002 Unknown Application)."""
    app = application_of(request)
    if request.match_info["app_id"] != str(app.id):
        raise Unknown.APPLICATION.error()
    return app


@dataclass
class UploadedFile:
    """One ``files[n]`` part of a multipart request."""

    index: int
    filename: str
    data: bytes
    content_type: str | None


async def read_body(request: web.Request) -> tuple[Any, list[UploadedFile]]:
    """The JSON body (or multipart ``payload_json`` and ``files[n]``), read once per request.

    Recorded on the request, and held against Discord's schema (:func:`check_body`) when first
    read: a route finds what its path names first, so an unknown id is still Discord's 404.
    """
    if BODY_KEY in request:
        return request[BODY_KEY]
    files: list[UploadedFile] = []
    payload: Any
    if request.content_type == "multipart/form-data":
        form = await request.post()
        payload = {}
        raw = form.get("payload_json")
        # aiohttp gives a part sent as application/json as bytes, a text/plain one (discord.py's)
        # as text; Discord reads both.
        if isinstance(raw, (str, bytes, bytearray)):
            payload = wire.loads(raw if isinstance(raw, str) else bytes(raw))
        for key, value in form.items():
            match = re.fullmatch(r"files\[(\d+)\]", key)
            if match and isinstance(value, web.FileField):
                files.append(
                    UploadedFile(
                        int(match.group(1)),
                        value.filename,
                        value.file.read(),
                        value.content_type,
                    )
                )
    elif request.content_type == "application/x-www-form-urlencoded":
        payload = {key: str(value) for key, value in (await request.post()).items()}
    elif request.can_read_body:
        payload = wire.loads(await request.read())
    else:
        payload = {}
    record = request[RECORD_KEY]
    record.json = payload
    request[BODY_KEY] = (payload, files)
    check_body(standin_of(request), request.method, record.path, payload)
    return payload, files


async def read_payload(request: web.Request) -> tuple[dict[str, Any], list[UploadedFile]]:
    """The body of a route that takes a JSON object (see :func:`read_body`)."""
    payload, files = await read_body(request)
    return payload, files


def check_body(standin: DiscordStandIn, method: str, rel: str, body: Any) -> None:
    """Refuse a body Discord's OpenAPI description refuses, with Discord's 400 50035.

    The refusal is also kept in ``standin.refused_bodies``: the fixture fails the test with it
    even where the bot swallows the 400.
    """
    if not standin.check_bodies:
        return
    operation = schema.spec().operation(method, rel)
    if operation is None:
        # Not Discord's: see schema.UNCHECKED.
        return
    errors = operation.check(body)
    if not errors:
        return
    # The interaction or webhook token masked: failure output is no place for one.
    shown = _TOKEN.sub(r"\1{token}", rel)
    refusal = schema.Refusal(method, shown, operation.template, schema.describe(errors), body)
    standin.refused_bodies.append(refusal)
    log.warning("stand-in: Discord's schema refuses a body: %s", refusal)
    raise invalid_form(schema.form_errors(errors))


_TOKEN = re.compile(r"^(/(?:webhooks|interactions)/[^/]+/)[^/]+")

_DEFAULT_FAULT = {
    400: (50035, "Invalid Form Body"),
    401: (0, "401: Unauthorized"),
    403: (50013, "Missing Permissions"),
    404: (10062, "Unknown interaction"),
    500: (0, "500: Internal Server Error"),
    502: (0, "502: Bad Gateway"),
    503: (0, "503: Service Unavailable"),
    504: (0, "504: Gateway Timeout"),
}


@web.middleware
async def serve(
    request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]
) -> web.StreamResponse:
    """Record the request, check its token, apply delays and faults, then run the route."""
    standin = standin_of(request)
    path = request.path
    rel = path[len(API_PREFIX) :] if path.startswith(API_PREFIX + "/") else path
    record = RequestRecord(request.method, rel, dict(request.query), time.perf_counter())
    # Kept on the request (not "the last record") because requests run concurrently.
    request[RECORD_KEY] = record
    if path != "/gateway":
        standin.requests.append(record)
    try:
        return await _answer(request, handler, record)
    finally:
        record.finished.set()


async def _answer(
    request: web.Request,
    handler: Callable[[web.Request], Awaitable[web.StreamResponse]],
    record: RequestRecord,
) -> web.StreamResponse:
    """Check a recorded request's token, apply delays and faults, then run the route."""
    standin = standin_of(request)
    path = request.path
    rel = record.path
    try:
        bearer = request.headers.get("Authorization", "").startswith("Bearer ")
        needs_auth = (
            path.startswith(API_PREFIX + "/")
            and not rel.startswith(("/interactions/", "/webhooks/", "/gateway"))
            # OAuth2's token endpoint takes the client's secret instead; a user's bearer token
            # is the routes' to check where one is accepted.
            and rel != "/oauth2/token"
            and not (bearer and rel in ("/users/@me", "/oauth2/@me"))
        )
        app = standin.applications.by_token(request.headers.get("Authorization"))
        if needs_auth and app is None:
            response: web.StreamResponse = DiscordError(401, 0, "401: Unauthorized").response()
        else:
            if app is not None:
                request[APPLICATION_KEY] = app
            for delay in standin.delays:
                if delay.matches(request.method, rel):
                    if delay.times is not None:
                        delay.times -= 1
                    record.delayed += delay.seconds
                    await asyncio.sleep(delay.seconds)
            fault = next((f for f in standin.faults if f.matches(request.method, rel)), None)
            if fault is not None:
                fault.times -= 1
                fault.hits.append(record)
                record.fault = fault
                if fault.drop:
                    # Done, and the answer lost on the way: the client sees the server hang up.
                    await handler(request)
                    assert request.transport is not None
                    request.transport.close()
                    record.status = 0
                    return web.Response(status=204)
                response = fault_response(fault)
            else:
                response = await handler(request)
                if BODY_KEY not in request and request.body_exists:
                    # A route that ignores its body: the body is still Discord's to refuse.
                    await read_body(request)
    except web.HTTPException:
        raise
    except DiscordError as refusal:
        response = refusal.response()
    except Exception as exc:
        if isinstance(exc, ConnectionResetError) and (
            request.transport is None or request.transport.is_closing()
        ):
            # The client hung up while it sent its request (a process stopped or killed in the
            # middle of a call): Discord never has the whole request either, and does nothing.
            record.status = 499
            return web.Response(status=499, text="the client closed the connection")
        text = f"{request.method} {rel}: {exc!r}\n{traceback.format_exc()}"
        standin.internal_errors.append(text)
        log.error("stand-in internal error: %s", text)
        response = DiscordError(400, 0, f"stand-in internal error: {exc!r}").response()
    record.status = response.status
    if path != "/gateway":
        _ratelimit_headers(response, rel, request.method)
    return response


_ROUTE_PARTS = re.compile(r"(/(?:webhooks|interactions)/)\d{15,}/[^/]+|\d{15,}")
"""Ids in a path, and the token after a webhook's or an interaction's id."""


def _route_part(match: re.Match[str]) -> str:
    """The route's name for an id (``{id}``), or a webhook's or interaction's id and token."""
    return "{id}" if match.group(1) is None else f"{match.group(1)}{{id}}/{{token}}"


def _ratelimit_headers(response: web.StreamResponse, rel: str, method: str) -> None:
    # Generous, realistic headers so discord.py's bucket code runs but never has to wait.
    if response.status == 429 or "X-RateLimit-Limit" in response.headers or response.prepared:
        return
    route = _ROUTE_PARTS.sub(_route_part, rel)
    response.headers.update(
        {
            "X-RateLimit-Limit": "50",
            "X-RateLimit-Remaining": "49",
            "X-RateLimit-Reset": f"{time.time() + 1:.3f}",
            "X-RateLimit-Reset-After": "1.000",
            "X-RateLimit-Bucket": f"{abs(hash((method, route))):016x}",
        }
    )


def fault_response(fault: Fault) -> web.Response:
    """What an injected fault answers: a 429 as Discord (or Cloudflare) sends it, or an error."""
    if fault.status == 429:
        headers = {
            "Retry-After": str(max(1, math.ceil(fault.retry_after))),
            "X-RateLimit-Limit": "5",
            "X-RateLimit-Remaining": "0",
            "X-RateLimit-Reset": f"{time.time() + fault.retry_after:.3f}",
            "X-RateLimit-Reset-After": f"{fault.retry_after:.3f}",
            "X-RateLimit-Bucket": "standinfault",
            "X-RateLimit-Scope": "global" if fault.is_global else "user",
        }
        if fault.is_global:
            headers["X-RateLimit-Global"] = "true"
        if not fault.via:
            # What Cloudflare sends when it bans an IP: HTML, no Via header.
            return web.Response(
                status=429,
                text="<html>error code: 1015</html>",
                content_type="text/html",
                headers=headers,
            )
        # The Via header is how discord.py tells Discord's 429 from a Cloudflare ban.
        headers["Via"] = "1.1 google"
        body = (
            fault.body
            if fault.body is not None
            else {
                "message": fault.message or "You are being rate limited.",
                "retry_after": fault.retry_after,
                "global": fault.is_global,
                "code": fault.code or 0,
            }
        )
        return json_response(body, 429, headers)
    default_code, default_message = _DEFAULT_FAULT.get(fault.status, (0, f"{fault.status}: error"))
    body = (
        fault.body
        if fault.body is not None
        else {
            "message": fault.message or default_message,
            "code": fault.code if fault.code is not None else default_code,
        }
    )
    return json_response(body, fault.status)


async def unknown_route(request: web.Request) -> web.Response:
    """Log and refuse a route the stand-in does not implement, so a test notices the gap."""
    standin_of(request).unknown_requests.append(request[RECORD_KEY])
    log.warning("stand-in: unknown route %s %s", request.method, request.path)
    raise DiscordError(
        404,
        0,
        f"404: Not Found (the stand-in does not implement {request.method} {request.path})",
    )
