"""Settings: one typed object read from the environment and an optional ``.env`` file."""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Final
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
MAX_SHARDS = 65_536
"""The most shards KRIG_SHARD_COUNT accepts: far beyond any bot (Discord: 2,500 servers each)."""
IDENTIFY_SECONDS = 5.0
"""Discord's pause between two identifies in one ``max_concurrency`` bucket."""
WHERE_TOKENS_ARE = "Discord Developer Portal → your application → Bot → Reset Token"
AUTO: Final = "auto"
"""KRIG_SHARDS's value for shards claimed with leases in PostgreSQL rather than listed."""
GLOBAL_REST_LIMIT = 50
"""Requests a second Discord allows a bot (all its processes together) outside interactions."""


class ConfigError(Exception):
    """A setting is missing or malformed; the message tells the user what to do."""


def shard_of(guild_id: int | None, count: int) -> int:
    """Return the shard that receives a server's events (shard 0: no server, as a DM)."""
    if not guild_id:
        return 0
    return (guild_id >> 22) % count


@dataclass(frozen=True, slots=True)
class Shards:
    """Which of the bot's shards this process runs: all of them, or ``ids`` out of ``count``."""

    count: int | None = None
    """How many shards the bot has (None: Discord's recommended number, asked at start)."""
    ids: tuple[int, ...] | None = None
    """The shards this process runs (None: every one)."""
    auto: bool = False
    """Claimed with leases in PostgreSQL (``KRIG_SHARDS=auto``): ``ids`` are those held now."""

    def owns(self, guild_id: int | None) -> bool:
        """Tell whether this process runs the shard of a server (None: a DM, shard 0's)."""
        if self.ids is None or self.count is None:
            return True
        return shard_of(guild_id, self.count) in self.ids

    @property
    def runs_first(self) -> bool:
        """Tell whether this process runs shard 0 (the one that syncs the commands)."""
        return self.ids is None or 0 in self.ids

    def share(self) -> float:
        """Return the part of all shards this process runs (1.0 when it runs all or claims)."""
        if self.ids is None or self.count is None or self.auto:
            # Claimed shards change hands: the live processes share the limit (adapter/leases).
            return 1.0
        return len(self.ids) / self.count

    def holding(self, ids: tuple[int, ...]) -> Shards:
        """Return these shards with ``ids`` the ones held now (``KRIG_SHARDS=auto``)."""
        return Shards(self.count, tuple(sorted(ids)), auto=self.auto)

    def __str__(self) -> str:
        # Words for someone who never set KRIG_SHARD_COUNT: the start-up line shows them.
        if self.count is None:
            return "shards chosen by Discord"
        if self.auto:
            return f"shards claimed with leases (auto) of {self.count}"
        if self.ids is None:
            return "1 shard" if self.count == 1 else f"all {self.count} shards"
        return f"shards {span_text(self.ids)} of {self.count}"


EVERY_SHARD: Final = Shards()
"""One process running all of the bot's shards (the default)."""


