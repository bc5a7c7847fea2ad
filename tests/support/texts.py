"""The bot's messages built from the catalog, so tests hold whatever the current wording."""

from __future__ import annotations

import re

from krigbot.i18n import Lang, LocaleLike, fmt_percent, t


def pattern(
    lang: LocaleLike, key: str, /, *, count: float | None = None, **fields: object
) -> re.Pattern[str]:
    """Return a regex for message ``key`` as shown, with a named group for each field left out.

    A field given as a compiled regex matches that regex (``round=re.compile(r"\\d+")``), any
    other value only itself; a field left out matches any text within one line.
    """
    values = {name: value for name, value in fields.items() if not isinstance(value, re.Pattern)}
    left_out: list[str] = []
    while True:
        try:
            shown = t(lang, key, count=count, **values)
            break
        except KeyError as missing:
            (name,) = missing.args
            if name == key or name in values:
                raise
            # A mark no message contains, so the escaped text can be split at each field.
            values[name] = f"\x00{name}\x00"
            left_out.append(name)
    regex = re.escape(shown)
    for name in left_out:
        given = fields.get(name)
        inner = given.pattern if isinstance(given, re.Pattern) else r"[^\n]+?"
        regex = regex.replace(re.escape(f"\x00{name}\x00"), f"(?P<{name}>{inner})", 1)
    return re.compile(regex)


def board_line(
    lang: Lang, rank: int, user: int, wins: int, games: int, draws: int, medal: str = ""
) -> str:
    """Return a leaderboard line as the bot writes it in ``lang``."""
    rate = fmt_percent(wins / games, lang)
    row = t(
        lang, "lb.row", rank=rank, name=f"<@{user}>", wins=wins, games=games, rate=rate, draws=draws
    )
    return f"{medal} {row}" if medal else row
