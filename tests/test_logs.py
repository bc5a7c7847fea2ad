"""Log lines: secrets never written, JSON lines for collectors, a game's ids on its lines."""

from __future__ import annotations

import io
import json
import logging
from collections.abc import Iterator

import pytest

from krigbot import logs
from krigbot.bot import KrigBot
from tests.standin import DiscordStandIn
from tests.standin.fixtures import SampleWorld
from tests.support.faulty_storage import read_only
from tests.support.players import flip, start_game


@pytest.fixture
def written() -> Iterator[io.StringIO]:
    """Send every log line at DEBUG, as bot.py would with LOG_LEVEL=DEBUG, into a buffer."""
    buffer = io.StringIO()
    handler = logging.StreamHandler(buffer)
    handler.setFormatter(logs.JsonFormatter())
    handler.addFilter(logs.Redact(["fake-token"]))
    root = logging.getLogger()
    old_level = root.level
    root.addHandler(handler)
    root.setLevel(logging.DEBUG)
    yield buffer
    root.removeHandler(handler)
    root.setLevel(old_level)


async def test_debug_logs_of_a_game_hold_no_token_of_the_bot_or_of_an_interaction(
    standin: DiscordStandIn, standin_world: SampleWorld, bot: KrigBot, written: io.StringIO
) -> None:
    world = standin_world
    await start_game(standin, world.no_channel, world.alice, world.bob)
    await flip(standin, world.no_channel, world.alice)

    text = written.getvalue()
    tokens = [record.token for record in standin.interactions.values()]
    assert len(tokens) == 3
    # discord.py logs every URL it calls at DEBUG; the callbacks' URLs were written, hidden.
    assert "/callback" in text
    assert "/interactions/" in text
    assert f"/{logs.HIDDEN}/callback" in text
    for token in (*tokens, "fake-token"):
        assert token not in text
    for line in text.splitlines():
        entry = json.loads(line)  # every line is one JSON object
        assert {"time", "level", "logger", "message"} <= set(entry)


def test_a_line_about_a_game_carries_its_ids_in_both_formats() -> None:
    record = logging.LogRecord("krigbot.x", logging.WARNING, __file__, 1, "saved %s", (3,), None)
    for key, value in logs.context(game_id=7, guild_id=100, channel_id=200).items():
        setattr(record, key, value)

    entry = json.loads(logs.JsonFormatter().format(record))
    text = logs.TextFormatter().format(record)

    assert (entry["message"], entry["game_id"], entry["guild_id"], entry["channel_id"]) == (
        "saved 3",
        7,
        100,
        200,
    )
    assert text.endswith("krigbot.x: saved 3 [game=7 guild=100 channel=200]")


def test_a_traceback_is_part_of_its_json_line_and_redacted() -> None:
    try:
        raise RuntimeError("POST /webhooks/123/abc-secret_token.x failed")
    except RuntimeError:
        record = logging.LogRecord(
            "krigbot", logging.ERROR, __file__, 1, "boom", (), exc_info=__import__("sys").exc_info()
        )
    logs.Redact().filter(record)
    entry = json.loads(logs.JsonFormatter().format(record))

    assert "abc-secret_token.x" not in entry["traceback"]
    assert f"/webhooks/123/{logs.HIDDEN}" in entry["traceback"]
    assert "RuntimeError" in entry["traceback"]


async def test_a_game_that_cannot_be_saved_is_logged_with_its_game_server_and_channel(
    standin: DiscordStandIn, standin_world: SampleWorld, bot: KrigBot, written: io.StringIO
) -> None:
    world = standin_world
    table = await start_game(standin, world.no_channel, world.alice, world.bob)
    standin.fail_fast_on_bot_errors = False  # the failed save is logged as an error
    async with read_only(bot.storage):
        answer = await flip(standin, world.no_channel, world.alice)
    assert answer.ephemeral  # the player is told that nothing changed
    standin.accept_bot_errors()

    entries = [json.loads(line) for line in written.getvalue().splitlines()]
    (saved,) = [e for e in entries if e["message"].startswith("could not save game")]
    assert (saved["game_id"], saved["guild_id"], saved["channel_id"]) == (
        table.game_id,
        world.no_guild.id,
        world.no_channel.id,
    )


