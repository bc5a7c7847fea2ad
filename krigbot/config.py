"""Settings: one typed object read from the environment and an optional ``.env`` file."""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

from dotenv import dotenv_values

from krigbot.logs import LOG_FORMATS, LogFormat

PROJECT = Path(__file__).resolve().parent.parent
"""The folder of ``bot.py``: where ``.env`` is read, and what a relative ``KRIG_DB`` is in.

Not the current folder: a service manager or cron starting ``/opt/krigbot/bot.py`` from ``/``
must find the same settings and the same database as someone starting it from the project."""
DEFAULT_DB = "data/krig.db"
MEMORY = ":memory:"
LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")
MAX_DURATION = 1_000_000_000
"""The largest number of hours or seconds accepted: more would not fit in a timedelta."""
MIN_WEB_SECRET = 16
"""Characters KRIG_WEB_SECRET needs at least: the links' signatures are only as strong as it."""


class ConfigError(Exception):
    """A setting is missing or malformed; the message tells the user what to do."""


@dataclass(frozen=True, slots=True)
class Settings:
    """Everything the bot reads from its environment."""

    token: str
    db_path: Path = Path(DEFAULT_DB)
    database_url: str | None = None
    """A ``postgresql://`` URL (``KRIG_DATABASE_URL``): the database instead of ``db_path``."""
    dev_guild: int | None = None
    log_level: str = "INFO"
    idle_hours: float = 24.0
    """A running game with no flip for this long is abandoned when a new one starts there."""
    challenge_seconds: float = 300.0
    """How long a challenge waits for everyone to accept."""
    choice_seconds: float = 60.0
    """Steal War: how long a player has for a choice before the default applies."""
    autoplay_seconds: float = 1.2
    """Autoplay edits its message at most once per this many seconds (Discord's channel limit)."""
    render_processes: int = 1
    """Worker processes that draw pictures (0: threads in the bot's own process)."""
    log_format: LogFormat = "text"
    """``text`` for people reading the journal, ``json`` (one object a line) for log collectors."""
    metrics_port: int | None = None
    """Serve ``/metrics`` and ``/healthz`` on this port (None: no endpoint)."""
    metrics_host: str = "127.0.0.1"
    """The address the monitoring endpoint listens on."""
    web_port: int | None = None
    """The port of the web view (None: no web view)."""
    web_host: str = "127.0.0.1"
    web_url: str | None = None
    """The web view's public address, used in the links the bot posts (None: no links)."""
    web_secret: str | None = None
    """The key the web view's links are signed with; required with a port."""

    def __repr__(self) -> str:
        # Never let the token reach a log line or a traceback.
        return (
            f"Settings(token=<hidden>, db_path={str(self.db_path)!r}, "
            f"database_url={self.database_url and _without_password(self.database_url)!r}, "
            f"dev_guild={self.dev_guild}, "
            f"log_level={self.log_level!r}, idle_hours={self.idle_hours}, "
            f"challenge_seconds={self.challenge_seconds}, choice_seconds={self.choice_seconds}, "
            f"autoplay_seconds={self.autoplay_seconds}, render_processes={self.render_processes}, "
            f"log_format={self.log_format!r}, metrics_port={self.metrics_port}, "
            f"metrics_host={self.metrics_host!r}, "
            f"web_port={self.web_port}, web_host={self.web_host!r}, web_url={self.web_url!r}, "
            f"web_secret={'<hidden>' if self.web_secret else None})"
        )

    @property
    def database(self) -> str | Path:
        """Return where the database is: the PostgreSQL URL if one is set, else the SQLite file."""
        return self.db_path if self.database_url is None else self.database_url

    @property
    def database_name(self) -> str:
        """Return the database's location for messages and logs (no password)."""
        return (
            str(self.db_path) if self.database_url is None else _without_password(self.database_url)
        )

    @classmethod
    def load(
        cls, env: Mapping[str, str | None] | None = None, *, folder: str | Path = PROJECT
    ) -> Settings:
        """Read settings from the environment, with ``folder/.env`` filling in what it does not set.

        A relative ``KRIG_DB`` (and the default, ``data/krig.db``) is taken inside ``folder``.
        """
        folder = Path(folder)
        env_file = folder / ".env"
        merged: dict[str, str | None] = {}
        if env_file.is_file():
            merged.update(dotenv_values(env_file))
        merged.update(os.environ if env is None else env)

        token = (merged.get("DISCORD_TOKEN") or "").strip()
        if not token:
            raise ConfigError(
                f"DISCORD_TOKEN is not set in the environment nor in {env_file}: copy "
                f"{folder / '.env.example'} to {env_file} and paste your bot's token "
                "(Discord Developer Portal → your application → Bot → Reset Token)."
            )
        level = (merged.get("LOG_LEVEL") or "INFO").strip().upper()
        if level not in LOG_LEVELS:
            raise ConfigError(f"LOG_LEVEL must be one of {', '.join(LOG_LEVELS)}, not {level!r}")
        log_format = (merged.get("KRIG_LOG_FORMAT") or "text").strip().lower()
        if log_format not in LOG_FORMATS:
            raise ConfigError(f"KRIG_LOG_FORMAT must be text or json, not {log_format!r}")
        web_port = _port(merged, "KRIG_WEB_PORT")
        web_secret = (merged.get("KRIG_WEB_SECRET") or "").strip() or None
        if web_port is not None and (web_secret is None or len(web_secret) < MIN_WEB_SECRET):
            raise ConfigError(
                f"KRIG_WEB_PORT is set, so KRIG_WEB_SECRET must be too: at least {MIN_WEB_SECRET} "
                "random characters that sign the web view's links (e.g. the output of "
                "`python -c 'import secrets; print(secrets.token_urlsafe(32))'`)."
            )
        return cls(
            token=token,
            db_path=_db_path(merged.get("KRIG_DB"), folder),
            database_url=_database_url(merged.get("KRIG_DATABASE_URL")),
            dev_guild=_optional_id(merged.get("KRIG_DEV_GUILD")),
            log_level=level,
            idle_hours=_positive(merged, "KRIG_IDLE_HOURS", 24.0),
            challenge_seconds=_positive(merged, "KRIG_CHALLENGE_SECONDS", 300.0),
            choice_seconds=_positive(merged, "KRIG_CHOICE_SECONDS", 60.0),
            autoplay_seconds=_positive(merged, "KRIG_AUTOPLAY_SECONDS", 1.2),
            render_processes=_count(merged, "KRIG_RENDER_PROCESSES", 1, most=8),
            log_format=log_format,
            metrics_port=_port(merged, "KRIG_METRICS_PORT"),
            metrics_host=(merged.get("KRIG_METRICS_HOST") or "127.0.0.1").strip(),
            web_port=web_port,
            web_host=(merged.get("KRIG_WEB_HOST") or "127.0.0.1").strip(),
            web_url=_web_url(merged.get("KRIG_WEB_URL")),
            web_secret=web_secret,
        )


