"""Messages the bot creates or edits, their revisions, and Discord's checks on message payloads."""

from __future__ import annotations

import datetime
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from tests.standin.world import iso

if TYPE_CHECKING:
    from tests.standin.world import Channel, User

# Message flags (https://discord.com/developers/docs/resources/message#message-object-message-flags)
SUPPRESS_EMBEDS = 1 << 2
EPHEMERAL = 1 << 6
LOADING = 1 << 7
SUPPRESS_NOTIFICATIONS = 1 << 12
IS_COMPONENTS_V2 = 1 << 15
#: Flags a bot may set when it creates a message.
SETTABLE_ON_CREATE = SUPPRESS_EMBEDS | EPHEMERAL | SUPPRESS_NOTIFICATIONS | IS_COMPONENTS_V2
#: Flags a bot may change when it edits one (IS_COMPONENTS_V2 can be set but never cleared).
SETTABLE_ON_EDIT = SUPPRESS_EMBEDS | IS_COMPONENTS_V2

MAX_FILE_SIZE = 10 * 1024 * 1024

_USER_MENTION = re.compile(r"<@!?(\d+)>")
_ROLE_MENTION = re.compile(r"<@&(\d+)>")
_SELECTS = {3, 5, 6, 7, 8}


@dataclass
class Attachment:
    """A file stored with a message; the stand-in serves ``url``, so ``Attachment.read()`` works."""

    id: int
    filename: str
    data: bytes
    url: str
    content_type: str | None = None
    description: str | None = None

    @property
    def size(self) -> int:
        return len(self.data)

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "id": str(self.id),
            "filename": self.filename,
            "size": self.size,
            "url": self.url,
            "proxy_url": self.url,
            "content_type": self.content_type or "application/octet-stream",
        }
        if self.description is not None:
            data["description"] = self.description
        return data


@dataclass(frozen=True)
class MessageRevision:
    """A message's state at one point in time (``Message.history`` keeps one per edit)."""

    content: str
    embeds: tuple[dict[str, Any], ...]
    components: tuple[dict[str, Any], ...]
    flags: int
    attachments: tuple[str, ...]
    allowed_mentions: dict[str, Any] | None
    at: datetime.datetime
    mentioned: tuple[int, ...] = ()
    """The ids of the users this revision's content mentions under its allowed_mentions."""


