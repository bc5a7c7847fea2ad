"""The lines that tell a best-of match on a challenge, a table and a result."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from krigbot.engine.match import MatchInfo
from krigbot.i18n import Lang, fmt_list, t


def score_text(names: Sequence[str], score: Sequence[int]) -> str:
    """Return a match score with the names ("Alice 1 · Bob 0")."""
    return " · ".join(f"{name} {won}" for name, won in zip(names, score, strict=True))


def match_rule(extra: Mapping[str, Any], lang: Lang) -> list[str]:
    """Return the line a challenge states for a match (none for a single game)."""
    match = MatchInfo.of(extra)
    if match is None:
        return []
    return [t(lang, "match.rule", best_of=match.best_of, target=match.target)]


def match_lines(extra: Mapping[str, Any], names: Sequence[str], lang: Lang) -> list[str]:
    """Return the line a table shows for a match game: which game, and the score before it."""
    match = MatchInfo.of(extra)
    if match is None or len(match.score) != len(names):
        return []
    score = score_text(names, match.score)
    return [t(lang, "match.line", best_of=match.best_of, game=match.game, score=score)]


def match_result(
    match: MatchInfo,
    winners: Sequence[int],
    names: Sequence[str],
    lang: Lang,
    *,
    stopped: bool = False,
) -> str:
    """Return the score after a match game, and who won the match if someone did.

    ``stopped``: nobody played the game (see :func:`~krigbot.engine.match.unplayed`), which
    ends the match without a winner.
    """
    score = match.after(winners)
    line = t(
        lang, "match.score", best_of=match.best_of, game=match.game, score=score_text(names, score)
    )
    if stopped:
        return f"{line}\n" + t(lang, "match.stopped", game=match.game)
    decided = match.decided(score)
    if len(decided) == 1:
        return f"{line}\n🏆 " + t(lang, "match.winner", name=f"**{names[decided[0]]}**")
    if decided:
        both = fmt_list([f"**{names[seat]}**" for seat in decided], lang)
        return f"{line}\n🏆 " + t(lang, "match.winners", names=both)
    return f"{line}\n" + t(lang, "match.next", game=match.game + 1)
