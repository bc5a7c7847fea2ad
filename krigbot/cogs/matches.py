"""The end of a game and what follows it: the next game of a match, or a rematch.

Every message that shows a finished game goes through :func:`ending`: it adds the match score
and the fairness check (seed, rules, the command that plays the same game) and returns the
buttons: **Flip** for the match's next game, already dealt, or **Rematch**, which challenges
the same players to the same rules (and the same length of match) again.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

import discord
from discord.ext import commands

from krigbot.adapter.buttons import (
    NUMBER,
    AcceptButton,
    DeclineButton,
    FlipButton,
    GameButton,
    view_of,
)
from krigbot.adapter.parts import HasButtons, HasChallenges, HasTimeLimits, TableParts
from krigbot.adapter.players import channel_of
from krigbot.adapter.replies import NO_MENTIONS, Reply, challenger_lang
from krigbot.adapter.surfaces import own_token, reach_extra, scope_of
from krigbot.adapter.tables import Shown, editor, respond_in_turn
from krigbot.adapter.weblinks import table_view, watch_live, web_button
from krigbot.engine import EngineError, load_game
from krigbot.engine.game import outcome_from_dict
from krigbot.engine.match import unplayed
from krigbot.fairness import fairness_command
from krigbot.i18n import Lang, lang_for, t
from krigbot.logs import about
from krigbot.render.embeds import challenge_embed, names_of, safe_name
from krigbot.render.matches import match_result
from krigbot.render.notices import late_end_embed
from krigbot.render.play import add_game_over, add_time_left, dealt_embed
from krigbot.sessions import ENDING, ChallengeResult, Player, Refusal
from krigbot.sessions.matches import MatchInfo, rematch

if TYPE_CHECKING:
    from krigbot.engine import Variant
    from krigbot.sessions.recovery import Recovery
    from krigbot.sessions.registry import Registry
    from krigbot.sessions.timelimit import TimeLimits
    from krigbot.storage import GameRow
    from krigbot.web.access import WebAccess

log = logging.getLogger(__name__)


class MatchesParts(TableParts, HasTimeLimits, HasChallenges, HasButtons, Protocol):
    """What the match cog uses."""


@dataclass(frozen=True, slots=True)
class Ending:
    """The buttons of a finished game's message, and what to do once it is on Discord."""

    view: discord.ui.View
    sent: Callable[[int], Awaitable[None]]
    """Records that the end is shown, and the message as the match's next table if any."""
    next_game: GameRow | None = None
    """The match's next game, dealt already, whose Flip button the message carries."""


async def ending(
    registry: Registry,
    row: GameRow,
    game: Variant,
    lang: Lang,
    embed: discord.Embed,
    web: WebAccess | None = None,
) -> Ending:
    """Add the match and the fairness check to a finished game's embed; return its buttons."""
    assert game.outcome is not None
    add_game_over(embed, row, game, lang, command=fairness_command(game, row.seed))
    url = None if web is None else await web.game_url(row.guild_id, row.id)
    links = () if url is None else (web_button(url, lang),)

    async def shown(_: int) -> None:
        await registry.ending_shown(row.id)

    match = MatchInfo.of(row.extra)
    if match is not None and match.goes_on(game.outcome):
        # The service's finish hook dealt the next game under the same lock that finished this
        # one, so it is the channel's game now (unless the channel was busy).
        found = await registry.game_in(row.channel_id)
        following = None if found is None else MatchInfo.of(found[0].extra)
        if found is not None and following is not None and following.id == match.id:
            dealt = found[0]

            async def shown_with_next(message_id: int) -> None:
                await shown(message_id)
                await registry.show_table(dealt.channel_id, dealt.id, 0, message_id)

            live = () if web is None else await watch_live(web, dealt, lang)
            view = view_of(FlipButton(dealt.id, 0, lang), *links, *live)
            return Ending(view, shown_with_next, dealt)
        # Not dealt (the channel was busy, or the write failed): start-up deals it later.
        return Ending(view_of(*links), shown)
    return Ending(view_of(RematchButton(row.id, lang), *links), shown)


async def unseen_end(
    registry: Registry,
    recovery: Recovery,
    game_id: int,
    lang: Lang,
    refusal: Refusal,
    web: WebAccess | None = None,
) -> Reply:
    """Show through a press the end of a game that no message showed, else refuse as ``refusal``.

    Where only interactions reach a chat, an end that came while none of them was left (the
    bot restarted, or their tokens had run out) waits for the next press on one of the game's
    messages; the title says why it comes late.
    """
    row = await registry.storage.games.get_game(game_id)
    if row is None or row.status != "finished" or row.extra.get(ENDING) is None:
        raise refusal
    try:
        game = load_game(row.state or {})
    except EngineError:
        raise refusal from None
    if game.outcome is None:
        raise refusal
    # In the game's own language, which a restart may have made the chat forget.
    lang = lang_for(row.extra.get("lang")) if "lang" in row.extra else lang
    restarted = recovery.ended_before_restart(row)
    embed = late_end_embed(row, game, lang, restarted=restarted)
    over = await ending(registry, row, game, lang, embed, web)
    return Reply(embed=embed, view=over.view, update=True, sent=over.sent, durable=True)


