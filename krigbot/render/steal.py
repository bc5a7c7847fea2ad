"""Steal War at the table (rules §10): the battle under way, the open choices, a private look.

The public table shows only what lies face up: cards played, steals, war steps (face-down
cards as a number), loot tops. A player's own next card appears only in :func:`look_text`,
which the Discord layer sends to that player alone.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING

import discord

from krigbot.engine import Round, Variant
from krigbot.engine.events import LookChoice, TopChoice
from krigbot.i18n import Lang, fmt_list, t
from krigbot.render.embeds import (
    COLOUR_TABLE,
    COLOUR_WAR,
    counts_field,
    fits,
    names_of,
    narration,
    round_embed,
    steal_line,
    war_step_lines,
)
from krigbot.render.emoji import NO_FACES, CardFaces

if TYPE_CHECKING:
    from krigbot.storage import GameRow

LABEL_NAME = 32
"""Longest display name on a button (a label holds 80 characters)."""


def in_war(game: Variant) -> bool:
    """Tell whether the battle under way has come to a war."""
    return game.battle_view().in_war


def waiting(game: Variant, seat: int) -> bool:
    """Tell whether a seat still has to turn its face-up card in the battle (or war step)."""
    return seat in game.battle_view().waiting


def label_name(name: str) -> str:
    """Return a display name for a button label (labels show no markdown and ping nobody)."""
    cleaned = " ".join(name.split()) or "?"
    return cleaned if len(cleaned) <= LABEL_NAME else cleaned[: LABEL_NAME - 1] + "…"


def battle_lines(
    game: Variant, names: Sequence[str], lang: Lang, faces: CardFaces = NO_FACES
) -> list[str]:
    """Return the battle under way as everyone sees it: face-up cards, steals and war steps."""
    view = game.battle_view()
    lines = [
        t(lang, "table.battle", name=f"**{names[seat]}**", card=faces.text(card, lang))
        for seat, card in view.battle
    ]
    lines.extend(steal_line(steal, names, lang, faces) for steal in view.steals)
    steps = view.war_steps
    if steps:
        fighters = fmt_list([names[s] for s in steps[0].fighters], lang)
        lines.append("⚔️ " + t(lang, "table.war", names=fighters))
    standing = {seat: faces.text(card, lang) for seat, card in view.standing}
    for number, step in enumerate(steps, start=1):
        # The step under way shows the face-up cards played so far; "?" for the others.
        under_way = number == len(steps) and all(card is None for card in step.face_up)
        turned = standing if under_way else None
        lines.extend(war_step_lines(step, number, names, lang, turned=turned, faces=faces))
        for seat in step.knocked_out:
            lines.append(t(lang, "table.eliminated", name=names[seat]))
    return lines


def choice_lines(
    game: Variant, names: Sequence[str], lang: Lang, deadline: datetime | None
) -> list[str]:
    """Return what the table waits for: who chooses, and until when; or how to go on."""
    pending = game.pending()
    if game.finished:
        return []
    if not pending:
        return [t(lang, "steal.flip_hint", flip=t(lang, "table.flip"))]
    first = pending[0]
    if isinstance(first, TopChoice):
        lines = [t(lang, "steal.choosing_top", name=f"**{names[first.seat]}**")]
    else:
        choosing = [f"**{names[c.seat]}**" for c in pending if isinstance(c, LookChoice)]
        lines = [t(lang, "steal.waiting", names=fmt_list(choosing, lang))]
    if deadline is not None:
        lines.append(t(lang, "steal.deadline", when=discord.utils.format_dt(deadline, "R")))
    return lines


def steal_table_embed(
    row: GameRow,
    game: Variant,
    lang: Lang,
    *,
    played: Round | None = None,
    notes: Sequence[str] = (),
    deadline: datetime | None = None,
    faces: CardFaces = NO_FACES,
) -> discord.Embed:
    """Return the Steal War table: the last battle or the one under way, counts and choices.

    The cards are shown with ``faces``' emojis, unless the table would then be too long.
    """
    names = names_of(row)
    if played is not None:
        embed = round_embed(row, game, played, lang, faces=faces)
        story = [*notes, embed.description or ""]
    else:
        # A battle under way is the next round; between battles the table shows the last one.
        shown = game.round + 1 if game.in_battle else game.round
        embed = discord.Embed(
            title=t(lang, "table.title", round=shown),
            colour=COLOUR_WAR if game.in_battle and in_war(game) else COLOUR_TABLE,
        )
        story = [*notes, *battle_lines(game, names, lang, faces)]
        embed.add_field(
            name=t(lang, "table.counts_heading"),
            value=counts_field(game, names, lang, faces),
            inline=False,
        )
        embed.set_footer(text=t(lang, "table.round_footer", round=shown, game=row.id))
    embed.description = narration([line for line in story if line], faces) or None
    now = choice_lines(game, names, lang, deadline)
    if now:
        embed.add_field(name=t(lang, "steal.now"), value="\n".join(now), inline=False)
    if len(faces) and not fits(embed):
        # The emojis' mentions made it too long: the same table with the cards' labels alone.
        return steal_table_embed(
            row, game, lang, played=played, notes=notes, deadline=deadline, faces=NO_FACES
        )
    return embed


def look_text(
    game: Variant, seat: int, names: Sequence[str], lang: Lang, faces: CardFaces = NO_FACES
) -> str:
    """Return what a player sees privately: their next card and what they may do with it."""
    card = game.look(seat)
    if card is None:
        return t(lang, "err.out_of_game")
    turning = game.in_battle and waiting(game, seat)
    key = "steal.your_war_card" if turning and in_war(game) else "steal.your_card"
    lines = [t(lang, key, card=faces.text(card, lang))]
    choice = next((c for c in game.pending() if c.seat == seat), None)
    if isinstance(choice, LookChoice):
        victims = fmt_list([names[s] for s in choice.can_steal], lang)
        lines.append(t(lang, "steal.can_steal", count=len(choice.can_steal), victims=victims))
    elif turning:
        lines.append(t(lang, "steal.will_play"))
    else:
        lines.append(t(lang, "steal.next_battle"))
    return "\n".join(lines)


def superseded(embed: discord.Embed, lang: Lang) -> discord.Embed:
    """Return a table that is no longer the game's: what it waited for, replaced by a note."""
    now = t(lang, "steal.now")
    fields = [(f.name, f.value, f.inline) for f in embed.fields if f.name != now]
    embed = embed.copy()
    embed.clear_fields()
    for name, value, inline in fields:
        embed.add_field(name=name, value=value, inline=inline)
    embed.add_field(name=now, value=t(lang, "steal.superseded"), inline=False)
    return embed
