"""Embeds players see: challenges, the table after a round, results, boards and rules.

Everything here turns engine values and stored rows into text through the catalogs; nothing
here changes a game. Public messages use the server's language, private ones the reader's.
"""

from __future__ import annotations

import math
import unicodedata
from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta
from functools import lru_cache
from typing import TYPE_CHECKING, Literal

import discord

from krigbot.engine import (
    HOUSE_RULES,
    PRESETS,
    Outcome,
    Round,
    Rules,
    Variant,
    WarStep,
    find_variant,
)
from krigbot.engine.events import Steal
from krigbot.i18n import Lang, fmt_list, fmt_percent, t
from krigbot.render.emoji import NO_FACES, CardFaces
from krigbot.render.matches import match_lines, match_rule
from krigbot.render.reasons import NAMED, named_reason

if TYPE_CHECKING:
    from krigbot.storage import (
        Everywhere,
        GameRow,
        KrigbotRecord,
        LeaderboardRow,
        MatchRecord,
        PartnerRecord,
        PlayerStats,
        Tally,
        TournamentRecord,
    )

COLOUR_TABLE = discord.Colour.blurple()
COLOUR_WAR = discord.Colour.red()
COLOUR_OVER = discord.Colour.gold()
COLOUR_INFO = discord.Colour.dark_teal()
BAR_WIDTH = 10
UNKNOWN = "?"
"""Shown for a face-up card not yet played."""
TEAMS = ((0, 2), (1, 3))
"""The seats of each team in a team game (rules §9)."""
DESCRIPTION_LIMIT = 4000
"""Longest table text kept (Discord allows 4096 characters in a description)."""
FIELD_LIMIT = 1024
"""Discord's longest field value."""
EMBED_LIMIT = 6000
"""Discord's most characters in a message's embeds together."""


_BIDI_CONTROLS = dict.fromkeys(map(ord, "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"))
"""Explicit embeddings, overrides and isolates (and their ends): dropped from names."""


def literal(text: str) -> str:
    """Return text that renders as typed: no markdown, no mentions, no other ``<...>`` markup."""
    escaped = discord.utils.escape_mentions(discord.utils.escape_markdown(text))
    # escape_mentions leaves "<@123>" (a short id), "<#1>", "<t:0>" and "<:e:1>" alone, and
    # Discord still turns them into pills; a zero-width space after "<" keeps them plain text.
    return escaped.replace("<", "<\u200b")


@lru_cache(maxsize=4096)  # every table shows its players' names: a few µs each, once
def safe_name(name: str) -> str:
    """Return a display name that renders literally: no markdown, no mentions, bounded length.

    Right-to-left names are isolated and explicit direction controls dropped, so a name cannot
    reorder the text around it (``"\u202e"`` would otherwise turn a whole line backwards).
    """
    cleaned = " ".join(name.translate(_BIDI_CONTROLS).split()) or "?"
    if len(cleaned) > 32:
        cleaned = cleaned[:31] + "…"
    if any(unicodedata.bidirectional(char) in ("R", "AL") for char in cleaned):
        return f"\u2068{literal(cleaned)}\u2069"  # first strong isolate … pop isolate
    return literal(cleaned)


def names_of(row: GameRow) -> list[str]:
    """Return the players' names, safe to show, in seat order."""
    return [safe_name(name) for name in row.names]


def mention(user_id: int) -> str:
    """Return a user mention (shown as the name; pings only where allowed_mentions permits)."""
    return f"<@{user_id}>"


def bar(count: int, total: int) -> str:
    """Return a small bar showing a share of the cards."""
    filled = round(BAR_WIDTH * count / total) if total else 0
    return "▰" * filled + "▱" * (BAR_WIDTH - filled)


