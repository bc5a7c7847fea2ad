"""Every REST body the bot sends, held against Discord's own OpenAPI description of its API.

Discord answers ``400 50035 Invalid Form Body`` to a body its schema refuses, whatever
discord.py thought of it. The stand-in does the same: :meth:`Spec.operation` finds the operation a
request is for (method and path template, as ``/channels/{channel_id}/messages``) in the copy
of Discord's ``openapi.json`` kept beside this module (see ``discord-api-spec/README.md``),
and :meth:`Operation.check` validates the JSON body (or a multipart request's
``payload_json``) against that operation's request schema with ``jsonschema``. The refusal is
answered in Discord's nested error shape and recorded, so a test fails even where the bot
swallows the 400 (``tests/standin/fixtures.py``).

The spec is OpenAPI 3.1, whose schemas are JSON Schema 2020-12: the whole document is one
``referencing`` resource, so the ``#/components/schemas/…`` references resolve inside it,
and each operation's validator is built once per process, on first use. Checked as written,
one interaction callback costs about 7 ms of CPU (a oneOf of seven callback kinds, each with a
oneOf of seven component kinds …): :func:`load` rewrites the unions into equivalent schemas
that check only the branch a body's ``type`` names (``test_schema.py`` holds both to the same
verdicts), which brings it under a millisecond, and a body found good is not checked again.

Where the spec is stricter than Discord itself, :data:`LENIENCIES` says what is relaxed and
why; routes the stand-in serves that are no part of Discord's API are in :data:`UNCHECKED`.
"""

from __future__ import annotations

import copy
import functools
import hashlib
import json
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import orjson
from jsonschema import Draft202012Validator, validators
from jsonschema.exceptions import ValidationError, best_match
from referencing import Registry
from referencing.jsonschema import DRAFT202012

from tests.standin.messages import FormErrors

SPEC_PATH = Path(__file__).resolve().parent / "discord-api-spec" / "openapi.json"
_SPEC_URI = "urn:discord-api-spec:openapi.json"
_METHODS = ("get", "put", "post", "patch", "delete")

#: Routes the stand-in serves that Discord's API description does not hold, and why their
#: bodies go unchecked. ``tests/standin/test_schema.py`` checks that every other route the
#: stand-in serves is an operation of the spec.
UNCHECKED: Mapping[str, str] = {
    "/gateway": "the gateway's websocket, beside the API rather than in it: no REST body",
    "/{tail:.*}": "what the stand-in does not serve: answered 404, and the fixture fails the test",
    "/api/v10/oauth2/token": (
        "OAuth2's token endpoint: a form-encoded body and OAuth2's own errors (RFC 6749), "
        "outside Discord's OpenAPI description"
    ),
    "/attachments/{channel_id}/{attachment_id}/{filename}": (
        "the CDN's file URLs (cdn.discordapp.com), not the API; GET only, no body"
    ),
}

#: Where the spec refuses what Discord accepts, found with discord.py: (JSON pointer into the
#: document, the schema put there, why).
LENIENCIES: tuple[tuple[str, dict[str, Any], str], ...] = (
    (
        "/components/schemas/SnowflakeType",
        {
            "type": ["string", "integer"],
            "pattern": "^(0|[1-9][0-9]*)$",
            "minimum": 0,
            "format": "snowflake",
        },
        "Discord reads a snowflake sent as a JSON integer as well as a string; discord.py sends "
        "allowed_mentions ids and a new attachment's id as integers",
    ),
)


@dataclass(frozen=True)
class Refusal:
    """A body the spec refused: what a failing test shows."""

    method: str
    path: str
    operation: str
    message: str
    body: Any

    def __str__(self) -> str:
        excerpt = json.dumps(self.body, ensure_ascii=False)
        if len(excerpt) > 600:
            excerpt = excerpt[:600] + "…"
        return f"{self.method} {self.operation} ({self.path}): {self.message}\n    body: {excerpt}"