def krigbot_line(result: ChallengeResult, lang: Lang) -> str | None:
    """Return the line saying that Krigbot itself accepted the challenge, if it plays."""
    if result.krigbot is None:
        return None
    return t(lang, "krigbot.accepts", name=safe_name(result.row.names[result.krigbot]))


async def started_reply(
    registry: Registry,
    time_limits: TimeLimits,
    web: WebAccess,
    row: GameRow,
    game: Variant,
    lang: Lang,
) -> Reply:
    """Return the table of a game Krigbot accepted and dealt at once, as a new message."""
    embed = add_time_left(dealt_embed(row, game, lang), time_limits.time_left(row), lang)

    async def sent(message_id: int) -> None:
        await registry.show_table(row.channel_id, row.id, row.round, message_id)

    return Reply(embed=embed, view=await table_view(web, row, lang), sent=sent)


class RematchButton(GameButton, kind="rematch", game=NUMBER):
    """Challenge the players of a finished game (or match) to the same again."""

    def __init__(self, game_id: int, lang: Lang = "nb") -> None:
        super().__init__(
            game_id,
            label=t(lang, "rematch.button"),
            emoji="🔁",
            style=discord.ButtonStyle.success,
        )


class MatchCog(commands.Cog, name="Matches"):
    """Rematches, and the matches the bot moved on while it was away."""

    def __init__(self, parts: MatchesParts) -> None:
        self.parts = parts
        parts.buttons.handle(RematchButton, self.on_rematch)

    async def on_rematch(self, interaction: discord.Interaction[Any], game_id: int) -> None:
        """Handle a Rematch press: a new challenge, the presser first, the same rules."""
        channel_id = channel_of(interaction)
        lang = challenger_lang(interaction)
        user_id = interaction.user.id

        async def work() -> Reply:
            result = await rematch(
                self.parts.registry,
                self.parts.challenges,
                game_id,
                Player(user_id, interaction.user.display_name),
                guild_id=scope_of(interaction),
                channel_id=channel_id,
                extra={"lang": lang} | reach_extra(interaction),
            )
            challenge = result.row
            self.parts.tables.surfaces.new_game(interaction, lang)
            accepted = krigbot_line(result, lang)
            if result.game is not None:
                parts = self.parts
                started = await started_reply(
                    parts.registry, parts.time_limits, parts.web, challenge, result.game, lang
                )
                started.content = accepted
                return started

            async def sent(message_id: int) -> None:
                await self.parts.challenges.challenge_shown(challenge, message_id)

            mentioned = [
                user for user in challenge.players[1:] if user != self.parts.registry.krigbot_id
            ]
            lines = [" ".join(f"<@{user}>" for user in mentioned), accepted or ""]
            return Reply(
                content="\n".join(line for line in lines if line),
                embed=challenge_embed(challenge, lang),
                view=view_of(AcceptButton(challenge.id, lang), DeclineButton(challenge.id, lang)),
                mentions=discord.AllowedMentions(
                    everyone=False, roles=False, users=[discord.Object(u) for u in mentioned]
                ),
                sent=sent,
            )

        await respond_in_turn(interaction, self.parts.tables, work())

    async def announce(self, recovered: list[tuple[GameRow, GameRow | None]]) -> None:
        """Show the matches moved on at start-up: the next table, or who won the match."""
        for finished, dealt in recovered:
            if finished.extra.get(ENDING) is not None:
                continue  # its end was never shown: the Krig cog shows it, the match with it
            if not own_token(finished.extra):
                continue  # no interaction reaches its chat after a restart: the next press does
            lang = lang_for(finished.extra.get("lang"))
            channel = self.parts.bot.get_partial_messageable(finished.channel_id)
            try:
                if dealt is None:
                    match = MatchInfo.of(finished.extra)
                    assert match is not None
                    assert finished.result is not None
                    outcome = outcome_from_dict(finished.result)
                    stopped = unplayed(outcome)
                    text = match_result(
                        match, outcome.winners, names_of(finished), lang, stopped=stopped
                    )
                    heading = "match.ended_away" if stopped else "match.over"
                    await channel.send(
                        t(lang, heading, game=finished.id) + "\n" + text,
                        allowed_mentions=NO_MENTIONS,
                    )
                    continue
                found = await self.parts.registry.game_in(dealt.channel_id)
                if found is None or found[1] is None or found[0].id != dealt.id:
                    continue
                view = await table_view(self.parts.web, found[0], lang)
                message = await channel.send(
                    t(lang, "match.dealt_after_restart", game=finished.id),
                    embed=dealt_embed(dealt, found[1], lang),
                    view=view,
                    allowed_mentions=NO_MENTIONS,
                )
                edit = editor(self.parts.bot, dealt.channel_id, message.id)
                self.parts.tables.show(dealt.channel_id, Shown(message.id, view, edit))
                await self.parts.registry.show_table(dealt.channel_id, dealt.id, 0, message.id)
            except discord.HTTPException as exc:
                log.warning(
                    "could not show match game %s in its channel: %s",
                    finished.id,
                    exc,
                    extra=about(finished),
                )
