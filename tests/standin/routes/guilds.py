"""Guilds: ``/guilds/{id}`` with its channels, roles and members, as the bot may read them."""

from __future__ import annotations

from aiohttp import web

from tests.standin.rest import (
    API_PREFIX,
    DiscordError,
    Unknown,
    application_of,
    find,
    json_response,
    no_content,
    path_id,
    standin_of,
)
from tests.standin.world import Guild

_MANAGE_ROLES = 1 << 28

routes = web.RouteTableDef()

_GUILD = f"{API_PREFIX}/guilds/{{guild_id}}"


def _guild(request: web.Request) -> Guild:
    return find(standin_of(request).world.guilds, path_id(request, "guild_id"), Unknown.GUILD)


@routes.get(_GUILD)
async def get_guild(request: web.Request) -> web.Response:
    guild = _guild(request)
    data = guild.to_json(members=[])
    # GET /guilds/{id} is the guild without what only GUILD_CREATE carries.
    for key in (
        "channels",
        "members",
        "threads",
        "presences",
        "voice_states",
        "joined_at",
        "large",
        "member_count",
    ):
        data.pop(key, None)
    data["approximate_member_count"] = len(guild.members)
    return json_response(data)


@routes.get(f"{_GUILD}/channels")
async def get_guild_channels(request: web.Request) -> web.Response:
    return json_response([c.to_json() for c in _guild(request).channels])


@routes.get(f"{_GUILD}/roles")
async def get_guild_roles(request: web.Request) -> web.Response:
    return json_response([r.to_json() for r in _guild(request).roles])


@routes.get(f"{_GUILD}/members/{{user_id}}")
async def get_member(request: web.Request) -> web.Response:
    member = find(_guild(request).members, path_id(request, "user_id"), Unknown.MEMBER)
    return json_response(member.to_json())


@routes.put(f"{_GUILD}/members/{{user_id}}/roles/{{role_id}}")
async def add_member_role(request: web.Request) -> web.Response:
    # As Discord: Manage Roles, and only a role below the bot's own highest.
    guild = _guild(request)
    member = find(guild.members, path_id(request, "user_id"), Unknown.MEMBER)
    roles = {role.id: role for role in guild.roles}
    role = find(roles, path_id(request, "role_id"), Unknown.ROLE)
    me = guild.members[application_of(request).id]
    highest = max(each.position for each in me.roles)
    if not guild.base_permissions(me) & _MANAGE_ROLES or role.position >= highest:
        raise DiscordError(403, 50013, "Missing Permissions")
    if role not in member.roles:
        member.roles.append(role)
    return no_content()