@dataclass
class Operation:
    """One operation of the spec: its path template and, if it takes one, its body's schema."""

    method: str
    template: str
    #: JSON pointer to the ``application/json`` request schema (None: the operation takes none).
    pointer: str | None
    registry: Registry[Any] = field(repr=False)
    #: Digests of bodies found good: a test suite sends the same command sync over and over.
    _good: set[bytes] = field(default_factory=set, repr=False)

    @functools.cached_property
    def validator(self) -> Draft202012Validator | None:
        if self.pointer is None:
            return None
        return _Validator({"$ref": _SPEC_URI + "#" + self.pointer}, registry=self.registry)

    def check(self, body: Any) -> list[ValidationError]:
        """The errors of ``body`` against this operation's schema, the most telling of each."""
        validator = self.validator
        if validator is None:
            return []
        key = _digest(body)
        if key is not None and key in self._good:
            return []
        errors = [best_match([error]) for error in validator.iter_errors(body)]
        if not errors and key is not None:
            if len(self._good) >= _GOOD_KEPT:
                self._good.clear()
            self._good.add(key)
        return errors


_GOOD_KEPT = 10_000


def _digest(body: Any) -> bytes | None:
    """A digest of ``body``'s JSON with sorted keys (None for what orjson cannot write)."""
    try:
        data = orjson.dumps(body, option=orjson.OPT_SORT_KEYS)
    except orjson.JSONEncodeError:
        return None
    return hashlib.blake2b(data, digest_size=16).digest()


class Spec:
    """The operations of an OpenAPI document, found by method and concrete path."""

    def __init__(self, document: Mapping[str, Any]) -> None:
        registry: Registry[Any] = Registry().with_resource(
            _SPEC_URI, DRAFT202012.create_resource(document)
        )
        self._by_shape: dict[tuple[str, int], list[tuple[tuple[str | None, ...], Operation]]] = {}
        for template, item in document["paths"].items():
            segments = tuple(
                None if part.startswith("{") else part for part in template.strip("/").split("/")
            )
            for method in _METHODS:
                op = item.get(method)
                if op is None:
                    continue
                pointer = None
                if "application/json" in op.get("requestBody", {}).get("content", {}):
                    escaped = template.replace("~", "~0").replace("/", "~1")
                    pointer = (
                        f"/paths/{escaped}/{method}/requestBody/content/application~1json/schema"
                    )
                operation = Operation(method.upper(), template, pointer, registry)
                shape = (method.upper(), len(segments))
                self._by_shape.setdefault(shape, []).append((segments, operation))
        for candidates in self._by_shape.values():
            # Literal segments before parameters: /messages/@original before /messages/{id}.
            candidates.sort(key=lambda c: [part is None for part in c[0]])

    def operation(self, method: str, path: str) -> Operation | None:
        """The operation for ``method`` on ``path`` (relative to ``/api/v10``), or None."""
        parts = path.strip("/").split("/")
        for segments, operation in self._by_shape.get((method, len(parts)), ()):
            if all(s is None or s == p for s, p in zip(segments, parts, strict=True)):
                return operation
        return None


_ANNOTATIONS = frozenset({"title", "description", "deprecated", "x-discord-union"})


def _const_union(branches: list[Any]) -> list[Any] | None:
    """The values of a ``oneOf`` of bare ``const`` branches (an enum with a title for each)."""
    if not all(
        isinstance(b, dict) and "const" in b and set(b) - {"const"} <= _ANNOTATIONS
        for b in branches
    ):
        return None
    values = [b["const"] for b in branches]
    distinct = {json.dumps(v, sort_keys=True) for v in values}
    return values if len(distinct) == len(values) else None


_TAGGED = "x-standin-tagged"
"""The keyword :func:`_quicken` puts in place of a tagged union (see :func:`_tagged_union`)."""


def _tag_key(tag: Any) -> str:
    """A tag as a key of :data:`_TAGGED`'s branches: 2 and 2.0 alike, ``"2"`` and ``True`` not."""
    if isinstance(tag, float) and tag.is_integer():
        tag = int(tag)
    return str(tag) if type(tag) is int else json.dumps(tag, sort_keys=True)


def _tagged(
    validator: Draft202012Validator, union: dict[str, Any], instance: Any, schema: Any
) -> Iterator[ValidationError]:
    """Check ``instance`` against the branch of its tag alone (one lookup, one descent)."""
    prop, branches = union["property"], union["branches"]
    if isinstance(instance, dict) and prop in instance:
        branch = branches.get(_tag_key(instance[prop]))
        if branch is not None:
            yield from validator.descend(instance, branch)
            return
    # Not an object, no tag, or an unknown one: the errors the union as written implies.
    yield from validator.descend(instance, union["shape"])


