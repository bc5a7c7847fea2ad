"""Discord's limits and catalog key patterns shared by the i18n tests."""

from __future__ import annotations

import re
import unicodedata

from krigbot.i18n import Lang, catalog

# A command of a group inside /krig has both names (cmd.tournament.create.name).
NAME_KEYS = r"(cmd|opt)\.\w+(\.\w+)?\.name"
DESCRIPTION_KEYS = r"(cmd|opt)\.\w+(\.\w+)?\.desc"
CHOICE_KEYS = (
    r"variant\.\w+\.name|pickup\.\w+|shortage\.\w+|period\.\w+"
    r"|tournament\.format\.\w+|tournament\.creators\.\w+"
)


def is_discord_name(name: str) -> bool:
    """Return whether Discord accepts a command or option name (lowercase, letters, digits, - _)."""
    # Python's re has no \p{L}; Discord's regex is ^[-_\p{L}\p{N}\p{sc=Deva}\p{sc=Thai}]{1,32}$.
    allowed = all(char in "-_" or unicodedata.category(char)[0] in "LN" for char in name)
    return allowed and 1 <= len(name) <= 32 and name == name.lower()


def keys_like(lang: Lang, pattern: str) -> dict[str, str]:
    """Return the messages whose key matches ``pattern`` in full."""
    return {key: text for key, text in catalog(lang).items() if re.fullmatch(pattern, key)}
