"""The stand-in holds every REST body against Discord's OpenAPI description, as Discord does."""

from __future__ import annotations

import functools
import json
import re
import subprocess
import sys
import textwrap
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import discord
import pytest
from aiohttp import web
from discord import app_commands
from discord.ext import commands

from tests.standin import DiscordStandIn, run_bot
from tests.standin.fixtures import SampleWorld
from tests.standin.routes import TABLES
from tests.standin.schema import LENIENCIES, SPEC_PATH, UNCHECKED, Operation, Spec, load

ROOT = Path(__file__).resolve().parents[2]


def button(custom_id: str, *, kind: int = 2) -> dict[str, Any]:
    return {"type": kind, "style": 1, "label": "Flip", "custom_id": custom_id}


GOOD_MESSAGE: dict[str, Any] = {
    "content": "Round 3",
    "embeds": [{"title": "Krig", "description": "Alice takes the pile", "color": 0x3498DB}],
    "components": [{"type": 1, "components": [button("krig:flip")]}],
    # discord.py sends allowed_mentions ids as integers: Discord takes them (LENIENCIES).
    "allowed_mentions": {"parse": [], "users": [123456789012345678], "replied_user": False},
}

#: (what is wrong, a body of POST /channels/{id}/messages, where Discord files the error, code)
BAD_MESSAGES: list[tuple[str, dict[str, Any], tuple[str, ...], str]] = [
    (
        "embed title of 257 characters",
        {"embeds": [{"title": "x" * 257}]},
        ("embeds", "0", "title"),
        "BASE_TYPE_MAX_LENGTH",
    ),
    (
        "button custom_id of 101 characters",
        {"content": "x", "components": [{"type": 1, "components": [button("c" * 101)]}]},
        ("components", "0", "components", "0", "custom_id"),
        "BASE_TYPE_MAX_LENGTH",
    ),
    (
        "component of an unknown type",
        {"content": "x", "components": [{"type": 1, "components": [button("b", kind=99)]}]},
        ("components", "0", "components", "0", "type"),
        "BASE_TYPE_CHOICES",
    ),
    (
        "content that is a number",
        {"content": 5},
        ("content",),
        "STRING_TYPE_CONVERT",
    ),
    (
        "embed colour beyond 0xFFFFFF",
        {"embeds": [{"title": "Krig", "color": 0x1000000}]},
        ("embeds", "0", "color"),
        "NUMBER_TYPE_MAX",
    ),
]


async def post(
    standin: DiscordStandIn, path: str, body: dict[str, Any]
) -> tuple[int, dict[str, Any]]:
    async with (
        aiohttp.ClientSession() as session,
        session.post(
            standin.api_base + path, json=body, headers={"Authorization": "Bot x"}
        ) as answer,
    ):
        return answer.status, await answer.json()


def error_at(errors: dict[str, Any], path: tuple[str, ...]) -> list[dict[str, str]]:
    node = errors
    for key in path:
        assert key in node, f"no error under {'.'.join(path)}: {errors}"
        node = node[key]
    return list(node["_errors"])


@pytest.mark.parametrize(
    ("body", "where", "code"),
    [case[1:] for case in BAD_MESSAGES],
    ids=[case[0] for case in BAD_MESSAGES],
)
async def test_a_body_discords_schema_refuses_gets_400_50035_and_is_kept(
    standin: DiscordStandIn,
    standin_world: SampleWorld,
    body: dict[str, Any],
    where: tuple[str, ...],
    code: str,
) -> None:
    channel = standin_world.no_channel
    status, answer = await post(standin, f"/channels/{channel.id}/messages", body)
    assert (status, answer["code"], answer["message"]) == (400, 50035, "Invalid Form Body")
    assert code in [error["code"] for error in error_at(answer["errors"], where)]
    assert standin.messages(channel) == []
    [refusal] = standin.refused_bodies
    assert refusal.operation == "/channels/{channel_id}/messages"
    assert ".".join(where) + ": " in refusal.message
    standin.refused_bodies.clear()  # on purpose here; the fixture fails tests that send one


async def test_a_body_discords_schema_takes_is_served(
    standin: DiscordStandIn, standin_world: SampleWorld
) -> None:
    channel = standin_world.no_channel
    status, answer = await post(standin, f"/channels/{channel.id}/messages", GOOD_MESSAGE)
    assert status == 200, answer
    assert [m.content for m in standin.messages(channel)] == ["Round 3"]
    assert standin.refused_bodies == []


