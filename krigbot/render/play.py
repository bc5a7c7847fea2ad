"""What hands-free play shows: autoplay, finishing at once, the end of a game, history, replays.

Like the other renderers this turns stored rows and engine values into text through the
catalogs and changes nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Protocol

import discord

from krigbot.engine import Round, Variant
from krigbot.engine.match import MatchInfo, unplayed
from krigbot.i18n import Lang, LocaleLike, fmt_date, fmt_list, t
from krigbot.render.embeds import (
    COLOUR_INFO,
    COLOUR_OVER,
    COLOUR_TABLE,
    COLOUR_WAR,
    _round_lines,
    add_score_field,
    counts_field,
    fits,
    names_of,
    narration,
    outcome_text,
    round_embed,
    rules_lines,
    standing_field,
    time_left_text,
)
from krigbot.render.emoji import NO_FACES, CardFaces
from krigbot.render.matches import match_lines, match_result
from krigbot.render.steal import choice_lines

if TYPE_CHECKING:
    from datetime import datetime

    from krigbot.render.replays import GameRounds
    from krigbot.storage import GameRow

SPEEDS = ("slow", "normal", "fast", "fastest")


# --------------------------------------------------------------------------- autoplay


def autoplay_text(state: str, speed: str, name: str, lang: Lang, *, reason: str = "") -> str:
    """Return the autoplay line of a table: running (at what speed) or paused (by whom).

    ``reason``: why the bot itself paused it, which it then says instead: ``"token"`` (its
    message's interaction was expiring), ``"token_lost"`` (Discord ended it early) or
    ``"restart"`` (the bot restarted where only interactions reach the chat).
    """
    if state == "paused":
        if reason == "token_lost":
            return t(lang, "auto.token_lost")
        if reason == "token":
            return t(lang, "auto.paused_token")
        if reason == "restart":
            return t(lang, "auto.paused_restart")
        return t(lang, "auto.paused", name=name)
    return t(lang, "auto.running", speed=t(lang, f"speed.{speed}"), name=name)


def add_note(embed: discord.Embed, text: str, lang: Lang) -> discord.Embed:
    """Add the autoplay field to a table embed and return it."""
    embed.add_field(name=t(lang, "auto.heading"), value=text, inline=False)
    return embed


def add_status_lines(
    embed: discord.Embed,
    row: GameRow,
    game: Variant | None,
    lang: Lang,
    *,
    deadline: datetime | None = None,
    autoplay: str | None = None,
    finish_waiting: Sequence[int] = (),
) -> discord.Embed:
    """Add to /krig status what the game is doing now: autoplay, a finish request, choices.

    The round is the one the table shows: during a Steal War battle, the battle's.
    ``autoplay`` is its note (:func:`autoplay_text`); ``finish_waiting`` the players an open
    request to finish waits for.
    """
    if game is None:
        return embed
    if game.in_battle:
        embed.description = t(lang, "status.round", round=game.round + 1)
        lines = choice_lines(game, names_of(row), lang, deadline)
        embed.add_field(name=t(lang, "steal.now"), value="\n".join(lines), inline=False)
    if autoplay is not None:
        add_note(embed, autoplay, lang)
    if finish_waiting:
        names = names_of(row)
        waiting = [names[row.players.index(user)] for user in finish_waiting]
        embed.add_field(
            name=t(lang, "finish.title", game=row.id),
            value=t(lang, "finish.waiting", players=fmt_list(waiting, lang)),
            inline=False,
        )
    return embed


# ----------------------------------------------------------------------------- tables


def dealt_embed(row: GameRow, game: Variant, lang: Lang) -> discord.Embed:
    """Return the table of a game just dealt: round 0, the counts, the match score if any."""
    return standing_embed(row, game, lang, t(lang, "table.dealt"))


def standing_embed(row: GameRow, game: Variant, lang: Lang, description: str) -> discord.Embed:
    """Return the table as it stands (no round shown): the counts, and the match score."""
    names = names_of(row)
    embed = discord.Embed(
        title=t(lang, "table.title", round=row.round), description=description, colour=COLOUR_TABLE
    )
    embed.add_field(
        name=t(lang, "table.counts_heading"), value=counts_field(game, names, lang), inline=False
    )
    for line in match_lines(row.extra, names, lang):
        embed.add_field(name=t(lang, "match.heading"), value=line, inline=False)
    embed.set_footer(text=t(lang, "table.round_footer", round=row.round, game=row.id))
    return embed


# ------------------------------------------------------------------- the end of a game


def fairness_text(row: GameRow, game: Variant, lang: Lang, command: str | None) -> str:
    """Return how anyone can check the result: the seed, the rules, and the command to run.

    ``command`` is the command line that plays the same game (see :mod:`krigbot.fairness`),
    None for a game it cannot replay: then only the seed and the rules are given.
    """
    lines = [
        t(lang, "fair.seed", seed=row.seed),
        t(lang, "fair.rules", rules=" · ".join(rules_lines(game.rules, names_of(row), lang))),
    ]
    if command is not None:
        lines.append(t(lang, "fair.command", command=f"`{command}`"))
    return "\n".join(lines)


def add_game_over(
    embed: discord.Embed,
    row: GameRow,
    game: Variant,
    lang: Lang,
    *,
    command: str | None,
) -> None:
    """Add what a finished game's message tells besides the result: the match, the check.

    ``command`` is the fairness check's command line, as :func:`fairness_text` takes it.
    """
    assert game.outcome is not None
    match = MatchInfo.of(row.extra)
    if match is not None and len(match.score) == len(row.players):
        embed.add_field(
            name=t(lang, "match.heading"),
            value=match_result(
                match,
                game.outcome.winners,
                names_of(row),
                lang,
                stopped=unplayed(game.outcome),
            ),
            inline=False,
        )
    embed.add_field(
        name=t(lang, "fair.heading"), value=fairness_text(row, game, lang, command), inline=False
    )


def add_time_left(
    embed: discord.Embed, deadline: tuple[datetime, timedelta] | None, lang: Lang
) -> discord.Embed:
    """Add how long a time limit has left to a table (nothing without a time limit)."""
    if deadline is not None:
        embed.add_field(
            name=t(lang, "status.time_heading"), value=time_left_text(*deadline, lang), inline=False
        )
    return embed


def time_up_embed(row: GameRow, game: Variant, lang: Lang) -> discord.Embed:
    """Return a game its time limit ended (rules §7): the result and the final counts.

    Like every finished game's message it gets the match and the check from ``add_game_over``.
    """
    names = names_of(row)
    embed = discord.Embed(
        title=t(lang, "time.up_title"),
        description=outcome_text(row, game, lang),
        colour=COLOUR_OVER,
    )
    embed.add_field(
        name=t(lang, "table.counts_heading"), value=counts_field(game, names, lang), inline=False
    )
    if game.rules.points:
        embed.add_field(
            name=t(lang, "table.points"),
            value=" · ".join(f"{names[s]} {game.points[s]}" for s in range(len(names))),
            inline=False,
        )
    embed.set_footer(text=t(lang, "table.round_footer", round=game.round, game=row.id))
    return embed


class Flip(Protocol):
    """What a flip played, as its table shows it (the session layer's ``FlipResult``)."""

    @property
    def row(self) -> GameRow: ...
    @property
    def game(self) -> Variant: ...
    @property
    def last(self) -> Round | None: ...
    @property
    def played(self) -> int: ...
    @property
    def wars(self) -> int: ...


def flip_embed(flip: Flip, lang: Lang, *, faces: CardFaces = NO_FACES) -> discord.Embed:
    """Return what a flip shows: its last round and the counts, or, if the time limit was up
    before any round was played, the counts that ended the game (``time_up_embed``)."""
    if flip.last is None:
        return time_up_embed(flip.row, flip.game, lang)
    return round_embed(
        flip.row, flip.game, flip.last, lang, played=flip.played, wars=flip.wars, faces=faces
    )


# --------------------------------------------------------------------------- finish


def finish_request_embed(
    row: GameRow, asker: int, waiting: Sequence[int], lang: Lang, *, note: str | None = None
) -> discord.Embed:
    """Return the request to play the game to its end: who asked, who has yet to agree."""
    names = names_of(row)
    others = [names[row.players.index(user)] for user in waiting]
    embed = discord.Embed(
        title=t(lang, "finish.title", game=row.id),
        description=t(lang, "finish.ask", name=names[row.players.index(asker)]),
        colour=COLOUR_INFO,
    )
    if note is not None:
        embed.add_field(name="\u200b", value=note, inline=False)
    elif others:
        embed.add_field(
            name="\u200b",
            value=t(lang, "finish.waiting", players=fmt_list(others, lang)),
            inline=False,
        )
    return embed


def summary_lines(row: GameRow, rebuilt: GameRounds, lang: Lang) -> list[str]:
    """Return a whole game in a few lines: rounds, wars, the biggest war, changes of lead."""
    names = names_of(row)
    story = rebuilt.story
    lines = [
        t(
            lang,
            "summary.rounds",
            rounds=len(rebuilt.rounds),
            wars=len(story.wars),
            changes=story.lead_changes,
        )
    ]
    big = rebuilt.biggest_war
    if big is not None:
        # A war whose pot was set aside has no winner to name.
        won = {} if big.winner is None else {"name": names[big.winner]}
        key = "summary.biggest_war" if won else "summary.biggest_war_aside"
        lines.append(
            t(lang, key, count=big.steps, round=big.round, steps=big.steps, cards=big.cards, **won)
        )
    return lines


def eternal_text(game: Variant, lang: Lang) -> str | None:
    """Explain a deal that repeats forever: from which round, every how many, so a draw."""
    outcome = game.outcome
    if outcome is None or outcome.reason != "eternal" or not outcome.cycle:
        return None
    start = outcome.rounds - outcome.cycle + 1
    return t(lang, "summary.eternal", count=outcome.cycle, n=outcome.cycle, start=start)


def finish_embed(row: GameRow, game: Variant, rebuilt: GameRounds, lang: Lang) -> discord.Embed:
    """Return a game played to its end at once: the result and the whole game in brief.

    Like every finished game's message it gets the match and the check from ``add_game_over``.
    """
    explained = eternal_text(game, lang)
    # The summary gives the rounds and wars, and an endless deal is explained in full below:
    # the result leaves both out rather than tell them twice.
    result = outcome_text(row, game, lang, reason=explained is None, stats=False)
    lines = [result, "", *summary_lines(row, rebuilt, lang)]
    if explained is not None:
        lines += ["", f"♾️ {explained}"]
    embed = discord.Embed(
        title=t(lang, "finish.done", game=row.id),
        description="\n".join(lines),
        colour=COLOUR_OVER,
    )
    embed.add_field(
        name=t(lang, "table.counts_heading"), value=counts_field(game, names_of(row), lang)
    )
    return embed


# --------------------------------------------------------------------------- history


def _never_dealt(row: GameRow) -> bool:
    return row.status == "cancelled" and row.state is None


def _result_text(row: GameRow, lang: Lang) -> str:
    if _never_dealt(row):
        return t(lang, "history.cancelled_challenge")
    if row.status != "finished" or row.result is None:
        return t(lang, f"history.{row.status}")
    names = names_of(row)
    winners = [names[seat] for seat in row.result.get("winners", ())]
    if winners:
        return "🏆 " + fmt_list(winners, lang)
    drawn = [names[seat] for seat in row.result.get("drawn", ())]
    # With 3 or 4 players a draw can be among some of them, and the others lost (rules §5, §7);
    # a team draw is always both teams' (§9).
    if row.rules.get("teams") or len(drawn) in (0, len(names)):
        return t(lang, "history.draw")
    return t(lang, "history.draw_among", names=fmt_list(drawn, lang))


def _reason_text(row: GameRow, lang: Lang) -> str | None:
    reason = (row.result or {}).get("reason")
    if row.status != "finished" or not isinstance(reason, str):
        return None
    if reason == "round_limit" and row.rules.get("points"):
        return t(lang, "history.reason.points")
    target = row.rules.get("target_tricks")
    if reason == "target" and isinstance(target, int):
        # Quick war's 10 tricks and a best of 3's 2 are told apart by their number.
        return t(lang, "history.reason.target", count=target, n=target)
    return t(lang, f"history.reason.{reason}")


def history_line(row: GameRow, lang: Lang, locale: LocaleLike = None) -> str:
    """Return one ended game as a line: id, date, players, result, reason, length, match.

    The date follows ``locale``, the reader's full locale (en-US and en-GB differ), or ``lang``.
    """
    moment = row.finished_at or row.created_at
    parts = [
        f"`#{row.id}`",
        fmt_date(moment, lang if locale is None else locale),
        " – ".join(names_of(row)),
        _result_text(row, lang),
    ]
    reason = _reason_text(row, lang)
    if reason is not None:
        parts.append(reason)
    if not _never_dealt(row):
        parts.append(t(lang, "unit.rounds", count=row.round, n=row.round))
    match = MatchInfo.of(row.extra)
    if match is not None:
        parts.append(t(lang, "history.match", best_of=match.best_of, game=match.game))
    return " · ".join(parts)


def history_embed(
    rows: Sequence[GameRow],
    page: int,
    player: int | None,
    lang: Lang,
    *,
    locale: LocaleLike = None,
) -> discord.Embed:
    """Return one page of a server's ended games, newest first (only a player's, if given).

    ``locale`` is the reader's full locale, for the dates.
    """
    lines = [] if player is None else [t(lang, "history.of", name=f"<@{player}>")]
    lines += [history_line(row, lang, locale) for row in rows] or [t(lang, "history.empty")]
    embed = discord.Embed(
        title=t(lang, "history.title"), description="\n".join(lines), colour=COLOUR_INFO
    )
    embed.set_footer(text=t(lang, "history.page", page=page + 1))
    return embed


# --------------------------------------------------------------------------- replay


def replay_embed(
    row: GameRow,
    rebuilt: GameRounds,
    number: int,
    final: Variant,
    lang: Lang,
    faces: CardFaces = NO_FACES,
) -> discord.Embed:
    """Return round ``number`` of an ended game as its table showed it, with the counts after it.

    ``final`` is the game as it ended: its result is shown with the last round. The cards are
    shown with ``faces``' emojis, unless the table would then be too long.
    """
    names = names_of(row)
    played: Round = rebuilt.rounds[number - 1]
    total = len(rebuilt.rounds)
    embed = discord.Embed(
        title=t(lang, "replay.title", game=row.id, round=number, rounds=total),
        description=narration(_round_lines(played, names, lang, faces), faces),
        colour=COLOUR_WAR if played.is_war else COLOUR_TABLE,
    )
    # A replayed round has its counts but no game behind it (a Steal War replay shows the
    # counts without the loot tops).
    embed.add_field(
        name=t(lang, "table.counts_heading"),
        value=standing_field(played.counts, names, lang, teams=final.rules.teams),
        inline=False,
    )
    add_score_field(embed, final.rules, played.points, played.tricks, names, lang)
    if number == total and final.outcome is not None:
        embed.colour = COLOUR_OVER
        embed.add_field(
            name=t(lang, "over.title"), value=outcome_text(row, final, lang), inline=False
        )
    variant = t(lang, f"variant.{final.rules.preset_name}.name")
    embed.set_footer(text=t(lang, "replay.footer", seed=row.seed, variant=variant))
    if len(faces) and not fits(embed):
        # The emojis' mentions made it too long: the same table with the cards' labels alone.
        return replay_embed(row, rebuilt, number, final, lang)
    return embed