@dataclass(eq=False)
class Message:
    """A message in the stand-in's store, as the bot last left it.

    ``history`` holds the earlier revisions, oldest first. ``interaction_id`` is set for
    messages made by an interaction response or follow-up.
    """

    id: int
    channel: Channel
    author: User
    content: str = ""
    embeds: list[dict[str, Any]] = field(default_factory=list)
    components: list[dict[str, Any]] = field(default_factory=list)
    flags: int = 0
    attachments: list[Attachment] = field(default_factory=list)
    allowed_mentions: dict[str, Any] | None = None
    mentions: list[User] = field(default_factory=list)
    mention_role_ids: list[int] = field(default_factory=list)
    mention_everyone: bool = False
    pinged: list[User] = field(default_factory=list)
    """Who was notified: those mentioned when the message appeared (at creation, or when a
    deferred response was filled in). Discord notifies nobody of an edit's mentions."""
    type: int = 0
    created_at: datetime.datetime = field(
        default_factory=lambda: datetime.datetime.now(datetime.UTC)
    )
    edited_at: datetime.datetime | None = None
    history: list[MessageRevision] = field(default_factory=list)
    deleted: bool = False
    webhook_id: int | None = None
    application_id: int | None = None
    interaction_id: int | None = None
    interaction_metadata: dict[str, Any] | None = None
    message_reference: dict[str, Any] | None = None
    reactions: dict[str, set[int]] = field(default_factory=dict)

    @property
    def ephemeral(self) -> bool:
        return bool(self.flags & EPHEMERAL)

    @property
    def loading(self) -> bool:
        """True while this is a deferred ("Bot is thinking...") response not yet filled in."""
        return bool(self.flags & LOADING)

    @property
    def files(self) -> list[tuple[str, bytes]]:
        """The attachments as ``(filename, bytes)`` pairs."""
        return [(a.filename, a.data) for a in self.attachments]

    def walk_components(self) -> Iterator[dict[str, Any]]:
        """Every component in the message, nested ones included (rows, containers, sections)."""
        yield from walk_components(self.components)

    def custom_ids(self) -> list[str]:
        """The custom_id of every interactive component, in display order."""
        return [c["custom_id"] for c in self.walk_components() if "custom_id" in c]

    def component(self, custom_id: str) -> dict[str, Any]:
        """The component with ``custom_id``; ``KeyError`` listing the existing ids otherwise."""
        for comp in self.walk_components():
            if comp.get("custom_id") == custom_id:
                return comp
        raise KeyError(
            f"message {self.id} has no component {custom_id!r}; it has {self.custom_ids()}"
        )

    def revision(self) -> MessageRevision:
        """The current state as an immutable :class:`MessageRevision`."""
        return MessageRevision(
            content=self.content,
            embeds=tuple(self.embeds),
            components=tuple(self.components),
            flags=self.flags,
            attachments=tuple(a.filename for a in self.attachments),
            allowed_mentions=self.allowed_mentions,
            at=self.edited_at or self.created_at,
            mentioned=tuple(user.id for user in self.mentions),
        )

    def to_json(self, *, guild_id: int | None = None) -> dict[str, Any]:
        """The message object as Discord returns it (``guild_id`` only for gateway events)."""
        data: dict[str, Any] = {
            "id": str(self.id),
            "channel_id": str(self.channel.id),
            "author": self.author.to_json(),
            "content": self.content,
            "timestamp": iso(self.created_at),
            "edited_timestamp": iso(self.edited_at),
            "tts": False,
            "mention_everyone": self.mention_everyone,
            "mentions": [u.to_json() for u in self.mentions],
            "mention_roles": [str(r) for r in self.mention_role_ids],
            "attachments": [a.to_json() for a in self.attachments],
            "embeds": list(self.embeds),
            "components": list(self.components),
            "pinned": False,
            "type": self.type,
            "flags": self.flags,
        }
        if self.reactions:
            data["reactions"] = [
                {
                    "emoji": _emoji_json(e),
                    "count": len(users),
                    "me": False,
                    "burst_colors": [],
                    "count_details": {"burst": 0, "normal": len(users)},
                    "me_burst": False,
                    "burst_me": False,
                    "burst_count": 0,
                }
                for e, users in self.reactions.items()
                if users
            ]
        if self.webhook_id is not None:
            data["webhook_id"] = str(self.webhook_id)
        if self.application_id is not None:
            data["application_id"] = str(self.application_id)
        if self.interaction_metadata is not None:
            data["interaction_metadata"] = self.interaction_metadata
        if self.message_reference is not None:
            data["message_reference"] = self.message_reference
        if guild_id is not None:
            data["guild_id"] = str(guild_id)
        return data


def _emoji_json(emoji: str) -> dict[str, Any]:
    match = re.fullmatch(r"<?a?:?(\w+):(\d+)>?", emoji)
    if match:
        return {"id": match.group(2), "name": match.group(1)}
    return {"id": None, "name": emoji}


