"""Channels and their messages: ``/channels/{id}``, messages, reactions, typing, attachments.

The bot acts in a channel as the user of the token it sends, with the permissions that user
has there; ephemeral messages do not exist for these routes, as on Discord.
"""

from __future__ import annotations

from aiohttp import web

from tests.standin.apps import Application
from tests.standin.contexts import check_reach
from tests.standin.messages import EPHEMERAL, Message
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
from tests.standin.world import DEFAULT_BOT_PERMISSIONS, Channel

routes = web.RouteTableDef()

_MANAGE_MESSAGES = 1 << 13
_SEND_MESSAGES = 1 << 11
_SEND_MESSAGES_IN_THREADS = 1 << 38
_VIEW_CHANNEL = 1 << 10
_ATTACH_FILES = 1 << 15
_READ_MESSAGE_HISTORY = 1 << 16

_CHANNEL = f"{API_PREFIX}/channels/{{channel_id}}"
_MESSAGE = f"{_CHANNEL}/messages/{{message_id}}"


def _channel(request: web.Request) -> Channel:
    world = standin_of(request).world
    channel = find(world.channels, path_id(request, "channel_id"), Unknown.CHANNEL)
    # A private channel, or a guild that never added the bot: its token reaches nothing there.
    check_reach(world, channel, request.method, request.path)
    return channel


def _message(request: web.Request, channel: Channel) -> Message:
    # Ephemeral messages do not exist for the channel endpoints.
    return find(
        standin_of(request).store.messages_by_id,
        path_id(request, "message_id"),
        Unknown.MESSAGE,
        where=lambda m: m.channel is channel and not m.deleted and not m.ephemeral,
    )


def _bot_perms(app: Application, channel: Channel) -> int:
    if channel.guild is None:
        return DEFAULT_BOT_PERMISSIONS | _VIEW_CHANNEL | _SEND_MESSAGES
    return channel.permissions_for(channel.guild.members[app.id])


#: For the other channel routes (threads): the channel a path names, and the bot's permissions.
channel_of = _channel
bot_permissions = _bot_perms


@routes.get(_CHANNEL)
async def get_channel(request: web.Request) -> web.Response:
    return json_response(_channel(request).to_json())


@routes.get(f"{_CHANNEL}/messages")
async def list_messages(request: web.Request) -> web.Response:
    channel = _channel(request)
    perms = _bot_perms(application_of(request), channel)
    if not perms & _VIEW_CHANNEL:
        raise DiscordError(403, 50001, "Missing Access")
    if not perms & _READ_MESSAGE_HISTORY:
        return json_response([])  # as Discord does: no messages, and no error
    msgs = [m for m in channel.messages if not m.deleted and not m.ephemeral]
    before, after = request.query.get("before"), request.query.get("after")
    if before:
        msgs = [m for m in msgs if m.id < int(before)]
    if after:
        msgs = [m for m in msgs if m.id > int(after)]
    limit = max(1, min(100, int(request.query.get("limit", 50))))
    newest_first = list(reversed(msgs))
    chosen = newest_first[:limit] if not after else list(reversed(msgs[:limit]))
    return json_response([m.to_json() for m in chosen])


@routes.post(f"{_CHANNEL}/messages")
async def post_message(request: web.Request) -> web.Response:
    channel = _channel(request)
    app = application_of(request)
    perms = _bot_perms(app, channel)
    if not perms & _VIEW_CHANNEL:
        raise DiscordError(403, 50001, "Missing Access")
    # In a thread writing takes Send Messages in Threads instead; an archived thread is opened
    # again by a message, unless it is locked.
    if not perms & (_SEND_MESSAGES_IN_THREADS if channel.is_thread else _SEND_MESSAGES):
        raise DiscordError(403, 50013, "Missing Permissions")
    if channel.archived and channel.locked:
        raise DiscordError(400, 50083, "Thread is archived")
    if channel.archived:
        channel.archived = False
        assert channel.guild is not None
        standin_of(request).gateway.dispatch(
            "THREAD_UPDATE", channel.to_json(), guild_id=channel.guild.id
        )
    payload, files = await read_payload(request)
    if files and not perms & _ATTACH_FILES:
        raise DiscordError(403, 50013, "Missing Permissions")
    if int(payload.get("flags") or 0) & EPHEMERAL:
        payload = {**payload, "flags": int(payload["flags"]) & ~EPHEMERAL}
    ref = payload.get("message_reference")
    msg = standin_of(request).store.create(
        channel,
        app.bot_user,
        payload,
        files,
        prefix=(),
        record=None,
        msg_type=19 if ref else 0,
    )
    return json_response(msg.to_json())


@routes.get(_MESSAGE)
async def get_message(request: web.Request) -> web.Response:
    return json_response(_message(request, _channel(request)).to_json())


@routes.patch(_MESSAGE)
async def edit_message(request: web.Request) -> web.Response:
    msg = _message(request, _channel(request))
    payload, files = await read_payload(request)
    if msg.author.id != application_of(request).id and set(payload) - {"flags"}:
        raise DiscordError(403, 50005, "Cannot edit a message authored by another user")
    standin_of(request).store.edit(msg, payload, files, prefix=())
    return json_response(msg.to_json())


@routes.delete(_MESSAGE)
async def delete_message(request: web.Request) -> web.Response:
    channel = _channel(request)
    msg = _message(request, channel)
    app = application_of(request)
    if msg.author.id != app.id and not _bot_perms(app, channel) & _MANAGE_MESSAGES:
        raise DiscordError(403, 50013, "Missing Permissions")
    standin_of(request).store.delete(msg)
    return no_content()


@routes.post(f"{_CHANNEL}/typing")
async def typing(request: web.Request) -> web.Response:
    _channel(request)
    return no_content()


@routes.put(f"{_MESSAGE}/reactions/{{emoji}}/@me")
@routes.delete(f"{_MESSAGE}/reactions/{{emoji}}/@me")
async def react(request: web.Request) -> web.Response:
    msg = _message(request, _channel(request))
    users = msg.reactions.setdefault(request.match_info["emoji"], set())
    if request.method == "PUT":
        users.add(application_of(request).id)
    else:
        users.discard(application_of(request).id)
    return no_content()


@routes.get("/attachments/{channel_id}/{attachment_id}/{filename}")
async def get_attachment(request: web.Request) -> web.Response:
    # A file URL, not the API: a plain 404 like a CDN's, not Discord's JSON error.
    att = standin_of(request).store.uploads.get(path_id(request, "attachment_id") or 0)
    if att is None or att.url.split("/")[-3] != request.match_info["channel_id"]:
        return web.Response(status=404, text="Not Found")
    return web.Response(
        body=att.data, headers={"Content-Type": att.content_type or "application/octet-stream"}
    )