@pytest.mark.parametrize(("title", "status"), [("x" * 257, 400), ("Krig", 200)])
async def test_a_multipart_bodys_payload_json_is_checked(
    standin: DiscordStandIn, standin_world: SampleWorld, title: str, status: int
) -> None:
    channel = standin_world.no_channel
    form = aiohttp.FormData()
    payload = {"embeds": [{"title": title}], "attachments": [{"id": 0, "filename": "a.png"}]}
    form.add_field("payload_json", json.dumps(payload), content_type="application/json")
    form.add_field("files[0]", b"\x89PNG", filename="a.png", content_type="image/png")
    async with (
        aiohttp.ClientSession() as session,
        session.post(
            f"{standin.api_base}/channels/{channel.id}/messages",
            data=form,
            headers={"Authorization": "Bot x"},
        ) as answer,
    ):
        assert answer.status == status
        body = await answer.json()
    if status == 400:
        assert body["code"] == 50035
        assert error_at(body["errors"], ("embeds", "0", "title"))
        assert standin.messages(channel) == []
        assert len(standin.refused_bodies) == 1
        standin.refused_bodies.clear()  # on purpose here
    else:
        [message] = standin.messages(channel)
        assert [a.filename for a in message.attachments] == ["a.png"]


@pytest.mark.standin(check_bodies=False)
async def test_a_bench_may_switch_the_check_off(
    standin: DiscordStandIn, standin_world: SampleWorld
) -> None:
    channel = standin_world.no_channel
    body = {"embeds": [{"title": "Krig", "color": 0x1000000}]}
    status, _answer = await post(standin, f"/channels/{channel.id}/messages", body)
    assert status == 200
    assert standin.refused_bodies == []


class SwallowingBot(commands.Bot):
    """Answers ``/table`` with an embed whose title is too long, and swallows Discord's 400."""

    def __init__(self) -> None:
        super().__init__(
            command_prefix="!", intents=discord.Intents.default(), guild_ready_timeout=0.05
        )
        self.errors: list[discord.HTTPException] = []

    async def setup_hook(self) -> None:
        bot = self

        @app_commands.command(name="table", description="Show the table")
        async def table(interaction: discord.Interaction[Any]) -> None:
            try:
                await interaction.response.send_message(embed=discord.Embed(title="x" * 257))
            except discord.HTTPException as exc:
                bot.errors.append(exc)
                await interaction.response.send_message("the table could not be shown")

        self.tree.add_command(table)
        await self.tree.sync()


@pytest.fixture
async def swallowing_bot(
    standin: DiscordStandIn, standin_world: SampleWorld
) -> AsyncIterator[SwallowingBot]:
    async with run_bot(SwallowingBot(), standin) as bot:
        yield bot


async def test_discord_py_reads_the_refusal_as_discords_own(
    standin: DiscordStandIn, standin_world: SampleWorld, swallowing_bot: SwallowingBot
) -> None:
    rec = await standin.slash("table", user=standin_world.alice, channel=standin_world.no_channel)
    # A refused callback acknowledges nothing: the bot's second answer is the response.
    response = await rec.response()
    assert response.content == "the table could not be shown"
    [error] = swallowing_bot.errors
    assert (error.status, error.code) == (400, 50035)
    assert "In data.embeds.0.title: Must be 256 or fewer in length." in str(error)
    [refusal] = standin.refused_bodies
    assert refusal.operation == "/interactions/{interaction_id}/{interaction_token}/callback"
    assert rec.token not in str(refusal)
    standin.refused_bodies.clear()  # on purpose here; the fixture fails tests that send one


