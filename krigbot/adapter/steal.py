"""Steal War's buttons and looks (rules §10): what its table and a player's private look offer,
as Discord's buttons and as the Activity's moves.

The Activity's moves name what the buttons' custom ids name (the game, the seat, the card, the
piles stolen, the round a top card was offered at), and are checked against the game the same
way when they come back, so a stale or made-up one changes nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import discord

from krigbot.adapter.buttons import (
    FlipButton,
    LookButton,
    PlayButton,
    StealButton,
    TopButton,
    view_of,
)
from krigbot.engine import Variant
from krigbot.engine.cards import card_value
from krigbot.engine.events import LookChoice, TopChoice
from krigbot.i18n import Lang, card_label, t
from krigbot.render.emoji import NO_FACES
from krigbot.render.steal import label_name, look_text
from krigbot.sessions import Choice, Refusal

if TYPE_CHECKING:
    from krigbot.storage import GameRow

TOP_BUTTONS = 20
"""Top-card buttons on one table: four rows of five under the Flip/Look row."""


def top_offer(choice: TopChoice, default: int) -> list[int]:
    """Return the won cards offered for the top, in the order placed; one per rank if too many.

    Only the rank of a loot top matters to thieves, so a big war's pot loses nothing by it.
    """
    if len(choice.cards) <= TOP_BUTTONS:
        return list(choice.cards)
    by_rank: dict[int, int] = {}
    for card in choice.cards:
        by_rank.setdefault(card_value(card), card)
    by_rank[card_value(default)] = default
    offered = set(by_rank.values())
    return [card for card in choice.cards if card in offered]


def table_view(row: GameRow, game: Variant, lang: Lang) -> discord.ui.View | None:
    """Return the table's buttons: Flip between battles, Look always, the top-card choice."""
    if game.finished:
        return None
    pending = game.pending()
    items: list[discord.ui.Item[Any]] = []
    if not pending:
        items.append(FlipButton(row.id, row.round, lang))
    items.append(LookButton(row.id, lang))
    top = pending[0] if pending and isinstance(pending[0], TopChoice) else None
    if top is not None:
        default = game.loot_top(top.seat)
        assert default is not None  # the won cards lie on the loot pile in the default order
        for index, card in enumerate(top_offer(top, default)):
            items.append(
                TopButton(
                    row.id,
                    row.round,
                    top.seat,
                    card,
                    lang,
                    default=card == default,
                    row=1 + index // 5,
                )
            )
    return view_of(*items)


def choice_view(row: GameRow, game: Variant, seat: int, lang: Lang) -> discord.ui.View | None:
    """Return a player's private buttons: steal each matching pile, steal all, or play."""
    choice = next((c for c in game.pending() if c.seat == seat), None)
    if not isinstance(choice, LookChoice):
        return None
    items: list[discord.ui.Item[Any]] = [
        StealButton(
            row.id,
            seat,
            choice.card,
            (target,),
            t(
                lang,
                "steal.steal_from",
                name=label_name(row.names[target]),
                n=game.loot_size(target),
            ),
        )
        for target in choice.can_steal
    ]
    if len(choice.can_steal) > 1:
        every = sum(game.loot_size(target) for target in choice.can_steal)
        label = t(lang, "steal.steal_all", n=every)
        items.append(StealButton(row.id, seat, choice.card, choice.can_steal, label))
    items.append(
        PlayButton(
            row.id, seat, choice.card, t(lang, "steal.play", card=card_label(choice.card, lang))
        )
    )
    return view_of(*items)


def activity_look(row: GameRow, game: Variant, seat: int, lang: Lang) -> dict[str, Any]:
    """Return what the Activity shows a player privately: their next card, in plain text (no
    card emojis: the page is no Discord message), the moves their buttons would offer, and the
    game's round it was made at."""
    text = look_text(game, seat, row.names, lang, NO_FACES)
    choice = next((c for c in game.pending() if c.seat == seat), None)
    options: list[dict[str, Any]] = []
    base = {"game": row.id, "seat": seat}
    if isinstance(choice, LookChoice):
        for target in choice.can_steal:
            label = t(
                lang,
                "steal.steal_from",
                name=label_name(row.names[target]),
                n=game.loot_size(target),
            )
            move = base | {"choice": "steal", "card": choice.card, "targets": [target]}
            options.append({"label": label, "move": move})
        if len(choice.can_steal) > 1:
            every = sum(game.loot_size(target) for target in choice.can_steal)
            move = base | {
                "choice": "steal",
                "card": choice.card,
                "targets": list(choice.can_steal),
            }
            options.append({"label": t(lang, "steal.steal_all", n=every), "move": move})
        label = t(lang, "steal.play", card=card_label(choice.card, lang))
        options.append({"label": label, "move": base | {"choice": "play", "card": choice.card}})
    elif isinstance(choice, TopChoice):
        default = game.loot_top(seat)
        assert default is not None  # the won cards lie on the loot pile in the default order
        text = "\n".join([text, t(lang, "activity.choose_top")])
        for card in top_offer(choice, default):
            move = base | {"choice": "top", "card": card, "round": row.round}
            options.append({"label": card_label(card, lang), "move": move})
    return {"text": text, "options": options, "round": row.round}


def steal_move(move: dict[str, Any]) -> tuple[Choice, int, int, int, tuple[int, ...], int | None]:
    """Return a move the Activity posted back: its choice, game, seat, card, the piles it steals
    and the round of a top card; refuse anything :func:`activity_look` could not have offered."""
    choice, game_id, seat, card = (move.get(key) for key in ("choice", "game", "seat", "card"))
    targets, round_won = move.get("targets", []), move.get("round")
    if (
        choice not in ("steal", "play", "top")
        or not isinstance(game_id, int)
        or not isinstance(seat, int)
        or not isinstance(card, int)
        or not isinstance(targets, list)
        or not all(isinstance(n, int) for n in targets)
        or not (round_won is None or isinstance(round_won, int))
    ):
        raise Refusal("steal.stale")
    return choice, game_id, seat, card, tuple(targets), round_won
