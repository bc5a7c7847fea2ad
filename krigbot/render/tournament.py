"""A tournament's messages: the sign-up list, the bracket or standings, the champion."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

import discord

from krigbot.engine.tournament import Bracket, Format, Pairing, advancing, standings
from krigbot.i18n import Lang, t
from krigbot.render.embeds import safe_name

SIGNUP_COLOUR = discord.Colour(0x2B6CB0)
BOARD_COLOUR = discord.Colour(0xB7791F)
OVER_COLOUR = discord.Colour(0x718096)
MOST_LINES = 40
"""The most lines of a round or of the standings shown (an embed field holds 1,024 characters)."""


@dataclass(frozen=True, slots=True)
class Shown:
    """What a tournament's messages show of it (the edge fills it from the session's value)."""

    name: str
    format: Format
    variant: str
    best_of: int
    size: int
    seed: int
    status: str
    players: Sequence[tuple[int, str]]
    closes_at: datetime | None = None
    round_ends_at: datetime | None = None
    bracket: Bracket | None = None
    champion: int | None = None
    reason: str | None = None


def _names(shown: Shown) -> Mapping[int, str]:
    return {user: safe_name(name) for user, name in shown.players}


def _rules_line(shown: Shown, lang: Lang) -> str:
    return t(
        lang,
        "tournament.rules",
        format=t(lang, f"tournament.format.{shown.format}"),
        variant=t(lang, f"variant.{shown.variant}.name"),
        best_of=shown.best_of,
    )


def signup_embed(shown: Shown, lang: Lang) -> discord.Embed:
    """Return the sign-up message: the rules, who is in, when it closes."""
    names = [safe_name(name) for _, name in shown.players]
    embed = discord.Embed(
        title=t(lang, "tournament.signup.title", name=safe_name(shown.name)),
        description=_rules_line(shown, lang),
        colour=SIGNUP_COLOUR if shown.status == "signup" else OVER_COLOUR,
    )
    embed.add_field(
        name=t(lang, "tournament.signup.players", n=len(names), size=shown.size),
        value="\n".join(f"{n}. {name}" for n, name in enumerate(names, 1))
        or t(lang, "tournament.signup.nobody"),
        inline=False,
    )
    if shown.status == "cancelled":
        footer = t(lang, f"tournament.cancelled.{shown.reason or 'organiser'}")
    elif shown.status != "signup":
        footer = t(lang, "tournament.signup.closed")
    elif shown.closes_at is not None:
        stamp = int(shown.closes_at.timestamp())
        footer = t(lang, "tournament.signup.closes", when=f"<t:{stamp}:R>")
    else:
        footer = t(lang, "tournament.signup.organiser_starts")
    embed.add_field(name="\u200b", value=footer, inline=False)
    return embed


def _pairing_line(bracket: Bracket, pairing: Pairing, names: Mapping[int, str], lang: Lang) -> str:
    a = names.get(pairing.a, str(pairing.a))
    if pairing.b is None:
        return t(lang, "tournament.line.bye", name=a)
    b = names.get(pairing.b, str(pairing.b))
    if not pairing.done:
        return t(lang, "tournament.line.playing", a=a, b=b)
    if pairing.winner is None:
        through = advancing(bracket, pairing) if bracket.format == "knockout" else None
        if through is not None:
            return t(lang, "tournament.line.draw_through", a=a, b=b, name=names.get(through, "?"))
        return t(lang, "tournament.line.draw", a=a, b=b)
    winner = names.get(pairing.winner, "?")
    return t(lang, "tournament.line.won", a=a, b=b, name=winner)


def _clip(lines: list[str], lang: Lang) -> str:
    if len(lines) > MOST_LINES:
        lines = [*lines[:MOST_LINES], t(lang, "tournament.more", n=len(lines) - MOST_LINES)]
    text = "\n".join(lines)
    return text if len(text) <= 1024 else text[:1020] + " …"


def board_embed(shown: Shown, lang: Lang) -> discord.Embed:
    """Return the bracket (knockout) or the standings (Swiss, round robin) and the round."""
    bracket = shown.bracket
    over = shown.status in ("finished", "cancelled")
    embed = discord.Embed(
        title=t(lang, "tournament.board.title", name=safe_name(shown.name)),
        description=_rules_line(shown, lang),
        colour=OVER_COLOUR if over else BOARD_COLOUR,
    )
    if bracket is None:
        return embed
    names = _names(shown)
    total = bracket.total_rounds
    if bracket.format != "knockout" and bracket.rounds:
        lines = [
            t(
                lang,
                "tournament.standing",
                place=place,
                name=names.get(row.player, "?"),
                points=points_text(row.points),
                wins=row.wins,
                draws=row.draws,
                losses=row.losses,
                buchholz=points_text(row.buchholz),
            )
            for place, row in enumerate(standings(bracket), 1)
        ]
        embed.add_field(
            name=t(lang, "tournament.standings"), value=_clip(lines, lang), inline=False
        )
    rounds = bracket.rounds if bracket.format == "knockout" else bracket.rounds[-1:]
    first = len(bracket.rounds) - len(rounds) + 1
    for number, matches in enumerate(rounds, first):
        lines = [_pairing_line(bracket, pairing, names, lang) for pairing in matches]
        embed.add_field(
            name=t(lang, "tournament.round", round=number, total=total),
            value=_clip(lines, lang),
            inline=False,
        )
    if shown.champion is not None:
        footer = t(lang, "tournament.champion", name=names.get(shown.champion, "?"))
    elif shown.status == "cancelled":
        footer = t(lang, f"tournament.cancelled.{shown.reason or 'organiser'}")
    elif shown.round_ends_at is not None:
        stamp = int(shown.round_ends_at.timestamp())
        footer = t(lang, "tournament.round_ends", when=f"<t:{stamp}:R>")
    elif shown.status == "running":
        footer = t(lang, "tournament.round_held")
    else:
        footer = ""
    if footer:
        embed.add_field(name="\u200b", value=footer, inline=False)
    embed.set_footer(text=t(lang, "tournament.seed", seed=shown.seed))
    return embed


def points_text(halves: int) -> str:
    """Return points kept in halves as players read them.

    >>> points_text(6), points_text(5), points_text(1)
    ('3', '2½', '½')
    """
    whole, half = divmod(halves, 2)
    if not half:
        return str(whole)
    return f"{whole}½" if whole else "½"


def thread_name(round_number: int, a: str, b: str, lang: Lang) -> str:
    """Return a match thread's name ("Round 1 · Alice – Bob"), within Discord's 100."""
    name = t(lang, "tournament.thread", round=round_number, a=a, b=b)
    return name if len(name) <= 100 else name[:99] + "…"


def champion_text(shown: Shown, user_id: int, lang: Lang) -> str:
    """Return the announcement of the champion (a mention, so they are told)."""
    return t(lang, "tournament.champion_announce", name=safe_name(shown.name), user=f"<@{user_id}>")
