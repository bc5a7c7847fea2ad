"""/krig start and its challenge: accept, decline, and the challenge's expiry."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any, Protocol

import discord
from discord import app_commands
from discord.ext import commands

from krigbot.adapter.buttons import AcceptButton, DeclineButton, view_of
from krigbot.adapter.checks import carries
from krigbot.adapter.choices import (
    BEST_OF_CHOICES,
    HOUSE_RULE_CHOICES,
    PICKUP_CHOICES,
    SHORTAGE_CHOICES,
    VARIANT_CHOICES,
)
from krigbot.adapter.dealt import krigbot_line, started_reply
from krigbot.adapter.group import subcommand
from krigbot.adapter.parts import (
    HasButtons,
    HasChallenges,
    HasDeadlines,
    HasPictures,
    HasTimeLimits,
    TableParts,
)
from krigbot.adapter.players import display_name, player_of, pressed_message
from krigbot.adapter.replies import Reply, challenger_lang, public_lang, refuse, user_lang
from krigbot.adapter.surfaces import own_token, reach_extra, reaches, scope_of
from krigbot.adapter.tables import respond_in_turn
from krigbot.adapter.weblinks import table_view
from krigbot.engine import HOUSE_RULES
from krigbot.engine.match import BEST_OF
from krigbot.engine.rules import MAX_ROUND_LIMIT, MAX_TIME_LIMIT, MIN_TIME_LIMIT, PRESETS
from krigbot.i18n import Lang, fmt_duration, fmt_list, lang_for, t
from krigbot.logs import context
from krigbot.render.embeds import challenge_embed, safe_name
from krigbot.render.play import add_time_left, dealt_embed
from krigbot.sessions import ChallengeExpired
from krigbot.sessions.matches import begin_match

if TYPE_CHECKING:
    from krigbot.sessions import Deadline
    from krigbot.storage import GameRow

log = logging.getLogger(__name__)

SEARCHED = 50
"""How many of a channel's newest messages are searched for a challenge's message."""


class ChallengeParts(
    TableParts, HasTimeLimits, HasChallenges, HasDeadlines, HasPictures, HasButtons, Protocol
):
    """What the challenge cog uses."""


class ChallengeCog(commands.Cog, name="Challenge"):
    """Challenges to a game: sent with /krig start, answered with their buttons, or expired."""

    def __init__(self, parts: ChallengeParts) -> None:
        self.parts = parts
        parts.buttons.handle(AcceptButton, self.on_accept)
        parts.buttons.handle(DeclineButton, self.on_decline)
        self.parts.deadlines.handle("challenge", self._expire)

    async def cog_unload(self) -> None:
        self.parts.deadlines.handle("challenge", None)

    @subcommand
    @app_commands.describe(
        opponent="Who you challenge",
        opponent2="A second opponent (3 players)",
        opponent3="A third opponent (4 players, or teams)",
        variant="Which rules to play",
        rounds="End after this many rounds; most cards wins",
        minutes=(
            "Count the cards when this many minutes have passed since the deal; most cards wins"
        ),
        pickup="The order won cards go under the pile",
        shortage="What happens when someone runs out of cards in a war",
        house_rule="Turn on a house rule for this game",
        best_of="Play a match: the first to win most of 3 or 5 games",
    )
    @app_commands.choices(best_of=BEST_OF_CHOICES)
    @app_commands.choices(
        variant=VARIANT_CHOICES,
        pickup=PICKUP_CHOICES,
        shortage=SHORTAGE_CHOICES,
        house_rule=HOUSE_RULE_CHOICES,
    )
    async def start(
        self,
        interaction: discord.Interaction[Any],
        opponent: discord.User,
        opponent2: discord.User | None = None,
        opponent3: discord.User | None = None,
        variant: str = "standard",
        rounds: app_commands.Range[int, 1, MAX_ROUND_LIMIT] | None = None,
        minutes: app_commands.Range[int, MIN_TIME_LIMIT, MAX_TIME_LIMIT] | None = None,
        pickup: str | None = None,
        shortage: str | None = None,
        house_rule: str | None = None,
        best_of: int | None = None,
    ) -> None:
        """Challenge one to three players to a game of Krig"""
        assert interaction.channel_id is not None
        guild_id, channel_id = scope_of(interaction), interaction.channel_id
        opponents = [o for o in (opponent, opponent2, opponent3) if o is not None]
        lang = challenger_lang(interaction)
        options: dict[str, Any] = {}
        if rounds is not None:
            if not 1 <= rounds <= MAX_ROUND_LIMIT:
                await refuse(interaction, "err.rounds_range", min=1, max=MAX_ROUND_LIMIT)
                return
            options["max_rounds"] = rounds
        if minutes is not None:
            if not MIN_TIME_LIMIT <= minutes <= MAX_TIME_LIMIT:
                await refuse(
                    interaction, "err.minutes_range", min=MIN_TIME_LIMIT, max=MAX_TIME_LIMIT
                )
                return
            options["time_limit"] = minutes
        if pickup is not None:
            options["pickup"] = pickup
        if shortage is not None:
            options["shortage"] = shortage
        if house_rule is not None:
            if house_rule not in HOUSE_RULES:
                await refuse(interaction, "err.bad_option", reason=house_rule)
                return
            options[house_rule] = True
        if variant not in PRESETS:
            await refuse(interaction, "err.bad_option", reason=variant)
            return
        if best_of is not None and best_of not in BEST_OF:
            await refuse(interaction, "err.bad_option", reason=str(best_of))
            return
        people = [o for o in opponents if o.id != self.parts.registry.krigbot_id]
        if people and interaction.context.dm_channel:
            # Nobody but the player and Krigbot sees the bot's DM: a friend could never answer.
            await refuse(interaction, "krigbot.dm_only")
            return
        absent = _not_in_chat(interaction, people)
        if absent:
            # Only the people of a DM or group DM see it: anyone else could only let it expire.
            names = fmt_list([display_name(user) for user in absent], user_lang(interaction))
            await refuse(interaction, "err.not_in_chat", names=names)
            return
        if best_of is not None and len(people) < len(opponents):
            # A match's wins reach the leaderboard: none are won against Krigbot.
            await refuse(interaction, "krigbot.no_match")
            return

        async def work() -> Reply:
            result = await self.parts.challenges.challenge(
                guild_id=guild_id,
                channel_id=channel_id,
                challenger=player_of(interaction.user),
                opponents=[player_of(o) for o in opponents],
                variant=variant,
                options=options,
                extra={"lang": lang} | reach_extra(interaction),
            )
            row = result.row
            if result.replaced is not None:
                self.parts.tables.end_game(result.replaced.id)
            if best_of is not None:
                row = await begin_match(self.parts.registry, row, best_of)
            lines = [" ".join(f"<@{o.id}>" for o in people), krigbot_line(result, lang) or ""]
            if result.replaced is not None:
                idle = fmt_duration(self.parts.challenges.idle_after, lang)
                lines.append(t(lang, "game.abandoned", time=idle))
            self.parts.tables.surfaces.new_game(interaction, lang)
            if result.game is not None:
                self.parts.tables.rounds[row.id] = row.round
                parts = self.parts
                started = await started_reply(
                    parts.registry, parts.time_limits, parts.web, row, result.game, lang
                )
                started.content = "\n".join(line for line in lines if line)
                return started

            async def sent(message_id: int) -> None:
                await self.parts.challenges.challenge_shown(row, message_id)

            return Reply(
                content="\n".join(line for line in lines if line),
                embed=challenge_embed(row, lang),
                view=self._challenge_view(row.id, lang),
                mentions=discord.AllowedMentions(
                    everyone=False, roles=False, users=[discord.Object(o.id) for o in people]
                ),
                sent=sent,
            )

        await respond_in_turn(interaction, self.parts.tables, work())

    @staticmethod
    def _challenge_view(game_id: int, lang: Lang) -> discord.ui.View:
        return view_of(AcceptButton(game_id, lang), DeclineButton(game_id, lang))

    async def _expire(self, deadline: Deadline) -> None:
        """Show a challenge whose time ran out as expired, without its buttons."""
        game_id, channel_id, message_id = deadline.game_id, deadline.channel_id, deadline.message_id
        # A database that fails here is asked again a moment later (the deadline moves on).
        row = await self.parts.deadlines.attempt(
            deadline, self.parts.challenges.expire(game_id), "end an expired challenge"
        )
        if row is None:
            return
        if message_id is None:
            message_id = await self._message_of(row)
            if message_id is None:
                return  # a press on its buttons shows the expiry (on_accept, on_decline)
        embed = self._expired_embed(row)
        try:
            # Through the challenge's own interaction where nothing else reaches its chat.
            await self.parts.tables.edit(
                self.parts.bot,
                channel_id,
                message_id,
                own_token(row.extra),
                forget=True,
                embed=embed,
                view=None,
            )
        except discord.HTTPException as exc:
            log.warning(
                "could not mark challenge %s as expired: %s",
                game_id,
                exc,
                extra=context(game_id=game_id),
            )

    async def _message_of(self, row: GameRow) -> int | None:
        """Find the message of a challenge whose message the bot did not get to store (it
        stopped just after showing it): the bot's message in its channel with its Accept button.

        Only where the bot's own token reaches the chat, and only among its newest messages.
        """
        bot = self.parts.bot
        if not own_token(row.extra) or bot.user is None:
            return None
        wanted = AcceptButton(row.id).custom_id
        channel = bot.get_partial_messageable(row.channel_id)
        try:
            async for message in channel.history(limit=SEARCHED):
                if message.author.id == bot.user.id and carries(message, wanted):
                    return message.id
        except discord.HTTPException as exc:
            log.warning(
                "could not look for the message of challenge %s: %s",
                row.id,
                exc,
                extra=context(game_id=row.id),
            )
            return None
        log.info("found no message of challenge %s", row.id, extra=context(game_id=row.id))
        return None

    def _expired_embed(self, row: GameRow) -> discord.Embed:
        """Return a challenge that expired, in its game's language."""
        lang = lang_for(row.extra.get("lang"))
        within = fmt_duration(self.parts.challenges.challenge_ttl, lang)
        return challenge_embed(row, lang, note=t(lang, "challenge.expired", time=within))

    def _shown_expired(
        self, interaction: discord.Interaction[Any], expired: ChallengeExpired
    ) -> Reply:
        """Show the expiry of a challenge through a press on it where nothing else reaches its
        chat (its expiry found no interaction to show it with), or where its message was never
        known (the bot stopped before storing it, and could not find it); elsewhere refuse the
        press."""
        if reaches(interaction) and expired.row.challenge_message_id is not None:
            raise expired  # the expiry edited its message with the bot's own token
        return Reply(embed=self._expired_embed(expired.row), view=None, update=True)

    async def on_accept(self, interaction: discord.Interaction[Any], game_id: int) -> None:
        """Handle an Accept press."""
        lang = public_lang(interaction)
        pressed = pressed_message(interaction)

        async def work() -> Reply:
            try:
                result = await self.parts.challenges.accept(
                    game_id,
                    interaction.user.id,
                    table_message_id=pressed,
                    channel_id=interaction.channel_id,
                )
            except ChallengeExpired as expired:
                return self._shown_expired(interaction, expired)
            row = result.row
            if result.game is None:
                return Reply(
                    embed=challenge_embed(row, lang),
                    view=self._challenge_view(row.id, lang),
                    update=True,
                )
            embed = add_time_left(
                dealt_embed(row, result.game, lang), self.parts.time_limits.time_left(row), lang
            )
            self.parts.tables.rounds[row.id] = 0
            self.parts.pictures.draw_ahead(row, result.game, lang)
            view = await table_view(self.parts.web, row, lang)
            return Reply(embed=embed, view=view, update=True, durable=True)

        await respond_in_turn(interaction, self.parts.tables, work(), update=True)

    async def on_decline(self, interaction: discord.Interaction[Any], game_id: int) -> None:
        """Handle a Decline press."""
        lang = public_lang(interaction)

        async def work() -> Reply:
            try:
                row = await self.parts.challenges.decline(
                    game_id, interaction.user.id, channel_id=interaction.channel_id
                )
            except ChallengeExpired as expired:
                return self._shown_expired(interaction, expired)
            note = t(lang, "challenge.declined", name=safe_name(display_name(interaction.user)))
            return Reply(embed=challenge_embed(row, lang, note=note), view=None, update=True)

        await respond_in_turn(interaction, self.parts.tables, work(), update=True)


def _not_in_chat(
    interaction: discord.Interaction[Any], people: list[discord.User]
) -> list[discord.User]:
    """Return those of ``people`` who are not in the DM or group DM the interaction comes from.

    Discord sends such a chat's ``recipients`` with the interaction (perhaps without the user
    who sent it); where it sends none, nobody is known to be missing.
    """
    channel = interaction.channel
    if not isinstance(channel, discord.DMChannel | discord.GroupChannel) or not channel.recipients:
        return []
    present = {user.id for user in channel.recipients} | {interaction.user.id}
    return [user for user in people if user.id not in present]
