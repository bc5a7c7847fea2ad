"""Threads: ``POST /channels/{id}/threads``, ``/channels/{id}/thread-members/{user}`` and
``GET /guilds/{id}/threads/active``.

As on Discord: a thread is started under a server's text channel by whoever may *Create Public
Threads* (type 11) or *Create Private Threads* (type 12) there, and is announced with
``THREAD_CREATE``; its permissions are its parent's, and writing in it takes *Send Messages in
Threads*. Adding a member takes the same, and an archived thread refuses it. The guild's active
threads are those not archived that the bot may view, newest first, with the bot's own
membership of each it joined.
"""

from __future__ import annotations

import datetime

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
    read_payload,
    standin_of,
)
from tests.standin.routes.channels import bot_permissions, channel_of
from tests.standin.world import PRIVATE_THREAD, PUBLIC_THREAD, Channel, iso

routes = web.RouteTableDef()

_VIEW_CHANNEL = 1 << 10
_CREATE_PUBLIC_THREADS = 1 << 35
_CREATE_PRIVATE_THREADS = 1 << 36
_SEND_MESSAGES_IN_THREADS = 1 << 38

_CHANNEL = f"{API_PREFIX}/channels/{{channel_id}}"


@routes.post(f"{_CHANNEL}/threads")
async def start_thread(request: web.Request) -> web.Response:
    parent = channel_of(request)
    app = application_of(request)
    if parent.guild is None or parent.type != 0:
        raise DiscordError(400, 50024, "Cannot execute action on this channel type")
    perms = bot_permissions(app, parent)
    if not perms & _VIEW_CHANNEL:
        raise DiscordError(403, 50001, "Missing Access")
    payload, _ = await read_payload(request)
    kind = int(payload.get("type") or PRIVATE_THREAD)
    needed = _CREATE_PUBLIC_THREADS if kind == PUBLIC_THREAD else _CREATE_PRIVATE_THREADS
    if kind not in (PUBLIC_THREAD, PRIVATE_THREAD):
        raise DiscordError(400, 50035, "Invalid Form Body")
    if not perms & needed:
        raise DiscordError(403, 50013, "Missing Permissions")
    standin = standin_of(request)
    thread = Channel(
        standin.world.snowflakes.next(),
        str(payload["name"]),
        kind,
        parent.guild,
        parent=parent,
        owner_id=app.id,
        thread_members={app.id},
    )
    parent.guild.threads.append(thread)
    standin.world.channels[thread.id] = thread
    standin.gateway.dispatch(
        "THREAD_CREATE", thread.to_json() | {"newly_created": True}, guild_id=parent.guild.id
    )
    return json_response(thread.to_json(), status=201)


@routes.put(f"{_CHANNEL}/thread-members/{{user_id}}")
async def add_thread_member(request: web.Request) -> web.Response:
    thread = _thread(request)
    app = application_of(request)
    perms = bot_permissions(app, thread)
    if not perms & _VIEW_CHANNEL:
        raise DiscordError(403, 50001, "Missing Access")
    if thread.archived:
        raise DiscordError(400, 50083, "Thread is archived")
    if not perms & _SEND_MESSAGES_IN_THREADS:
        raise DiscordError(403, 50013, "Missing Permissions")
    assert thread.guild is not None
    member = find(thread.guild.members, path_id(request, "user_id"), Unknown.MEMBER)
    thread.thread_members.add(member.id)
    return no_content()


@routes.get(f"{_CHANNEL}/thread-members/{{user_id}}")
async def get_thread_member(request: web.Request) -> web.Response:
    thread = _thread(request)
    user_id = path_id(request, "user_id")
    if user_id not in thread.thread_members:
        raise Unknown.MEMBER.error()
    return json_response(
        {"id": str(thread.id), "user_id": str(user_id), "join_timestamp": None, "flags": 0}
    )


@routes.get(f"{API_PREFIX}/guilds/{{guild_id}}/threads/active")
async def list_active_threads(request: web.Request) -> web.Response:
    standin = standin_of(request)
    guild = find(standin.world.guilds, path_id(request, "guild_id"), Unknown.GUILD)
    app = application_of(request)
    active = sorted(
        (
            thread
            for thread in guild.threads
            if not thread.archived and bot_permissions(app, thread) & _VIEW_CHANNEL
        ),
        key=lambda thread: thread.id,
        reverse=True,
    )
    joined = datetime.datetime.now(datetime.UTC)
    members = [
        {"id": str(thread.id), "user_id": str(app.id), "join_timestamp": iso(joined), "flags": 0}
        for thread in active
        if app.id in thread.thread_members
    ]
    return json_response(
        {"threads": [thread.to_json() for thread in active], "members": members, "has_more": False}
    )


def _thread(request: web.Request) -> Channel:
    thread = channel_of(request)
    if not thread.is_thread:
        raise DiscordError(400, 50024, "Cannot execute action on this channel type")
    return thread