@pytest.mark.slow
def test_the_fixture_fails_a_test_whose_refused_body_was_swallowed(tmp_path: Path) -> None:
    # Run in a pytest of its own: the failure under test is the fixture's, at teardown.
    (tmp_path / "conftest.py").write_text(
        "from tests.standin.fixtures import standin, standin_world  # noqa: F401\n"
    )
    (tmp_path / "test_swallowed.py").write_text(
        textwrap.dedent(
            """
            import aiohttp

            async def test_sends_a_bad_body_and_ignores_the_answer(standin, standin_world):
                channel = standin_world.no_channel
                async with aiohttp.ClientSession() as session:
                    await session.post(
                        f"{standin.api_base}/channels/{channel.id}/messages",
                        json={"embeds": [{"title": "x" * 257}]},
                        headers={"Authorization": "Bot x"},
                    )
            """
        )
    )
    run = subprocess.run(
        [
            *(sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"),
            *("-o", "asyncio_mode=auto", "-o", "asyncio_default_fixture_loop_scope=function"),
            str(tmp_path),
        ],
        cwd=tmp_path,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=90,
        check=False,
    )
    assert run.returncode == 1, run.stdout + run.stderr
    assert re.search(r"^1 passed, (1 warning, )?1 error in", run.stdout, re.M), run.stdout
    assert "Discord's OpenAPI description refuses" in run.stdout
    assert "POST /channels/{channel_id}/messages" in run.stdout
    assert "embeds.0.title: 'xxxx" in run.stdout  # the validator's message
    assert '"title": "xxxx' in run.stdout  # the body


@functools.cache
def written_spec() -> Spec:
    """The spec as Discord wrote it: no LENIENCIES, no unions rewritten into tagged ones."""
    return Spec(json.loads(SPEC_PATH.read_text(encoding="utf-8")))


def operation(spec: Spec, method: str, path: str) -> Operation:
    found = spec.operation(method, path)
    assert found is not None, f"{method} {path} is no operation of the spec"
    return found


def served_routes() -> set[tuple[str, str]]:
    return {
        (route.method, route.path)
        for table in TABLES
        for route in table
        if isinstance(route, web.RouteDef)
    }


def test_every_route_the_stand_in_serves_is_discords_or_listed_as_unchecked() -> None:
    spec = Spec(load())
    missing = []
    for method, path in sorted(served_routes()):
        if path in UNCHECKED:
            continue
        rel = path.removeprefix("/api/v10")
        concrete = re.sub(r"\{[^}]+\}", "1", rel)
        if not path.startswith("/api/v10/") or spec.operation(method, concrete) is None:
            missing.append(f"{method} {path}")
    assert missing == []
    # No stale entries: each one the stand-in serves (the gateway and the catch-all route are
    # added by the server itself, outside the route tables).
    extra = {"/gateway", "/{tail:.*}"}
    assert set(UNCHECKED) - extra <= {path for _method, path in served_routes()}


def test_a_literal_segment_is_preferred_to_a_parameter() -> None:
    spec = Spec(load())
    original = operation(spec, "PATCH", "/webhooks/1/token/messages/@original")
    other = operation(spec, "PATCH", "/webhooks/1/token/messages/2")
    assert original.template.endswith("/messages/@original")
    assert other.template.endswith("/messages/{message_id}")
    assert spec.operation("PATCH", "/no/such/route") is None


def test_the_leniencies_are_where_the_spec_is_stricter_than_discord() -> None:
    strict, lenient = written_spec(), Spec(load())
    path = "/channels/1/messages"
    strict_op, lenient_op = operation(strict, "POST", path), operation(lenient, "POST", path)
    assert strict_op.check(GOOD_MESSAGE) != []
    assert lenient_op.check(GOOD_MESSAGE) == []
    assert len(LENIENCIES) == 1  # a new one is named, with its reason, in schema.LENIENCIES


CALLBACKS: list[Any] = [
    {"type": 1},
    {"type": 4, "data": GOOD_MESSAGE},
    {"type": 4, "data": {"content": "x" * 2001}},
    {"type": 5},
    {"type": 6},
    {"type": 7, "data": {"components": [{"type": 1, "components": [button("a" * 101)]}]}},
    {"type": 7, "data": {"components": [{"type": 1, "components": []}]}},
    {"type": 7, "data": {"components": [{"type": 1}]}},
    {"type": 7, "data": {"components": ["row"]}},
    {"type": 7, "data": {"components": [{"components": [button("a")]}]}},
    {"type": 7, "data": {"components": [{"type": 42}]}},
    {"type": 7, "data": {"components": [{"type": 10, "content": "hello"}], "flags": 1 << 15}},
    {"type": 7, "data": {"components": [{"type": 17, "components": [{"type": 99}]}]}},
    {"type": 8, "data": {"choices": [{"name": "a", "value": "a"}]}},
    {"type": 8, "data": {"choices": [{"name": "a", "value": "a"}] * 26}},
    {"type": 9, "data": {"custom_id": "m", "title": "T", "components": []}},
    {"type": 9, "data": {"custom_id": "m", "title": "T" * 46, "components": []}},
    {"type": 3},
    {"type": "4"},
    {"data": {}},
    [],
]


@pytest.mark.parametrize("body", CALLBACKS, ids=[str(i) for i in range(len(CALLBACKS))])
def test_the_quickened_unions_take_and_refuse_what_the_spec_as_written_does(body: Any) -> None:
    written, quick = written_spec(), Spec(load())
    path = "/interactions/1/token/callback"
    written_op, quick_op = operation(written, "POST", path), operation(quick, "POST", path)
    # GOOD_MESSAGE's integer ids are the leniency's; the verdict is of the rest.
    body = json.loads(json.dumps(body).replace("123456789012345678", '"123456789012345678"'))
    assert (written_op.check(body) == []) == (quick_op.check(body) == [])
