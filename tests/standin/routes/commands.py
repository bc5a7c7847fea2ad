"""Application commands: ``/applications/{app}/commands`` and the guild-scoped lists.

The commands are the calling bot's (found by its token); a path naming another application
is refused as Discord does, and the sync is checked by :func:`tests.standin.commands.validate_sync`.
"""

from __future__ import annotations

import json
import time
from typing import Any

from aiohttp import web

from tests.standin.apps import Application, SyncRecord
from tests.standin.commands import CHAT_INPUT, validate_sync
from tests.standin.rest import (
    API_PREFIX,
    DiscordError,
    application_in_path,
    invalid_form,
    json_response,
    path_id,
    read_body,
    standin_of,
)

routes = web.RouteTableDef()

_GLOBAL = f"{API_PREFIX}/applications/{{app_id}}/commands"
_GUILD = f"{API_PREFIX}/applications/{{app_id}}/guilds/{{guild_id}}/commands"


def _scope(request: web.Request) -> tuple[Application, int | None]:
    """The calling bot and the guild the path names (None for global commands)."""
    app = application_in_path(request)
    if "guild_id" not in request.match_info:
        return app, None
    guild_id = path_id(request, "guild_id")
    if guild_id not in standin_of(request).world.guilds:
        # A guild the bot is not in is not "unknown" to Discord here: it is out of reach.
        raise DiscordError(403, 50001, "Missing Access")
    return app, guild_id


@routes.get(_GLOBAL)
@routes.get(_GUILD)
async def get_commands(request: web.Request) -> web.Response:
    app, guild_id = _scope(request)
    return json_response(app.commands.get(guild_id, []))


@routes.put(_GLOBAL)
@routes.put(_GUILD)
async def put_commands(request: web.Request) -> web.Response:
    app, guild_id = _scope(request)
    payload, _files = await read_body(request)
    errors = validate_sync(payload)
    if errors:
        raise invalid_form(errors)
    snowflakes = standin_of(request).world.snowflakes
    old = {(c["name"], int(c.get("type", 1))): c for c in app.commands.get(guild_id, [])}
    stored: list[dict[str, Any]] = []
    for cmd in payload:
        kind = int(cmd.get("type", CHAT_INPUT))
        previous = old.get((cmd["name"], kind))
        # Discord keeps a command's id across syncs as long as name and type stay the same.
        entry = json.loads(json.dumps(cmd)) | {
            "id": previous["id"] if previous else str(snowflakes.next()),
            "application_id": str(app.id),
            "version": str(snowflakes.next()),
            "type": kind,
            "description": cmd.get("description", ""),
            # Discord answers with the permission bit field as a string.
            "default_member_permissions": None
            if cmd.get("default_member_permissions") is None
            else str(cmd["default_member_permissions"]),
            "nsfw": bool(cmd.get("nsfw", False)),
        }
        if guild_id is not None:
            entry["guild_id"] = str(guild_id)
        stored.append(entry)
    app.commands[guild_id] = stored
    app.syncs.append(SyncRecord(guild_id, payload, time.perf_counter()))
    return json_response(stored)