def span_text(ids: tuple[int, ...]) -> str:
    """Return shard ids as KRIG_SHARDS writes them: ``0-3,6``."""
    parts: list[str] = []
    start = previous = ids[0]
    for shard in (*ids[1:], None):
        if shard is not None and shard == previous + 1:
            previous = shard
            continue
        parts.append(str(start) if start == previous else f"{start}-{previous}")
        if shard is not None:
            start = previous = shard
    return ",".join(parts)


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
    shards: Shards = Shards()
    """The shards this process runs (``KRIG_SHARD_COUNT``, ``KRIG_SHARDS``)."""
    rest_share: float = 1.0
    """The part of Discord's global REST limit this process may use (``KRIG_REST_SHARE``)."""
    identify_seconds: float = IDENTIFY_SECONDS
    """The pause between identifies in one bucket (lower only against a test server)."""
    rest_proxy: str | None = None
    """A shared REST proxy's address, which every request to Discord's API goes through."""
    activity: bool = False
    """The application has an Activity in the Developer Portal: ``/krig table`` launches it
    (``KRIG_ACTIVITY``: on or off)."""
    card_emojis: bool = True
    """Upload the cards as the application's emojis and show them in the tables' text
    (``KRIG_CARD_EMOJIS``: on or off)."""

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
            f"web_secret={'<hidden>' if self.web_secret else None}, shards={self.shards!r}, "
            f"rest_share={self.rest_share}, identify_seconds={self.identify_seconds}, "
            f"rest_proxy={self.rest_proxy and _without_password(self.rest_proxy)!r}, "
            f"card_emojis={self.card_emojis}, activity={self.activity})"
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

        raw_token = merged.get("DISCORD_TOKEN")
        token = (raw_token or "").strip()
        if raw_token is None:
            raise ConfigError(
                f"DISCORD_TOKEN is not set in the environment nor in {env_file}: copy "
                f"{folder / '.env.example'} to {env_file} and paste your bot's token "
                f"after DISCORD_TOKEN= ({WHERE_TOKENS_ARE})."
            )
        if not token:
            where = (
                f"in {env_file}"
                if "DISCORD_TOKEN" not in (os.environ if env is None else env)
                else "in the environment (for the systemd service: in /etc/krigbot/krigbot.env)"
            )
            raise ConfigError(
                f"DISCORD_TOKEN is empty {where}: paste your bot's token right after "
                f"DISCORD_TOKEN= ({WHERE_TOKENS_ARE})."
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
        activity = _switch(merged, "KRIG_ACTIVITY", default=False)
        for needed in ("KRIG_WEB_PORT", "KRIG_WEB_URL"):
            if activity and not (merged.get(needed) or "").strip():
                raise ConfigError(
                    f"KRIG_ACTIVITY=on needs {needed}: the Activity is a page of the web view, "
                    "served by the bot at its public address (docs/self-hosting.md)"
                )
        shards = _shards(merged.get("KRIG_SHARD_COUNT"), merged.get("KRIG_SHARDS"))
        database_url = _database_url(merged.get("KRIG_DATABASE_URL"))
        if shards.auto and database_url is None:
            raise ConfigError(
                "KRIG_SHARDS=auto needs PostgreSQL (KRIG_DATABASE_URL): processes claim the "
                "shards in the database they share, and an SQLite file has no one to share with; "
                "list the shards instead (KRIG_SHARDS=0-3)"
            )
        return cls(
            token=token,
            db_path=_db_path(merged.get("KRIG_DB"), folder),
            database_url=database_url,
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
            web_url=_address(merged, "KRIG_WEB_URL"),
            web_secret=web_secret,
            shards=shards,
            rest_share=_share(merged.get("KRIG_REST_SHARE"), shards),
            identify_seconds=_positive(merged, "KRIG_IDENTIFY_SECONDS", IDENTIFY_SECONDS),
            rest_proxy=_address(merged, "KRIG_REST_PROXY"),
            card_emojis=_switch(merged, "KRIG_CARD_EMOJIS", default=True),
            activity=activity,
        )


def client_secret(env: Mapping[str, str] | None = None) -> str | None:
    """Return the application's OAuth2 client secret (``KRIG_CLIENT_SECRET``), or None.

    Read from the environment only, never from ``.env`` (a file copied around with the
    project), and kept out of :class:`Settings`, whose fields reach log lines."""
    raw = (os.environ if env is None else env).get("KRIG_CLIENT_SECRET")
    return (raw or "").strip() or None


def _shards(count_text: str | None, ids_text: str | None) -> Shards:
    count = None
    if count_text is not None and count_text.strip():
        raw = count_text.strip()
        if not _digits(raw) or not 1 <= int(raw) <= MAX_SHARDS:
            raise ConfigError(
                f"KRIG_SHARD_COUNT must be the number of shards, a whole number from 1 to "
                f"{MAX_SHARDS}, not {count_text!r} (leave it unset to let Discord choose)"
            )
        count = int(raw)
    if ids_text is None or not ids_text.strip():
        return Shards(count)
    if count is None:
        raise ConfigError(
            "KRIG_SHARDS needs KRIG_SHARD_COUNT: every process of the bot must be told the same "
            "number of shards (for example KRIG_SHARD_COUNT=8 with KRIG_SHARDS=0-3)"
        )
    if ids_text.strip().lower() == AUTO:
        return Shards(count, (), auto=True)
    seen: set[int] = set()
    for part in ids_text.replace(" ", "").split(","):
        first, dash, last = part.partition("-")
        if not _digits(first) or (dash and not _digits(last)):
            raise ConfigError(
                f"KRIG_SHARDS must list shard ids like 0-7 or 0,2,4 (or 0-3,8), not {ids_text!r}"
            )
        low, high = int(first), int(last) if dash else int(first)
        if low > high:
            raise ConfigError(f"KRIG_SHARDS: the range {part} runs backwards; write {high}-{low}")
        if high >= count:
            raise ConfigError(
                f"KRIG_SHARDS: shard {high} does not exist with KRIG_SHARD_COUNT={count} "
                f"(the shards are 0 to {count - 1})"
            )
        twice = seen.intersection(range(low, high + 1))
        if twice:
            raise ConfigError(f"KRIG_SHARDS names shard {min(twice)} twice in {ids_text!r}")
        seen.update(range(low, high + 1))
    return Shards(count, tuple(sorted(seen)))


def _share(raw: str | None, shards: Shards) -> float:
    if raw is None or not raw.strip():
        return shards.share()
    try:
        # float() reads other scripts' digits ("٠٫٥") too; a setting is written in ASCII.
        share = float(raw) if raw.isascii() else math.nan
    except ValueError:
        share = math.nan
    if not 0 < share <= 1:
        raise ConfigError(
            f"KRIG_REST_SHARE must be this process's part of Discord's {GLOBAL_REST_LIMIT} "
            f"requests a second, a number above 0 and at most 1 (such as 0.25), not {raw!r}"
        )
    return share


_SWITCH: Final = {"on": True, "off": False}


def _switch(values: Mapping[str, str | None], key: str, *, default: bool) -> bool:
    """Read an on/off setting; unset or empty is ``default``."""
    raw = values.get(key)
    if raw is None or not raw.strip():
        return default
    value = _SWITCH.get(raw.strip().lower())
    if value is None:
        raise ConfigError(f"{key} must be on or off, not {raw!r}")
    return value


_ADDRESSES: Final = {
    "KRIG_REST_PROXY": "the REST proxy's address, such as http://127.0.0.1:8080",
    "KRIG_WEB_URL": "the web view's address, such as https://krig.example.org",
}
"""What each http(s) address setting names, as its error message says it."""


def _address(values: Mapping[str, str | None], key: str) -> str | None:
    """Read an http(s) address without its trailing slash; None when the setting is unset."""
    raw = values.get(key)
    if raw is None or not raw.strip():
        return None
    url = raw.strip().rstrip("/")
    if not url.startswith(("http://", "https://")) or len(url) <= len("https://"):
        raise ConfigError(f"{key} must be {_ADDRESSES[key]}, not {raw!r}")
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


def _digits(text: str) -> bool:
    """Tell whether ``text`` is a whole number written in ASCII digits only.

    ``str.isdigit`` also says yes to "¹" and "١", which ``int()`` refuses or reads as a number
    nobody meant to write.
    """
    return text.isascii() and text.isdigit()


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
    if not _digits(raw.strip()) or int(raw) > most:
        raise ConfigError(f"{key} must be a whole number from 0 to {most}, not {raw!r}")
    return int(raw)


def _port(values: Mapping[str, str | None], key: str) -> int | None:
    raw = values.get(key)
    if raw is None or not raw.strip():
        return None
    if not _digits(raw.strip()) or not 1 <= int(raw) <= 65535:
        raise ConfigError(f"{key} must be a port number from 1 to 65535, not {raw!r}")
    return int(raw)


def _optional_id(value: str | None) -> int | None:
    if value is None or not value.strip():
        return None
    if not _digits(value.strip()):
        raise ConfigError(f"KRIG_DEV_GUILD must be a server id (digits), not {value!r}")
    return int(value)


def _positive(values: Mapping[str, str | None], key: str, default: float) -> float:
    raw = values.get(key)
    if raw is None or not raw.strip():
        return default
    try:
        # float() reads other scripts' digits ("١٢") too; a setting is written in ASCII.
        number = float(raw) if raw.isascii() else math.nan
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
