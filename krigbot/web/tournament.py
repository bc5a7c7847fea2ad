"""What a tournament's page shows: its rounds match by match, its standings, its champion."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from krigbot.engine.tournament import Pairing, advancing, standings
from krigbot.i18n import Lang, t
from krigbot.render.tournament import points_text
from krigbot.sessions.tournaments import Tournament
from krigbot.storage.tournaments import TournamentRow


@dataclass(frozen=True, slots=True)
class MatchLine:
    """One match as the page lists it."""

    a: str
    b: str | None
    """None: ``a`` had a bye."""
    result: str
    winner: str | None


def _line(tournament: Tournament, pairing: Pairing, lang: Lang) -> MatchLine:
    a = tournament.name_of(pairing.a)
    b = None if pairing.b is None else tournament.name_of(pairing.b)
    bracket = tournament.bracket
    assert bracket is not None
    if pairing.b is None:
        return MatchLine(a, None, t(lang, "web.tournament.bye"), a)
    if not pairing.done:
        return MatchLine(a, b, t(lang, "web.tournament.playing"), None)
    through = advancing(bracket, pairing) if bracket.format == "knockout" else pairing.winner
    if pairing.winner is None:
        name = None if through is None else tournament.name_of(through)
        return MatchLine(a, b, t(lang, "web.tournament.draw"), name)
    return MatchLine(a, b, t(lang, "web.tournament.won"), tournament.name_of(pairing.winner))


def tournament_page(row: TournamentRow, lang: Lang) -> dict[str, Any]:
    """Return the template's values for a tournament's page."""
    tournament = Tournament.of(row)
    bracket = tournament.bracket
    rounds = [] if bracket is None else list(enumerate(bracket.rounds, 1))
    table = []
    if bracket is not None and bracket.format != "knockout" and bracket.rounds:
        table = [
            (
                place,
                tournament.name_of(s.player),
                points_text(s.points),
                s.wins,
                s.draws,
                s.losses,
                points_text(s.buchholz),
            )
            for place, s in enumerate(standings(bracket), 1)
        ]
    champion = tournament.champion
    return {
        "tournament": tournament,
        "format": t(lang, f"tournament.format.{tournament.format}"),
        "variant": t(lang, f"variant.{tournament.variant}.name"),
        "total": 0 if bracket is None else bracket.total_rounds,
        "rounds": [
            (number, [_line(tournament, pairing, lang) for pairing in matches])
            for number, matches in rounds
        ],
        "standings": table,
        "champion": None if champion is None else tournament.name_of(champion),
        "entrants": [entrant.name for entrant in tournament.players],
    }