def rules_lines(rules: Rules, names: Sequence[str], lang: Lang) -> list[str]:
    """Return the rules in force, one short line each, as a challenge states them."""
    lines = [f"**{t(lang, f'variant.{rules.preset_name}.name')}**"]
    if rules.face_down == "rank":
        lines.append(t(lang, "rule.face_down_rank"))
    else:
        lines.append(t(lang, "rule.face_down", count=rules.face_down, n=rules.face_down))
    lines.append(t(lang, f"rule.shortage.{rules.shortage}"))
    if find_variant(rules.variant).has_loot:
        # rules §10: won cards go to a face-up loot pile, not under the pile, and can be stolen.
        lines += [t(lang, f"rule.steal.{key}") for key in ("loot", "steal", "refill")]
    else:
        lines.append(t(lang, f"rule.pickup.{rules.pickup}"))
    if rules.shuffle_won:
        lines.append(t(lang, "rule.shuffle_won"))
    if rules.jokers:
        lines.append(t(lang, "rule.jokers"))
    if rules.decks == 2:
        lines.append(t(lang, "rule.decks"))
    if rules.target_tricks is not None:
        lines.append(t(lang, "rule.target", count=rules.target_tricks, n=rules.target_tricks))
    if rules.points:
        lines.append(t(lang, "rule.points"))
    if rules.max_rounds is not None:
        lines.append(t(lang, "rule.max_rounds", count=rules.max_rounds, n=rules.max_rounds))
    if rules.time_limit is not None:
        lines.append(t(lang, "rule.time_limit", count=rules.time_limit, n=rules.time_limit))
    if rules.war_players == "all" and rules.players > 2:
        lines.append(t(lang, "rule.war_players.all"))
    if rules.wide_war and rules.players > 2:
        lines.append(t(lang, "rule.wide_war"))
    lines.extend(t(lang, f"rule.{key}") for key in HOUSE_RULES if getattr(rules, key))
    if rules.teams and len(names) == 4:
        team1 = fmt_list([names[0], names[2]], lang)
        team2 = fmt_list([names[1], names[3]], lang)
        lines.append(t(lang, "rule.teams", team1=team1, team2=team2))
    return lines


# ------------------------------------------------------------------------- challenge


def challenge_embed(row: GameRow, lang: Lang, *, note: str | None = None) -> discord.Embed:
    """Return the challenge: who challenges whom, the rules, who has accepted."""
    names = names_of(row)
    rules = Rules.from_dict(row.rules)
    challenged = [names[i] for i, uid in enumerate(row.players) if uid != row.challenger_id]
    embed = discord.Embed(
        title=t(lang, "challenge.title"),
        description=t(
            lang,
            "challenge.body",
            challenger=names[row.players.index(row.challenger_id)],
            players=fmt_list(challenged, lang),
        ),
        colour=COLOUR_TABLE,
    )
    lines = rules_lines(rules, names, lang) + match_rule(row.extra, lang)
    embed.add_field(name=t(lang, "challenge.rules_heading"), value="\n".join(lines))
    if note is not None:
        embed.add_field(name="\u200b", value=note, inline=False)
    else:
        waiting = [names[i] for i, uid in enumerate(row.players) if uid not in row.accepted]
        if waiting:
            embed.add_field(
                name="\u200b",
                value=t(lang, "challenge.waiting", players=fmt_list(waiting, lang)),
                inline=False,
            )
    embed.set_footer(text=t(lang, "game.id", game=row.id))
    return embed


# ----------------------------------------------------------------------------- table


def fits(embed: discord.Embed) -> bool:
    """Tell whether an embed keeps Discord's limits: description, each field, all together."""
    return (
        len(embed.description or "") <= DESCRIPTION_LIMIT
        and all(len(field.value or "") <= FIELD_LIMIT for field in embed.fields)
        and len(embed) <= EMBED_LIMIT
    )


def _round_lines(
    played: Round, names: Sequence[str], lang: Lang, faces: CardFaces = NO_FACES
) -> list[str]:
    lines = [
        t(lang, "table.battle", name=f"**{names[seat]}**", card=faces.text(card, lang))
        for seat, card in played.battle
    ]
    lines.extend(steal_line(steal, names, lang, faces) for steal in played.steals)
    reason = named_reason(played)
    if reason is not None and not played.war_steps:
        lines.append(f"{NAMED[reason]} " + t(lang, f"table.{reason}"))
    if played.war_steps:
        first = played.war_steps[0]
        lines.append(
            "⚔️ " + t(lang, "table.war", names=fmt_list([names[s] for s in first.fighters], lang))
        )
    for number, step in enumerate(played.war_steps, start=1):
        lines.extend(war_step_lines(step, number, names, lang, faces=faces))
        for seat in step.knocked_out:
            lines.append(t(lang, "table.eliminated", name=names[seat]))
    if reason is not None and played.war_steps:
        lines.append(f"{NAMED[reason]} " + t(lang, f"table.{reason}"))
    if played.winner is not None:
        lines.append(
            "➜ "
            + t(
                lang,
                "table.takes",
                count=played.taken,
                name=f"**{names[played.winner]}**",
                n=played.taken,
            )
        )
    elif played.set_aside:
        lines.append(t(lang, "table.set_aside", count=played.set_aside, n=played.set_aside))
    for seat in played.eliminated:
        if not any(seat in step.knocked_out for step in played.war_steps):
            lines.append(t(lang, "table.eliminated", name=names[seat]))
    return lines


