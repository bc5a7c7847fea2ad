"""Per-guild key/value settings."""

from __future__ import annotations

from krigbot.storage.base import Store

_UPSERT = """
INSERT INTO guild_settings (guild_id, key, value) VALUES (?, ?, ?)
ON CONFLICT (guild_id, key) DO UPDATE SET value = excluded.value
"""


class SettingsStore(Store):
    """Store text settings per guild."""

    async def get_setting(self, guild_id: int, key: str) -> str | None:
        """Return a guild's setting, or None if it was never set."""
        row = await self._database.fetchone(
            "SELECT value FROM guild_settings WHERE guild_id = ? AND key = ?", (guild_id, key)
        )
        return None if row is None else str(row["value"])

    async def get_settings(self, guild_id: int) -> dict[str, str]:
        """Return all of a guild's settings."""
        rows = await self._database.fetchall(
            "SELECT key, value FROM guild_settings WHERE guild_id = ? ORDER BY key", (guild_id,)
        )
        return {row["key"]: row["value"] for row in rows}

    async def set_setting(self, guild_id: int, key: str, value: str) -> None:
        """Create or replace a guild's setting."""
        await self._database.write(_UPSERT, (guild_id, key, value))

    async def delete_setting(self, guild_id: int, key: str) -> bool:
        """Remove a guild's setting; False if it was not set."""
        changed = await self._database.write(
            "DELETE FROM guild_settings WHERE guild_id = ? AND key = ?", (guild_id, key)
        )
        return changed == 1
