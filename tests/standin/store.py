"""The message store: creating, editing and deleting messages under Discord's rules.

Every route that makes or changes a message (channel messages, interaction callbacks, webhook
follow-ups and edits) goes through :class:`MessageStore`, so the limits, allowed mentions,
attachments and the gateway events that follow are enforced in one place for all of them.
"""

# The public waits take ``timeout=`` (``await watcher.next(timeout=5)``) on purpose: tests
# read better that way than wrapped in ``asyncio.timeout``, and the guard needs the value.
# ruff: noqa: ASYNC109

from __future__ import annotations

import datetime
import time
import urllib.parse
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from tests.standin.contexts import bot_sees
from tests.standin.events import Cursor, EventLog
from tests.standin.gateway import DIRECT_MESSAGES, GUILD_MESSAGES, MESSAGE_CONTENT, Session
from tests.standin.messages import (
    IS_COMPONENTS_V2,
    LOADING,
    SETTABLE_ON_CREATE,
    SETTABLE_ON_EDIT,
    Attachment,
    ChannelEvent,
    FormErrors,
    Message,
    assign_component_ids,
    compute_mentions,
    normalize_embeds,
    validate_message,
)
from tests.standin.records import APPLICATION_COMMAND, InteractionRecord, command_line
from tests.standin.rest import DiscordError, UploadedFile, invalid_form

if TYPE_CHECKING:
    from tests.standin.server import DiscordStandIn
    from tests.standin.world import Channel, User


class MessageWatcher:
    """Awaits message events (create/edit/delete) in one channel, or all channels, in order."""

    def __init__(self, cursor: Cursor[ChannelEvent], channel: Channel | None) -> None:
        self._cursor = cursor
        self._channel = channel

    async def next(
        self,
        kind: str | Iterable[str] | None = None,
        *,
        predicate: Callable[[ChannelEvent], bool] | None = None,
        timeout: float = 5.0,
    ) -> ChannelEvent:
        """The next event after the watcher's position (optionally of ``kind`` and matching)."""
        kinds = {kind} if isinstance(kind, str) else set(kind) if kind is not None else None

        def wanted(event: ChannelEvent) -> bool:
            if self._channel is not None and event.message.channel is not self._channel:
                return False
            if kinds is not None and event.kind not in kinds:
                return False
            return predicate is None or predicate(event)

        where = f"in #{self._channel.name}" if self._channel else "in any channel"
        return await self._cursor.next(
            wanted, timeout=timeout, what=f"a message {kinds or 'event'} {where}"
        )

    def pending(self) -> list[ChannelEvent]:
        return [
            e
            for e in self._cursor.pending()
            if self._channel is None or e.message.channel is self._channel
        ]