def steal_line(steal: Steal, names: Sequence[str], lang: Lang, faces: CardFaces = NO_FACES) -> str:
    """Return a steal as the table tells it: who took whose loot pile (or piles) with what."""
    return t(
        lang,
        "table.steal",
        count=len(steal.from_seats),
        name=f"**{names[steal.seat]}**",
        card=faces.text(steal.card, lang),
        victims=fmt_list([names[s] for s in steal.from_seats], lang),
    )


def war_step_lines(
    step: WarStep,
    number: int,
    names: Sequence[str],
    lang: Lang,
    *,
    turned: Mapping[int, str] | None = None,
    faces: CardFaces = NO_FACES,
) -> list[str]:
    """Return a war step as told: what each fighter placed face down and turned up.

    When every fighter placed the same, one line says it; otherwise each fighter gets a line of
    their own, since a short fighter places fewer cards (or none) and may turn nothing up.
    ``turned`` gives the face-up cards shown while the step is still under way (Steal War), by
    seat; a fighter missing from it has not turned theirs yet.
    """
    lines = [
        t(lang, "table.supplied", count=n, giver=names[giver], name=names[to], n=n)
        for giver, to, n in step.supplied
    ]

    def up(index: int) -> str | None:
        if turned is not None:
            return turned.get(step.fighters[index], UNKNOWN)
        card = step.face_up[index]
        return None if card is None else faces.text(card, lang)

    fighters = range(len(step.fighters))
    downs = {len(cards) for cards in step.face_down}
    if not step.knocked_out and len(downs) == 1 and all(up(i) is not None for i in fighters):
        (down,) = downs
        ups = " – ".join(f"{names[step.fighters[i]]} {up(i)}" for i in fighters)
        lines.append(t(lang, "table.war_step", count=down, n=number, down=down, cards=ups))
        return lines
    lines.append(t(lang, "table.war_step_mixed", n=number))
    for i in fighters:
        seat = step.fighters[i]
        name = names[seat]
        down = len(step.face_down[i])
        card = None if seat in step.knocked_out else up(i)
        if seat in step.knocked_out:
            # rules §5 lose: a short fighter places what they hold face down, turns nothing up.
            line = (
                t(lang, "table.fighter.short_out", count=down, name=name, n=down)
                if down
                else t(lang, "table.fighter.empty", name=name)
            )
        elif card is not None and seat in step.short:
            # rules §5 last_card: all but the last card face down, the last one up.
            line = (
                t(lang, "table.fighter.last_card", count=down, name=name, n=down, card=card)
                if down
                else t(lang, "table.fighter.last_only", name=name, card=card)
            )
        elif card is not None:
            line = t(lang, "table.fighter.placed", count=down, name=name, n=down, card=card)
        elif step.knocked_out:
            # Everyone else ran short: the last fighter left takes the table as it lies.
            out = fmt_list([names[s] for s in step.knocked_out], lang)
            line = t(lang, "table.fighter.unneeded", name=name, out=out)
        else:
            # last_card with no cards left: the standing face-up card is compared again.
            standing = faces.text(step.compared[i], lang)
            line = t(lang, "table.fighter.standing", name=name, card=standing)
        lines.append(f"• {line}")
    return lines


def counts_field(
    game: Variant, names: Sequence[str], lang: Lang, faces: CardFaces = NO_FACES
) -> str:
    """Return every player's card count with a bar (and team totals in team games)."""
    loot = [(game.loot_top(s), game.loot_size(s)) for s in range(len(names))]
    return standing_field(
        game.counts,
        names,
        lang,
        teams=game.rules.teams,
        loot=loot if game.has_loot else None,
        faces=faces,
    )


