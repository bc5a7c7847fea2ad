"""Per-guild settings."""

from __future__ import annotations

from typing import TYPE_CHECKING

from krigbot.storage import Storage

if TYPE_CHECKING:
    from pathlib import Path


async def test_settings_round_trip_per_guild(tmp_path: Path) -> None:
    path = tmp_path / "krig.db"
    storage = await Storage.open(path)
    assert await storage.settings.get_setting(1, "locale") is None
    await storage.settings.set_setting(1, "locale", "da")
    await storage.settings.set_setting(1, "locale", "en")  # replaces
    await storage.settings.set_setting(1, "flip_timeout", "300")
    await storage.settings.set_setting(2, "locale", "sv")
    assert await storage.settings.get_setting(1, "locale") == "en"
    assert await storage.settings.get_setting(2, "locale") == "sv"
    assert await storage.settings.get_settings(1) == {"flip_timeout": "300", "locale": "en"}
    await storage.close()

    storage = await Storage.open(path)
    try:
        assert await storage.settings.get_setting(1, "locale") == "en"
        assert await storage.settings.delete_setting(1, "locale")
        assert not await storage.settings.delete_setting(1, "locale")
        assert await storage.settings.get_setting(1, "locale") is None
        assert await storage.settings.get_settings(2) == {"locale": "sv"}
        assert await storage.settings.get_settings(3) == {}
    finally:
        await storage.close()
