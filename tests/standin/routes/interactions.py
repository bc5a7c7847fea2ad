"""Answering interactions: the callback, and the webhook follow-ups and ``@original`` edits.

These routes carry no bot token: the interaction token in the path names the interaction, and
through it the bot that must answer. Discord's rules for them live here: one response per
interaction, the 3-second deadline for it, the 15-minute token, callback types per interaction.
"""

from __future__ import annotations

import time
from typing import Any

from aiohttp import web

from tests.standin.apps import EMBEDDED
from tests.standin.contexts import check_followup, forced_ephemeral
from tests.standin.messages import EPHEMERAL, LOADING, FormErrors, Message
from tests.standin.records import (
    APPLICATION_COMMAND,
    APPLICATION_COMMAND_AUTOCOMPLETE,
    AUTOCOMPLETE_RESULT,
    CHANNEL_MESSAGE,
    DEFERRED_CHANNEL_MESSAGE,
    DEFERRED_UPDATE_MESSAGE,
    LAUNCH_ACTIVITY,
    MESSAGE_COMPONENT,
    MODAL,
    MODAL_SUBMIT,
    UPDATE_MESSAGE,
    InteractionRecord,
    InteractionResponse,
)
from tests.standin.rest import (
    API_PREFIX,
    DiscordError,
    Unknown,
    find,
    invalid_form,
    json_response,
    no_content,
    path_id,
    read_payload,
    snowflake,
    standin_of,
)

routes = web.RouteTableDef()

# Which callback types Discord accepts for which interaction type.
_ALLOWED_CALLBACKS = {
    APPLICATION_COMMAND: {CHANNEL_MESSAGE, DEFERRED_CHANNEL_MESSAGE, MODAL, LAUNCH_ACTIVITY},
    MESSAGE_COMPONENT: {
        LAUNCH_ACTIVITY,
        CHANNEL_MESSAGE,
        DEFERRED_CHANNEL_MESSAGE,
        DEFERRED_UPDATE_MESSAGE,
        UPDATE_MESSAGE,
        MODAL,
    },
    APPLICATION_COMMAND_AUTOCOMPLETE: {AUTOCOMPLETE_RESULT},
    MODAL_SUBMIT: {
        CHANNEL_MESSAGE,
        DEFERRED_CHANNEL_MESSAGE,
        DEFERRED_UPDATE_MESSAGE,
        UPDATE_MESSAGE,
    },
}

_WEBHOOK_MESSAGE = f"{API_PREFIX}/webhooks/{{app_id}}/{{token}}/messages/{{message_id}}"


def _reply_type(record: InteractionRecord) -> int:
    """The message type of a response: 20 (chat input command) or 0."""
    return 20 if record.type == APPLICATION_COMMAND else 0


def _refuse(record: InteractionRecord, error: DiscordError) -> DiscordError:
    """Note on the record a request Discord would have refused, for tests to assert on."""
    record.rejected.append((error.status, error.code))
    return error


@routes.post(f"{API_PREFIX}/interactions/{{interaction_id}}/{{token}}/callback")
async def callback(request: web.Request) -> web.Response:
    received = time.perf_counter()
    standin = standin_of(request)
    token = request.match_info["token"]
    record = find(
        standin.interactions,
        path_id(request, "interaction_id"),
        Unknown.INTERACTION,
        where=lambda r: r.token == token,
    )
    payload, files = await read_payload(request)
    if record.acknowledged:
        raise _refuse(
            record, DiscordError(400, 40060, "Interaction has already been acknowledged.")
        )
    deadline = standin.interaction_deadline
    if deadline is not None and received - record.dispatched_at > deadline:
        # Discord forgets an interaction not answered within 3 seconds.
        raise _refuse(record, Unknown.INTERACTION.error())
    rtype = payload.get("type")
    data = payload.get("data") or {}
    if rtype not in _ALLOWED_CALLBACKS.get(record.type, set()):
        errors = FormErrors()
        errors.add(
            ("type",),
            "INTERACTION_CALLBACK_TYPE_INVALID",
            f"Callback type {rtype} is invalid for interaction type {record.type}",
        )
        raise invalid_form(errors)
    if rtype == LAUNCH_ACTIVITY and not record.application.flags & EMBEDDED:
        # Only an application whose Activity is enabled in the Developer Portal may launch one;
        # the interaction stays unanswered, as after any refused callback.
        errors = FormErrors()
        errors.add(
            ("type",),
            "INTERACTION_CALLBACK_TYPE_INVALID",
            "Callback type 12 is invalid: the application has no Activity",
        )
        raise _refuse(record, invalid_form(errors))
    store = standin.store
    bot = record.application.bot_user
    message: Message | None = None
    if rtype in (CHANNEL_MESSAGE, DEFERRED_CHANNEL_MESSAGE) and forced_ephemeral(
        standin.world, record
    ):
        # The server denies "Use External Apps": Discord shows the answer to its user alone.
        data = {**data, "flags": int(data.get("flags") or 0) | EPHEMERAL}
        record.forced_ephemeral = True
    if rtype == CHANNEL_MESSAGE:
        assert record.channel is not None
        message = store.create(
            record.channel,
            bot,
            data,
            files,
            prefix=("data",),
            record=record,
            msg_type=_reply_type(record),
        )
        record.original = message
    elif rtype == DEFERRED_CHANNEL_MESSAGE:
        assert record.channel is not None
        flags = LOADING | (int(data.get("flags") or 0) & EPHEMERAL)
        message = store.make_message(
            record.channel, bot, record=record, msg_type=_reply_type(record), flags=flags
        )
        store.store_new(message)
        record.original = message
    elif rtype in (DEFERRED_UPDATE_MESSAGE, UPDATE_MESSAGE):
        message = record.source_message
        if message is None:
            raise invalid_form()
        if rtype == UPDATE_MESSAGE:
            store.edit(message, data, files, prefix=("data",))
        record.original = message
    elif rtype == AUTOCOMPLETE_RESULT:
        if len(data.get("choices") or []) > 25:
            errors = FormErrors()
            errors.add(
                ("data", "choices"), "BASE_TYPE_MAX_LENGTH", "Must be 25 or fewer in length."
            )
            raise invalid_form(errors)
    elif rtype == MODAL:
        errors = FormErrors()
        errors.max_length(("data", "title"), data.get("title"), 45)
        if not data.get("custom_id") or len(str(data.get("custom_id"))) > 100:
            errors.add(
                ("data", "custom_id"),
                "BASE_TYPE_BAD_LENGTH",
                "Must be between 1 and 100 in length.",
            )
        if errors:
            raise invalid_form(errors)
    record.acknowledged = True
    response = InteractionResponse(
        type=int(rtype),
        data=data,
        files=[(f.filename, f.data) for f in files],
        dispatched_at=record.dispatched_at,
        received_at=received,
        message=message if rtype != DEFERRED_UPDATE_MESSAGE else None,
    )
    record.callbacks.append(response)
    if request.query.get("with_response") not in ("1", "true", "True"):
        return no_content()
    # discord.py 2.7 always asks with_response=1 and reads interaction.response_message_id
    # (views are stored under it) and resource.message (InteractionCallbackResponse.resource).
    interaction_info: dict[str, Any] = {"id": str(record.id), "type": record.type}
    body: dict[str, Any] = {"interaction": interaction_info, "resource": {"type": rtype}}
    if message is not None and rtype != DEFERRED_UPDATE_MESSAGE:
        interaction_info |= {
            "response_message_id": str(message.id),
            "response_message_loading": bool(message.flags & LOADING),
            "response_message_ephemeral": message.ephemeral,
        }
        body["resource"]["message"] = message.to_json()
    if rtype == LAUNCH_ACTIVITY:
        body["resource"]["activity_instance"] = {"id": f"i-{record.id}"}
    return json_response(body)


