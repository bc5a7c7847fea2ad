"""A game's replay for the browser: every round rebuilt from the seed and rules, as plain data.

The same rebuild as ``/krig replay`` (``render.replays.rebuild``), the same round texts as its
embeds, turned into JSON that ``static/replay.js`` animates. Nothing per round is stored.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from krigbot.engine import load_game
from krigbot.engine.cards import card_code
from krigbot.i18n import t
from krigbot.render.cards import SEAT_COLOURS, TEAM_COLOURS
from krigbot.render.embeds import outcome_text
from krigbot.render.play import replay_embed, summary_lines
from krigbot.render.replays import GameRounds, rebuild

if TYPE_CHECKING:
    from krigbot.engine import Round, Variant
    from krigbot.engine.replay import Replaying
    from krigbot.i18n import Lang
    from krigbot.storage import GameRow

_MARKDOWN = re.compile(r"\\(.)|\*\*|\u200b")


def plain(text: str) -> str:
    """Return Discord markdown as the plain text it shows (bold marks and escapes removed).

    >>> plain(r"**Ada\\_B** turns 7♠")
    'Ada_B turns 7♠'
    """
    return _MARKDOWN.sub(lambda found: found.group(1) or "", text)


def _hex(colour: tuple[int, int, int]) -> str:
    return "#{:02x}{:02x}{:02x}".format(*colour)


def _round(played: Round, text: str) -> dict[str, Any]:
    return {
        "n": played.number,
        "battle": [[seat, card_code(card)] for seat, card in played.battle],
        "steps": [
            {
                "fighters": list(step.fighters),
                "down": [len(cards) for cards in step.face_down],
                "up": [None if card is None else card_code(card) for card in step.face_up],
                "out": list(step.knocked_out),
            }
            for step in played.war_steps
        ],
        "winner": played.winner,
        "taken": played.taken,
        "aside": played.set_aside,
        "counts": list(played.counts),
        "out": list(played.eliminated),
        "text": [plain(line) for line in text.splitlines() if line.strip()],
    }


def _result(row: GameRow, final: Variant, lang: Lang) -> list[str]:
    """Return who won and why, as the game-over message says it (its figures are in the summary)."""
    if final.outcome is None:
        return []
    head, reason, *_ = (plain(line) for line in outcome_text(row, final, lang).splitlines())
    return [head.removeprefix("🏆").strip(), reason]


def replay_data(
    row: GameRow,
    lang: Lang,
    known: list[dict[str, Any]] | None = None,
    replaying: Replaying | None = None,
) -> dict[str, Any]:
    """Rebuild a game and return everything its page's replay shows, in ``lang``.

    ``known`` are rounds of the same game from an earlier replay in ``lang`` (a running game's,
    a few rounds ago): a round's text depends only on the rounds up to it, so they are kept,
    and only the rounds since are written. ``replaying``, handed the game's earlier rows, plays
    only the rounds since them (see ``rebuild``).
    """
    assert row.state is not None
    rebuilt: GameRounds = rebuild(row.state, replaying)
    final = load_game(row.state)
    kept = (known or [])[: len(rebuilt.rounds)]
    rounds = kept + [
        _round(played, replay_embed(row, rebuilt, number, final, lang).description or "")
        for number, played in enumerate(rebuilt.rounds, start=1)
        if number > len(kept)
    ]
    teams = final.rules.teams
    colours = [
        _hex(TEAM_COLOURS[seat % 2] if teams else SEAT_COLOURS[seat % len(SEAT_COLOURS)])
        for seat in range(len(row.names))
    ]
    return {
        "names": list(row.names),
        "colours": colours,
        "teams": [[0, 2], [1, 3]] if teams else [[seat] for seat in range(len(row.names))],
        "deal": list(rebuilt.story.counts[0]),
        "wars": rebuilt.story.wars,
        "rounds": rounds,
        "final": list(final.counts),
        "result": _result(row, final, lang),
        "summary": [plain(line) for line in summary_lines(row, rebuilt, lang)],
        "labels": {
            "round": t(lang, "web.replay.round"),
            "war": t(lang, "web.replay.war"),
            "chart": t(lang, "chart.title"),
        },
    }