# jsonschema's own way to add a keyword; its stubs leave extend untyped.
_Validator = cast(
    "type[Draft202012Validator]",
    validators.extend(Draft202012Validator, {_TAGGED: _tagged}),  # type: ignore[no-untyped-call]
)


def _target(document: Mapping[str, Any], branch: Any) -> Mapping[str, Any] | None:
    """The component schema a ``{"$ref": "#/components/schemas/…"}`` branch names."""
    if not isinstance(branch, dict) or set(branch) != {"$ref"}:
        return None
    ref = branch["$ref"]
    if not isinstance(ref, str) or not ref.startswith("#/components/schemas/"):
        return None
    target = document["components"]["schemas"].get(ref.removeprefix("#/components/schemas/"))
    return target if isinstance(target, dict) else None


def _tagged_union(document: Mapping[str, Any], branches: list[Any]) -> dict[str, Any] | None:
    """The same union as one branch per tag, if every branch is an object told by its tag.

    Discord's unions (a message's components, an interaction callback) are of objects that
    each require ``type`` and allow it only a few values, none shared. For such a union
    ``oneOf`` (and ``anyOf``) holds exactly when the branch of the instance's tag holds, so
    the validator need check that branch alone, which also makes the error the one of that
    branch, not a guess among seven.
    """
    tags: dict[str, Any] = {}
    values: list[Any] = []
    for branch in branches:
        target = _target(document, branch)
        if target is None or target.get("type") != "object":
            return None
        if "type" not in target.get("required", ()):
            return None
        tag = target.get("properties", {}).get("type", {})
        allowed = tag.get("enum", [tag["const"]] if "const" in tag else None)
        if not allowed:
            return None
        for value in allowed:
            if _tag_key(value) in tags:
                return None
            tags[_tag_key(value)] = branch
            values.append(value)
    shape = {"type": "object", "required": ["type"], "properties": {"type": {"enum": values}}}
    return {"property": "type", "branches": tags, "shape": shape}


def _refuses_null(document: Mapping[str, Any], branch: Any) -> bool:
    """Whether a branch is a component schema whose type leaves out null."""
    target = _target(document, branch)
    if target is None:
        return False
    kind = target.get("type")
    return (isinstance(kind, str) and kind != "null") or (
        isinstance(kind, list) and bool(kind) and "null" not in kind
    )


def _quicken(document: dict[str, Any]) -> None:
    """Rewrite the unions of ``document`` into equivalent schemas that are quick to check.

    A message body's components are a ``oneOf`` of seven kinds, each tag a ``oneOf`` of twenty
    ``const``: checked as written, one interaction callback took tens of milliseconds. So:

    - a ``oneOf`` of bare ``const`` (an enum with a title for each value) becomes ``enum``;
    - a union of objects told apart by their ``type`` becomes :data:`_TAGGED`;
    - ``oneOf: [{"type": "null"}, S]`` where S refuses null becomes ``anyOf: [S, null]``:
      no more than one can hold either way, and ``anyOf`` stops at S when S holds.
    """
    stack: list[Any] = [document]
    while stack:
        node = stack.pop()
        if isinstance(node, list):
            stack.extend(node)
            continue
        if not isinstance(node, dict):
            continue
        for keyword in ("oneOf", "anyOf"):
            branches = node.get(keyword)
            if not isinstance(branches, list):
                continue
            values = _const_union(branches)
            if values is not None and "enum" not in node:
                del node[keyword]
                node["enum"] = values
                continue
            tagged = _tagged_union(document, branches)
            if tagged is not None and _TAGGED not in node:
                del node[keyword]
                node[_TAGGED] = tagged
                continue
            if keyword == "oneOf" and len(branches) == 2 and "anyOf" not in node:
                null, other = branches
                if null == {"type": "null"} and _refuses_null(document, other):
                    del node[keyword]
                    node["anyOf"] = [other, null]
        stack.extend(node.values())


