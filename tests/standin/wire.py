"""JSON on the stand-in's wire: orjson, as Discord's side should cost the machine little.

The stand-in shares the cores with the bots it serves (``python -m bench.cluster``), so what it
spends per request is taken from them. orjson writes what the standard library does, minus the
spaces; it refuses integers beyond 64 bits, which a test may send on purpose, and those go
through the standard library.
"""

from __future__ import annotations

import json
from typing import Any

import orjson


def dumps(data: Any) -> str:
    """Return ``data`` as JSON text."""
    return dump_bytes(data).decode()


def dump_bytes(data: Any) -> bytes:
    """Return ``data`` as JSON, UTF-8 encoded."""
    try:
        return orjson.dumps(data, option=orjson.OPT_NON_STR_KEYS)
    except orjson.JSONEncodeError:
        return json.dumps(data).encode()


def loads(raw: str | bytes) -> Any:
    """Return the value of a JSON text."""
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError:
        # What orjson refuses that Python reads (NaN, integers beyond 64 bits) reads as before;
        # malformed JSON raises json's error, as the routes expect.
        return json.loads(raw)