class MessageStore:
    """Every message and uploaded file by id, and the one way to create, edit or delete them."""

    def __init__(self, standin: DiscordStandIn) -> None:
        self._standin = standin
        self.messages_by_id: dict[int, Message] = {}
        self.uploads: dict[int, Attachment] = {}
        self.channel_events: EventLog[ChannelEvent] = EventLog(standin.guard)

    def make_attachment(
        self,
        channel: Channel,
        filename: str,
        data: bytes,
        content_type: str | None,
        description: str | None = None,
    ) -> Attachment:
        """Store a file the stand-in then serves under its ``url``."""
        aid = self._standin.world.snowflakes.next()
        url = f"{self._standin.url}/attachments/{channel.id}/{aid}/{urllib.parse.quote(filename)}"
        att = Attachment(aid, filename, data, url, content_type, description)
        self.uploads[aid] = att
        return att

    def make_message(
        self,
        channel: Channel,
        author: User,
        *,
        record: InteractionRecord | None,
        msg_type: int,
        flags: int = 0,
    ) -> Message:
        """A new, not yet stored message (with interaction metadata when ``record`` made it)."""
        msg = Message(
            self._standin.world.snowflakes.next(), channel, author, flags=flags, type=msg_type
        )
        if record is not None:
            msg.webhook_id = record.application.id
            msg.application_id = record.application.id
            msg.interaction_id = record.id
            meta: dict[str, Any] = {
                "id": str(record.id),
                "type": record.type,
                "user": record.user.to_json(),
                "authorizing_integration_owners": record.payload.get(
                    "authorizing_integration_owners", {}
                ),
            }
            if record.type == APPLICATION_COMMAND:
                meta["name"] = command_line(record.data)
                meta["command_type"] = record.data.get("type", 1)
            if record.source_message is not None:
                meta["interacted_message_id"] = str(record.source_message.id)
            msg.interaction_metadata = meta
        return msg

    def store_new(self, msg: Message) -> None:
        """Put ``msg`` in its channel and tell the bot (MESSAGE_CREATE)."""
        if not msg.loading:
            msg.pinged = list(msg.mentions)
        msg.channel.messages.append(msg)
        self.messages_by_id[msg.id] = msg
        self.channel_events.append(ChannelEvent("create", msg, msg.revision(), time.perf_counter()))
        self._message_event("MESSAGE_CREATE", msg)

    def delete(self, msg: Message) -> None:
        """Mark ``msg`` deleted and tell the bot (MESSAGE_DELETE) unless it was ephemeral."""
        msg.deleted = True
        self.channel_events.append(ChannelEvent("delete", msg, msg.revision(), time.perf_counter()))
        if not msg.ephemeral and bot_sees(self._standin.world, msg.channel):
            guild = msg.channel.guild
            data = {"id": str(msg.id), "channel_id": str(msg.channel.id)}
            if guild is not None:
                data["guild_id"] = str(guild.id)
            self._standin.gateway.dispatch(
                "MESSAGE_DELETE",
                data,
                guild_id=guild.id if guild else None,
                intent=GUILD_MESSAGES if guild else DIRECT_MESSAGES,
            )

    def _message_event(self, event: str, msg: Message) -> None:
        if msg.ephemeral or not self._standin.dispatch_message_events:
            return
        if not bot_sees(self._standin.world, msg.channel):
            return  # the bot is no member there: it hears nothing of the channel
        guild = msg.channel.guild

        def build(session: Session) -> dict[str, Any]:
            data = msg.to_json(guild_id=guild.id if guild else None)
            if guild is not None:
                member = guild.members.get(msg.author.id)
                if member is not None:
                    data["member"] = member.to_json(with_user=False)
                bot_id = session.application.id
                own = msg.author.id == bot_id
                mentioned = any(u.id == bot_id for u in msg.mentions)
                if not session.has_intent(MESSAGE_CONTENT) and not own and not mentioned:
                    # Without the Message Content intent Discord blanks other users' messages.
                    data |= {"content": "", "embeds": [], "attachments": [], "components": []}
            return data

        self._standin.gateway.dispatch(
            event,
            None,
            guild_id=guild.id if guild else None,
            intent=GUILD_MESSAGES if guild else DIRECT_MESSAGES,
            build=build,
        )

    def create(
        self,
        channel: Channel,
        author: User,
        payload: dict[str, Any],
        files: list[UploadedFile],
        *,
        prefix: tuple[str, ...],
        record: InteractionRecord | None,
        msg_type: int,
    ) -> Message:
        """Create and store a message from a request payload; raise Discord's refusal if invalid."""
        flags = int(payload.get("flags") or 0) & SETTABLE_ON_CREATE
        msg = self.make_message(channel, author, record=record, msg_type=msg_type, flags=flags)
        self._apply(msg, payload, files, prefix=prefix, creating=True)
        self.store_new(msg)
        return msg

    def edit(
        self,
        msg: Message,
        payload: dict[str, Any],
        files: list[UploadedFile],
        *,
        prefix: tuple[str, ...],
    ) -> None:
        """Apply an edit payload to ``msg``; raise Discord's refusal if the result is invalid."""
        before = msg.revision()
        was_loading = msg.loading
        self._apply(msg, payload, files, prefix=prefix, creating=False)
        msg.history.append(before)
        if was_loading:
            msg.pinged = list(msg.mentions)
        msg.edited_at = None if was_loading else datetime.datetime.now(datetime.UTC)
        self.channel_events.append(ChannelEvent("edit", msg, msg.revision(), time.perf_counter()))
        self._message_event("MESSAGE_UPDATE", msg)

    def _apply(
        self,
        msg: Message,
        payload: dict[str, Any],
        files: list[UploadedFile],
        *,
        prefix: tuple[str, ...],
        creating: bool,
    ) -> None:
        """Validate ``payload`` against ``msg``'s resulting state and, if valid, apply it."""
        if len(files) > 10:
            errors = FormErrors()
            errors.add((*prefix, "files"), "BASE_TYPE_MAX_LENGTH", "Must be 10 or fewer in length.")
            raise invalid_form(errors)
        if any(len(f.data) > self._standin.max_file_size for f in files):
            raise DiscordError(413, 40005, "Request entity too large")
        content = msg.content
        if "content" in payload:
            content = "" if payload["content"] is None else str(payload["content"])
        embeds = msg.embeds
        if "embeds" in payload:
            embeds = normalize_embeds(payload["embeds"] or [])
        components = msg.components
        if "components" in payload:
            components = assign_component_ids(payload["components"] or [])
        flags = msg.flags
        if not creating and "flags" in payload and payload["flags"] is not None:
            wanted = int(payload["flags"])
            flags = (
                (flags & ~SETTABLE_ON_EDIT)
                | (wanted & SETTABLE_ON_EDIT)
                | (msg.flags & IS_COMPONENTS_V2)
            )
        if not creating:
            flags &= ~LOADING
        attachments = self._merge_attachments(msg, payload, files)
        errors = FormErrors()
        nonempty = validate_message(
            errors,
            prefix,
            content=content,
            embeds=embeds,
            components=components,
            flags=flags,
            attachment_count=len(attachments),
            has_poll=bool(payload.get("poll")),
        )
        if errors:
            raise invalid_form(errors)
        if not nonempty:
            raise DiscordError(400, 50006, "Cannot send an empty message")
        reply_author = None
        ref = payload.get("message_reference") if creating else None
        if ref and ref.get("message_id"):
            target = self.messages_by_id.get(int(ref["message_id"]))
            if target is None and ref.get("fail_if_not_exists", True):
                errors.add(
                    (*prefix, "message_reference"), "REPLIES_UNKNOWN_MESSAGE", "Unknown message"
                )
                raise invalid_form(errors)
            reply_author = target.author if target else None
            msg.message_reference = {
                "type": 0,
                "message_id": str(ref["message_id"]),
                "channel_id": str(msg.channel.id),
                **({"guild_id": str(msg.channel.guild.id)} if msg.channel.guild else {}),
            }
        msg.content, msg.embeds, msg.components, msg.flags = content, embeds, components, flags
        msg.attachments = attachments
        if "allowed_mentions" in payload or creating:
            msg.allowed_mentions = payload.get("allowed_mentions")
        msg.mentions, msg.mention_role_ids, msg.mention_everyone = compute_mentions(
            content,
            msg.allowed_mentions,
            None,
            users=self._standin.world.users,
            reply_author=reply_author,
        )

    def _merge_attachments(
        self, msg: Message, payload: dict[str, Any], files: list[UploadedFile]
    ) -> list[Attachment]:
        by_index = {f.index: f for f in files}
        used: set[int] = set()
        if "attachments" not in payload:
            # No attachments array: keep what the message had and append the new files.
            result = list(msg.attachments)
        else:
            result = []
            existing = {a.id: a for a in msg.attachments}
            for item in payload.get("attachments") or []:
                raw_id = item.get("id")
                try:
                    ident = int(raw_id)
                except (TypeError, ValueError):
                    continue
                if ident in existing:
                    result.append(existing[ident])
                elif ident in by_index:
                    f = by_index[ident]
                    used.add(ident)
                    result.append(
                        self.make_attachment(
                            msg.channel,
                            item.get("filename") or f.filename,
                            f.data,
                            f.content_type,
                            item.get("description"),
                        )
                    )
        for f in files:
            if f.index not in used:
                result.append(self.make_attachment(msg.channel, f.filename, f.data, f.content_type))
        return result