def _webhook_record(request: web.Request) -> InteractionRecord:
    """The interaction whose token the webhook path carries, while that token may be used."""
    app_id = request.match_info["app_id"]
    record = find(
        standin_of(request).interactions_by_token,
        request.match_info["token"],
        Unknown.WEBHOOK,
        where=lambda r: app_id == str(r.application.id),
    )
    if time.perf_counter() - record.dispatched_at > standin_of(request).token_lifetime:
        raise _refuse(record, DiscordError(401, 50027, "Invalid Webhook Token"))
    if not record.acknowledged:
        # Follow-ups and @original only exist once the interaction has been responded to.
        raise _refuse(record, Unknown.WEBHOOK.error())
    return record


def _webhook_message(request: web.Request, record: InteractionRecord) -> Message:
    """``@original`` or one of the interaction's follow-ups, if not deleted."""
    raw = request.match_info["message_id"]
    original = record.original
    key = (original.id if original else None) if raw == "@original" else snowflake(raw)
    return find(
        standin_of(request).store.messages_by_id,
        key,
        Unknown.MESSAGE,
        where=lambda m: not m.deleted and (m is original or m in record.followups.items),
    )


@routes.post(f"{API_PREFIX}/webhooks/{{app_id}}/{{token}}")
async def webhook_execute(request: web.Request) -> web.Response:
    record = _webhook_record(request)
    standin = standin_of(request)
    store = standin.store
    payload, files = await read_payload(request)
    check_followup(standin.world, record)
    if forced_ephemeral(standin.world, record):
        payload = {**payload, "flags": int(payload.get("flags") or 0) | EPHEMERAL}
        record.forced_ephemeral = True
    original = record.original
    if (
        original is not None
        and original.loading
        and not record.defer_filled
        and original.interaction_id == record.id
    ):
        # Discord: after a "thinking" defer the first follow-up *becomes* the deferred
        # message (same id, keeping the defer's ephemeral flag).
        store.edit(original, payload, files, prefix=())
        record.defer_filled = True
        message = original
    else:
        assert record.channel is not None
        message = store.create(
            record.channel,
            record.application.bot_user,
            payload,
            files,
            prefix=(),
            record=record,
            msg_type=_reply_type(record),
        )
    record.followups.append(message)
    if request.query.get("wait") in ("1", "true", "True"):
        return json_response(message.to_json())
    return no_content()


@routes.get(_WEBHOOK_MESSAGE)
async def webhook_get(request: web.Request) -> web.Response:
    record = _webhook_record(request)
    return json_response(_webhook_message(request, record).to_json())


@routes.patch(_WEBHOOK_MESSAGE)
async def webhook_edit(request: web.Request) -> web.Response:
    record = _webhook_record(request)
    msg = _webhook_message(request, record)
    payload, files = await read_payload(request)
    standin_of(request).store.edit(msg, payload, files, prefix=())
    if msg is record.original:
        record.original_edits.append(msg.revision())
    return json_response(msg.to_json())


@routes.delete(_WEBHOOK_MESSAGE)
async def webhook_delete(request: web.Request) -> web.Response:
    record = _webhook_record(request)
    standin_of(request).store.delete(_webhook_message(request, record))
    return no_content()