def standing_field(
    counts: Sequence[int],
    names: Sequence[str],
    lang: Lang,
    *,
    teams: bool,
    loot: Sequence[tuple[int | None, int]] | None = None,
    faces: CardFaces = NO_FACES,
) -> str:
    """Return these card counts with bars; ``loot`` is each seat's loot pile (top, size)."""
    total = sum(counts) or 1
    lines = [
        f"{names[seat]}: **{counts[seat]}** {bar(counts[seat], total)}"
        for seat in range(len(names))
    ]
    for seat, (top, size) in enumerate(loot or ()):
        if top is not None:
            lines[seat] += " · " + t(lang, "table.loot", card=faces.text(top, lang), n=size)
    if teams:
        # Each team's total, then its members' own counts (rules §9: seats 0+2 and 1+3).
        grouped = []
        for team, seats in enumerate(TEAMS, start=1):
            members = fmt_list([names[s] for s in seats], lang)
            total = sum(counts[s] for s in seats)
            grouped.append(f"**{t(lang, 'table.team_total', team=team, names=members, n=total)}**")
            grouped.extend(lines[s] for s in seats)
        lines = grouped
    return "\n".join(lines)


def add_score_field(
    embed: discord.Embed,
    rules: Rules,
    points: Sequence[int],
    tricks: Sequence[int],
    names: Sequence[str],
    lang: Lang,
) -> None:
    """Add every player's points or tricks to a table, where the rules count them."""
    if rules.points:
        heading, scores = "table.points", points
    elif rules.target_tricks is not None:
        heading, scores = "table.tricks", tricks
    else:
        return
    value = " · ".join(f"{names[s]} {scores[s]}" for s in range(len(names)))
    embed.add_field(name=t(lang, heading), value=value, inline=False)


def round_embed(
    row: GameRow,
    game: Variant,
    last: Round,
    lang: Lang,
    *,
    played: int = 1,
    wars: int = 0,
    faces: CardFaces = NO_FACES,
) -> discord.Embed:
    """Return the table after one or more rounds: the last round in full and the counts.

    ``played`` rounds ending with ``last``, ``wars`` of them beginning a war, are summed up first.
    The cards are shown with ``faces``' emojis, unless the table would then be too long.
    """
    names = names_of(row)
    lines: list[str] = []
    if played > 1:
        lines.append(t(lang, "table.summary", count=played, n=played, wars=wars))
        lines.append("")
    lines.extend(_round_lines(last, names, lang, faces))
    embed = discord.Embed(
        title=t(lang, "table.title", round=last.number),
        description=narration(lines, faces),
        colour=COLOUR_WAR if last.is_war else COLOUR_TABLE,
    )
    embed.add_field(
        name=t(lang, "table.counts_heading"),
        value=counts_field(game, names, lang, faces),
        inline=False,
    )
    # A finished game's message tells the match's score after it instead (render.play).
    for line in match_lines(row.extra, names, lang) if game.outcome is None else ():
        embed.add_field(name=t(lang, "match.heading"), value=line, inline=False)
    add_score_field(embed, game.rules, game.points, game.tricks, names, lang)
    if game.outcome is not None:
        embed.colour = COLOUR_OVER
        embed.add_field(
            name=t(lang, "over.title"), value=outcome_text(row, game, lang), inline=False
        )
    embed.set_footer(text=t(lang, "table.round_footer", round=last.number, game=row.id))
    if len(faces) and not fits(embed):
        # The emojis' mentions made it too long: the same table with the cards' labels alone.
        return round_embed(row, game, last, lang, played=played, wars=wars)
    return embed


def narration(lines: Sequence[str], faces: CardFaces = NO_FACES) -> str:
    """Return a table's lines as its description: cut to the limit when the cards are labels;
    whole with emojis (a cut mention would show as markup), for :func:`fits` to refuse."""
    text = "\n".join(lines)
    return text if len(faces) else text[:DESCRIPTION_LIMIT]


