"""Settings for the test bots, and the storage backends every stored-game test runs against."""

from __future__ import annotations

from pathlib import Path

from krigbot.config import Settings

BACKENDS = ("sqlite", "postgres")
"""The storages every contract test runs against (tests/storage) and the bot's slice of them."""


IDENTIFY_SECONDS = 0.05
"""The test bots' pause between identifies of a bucket, instead of Discord's 5 s.

The stand-in checks the pause only where a test asks it to (``identify_interval``, with the
bot's own setting to match); elsewhere a restarted bot would wait 5 s for nothing.
"""


def make_settings(db_path: Path, **changes: object) -> Settings:
    """Return settings for a test bot: card emojis off unless asked for, so a start uploads
    nothing and the tables read as labels (the emoji tests turn them on)."""
    changes.setdefault("identify_seconds", IDENTIFY_SECONDS)
    changes.setdefault("card_emojis", False)
    return Settings(token="fake-token", db_path=db_path, **changes)  # type: ignore[arg-type]
