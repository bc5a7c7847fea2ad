"""OAuth2 for an Activity's users: ``POST /oauth2/token``, and who a bearer token is.

The token endpoint is OAuth2's own (RFC 6749): a form-encoded body, the client's id and secret
in it (or as HTTP Basic), and OAuth2's errors (``{"error": "invalid_grant"}``) rather than
Discord's JSON error codes. ``GET /users/@me`` answers a bearer token with its user (bot tokens
are answered in ``routes/bot.py``), whichever application the token was made for: only
``GET /oauth2/@me`` tells that application, and the scopes and expiry.
"""

from __future__ import annotations

import base64
import binascii
from datetime import UTC, datetime, timedelta
from typing import Any

from aiohttp import web

from tests.standin.oauth import TOKEN_SECONDS, Grant
from tests.standin.rest import API_PREFIX, DiscordError, json_response, read_payload, standin_of

routes = web.RouteTableDef()


def _oauth_error(status: int, error: str, description: str | None = None) -> web.Response:
    body = {"error": error} | ({} if description is None else {"error_description": description})
    return json_response(body, status)


def _client(request: web.Request, payload: dict[str, Any]) -> tuple[str, str]:
    """The client id and secret: from HTTP Basic where given, else from the form."""
    header = request.headers.get("Authorization", "")
    if header.startswith("Basic "):
        try:
            pair = base64.b64decode(header.removeprefix("Basic ")).decode()
        except (binascii.Error, UnicodeDecodeError):
            return "", ""
        client_id, _, secret = pair.partition(":")
        return client_id, secret
    return str(payload.get("client_id") or ""), str(payload.get("client_secret") or "")


@routes.post(f"{API_PREFIX}/oauth2/token")
async def token(request: web.Request) -> web.Response:
    standin = standin_of(request)
    if request.content_type != "application/x-www-form-urlencoded":
        return _oauth_error(400, "invalid_request", "The body must be form-encoded.")
    payload, _ = await read_payload(request)
    client_id, secret = _client(request, payload)
    application = next((app for app in standin.applications if str(app.id) == client_id), None)
    if application is None or secret != application.client_secret:
        return _oauth_error(401, "invalid_client")
    if payload.get("grant_type") != "authorization_code":
        return _oauth_error(400, "unsupported_grant_type")
    code = payload.get("code")
    if not code:
        return _oauth_error(400, "invalid_request", 'Missing "code" in request.')
    traded = standin.oauth.trade(application, str(code))
    if traded is None:
        return _oauth_error(400, "invalid_grant", 'Invalid "code" in request.')
    access_token, grant = traded
    return json_response(
        {
            "access_token": access_token,
            "token_type": "Bearer",
            "expires_in": TOKEN_SECONDS,
            "refresh_token": f"refresh-{access_token}",
            "scope": " ".join(grant.scopes),
        }
    )


def bearer_grant(request: web.Request) -> Grant:
    """The live grant of the request's bearer token, or Discord's 401."""
    grant = standin_of(request).oauth.grant_of(request.headers.get("Authorization"))
    if grant is None:
        raise DiscordError(401, 0, "401: Unauthorized")
    return grant


@routes.get(f"{API_PREFIX}/oauth2/@me")
async def authorization(request: web.Request) -> web.Response:
    grant = bearer_grant(request)
    app = grant.application
    expires = datetime.now(UTC) + timedelta(
        seconds=grant.expires_at - standin_of(request).oauth.clock()
    )
    body: dict[str, Any] = {
        "application": {
            "id": str(app.id),
            "name": app.bot_user.name,
            "icon": None,
            "description": "",
            "type": None,
            "bot_public": True,
            "bot_require_code_grant": False,
            "verify_key": "0" * 64,
            "flags": app.flags,
        },
        "expires": expires.isoformat(),
        "scopes": list(grant.scopes),
    }
    if "identify" in grant.scopes:
        body["user"] = grant.user.to_json()
    return json_response(body)