REAL_LOOKING = "MTQ2MjM0NTY3ODkwMTIzNDU2Nw.GkR7xQ.Zr2c7wQ2nV8pXb4YtL9sJm3Hd6Fa1KeUo0Ii5g"
"""A token of a bot token's shape (base64 user id, timestamp, HMAC)."""


def _written(logger: str, message: str, *args: object, secrets: list[str]) -> str:
    """Return the line a record of ``logger`` becomes, through the bot's filter and format."""
    record = logging.LogRecord(logger, logging.DEBUG, __file__, 1, message, args, None)
    logs.Redact(secrets).filter(record)
    return logs.TextFormatter().format(record)


def test_a_short_token_does_not_mangle_the_text_around_it() -> None:
    # DISCORD_TOKEN=x once turned log_format='text' into log_format='te<hidden>t'.
    line = _written("krigbot", "settings: %s", "log_format='text', max=x", secrets=["x"])
    assert line.endswith("krigbot: settings: log_format='text', max=x")


@pytest.mark.parametrize(
    ("logger", "message"),
    [
        ("discord.client", "logging in using static token %s"),
        ("discord.gateway", "Sending IDENTIFY {'op': 2, 'd': {'token': %r}}"),
        ("discord.http", "Authorization: Bot %s"),
        ("aiohttp.client", "header Bot%%20%s sent"),
        ("krigbot", "a token someone pasted: %s."),
    ],
)
def test_a_real_looking_token_never_reaches_a_line_of_any_logger(logger: str, message: str) -> None:
    # Hidden both as the configured secret and by its shape (another bot's, an old one).
    for secrets in ([REAL_LOOKING], []):
        line = _written(logger, message, REAL_LOOKING, secrets=secrets)
        assert REAL_LOOKING not in line
        assert REAL_LOOKING.split(".")[2] not in line
        assert logs.HIDDEN in line


def test_a_secret_is_hidden_wherever_it_appears_and_a_longer_one_whole() -> None:
    web_secret = "web-secret-0123456789"
    line = _written(
        "krigbot",
        "%s?sig=%s",
        f"https://x/{web_secret}",
        web_secret + "-more",
        secrets=[
            web_secret,
            web_secret + "-more",
        ],
    )
    assert "web-secret" not in line
    assert "-more" not in line  # the longer secret went whole, not its tail left over


def test_an_interaction_token_in_a_url_is_hidden() -> None:
    line = _written(
        "discord.http",
        "POST https://discord.com/api/v10/interactions/%s/%s/callback with None has returned 204",
        123456789012345678,
        "aW50ZXJhY3Rpb246MTIzNDU2Nzg5MDEyMzQ1Njc4OmFiY2RlZmdoaWprbG1ub3A",
        secrets=[],
    )
    assert "aW50ZXJhY3Rpb24" not in line
    assert f"/interactions/123456789012345678/{logs.HIDDEN}/callback" in line


def test_asyncpg_retrying_its_pool_while_postgresql_is_away_writes_one_line(
    capsys: pytest.CaptureFixture[str],
) -> None:
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    pool = logging.getLogger("asyncpg.pool")
    try:
        logs.setup("INFO", "text", secrets=[])
        try:
            raise ConnectionResetError(104, "Connection reset by peer")
        except ConnectionResetError:
            # What asyncpg's pool logs every second or two until the database answers again.
            pool.warning("Failed to restore the pool connection floor; retrying", exc_info=True)
    finally:
        for handler in list(root.handlers):
            root.removeHandler(handler)
        for handler in handlers:
            root.addHandler(handler)
        root.setLevel(level)
        for each in list(pool.filters):
            pool.removeFilter(each)
    (line,) = capsys.readouterr().err.splitlines()
    assert line.endswith(
        "asyncpg.pool: Failed to restore the pool connection floor; retrying "
        "(ConnectionResetError: [Errno 104] Connection reset by peer)"
    )
