"""The application's own emojis: ``/applications/{app}/emojis`` and ``.../emojis/{emoji}``.

Discord's rules for them, so a bot that breaks one fails here as it would there: names of 2–32
characters of ``A-Za-z0-9_``, unique in the application (400 50035 on a duplicate or bad name);
the image a ``data:`` URI of a PNG, JPEG, GIF or WEBP of at most 256 KiB (else 400 50035); at
most 2,000 emojis (30056 for the next one).
"""

from __future__ import annotations

import base64
import binascii
import re
from typing import Any

from aiohttp import web

from tests.standin.apps import Application
from tests.standin.messages import FormErrors
from tests.standin.rest import (
    API_PREFIX,
    DiscordError,
    Unknown,
    application_in_path,
    find,
    invalid_form,
    json_response,
    no_content,
    path_id,
    read_payload,
    standin_of,
)

routes = web.RouteTableDef()

_LIST = f"{API_PREFIX}/applications/{{app_id}}/emojis"
_ONE = f"{API_PREFIX}/applications/{{app_id}}/emojis/{{emoji_id}}"

MAX_EMOJIS = 2000
"""How many emojis an application may own."""
MAX_IMAGE_BYTES = 256 * 1024
"""The largest emoji image Discord takes."""
_NAME = re.compile(r"[A-Za-z0-9_]{2,32}")
_DATA_URI = re.compile(r"data:image/(png|jpeg|gif|webp);base64,(.*)", re.DOTALL)
_MAGIC = {
    "png": (b"\x89PNG\r\n\x1a\n",),
    "jpeg": (b"\xff\xd8\xff",),
    "gif": (b"GIF87a", b"GIF89a"),
    "webp": (b"RIFF",),
}


def _check_name(app: Application, name: Any, errors: FormErrors, *, keep: int | None) -> None:
    if not isinstance(name, str) or _NAME.fullmatch(name) is None:
        errors.add(
            ("name",),
            "BASE_TYPE_BAD_LENGTH" if isinstance(name, str) else "BASE_TYPE_REQUIRED",
            "Must be between 2 and 32 in length and contain only A-Z, a-z, 0-9 and _.",
        )
    elif any(e["name"] == name and int(e["id"]) != keep for e in app.emojis.values()):
        errors.add(
            ("name",),
            "APPLICATION_EMOJI_NAME_ALREADY_TAKEN",
            "An application emoji with that name already exists.",
        )


def _check_image(image: Any, errors: FormErrors) -> bool:
    """Whether ``image`` is a data URI of an animated (GIF) image; files the errors found."""
    match = _DATA_URI.fullmatch(image) if isinstance(image, str) else None
    data = b""
    if match is not None:
        try:
            data = base64.b64decode(match.group(2), validate=True)
        except (binascii.Error, ValueError):
            match = None
    if match is None or not data.startswith(_MAGIC[match.group(1)]):
        errors.add(("image",), "IMAGE_INVALID", "Invalid image data")
        return False
    if len(data) > MAX_IMAGE_BYTES:
        errors.add(
            ("image",),
            "BINARY_TYPE_MAX_SIZE",
            f"File cannot be larger than {MAX_IMAGE_BYTES // 1024}.0 kb.",
        )
    return match.group(1) == "gif"


@routes.get(_LIST)
async def list_emojis(request: web.Request) -> web.Response:
    return json_response({"items": list(application_in_path(request).emojis.values())})


@routes.post(_LIST)
async def create_emoji(request: web.Request) -> web.Response:
    app = application_in_path(request)
    payload, _ = await read_payload(request)
    errors = FormErrors()
    _check_name(app, payload.get("name"), errors, keep=None)
    animated = _check_image(payload.get("image"), errors)
    if errors:
        raise invalid_form(errors)
    if len(app.emojis) >= MAX_EMOJIS:
        raise DiscordError(400, 30056, "Maximum number of emojis reached (2000)")
    emoji_id = standin_of(request).world.snowflakes.next()
    app.emojis[emoji_id] = {
        "id": str(emoji_id),
        "name": payload["name"],
        "user": app.bot_user.to_json(),
        "roles": [],
        "require_colons": True,
        "managed": False,
        "animated": animated,
        "available": True,
    }
    return json_response(app.emojis[emoji_id], 201)


@routes.get(_ONE)
async def get_emoji(request: web.Request) -> web.Response:
    app = application_in_path(request)
    return json_response(_find(app, request))


@routes.patch(_ONE)
async def edit_emoji(request: web.Request) -> web.Response:
    app = application_in_path(request)
    emoji = _find(app, request)
    payload, _ = await read_payload(request)
    if "name" in payload:
        errors = FormErrors()
        _check_name(app, payload["name"], errors, keep=int(emoji["id"]))
        if errors:
            raise invalid_form(errors)
        emoji["name"] = payload["name"]
    return json_response(emoji)


@routes.delete(_ONE)
async def delete_emoji(request: web.Request) -> web.Response:
    app = application_in_path(request)
    del app.emojis[int(_find(app, request)["id"])]
    return no_content()


def _find(app: Application, request: web.Request) -> dict[str, Any]:
    return find(app.emojis, path_id(request, "emoji_id"), Unknown.EMOJI)