def walk_components(components: list[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    """Depth-first walk over a component tree (action rows, containers, sections, labels)."""
    for comp in components:
        yield comp
        if isinstance(comp.get("components"), list):
            yield from walk_components(comp["components"])
        accessory = comp.get("accessory")
        if isinstance(accessory, dict):
            yield from walk_components([accessory])
        inner = comp.get("component")
        if isinstance(inner, dict):
            yield from walk_components([inner])


def assign_component_ids(components: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Copy the tree and number components lacking an ``id`` 1, 2, 3... like Discord does."""
    copied: list[dict[str, Any]] = _deep_copy(components)
    taken = {c["id"] for c in walk_components(copied) if isinstance(c.get("id"), int)}
    counter = 0
    for comp in walk_components(copied):
        if not isinstance(comp.get("id"), int):
            counter += 1
            while counter in taken:
                counter += 1
            comp["id"] = counter
    return copied


def _deep_copy(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _deep_copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_deep_copy(v) for v in value]
    return value


def normalize_embeds(embeds: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Discord adds ``type: rich`` and ``content_scan_version`` to embeds sent by bots."""
    result = []
    for embed in embeds:
        copied = _deep_copy(embed)
        copied.setdefault("type", "rich")
        copied.setdefault("content_scan_version", 0)
        result.append(copied)
    return result


# --------------------------------------------------------------------------------------------
# Validation: Discord answers 400 "Invalid Form Body" (code 50035) for these, discord.py
# checks almost none of them client-side.
# --------------------------------------------------------------------------------------------


class FormErrors:
    """Collects errors in Discord's nested ``{"field": {"0": {"_errors": [...]}}}`` shape."""

    def __init__(self) -> None:
        self.tree: dict[str, Any] = {}

    def add(self, path: tuple[str | int, ...], code: str, message: str) -> None:
        node = self.tree
        for key in path:
            node = node.setdefault(str(key), {})
        node.setdefault("_errors", []).append({"code": code, "message": message})

    def __bool__(self) -> bool:
        return bool(self.tree)

    def max_length(self, path: tuple[str | int, ...], value: Any, limit: int) -> None:
        if isinstance(value, str) and len(value) > limit:
            self.add(path, "BASE_TYPE_MAX_LENGTH", f"Must be {limit} or fewer in length.")

    def required_text(self, path: tuple[str | int, ...], value: Any, limit: int) -> None:
        if not isinstance(value, str) or not value.strip():
            self.add(path, "BASE_TYPE_REQUIRED", "This field is required")
        else:
            self.max_length(path, value, limit)


def embed_length(embed: dict[str, Any]) -> int:
    """Characters that count towards Discord's 6000-per-message embed total."""
    total = len(embed.get("title") or "") + len(embed.get("description") or "")
    total += len((embed.get("footer") or {}).get("text") or "")
    total += len((embed.get("author") or {}).get("name") or "")
    for fld in embed.get("fields") or []:
        total += len(fld.get("name") or "") + len(fld.get("value") or "")
    return total


def validate_message(
    errors: FormErrors,
    prefix: tuple[str | int, ...],
    *,
    content: str,
    embeds: list[dict[str, Any]],
    components: list[dict[str, Any]],
    flags: int,
    attachment_count: int,
    has_poll: bool = False,
) -> bool:
    """Check a message's resulting state against Discord's limits.

    Adds Invalid-Form-Body errors under ``prefix``; returns False if the message would be
    empty (Discord's separate error 50006 "Cannot send an empty message").
    """
    errors.max_length((*prefix, "content"), content, 2000)
    if len(embeds) > 10:
        errors.add((*prefix, "embeds"), "BASE_TYPE_MAX_LENGTH", "Must be 10 or fewer in length.")
    total = 0
    for i, embed in enumerate(embeds):
        p = (*prefix, "embeds", i)
        errors.max_length((*p, "title"), embed.get("title"), 256)
        errors.max_length((*p, "description"), embed.get("description"), 4096)
        errors.max_length((*p, "footer", "text"), (embed.get("footer") or {}).get("text"), 2048)
        errors.max_length((*p, "author", "name"), (embed.get("author") or {}).get("name"), 256)
        fields = embed.get("fields") or []
        if len(fields) > 25:
            errors.add((*p, "fields"), "BASE_TYPE_MAX_LENGTH", "Must be 25 or fewer in length.")
        for j, fld in enumerate(fields):
            errors.required_text((*p, "fields", j, "name"), fld.get("name"), 256)
            errors.required_text((*p, "fields", j, "value"), fld.get("value"), 1024)
        total += embed_length(embed)
    if total > 6000:
        errors.add(
            (*prefix, "embeds"),
            "MAX_EMBED_SIZE_EXCEEDED",
            "Embed size exceeds maximum size of 6000",
        )
    validate_components(
        errors, (*prefix, "components"), components, v2=bool(flags & IS_COMPONENTS_V2)
    )
    if flags & IS_COMPONENTS_V2 and (content or embeds):
        errors.add(
            (*prefix, "content"),
            "MESSAGE_CANNOT_USE_LEGACY_FIELDS_WITH_COMPONENTS_V2",
            "The 'content' and 'embeds' fields cannot be used when using "
            "MessageFlags.IS_COMPONENTS_V2",
        )
    return bool(content or embeds or components or attachment_count or has_poll)


def validate_components(
    errors: FormErrors, prefix: tuple[str | int, ...], components: list[dict[str, Any]], *, v2: bool
) -> None:
    """Discord's component rules: rows of <=5 buttons or 1 select, custom_id <= 100, unique ids."""
    if not v2:
        if len(components) > 5:
            errors.add(prefix, "BASE_TYPE_MAX_LENGTH", "Must be 5 or fewer in length.")
        for i, row in enumerate(components):
            if row.get("type") != 1:
                errors.add(
                    (*prefix, i),
                    "COMPONENT_LAYOUT_WIDTH_EXCEEDED",
                    "Top-level components must be action rows without IS_COMPONENTS_V2",
                )
                continue
            children = row.get("components") or []
            selects = [c for c in children if c.get("type") in _SELECTS]
            if not children:
                errors.add(
                    (*prefix, i, "components"),
                    "BASE_TYPE_MIN_LENGTH",
                    "Must be 1 or more in length.",
                )
            if len(children) > 5 or (selects and len(children) > 1):
                errors.add(
                    (*prefix, i, "components"),
                    "COMPONENT_LAYOUT_WIDTH_EXCEEDED",
                    "The specified component exceeds the maximum width",
                )
    all_components = list(walk_components(components))
    if v2 and len(all_components) > 40:
        errors.add(prefix, "BASE_TYPE_MAX_LENGTH", "Must be 40 or fewer in total.")
    seen: set[str] = set()
    for comp in all_components:
        custom_id = comp.get("custom_id")
        kind = comp.get("type")
        if kind == 2:
            errors.max_length((*prefix, "label"), comp.get("label"), 80)
            if comp.get("style") == 5:
                if not comp.get("url"):
                    errors.add((*prefix, "url"), "BASE_TYPE_REQUIRED", "Link buttons need a url")
                continue
            if comp.get("style") == 6:
                continue
            if not custom_id:
                errors.add((*prefix, "custom_id"), "BASE_TYPE_REQUIRED", "This field is required")
        if kind in _SELECTS:
            if kind == 3 and not 1 <= len(comp.get("options") or []) <= 25:
                errors.add(
                    (*prefix, "options"),
                    "BASE_TYPE_BAD_LENGTH",
                    "Must be between 1 and 25 in length.",
                )
            errors.max_length((*prefix, "placeholder"), comp.get("placeholder"), 150)
        if custom_id is not None:
            if not isinstance(custom_id, str) or not 1 <= len(custom_id) <= 100:
                errors.add(
                    (*prefix, "custom_id"),
                    "BASE_TYPE_BAD_LENGTH",
                    "Must be between 1 and 100 in length.",
                )
            elif custom_id in seen:
                errors.add(
                    (*prefix, "custom_id"),
                    "COMPONENT_CUSTOM_ID_DUPLICATED",
                    f"Component custom id {custom_id!r} cannot be duplicated",
                )
            seen.add(str(custom_id))


def compute_mentions(
    content: str,
    allowed: dict[str, Any] | None,
    default_allowed: dict[str, Any] | None,
    *,
    users: dict[int, User],
    reply_author: User | None,
) -> tuple[list[User], list[int], bool]:
    """Who a message really pings: parse mentions in ``content`` and apply allowed_mentions.

    Returns (pinged users, pinged role ids, whether @everyone/@here pings).
    """
    rules = allowed if allowed is not None else default_allowed
    user_ids = [int(x) for x in _USER_MENTION.findall(content)]
    role_ids = [int(x) for x in _ROLE_MENTION.findall(content)]
    everyone = "@everyone" in content or "@here" in content
    if rules is not None:
        parse = set(rules.get("parse") or [])
        explicit_users = {int(x) for x in rules.get("users") or []}
        explicit_roles = {int(x) for x in rules.get("roles") or []}
        user_ids = [u for u in user_ids if "users" in parse or u in explicit_users]
        role_ids = [r for r in role_ids if "roles" in parse or r in explicit_roles]
        everyone = everyone and "everyone" in parse
        if reply_author is not None and not rules.get("replied_user", False):
            reply_author = None
    pinged: list[User] = []
    for uid in dict.fromkeys(user_ids):
        user = users.get(uid)
        if user is not None:
            pinged.append(user)
    if reply_author is not None and reply_author not in pinged:
        pinged.append(reply_author)
    return pinged, list(dict.fromkeys(role_ids)), everyone


@dataclass(frozen=True)
class ChannelEvent:
    """Something that happened to a message: created, edited or deleted."""

    kind: Literal["create", "edit", "delete"]
    message: Message
    revision: MessageRevision
    at: float