def outcome_text(
    row: GameRow,
    game: Variant,
    lang: Lang,
    *,
    reason: bool = True,
    stats: bool = True,
) -> str:
    """Return the result: who won, why, and the game's figures.

    A message that already says why (a forfeit's title) or gives the figures itself (a game
    played to its end at once) leaves out ``reason`` or ``stats``, so no line is told twice.
    """
    outcome = game.outcome
    assert outcome is not None
    names = names_of(row)
    if outcome.is_draw:
        # A draw has no winner to give the trophy to.
        lines = [t(lang, "over.draw")]
    elif len(outcome.winners) == 1:
        lines = ["🏆 " + t(lang, "over.winner", name=f"**{names[outcome.winners[0]]}**")]
    elif game.rules.teams:
        members = fmt_list([f"**{names[s]}**" for s in outcome.winners], lang)
        lines = ["🏆 " + t(lang, "team.winners", team=outcome.winners[0] % 2 + 1, names=members)]
    else:
        winners = fmt_list([f"**{names[s]}**" for s in outcome.winners], lang)
        lines = ["🏆 " + t(lang, "over.winners", names=winners)]
    if reason:
        lines.append(reason_text(outcome, row, game, lang))
    if stats:
        lines.append(
            t(
                lang,
                "over.stats",
                rounds=outcome.rounds,
                wars=game.war_rounds,
                pot=max(game.biggest_pot, default=0),
            )
        )
    return "\n".join(lines)


def reason_text(outcome: Outcome, row: GameRow, game: Variant, lang: Lang) -> str:
    """Return why the game ended, in words."""
    names = names_of(row)
    reason = outcome.reason
    if reason == "all_cards":
        if game.rules.teams and outcome.winners:
            # A team holds every card between its two members' piles: a plural subject.
            team = fmt_list([names[s] for s in outcome.winners], lang)
            return t(lang, "over.reason.all_cards", count=len(outcome.winners), name=team)
        holder = max(range(len(names)), key=lambda s: game.counts[s])
        return t(lang, "over.reason.all_cards", count=1, name=names[holder])
    if reason == "round_limit":
        if game.rules.points:
            return t(lang, "over.reason.points", count=outcome.rounds, n=outcome.rounds)
        return t(lang, "over.reason.round_limit", count=outcome.rounds, n=outcome.rounds)
    if reason == "time_limit":
        minutes = game.rules.time_limit or 0
        key = "over.reason.time_limit_points" if game.rules.points else "over.reason.time_limit"
        return t(lang, key, count=minutes, n=minutes)
    if reason == "target":
        target = game.rules.target_tricks or 0
        return t(lang, "over.reason.target", count=target, n=target)
    if reason == "forfeit":
        quitter = game.forfeited[-1] if game.forfeited else 0
        return t(lang, "over.reason.forfeit", name=names[quitter])
    if reason == "eternal" and outcome.cycle:
        return t(lang, "over.reason.eternal_cycle", count=outcome.cycle, n=outcome.cycle)
    if reason == "war_shortage":
        out = fmt_list([names[s] for s in short_seats(outcome, game)], lang)
        return t(lang, "over.reason.war_shortage", name=out)
    return t(lang, f"over.reason.{reason}")


def short_seats(outcome: Outcome, game: Variant) -> tuple[int, ...]:
    """Return who ran out of cards in the war that ended a game: the last put out (with a
    team-mate, in a team game), or everyone sharing the draw when nobody was left."""
    if outcome.drawn:
        return outcome.drawn
    losers = tuple(s for s in range(len(game.counts)) if s not in outcome.winners)
    if not game.eliminated:
        return losers
    last = game.eliminated[-1]
    return tuple(s for s in losers if s % 2 == last % 2) if game.rules.teams else (last,)


def status_embed(
    row: GameRow,
    game: Variant | None,
    lang: Lang,
    *,
    deadline: tuple[datetime, timedelta] | None = None,
) -> discord.Embed:
    """Return the state of a channel's game for /krig status.

    ``deadline`` is when a time limit ends the game, and the time left until then.
    """
    names = names_of(row)
    rules = Rules.from_dict(row.rules)
    embed = discord.Embed(title=t(lang, "status.title"), colour=COLOUR_INFO)
    if game is None:
        embed.description = t(lang, "status.challenge")
    else:
        embed.description = t(lang, "status.round", round=game.round)
        embed.add_field(
            name=t(lang, "table.counts_heading"),
            value=counts_field(game, names, lang),
            inline=False,
        )
    if deadline is not None and game is not None and game.outcome is None:
        embed.add_field(
            name=t(lang, "status.time_heading"), value=time_left_text(*deadline, lang), inline=False
        )
    for line in match_lines(row.extra, names, lang):
        embed.add_field(name=t(lang, "match.heading"), value=line, inline=False)
    embed.add_field(
        name=t(lang, "status.rules"), value="\n".join(rules_lines(rules, names, lang)), inline=False
    )
    embed.set_footer(text=t(lang, "game.id", game=row.id))
    return embed