def _inline(document: dict[str, Any]) -> None:
    """Put each component schema in place of the bare ``$ref`` that names it.

    The document has no ``$id`` or anchors, so a ``$ref`` to a subschema means just that
    subschema; in place, the validator need not look it up at every use (a third of the time a
    message body took). A schema that names itself stays a ``$ref``.
    """
    schemas = document["components"]["schemas"]
    seen: set[int] = set()
    stack: list[Any] = [document]
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        children = node.items() if isinstance(node, dict) else enumerate(node)
        for key, child in list(children):
            if isinstance(child, dict) and set(child) == {"$ref"}:
                ref = child["$ref"]
                name = ref.removeprefix("#/components/schemas/") if isinstance(ref, str) else ""
                target = schemas.get(name) if name != ref else None
                if isinstance(target, dict) and target is not node:
                    node[key] = child = target
            if isinstance(child, (dict, list)):
                stack.append(child)


def load(path: Path = SPEC_PATH) -> dict[str, Any]:
    """The document at ``path`` with :data:`LENIENCIES` applied, its unions quickened."""
    document: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    for pointer, schema, _why in LENIENCIES:
        *parents, last = pointer.strip("/").split("/")
        node = document
        for key in parents:
            node = node[key]
        if last not in node:
            raise KeyError(f"{pointer} is not in {path}: the spec changed; look at LENIENCIES")
        node[last] = copy.deepcopy(schema)
    _quicken(document)
    _inline(document)
    return document


@functools.cache
def spec() -> Spec:
    """Discord's operations, read once per process (the document is 1.2 MB)."""
    return Spec(load())


# Discord's error codes for what each JSON Schema keyword refuses (an approximation: Discord's
# own validator names some cases more finely).
_TYPE_CODES = {
    "string": "STRING_TYPE_CONVERT",
    "integer": "NUMBER_TYPE_COERCE",
    "number": "NUMBER_TYPE_COERCE",
    "boolean": "BOOLEAN_TYPE_COERCE",
    "array": "LIST_TYPE_CONVERT",
    "object": "MODEL_TYPE_CONVERT",
}


def _code_and_message(error: ValidationError) -> tuple[str, str]:
    limit: Any = error.validator_value
    match error.validator:
        case "maxLength" | "maxItems":
            return "BASE_TYPE_MAX_LENGTH", f"Must be {limit} or fewer in length."
        case "minLength" | "minItems":
            return "BASE_TYPE_MIN_LENGTH", f"Must be {limit} or more in length."
        case "required":
            return "BASE_TYPE_REQUIRED", "This field is required"
        case "enum" | "const":
            choices = limit if error.validator == "enum" else [limit]
            return "BASE_TYPE_CHOICES", f"Value must be one of {tuple(choices)}."
        case "oneOf" | "anyOf":
            return "UNION_TYPE_CHOICES", f"Value matches none of the allowed kinds: {error.message}"
        case "maximum":
            return "NUMBER_TYPE_MAX", f"Must be less than or equal to {limit}."
        case "minimum":
            return "NUMBER_TYPE_MIN", f"Must be greater than or equal to {limit}."
        case "pattern":
            return "STRING_TYPE_REGEX", f"String value did not match validation regex {limit!r}."
        case "type":
            kinds = [limit] if isinstance(limit, str) else list(limit)
            wanted = next((k for k in kinds if k != "null"), "null")
            return _TYPE_CODES.get(wanted, "BASE_TYPE_INVALID"), error.message
        case _:
            return "BASE_TYPE_INVALID", error.message


def form_errors(errors: Iterable[ValidationError]) -> FormErrors:
    """``errors`` in Discord's nested shape: ``{"data": {"embeds": {"0": {"title": …}}}}``."""
    tree = FormErrors()
    for error in errors:
        path: tuple[str | int, ...] = tuple(error.absolute_path)
        if error.validator == "required" and isinstance(error.instance, dict):
            # Discord files a missing field under the field's own name, not its object.
            required: Any = error.validator_value
            missing = [name for name in required if name not in error.instance]
            path = (*path, *missing[:1])
        code, message = _code_and_message(error)
        tree.add(path, code, message)
    return tree


def describe(errors: Iterable[ValidationError]) -> str:
    """One line per error: where in the body, and what the validator said."""
    return "; ".join(
        f"{'.'.join(str(p) for p in error.absolute_path) or '(body)'}: {error.message[:160]}"
        for error in errors
    )