def _web_url(raw: str | None) -> str | None:
    if raw is None or not raw.strip():
        return None
    url = raw.strip().rstrip("/")
    if not url.startswith(("https://", "http://")) or len(url) <= len("https://"):
        raise ConfigError(
            f"KRIG_WEB_URL must be the web view's address, such as https://krig.example.org, "
            f"not {raw!r}"
        )
    return url


def _database_url(raw: str | None) -> str | None:
    if raw is None or not raw.strip():
        return None
    url = raw.strip()
    if not url.startswith(("postgresql://", "postgres://")):
        raise ConfigError(
            "KRIG_DATABASE_URL must be a PostgreSQL URL such as "
            f"postgresql://krig@localhost/krig, not {_without_password(url)!r} "
            "(leave it unset to use the SQLite file KRIG_DB)"
        )
    return url


def _without_password(url: str) -> str:
    """Hide the password of a database URL."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    host = parts.netloc.rsplit("@", 1)[1]
    return urlunsplit(parts._replace(netloc=f"{parts.username or ''}:***@{host}"))


def sqlite_file(
    env: Mapping[str, str | None] | None = None, *, folder: str | Path = PROJECT
) -> Path:
    """Return the SQLite file ``KRIG_DB`` names (environment first, then ``folder/.env``)."""
    folder = Path(folder)
    env_file = folder / ".env"
    values = dict(dotenv_values(env_file)) if env_file.is_file() else {}
    values.update(os.environ if env is None else env)
    return _db_path(values.get("KRIG_DB"), folder)


def _db_path(value: str | None, folder: Path) -> Path:
    raw = (value or "").strip() or DEFAULT_DB
    if raw == MEMORY:
        return Path(raw)
    # expanduser: "~/krig.db" in a .env means the home folder, as it would in a shell.
    return folder / Path(raw).expanduser()


def _count(values: Mapping[str, str | None], key: str, default: int, *, most: int) -> int:
    raw = values.get(key)
    if raw is None or not raw.strip():
        return default
    if not raw.strip().isdigit() or int(raw) > most:
        raise ConfigError(f"{key} must be a whole number from 0 to {most}, not {raw!r}")
    return int(raw)


def _port(values: Mapping[str, str | None], key: str) -> int | None:
    raw = values.get(key)
    if raw is None or not raw.strip():
        return None
    if not raw.strip().isdigit() or not 1 <= int(raw) <= 65535:
        raise ConfigError(f"{key} must be a port number from 1 to 65535, not {raw!r}")
    return int(raw)


def _optional_id(value: str | None) -> int | None:
    if value is None or not value.strip():
        return None
    if not value.strip().isdigit():
        raise ConfigError(f"KRIG_DEV_GUILD must be a server id (digits), not {value!r}")
    return int(value)


def _positive(values: Mapping[str, str | None], key: str, default: float) -> float:
    raw = values.get(key)
    if raw is None or not raw.strip():
        return default
    try:
        number = float(raw)
    except ValueError:
        raise ConfigError(f"{key} must be a number, not {raw!r}") from None
    # float() also reads "nan" and "inf", which would crash the bot later, far from the cause.
    if not math.isfinite(number):
        raise ConfigError(f"{key} must be a number, not {raw!r}")
    if number <= 0:
        raise ConfigError(f"{key} must be greater than 0")
    if number > MAX_DURATION:
        raise ConfigError(f"{key} must be at most {MAX_DURATION}")
    return number