# ----------------------------------------------------------------------- boards


Place = Literal["server", "chat", "dm"]
"""Where records are kept: a server, a group DM (a chat), or a DM (with the bot or between two)."""


def here_key(key: str, place: Place) -> str:
    """Return the catalog key of a line that names where the records are from."""
    return key if place == "server" else f"{key}_{place}"


def leaderboard_embed(
    rows: Sequence[LeaderboardRow],
    period: str,
    lang: Lang,
    *,
    matches: Mapping[int, MatchRecord] | None = None,
    place: Place = "server",
) -> discord.Embed:
    """Return a server's (or a chat's) top players by wins (and their matches won, if any)."""
    embed = discord.Embed(
        title=t(lang, "lb.title", period=t(lang, f"period.{period}")), colour=COLOUR_OVER
    )
    if not rows:
        embed.description = t(lang, here_key("lb.empty", place))
        return embed
    medals = {1: "🥇", 2: "🥈", 3: "🥉"}
    lines = [
        f"{medals.get(rank, '')} "
        + t(
            lang,
            "lb.row",
            rank=rank,
            name=mention(row.user_id),
            wins=row.wins,
            games=row.games,
            draws=row.draws,
            rate=fmt_percent(row.win_rate, lang),
        )
        + _match_note(row.user_id, matches, lang)
        for rank, row in enumerate(rows, start=1)
    ]
    embed.description = "\n".join(line.strip() for line in lines)
    return embed


def _match_note(user_id: int, matches: Mapping[int, MatchRecord] | None, lang: Lang) -> str:
    record = None if matches is None else matches.get(user_id)
    if record is None:
        return ""
    return " · " + t(lang, "lb.matches", wins=record.wins, matches=record.matches)


def stats_embed(
    name: str,
    user_id: int,
    stats: PlayerStats,
    lang: Lang,
    *,
    matches: MatchRecord | None = None,
    everywhere: Everywhere | None = None,
    place: Place = "server",
    tournaments: TournamentRecord | None = None,
) -> discord.Embed:
    """Return one player's record on a server or in a chat (with their matches, if any,
    and the server's finished tournaments they played in and won).

    ``everywhere``: their record over every server and chat, in servers and in chats apart.
    """
    embed = discord.Embed(title=t(lang, "stats.title", name=safe_name(name)), colour=COLOUR_INFO)
    if everywhere is not None and everywhere.servers.games + everywhere.chats.games:
        lines = [
            f"{t(lang, key)}: {t(lang, 'stats.line', **_tally(record))}"
            for key, record in (
                ("stats.in_servers", everywhere.servers),
                ("stats.in_chats", everywhere.chats),
            )
            if record.games
        ]
        embed.add_field(name=t(lang, "stats.everywhere"), value="\n".join(lines), inline=False)
    if stats.games == 0:
        if stats.against_krigbot is None:
            embed.description = t(lang, here_key("stats.none", place), name=safe_name(name))
        return _add_krigbot_record(embed, stats, lang)
    for key, value in (
        ("stats.games", stats.games),
        ("stats.wins", stats.wins),
        ("stats.draws", stats.draws),
        ("stats.losses", stats.losses),
        ("stats.wars_won", stats.wars_won),
    ):
        embed.add_field(name=t(lang, key), value=str(value))
    if matches is not None:
        embed.add_field(
            name=t(lang, "stats.matches"),
            value=t(lang, "stats.matches_value", wins=matches.wins, matches=matches.matches),
        )
    if tournaments is not None and tournaments.played:
        embed.add_field(
            name=t(lang, "stats.tournaments"),
            value=t(
                lang, "stats.tournaments_value", won=tournaments.won, played=tournaments.played
            ),
        )
    embed.add_field(
        name=t(lang, "stats.biggest_pot"),
        value=t(lang, "unit.cards", count=stats.biggest_pot, n=stats.biggest_pot),
    )
    embed.add_field(
        name=t(lang, "stats.longest"),
        value=t(lang, "unit.rounds", count=stats.longest_game, n=stats.longest_game),
    )
    opponent = stats.top_opponent
    if opponent is not None:
        embed.add_field(
            name=t(lang, "stats.opponent"),
            value=t(
                lang,
                "stats.head_to_head",
                count=opponent.games,
                opponent=mention(opponent.user_id),
                player=safe_name(name),
                games=opponent.games,
                won=opponent.won,
                lost=opponent.lost,
                neither=opponent.neither,
            ),
            inline=False,
        )
    partner = stats.top_partner
    if partner is not None:
        embed.add_field(
            name=t(lang, "stats.partner"),
            value=t(
                lang, "stats.partner_line", partner=mention(partner.user_id), **_games(partner)
            ),
            inline=False,
        )
    return _add_krigbot_record(embed, stats, lang)


