"""Logging: one line per event, as text or as JSON lines, with every secret taken out.

Log lines that concern a game carry its ids as ``extra`` fields (``game_id``, ``channel_id``,
``guild_id``): the JSON format gives them as keys, the text format appends them, so a log
collector and a person reading the journal can both follow one game.

discord.py logs the URLs it calls at DEBUG level, and the URLs of interaction callbacks and
webhooks hold the interaction's token, which lets anyone answer in its name for 15 minutes. Every
line goes through :class:`Redact` before it is written, whichever logger wrote it.
"""

from __future__ import annotations

import json
import logging
import re
import sys
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from typing import Any, Final, Literal, Protocol

LogFormat = Literal["text", "json"]
LOG_FORMATS: Final[tuple[LogFormat, ...]] = ("text", "json")

CONTEXT_FIELDS: Final = ("game_id", "guild_id", "channel_id", "user_id", "shard_id")
"""The ``extra`` fields a line may carry, in the order the text format shows them."""

HIDDEN: Final = "<hidden>"
# An interaction's token sits after its id in callback URLs, a webhook's after the application id;
# discord.py's gateway log at DEBUG holds whole payloads, where it is the value of "token".
_URL_TOKENS: Final = re.compile(r"(/(?:interactions|webhooks)/\d+/)[A-Za-z0-9_.\-]+")
_PAYLOAD_TOKENS: Final = re.compile(r"""(['"]token['"]\s*:\s*['"])[^'"]+""")
# The shape of a bot token, whichever bot's: the user id in base64, a timestamp, an HMAC.
_BOT_TOKENS: Final = re.compile(
    r"(?<![A-Za-z0-9_-])[A-Za-z0-9_-]{23,28}\.[A-Za-z0-9_-]{6,7}\.[A-Za-z0-9_-]{27,40}"
    r"(?![A-Za-z0-9_-])"
)
MIN_SECRET: Final = 8
"""The shortest secret replaced wherever its text appears. A shorter one is no real credential
(a bot token has about 70 characters, KRIG_WEB_SECRET at least 16); replacing its text would
mangle ordinary words (a token ``x`` would turn ``text`` into ``te<hidden>t``), and Discord
refuses it anyway, so the start ends at once."""
QUIET: Final = {"aiosqlite": logging.WARNING}
"""Loggers too talkative to follow at DEBUG: aiosqlite writes every statement with its values."""
ONE_LINE: Final = ("asyncpg.pool",)
"""Loggers whose warnings carry a traceback of an error that is no bug: asyncpg's pool retries
its connections every second or two while PostgreSQL is out of reach, each with a traceback.
Their error is written on the line instead."""
DETAIL: Final = ("discord",)
"""Loggers whose INFO lines are detail, shown at DEBUG only: discord.py announces each step of
its start (logging in, each shard's session id), which the bot's own lines say plainly."""


def context(
    *, game_id: int | None = None, guild_id: int | None = None, channel_id: int | None = None
) -> dict[str, int]:
    """Return the ``extra`` of a log line about a game, a server or a channel (None left out)."""
    fields = {"game_id": game_id, "guild_id": guild_id, "channel_id": channel_id}
    return {key: value for key, value in fields.items() if value is not None}


class InGame(Protocol):
    """Anything that belongs to one game in one channel (a stored game row)."""

    @property
    def id(self) -> int: ...
    @property
    def guild_id(self) -> int: ...
    @property
    def channel_id(self) -> int: ...


def about(row: InGame) -> dict[str, int]:
    """Return the ``extra`` of a log line about a stored game."""
    return context(game_id=row.id, guild_id=row.guild_id, channel_id=row.channel_id)


class Redact(logging.Filter):
    """Take the bot's token and every interaction or webhook token out of a log record."""

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        super().__init__()
        # Longest first: a secret that contains another is hidden whole.
        self._secrets = sorted(
            {secret for secret in secrets if len(secret) >= MIN_SECRET}, key=len, reverse=True
        )

    def hide(self, text: str) -> str:
        """Return ``text`` with every secret replaced."""
        text = _URL_TOKENS.sub(rf"\1{HIDDEN}", text)
        text = _PAYLOAD_TOKENS.sub(rf"\1{HIDDEN}", text)
        text = _BOT_TOKENS.sub(HIDDEN, text)
        for secret in self._secrets:
            text = text.replace(secret, HIDDEN)
        return text

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        hidden = self.hide(message)
        if hidden != message:
            record.msg, record.args = hidden, None
        if record.exc_info and not record.exc_text:
            # Format the traceback now, so that what is written is the redacted text.
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = self.hide(record.exc_text)
        return True


class OneLine(logging.Filter):
    """Write a record's error at the end of its line, without its traceback."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.exc_info and record.exc_info[1] is not None:
            error = record.exc_info[1]
            record.msg = f"{record.getMessage()} ({type(error).__name__}: {error})"
            record.args = None
            record.exc_info = None
            record.exc_text = None
        return True


class TextFormatter(logging.Formatter):
    """``time level logger: message [game=… guild=… channel=…]``, one event a line."""

    def __init__(self) -> None:
        super().__init__("%(asctime)s %(levelname)-8s %(name)s: %(message)s")

    def format(self, record: logging.LogRecord) -> str:
        line = super().format(record)
        fields = _context_of(record)
        if fields:
            line += " [" + " ".join(f"{k.removesuffix('_id')}={v}" for k, v in fields.items()) + "]"
        return line


class JsonFormatter(logging.Formatter):
    """One JSON object a line: time, level, logger, message, the context ids, any traceback."""

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
            **_context_of(record),
        }
        if record.exc_info and not record.exc_text:
            record.exc_text = self.formatException(record.exc_info)
        if record.exc_text:
            entry["traceback"] = record.exc_text
        return json.dumps(entry, ensure_ascii=False)


def _context_of(record: logging.LogRecord) -> dict[str, Any]:
    values: Mapping[str, Any] = record.__dict__
    return {key: values[key] for key in CONTEXT_FIELDS if values.get(key) is not None}


def setup(level: str, fmt: LogFormat, *, secrets: Iterable[str] = ()) -> logging.Handler:
    """Send every log line to standard error in ``fmt``, redacted; return the handler."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonFormatter() if fmt == "json" else TextFormatter())
    handler.addFilter(Redact(secrets))
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(getattr(logging, level))
    for name, quiet in QUIET.items():
        logging.getLogger(name).setLevel(max(quiet, root.level))
    for name in ONE_LINE:
        logger = logging.getLogger(name)
        if not any(isinstance(each, OneLine) for each in logger.filters):
            logger.addFilter(OneLine())
    for name in DETAIL:
        detail = root.level if root.level <= logging.DEBUG else max(logging.WARNING, root.level)
        logging.getLogger(name).setLevel(detail)
    return handler
