"""Rematches, and the matches the bot moved on while it was away.

A finished game's message carries **Rematch** (``adapter.endings.ending`` puts it there):
pressed, it challenges the same players to the same rules, and the same length of match,
again. At start-up the cog shows the matches the bot moved on while it was down: the next
game's table, or who won the match.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any, Protocol

import discord
from discord.ext import commands

from krigbot.adapter.buttons import (
    AcceptButton,
    DeclineButton,
    RematchButton,
    view_of,
)
from krigbot.adapter.dealt import krigbot_line, started_reply
from krigbot.adapter.parts import HasButtons, HasChallenges, HasTimeLimits, TableParts
from krigbot.adapter.players import channel_of
from krigbot.adapter.replies import NO_MENTIONS, Reply, challenger_lang
from krigbot.adapter.surfaces import own_token, reach_extra, scope_of
from krigbot.adapter.tables import Shown, editor, respond_in_turn
from krigbot.adapter.weblinks import table_view
from krigbot.engine.game import outcome_from_dict
from krigbot.engine.match import unplayed
from krigbot.i18n import lang_for, t
from krigbot.logs import about
from krigbot.render.embeds import challenge_embed, names_of
from krigbot.render.matches import match_result
from krigbot.render.play import dealt_embed
from krigbot.sessions import ENDING, Player
from krigbot.sessions.matches import MatchInfo, rematch

if TYPE_CHECKING:
    from krigbot.storage import GameRow

log = logging.getLogger(__name__)


class MatchesParts(TableParts, HasTimeLimits, HasChallenges, HasButtons, Protocol):
    """What the match cog uses."""


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