def krigbot_stats_embed(
    name: str, record: KrigbotRecord | None, lang: Lang, *, place: Place = "server"
) -> discord.Embed:
    """Return Krigbot's own record: its games against players, which no leaderboard counts."""
    embed = discord.Embed(title=t(lang, "stats.title", name=safe_name(name)), colour=COLOUR_INFO)
    if record is None:
        embed.description = t(lang, here_key("stats.none", place), name=safe_name(name))
        return embed
    embed.description = t(lang, "stats.krigbot_apart")
    return _add_games_line(embed, t(lang, "stats.krigbot_own"), record, lang)


def _add_krigbot_record(embed: discord.Embed, stats: PlayerStats, lang: Lang) -> discord.Embed:
    """Add the games against Krigbot itself, a record apart from every other figure."""
    versus = stats.against_krigbot
    if versus is not None:
        _add_games_line(embed, t(lang, "stats.krigbot"), versus, lang)
    return embed


def _add_games_line(
    embed: discord.Embed, name: str, record: KrigbotRecord, lang: Lang
) -> discord.Embed:
    """Add a record of games against or by Krigbot: games, wins, draws and losses."""
    embed.add_field(name=name, value=t(lang, "stats.krigbot_line", **_games(record)), inline=False)
    return embed


def _games(record: PartnerRecord | KrigbotRecord) -> dict[str, int]:
    """Return a record's games, wins, draws and losses, as its line's placeholders name them."""
    return {
        "count": record.games,
        "games": record.games,
        "wins": record.wins,
        "draws": record.draws,
        "losses": record.losses,
    }


def _tally(record: Tally) -> dict[str, int]:
    return {"wins": record.wins, "losses": record.losses, "draws": record.draws}


def time_left_text(deadline: datetime, left: timedelta, lang: Lang) -> str:
    """Return how long a time limit has left ("12 minutes left"), or that the time is up."""
    if left <= timedelta(0):
        return t(lang, "status.time_up")
    # Whole minutes, rounded up: "1 minute left" until the very end, never "0 minutes".
    minutes = math.ceil(left / timedelta(minutes=1))
    when = discord.utils.format_dt(deadline, "t")
    return t(lang, "status.time_left", count=minutes, n=minutes, when=when)


def rules_embed(variant: str | None, lang: Lang) -> discord.Embed:
    """Return how to play, and what a variant changes."""
    embed = discord.Embed(title=t(lang, "rules.title"), colour=COLOUR_INFO)
    embed.description = t(lang, "rules.basic")
    if variant is not None:
        rules = Rules.preset(variant, players=4 if variant == "lag" else None)
        embed.add_field(
            name=t(lang, f"variant.{variant}.name"),
            value=t(lang, f"rules.variant.{variant}"),
            inline=False,
        )
        embed.add_field(
            name=t(lang, "challenge.rules_heading"),
            value="\n".join(rules_lines(rules, [], lang)[1:]),
            inline=False,
        )
    else:
        embed.add_field(
            name=t(lang, "rules.variants_heading"),
            value="\n".join(f"`{v}` — {t(lang, f'variant.{v}.name')}" for v in PRESETS),
            inline=False,
        )
    embed.add_field(
        name=t(lang, "status.time_heading"), value=t(lang, "rules.time_limit"), inline=False
    )
    if HOUSE_RULES:
        embed.add_field(
            name=t(lang, "rules.house_heading"),
            value="\n".join(
                f"**{t(lang, f'house.{k}')}**: {t(lang, f'rule.{k}')}" for k in HOUSE_RULES
            ),
            inline=False,
        )
    return embed
