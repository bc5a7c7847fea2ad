"""Who the bot is and where its gateway is: ``/users``, ``/oauth2/applications``, ``/gateway``.

What discord.py asks at login. The bot's own user and application are the ones whose token
the request carries, so each hosted bot sees itself.
"""

from __future__ import annotations

from aiohttp import web

from tests.standin.rest import (
    API_PREFIX,
    DiscordError,
    Unknown,
    application_of,
    find,
    invalid_form,
    json_response,
    path_id,
    read_payload,
    standin_of,
)
from tests.standin.routes.oauth import bearer_grant

routes = web.RouteTableDef()


@routes.get(f"{API_PREFIX}/gateway")
async def get_gateway(request: web.Request) -> web.Response:
    return json_response({"url": standin_of(request).gateway_url})


@routes.get(f"{API_PREFIX}/gateway/bot")
async def get_gateway_bot(request: web.Request) -> web.Response:
    standin = standin_of(request)
    return json_response(
        {
            "url": standin.gateway_url,
            "shards": standin.shard_count,
            "session_start_limit": {
                "total": 1000,
                "remaining": 999,
                "reset_after": 14400000,
                "max_concurrency": standin.max_concurrency,
            },
        }
    )


@routes.get(f"{API_PREFIX}/users/@me")
async def get_me(request: web.Request) -> web.Response:
    if request.headers.get("Authorization", "").startswith("Bearer "):
        # A user's access token (an Activity's): its user, whichever application it was for.
        grant = bearer_grant(request)
        if "identify" not in grant.scopes:
            raise DiscordError(401, 0, "401: Unauthorized")
        return json_response(grant.user.to_json())
    return json_response(
        application_of(request).bot_user.to_json()
        | {"verified": True, "mfa_enabled": False, "locale": "en-US"}
    )


@routes.post(f"{API_PREFIX}/users/@me/channels")
async def create_dm(request: web.Request) -> web.Response:
    standin = standin_of(request)
    payload, _ = await read_payload(request)
    user = standin.world.users.get(int(payload.get("recipient_id", 0)))
    if user is None:
        # Discord refuses a DM with nobody as a bad form, not as an unknown user.
        raise invalid_form()
    return json_response(standin.world.dm_channel(user).to_json())


@routes.get(f"{API_PREFIX}/users/{{user_id:\\d+}}")
async def get_user(request: web.Request) -> web.Response:
    user = find(standin_of(request).world.users, path_id(request, "user_id"), Unknown.USER)
    return json_response(user.to_json())


@routes.get(f"{API_PREFIX}/oauth2/applications/@me")
@routes.get(f"{API_PREFIX}/applications/@me")
async def get_application(request: web.Request) -> web.Response:
    app = application_of(request)
    return json_response(
        {
            "id": str(app.id),
            "name": app.bot_user.name,
            "icon": None,
            "description": "",
            "summary": "",
            "type": None,
            "bot_public": True,
            "bot_require_code_grant": False,
            "verify_key": "0" * 64,
            "flags": app.flags,
            "owner": app.owner.to_json(),
            "team": None,
            "bot": app.bot_user.to_json(),
            "rpc_origins": [],
            "tags": [],
            "redirect_uris": [],
            "interactions_endpoint_url": None,
            "approximate_guild_count": len(standin_of(request).world.guilds),
            "integration_types_config": {"0": {}},
        }
    )
