"""Slash commands and buttons of Krig: thin handlers over the game service and the renderers."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from datetime import timedelta
from typing import TYPE_CHECKING, Any, Protocol

import discord
from discord import app_commands
from discord.app_commands import locale_str as ls
from discord.ext import commands

from krigbot.adapter.buttons import (
    AcceptButton,
    Buttons,
    DeclineButton,
    FlipButton,
    ForfeitButton,
    view_of,
)
from krigbot.adapter.group import anywhere, subcommand
from krigbot.adapter.pictures import Pictures
from krigbot.adapter.replies import (
    NO_MENTIONS,
    Reply,
    challenger_lang,
    public_lang,
    refuse,
    respond,
    user_lang,
)
from krigbot.adapter.surfaces import own_token, place_of, reach_extra, reaches, scope_of
from krigbot.adapter.tables import Shown, Tables, editor, respond_in_turn
from krigbot.adapter.weblinks import web_button
from krigbot.cogs.autoplay import FinishButton
from krigbot.cogs.matches import Ending, ending, krigbot_line, started_reply
from krigbot.engine import HOUSE_RULES, EngineError, Variant, load_game
from krigbot.engine.match import BEST_OF
from krigbot.engine.rules import (
    MAX_ROUND_LIMIT,
    MAX_TIME_LIMIT,
    MIN_TIME_LIMIT,
    PICKUPS,
    PRESETS,
    SHORTAGES,
)
from krigbot.i18n import Lang, fmt_duration, fmt_list, lang_for, t
from krigbot.logs import about, context
from krigbot.render.embeds import (
    challenge_embed,
    krigbot_stats_embed,
    leaderboard_embed,
    round_embed,
    rules_embed,
    safe_name,
    stats_embed,
    status_embed,
)
from krigbot.render.notices import current_table_embed, forfeit_embed, late_end_embed
from krigbot.render.play import (
    add_status_lines,
    add_time_left,
    autoplay_text,
    dealt_embed,
    finish_request_embed,
    standing_embed,
    time_up_embed,
)
from krigbot.sessions import (
    ENDING,
    MAX_FLIPS,
    Actor,
    Autoplay,
    FinishRequest,
    FlipResult,
    Player,
    Refusal,
    may_moderate,
)
from krigbot.sessions.matches import begin_match
from krigbot.storage import StorageError

if TYPE_CHECKING:
    from krigbot.sessions import Deadline, GameService
    from krigbot.storage import GameRow, Storage
    from krigbot.web.access import WebAccess

log = logging.getLogger(__name__)

PERIODS = {"all": None, "month": timedelta(days=30), "week": timedelta(days=7)}

VARIANT_CHOICES = [
    app_commands.Choice(name=ls(name, key=f"variant.{name}.name"), value=name) for name in PRESETS
]
PICKUP_CHOICES = [
    app_commands.Choice(name=ls(value, key=f"pickup.{value}"), value=value) for value in PICKUPS
]
SHORTAGE_CHOICES = [
    app_commands.Choice(name=ls(value, key=f"shortage.{value}"), value=value) for value in SHORTAGES
]
HOUSE_RULE_CHOICES = [
    app_commands.Choice(name=ls(key, key=f"house.{key}"), value=key) for key in HOUSE_RULES
]
IMAGES_CHOICES = [
    app_commands.Choice(name=ls(value, key=f"images.{value}"), value=value)
    for value in ("on", "off")
]
WEB_SETTINGS = ("on", "off", "rotate")
WEB_CHOICES = [
    app_commands.Choice(name=ls(value, key=f"webview.{value}"), value=value)
    for value in WEB_SETTINGS
]
BEST_OF_CHOICES = [
    app_commands.Choice(name=ls(str(n), key=f"best_of.{n}"), value=n) for n in BEST_OF
]
PERIOD_CHOICES = [
    app_commands.Choice(name=ls(value, key=f"period.{value}"), value=value) for value in PERIODS
]


class Battles(Protocol):
    """What plays a round of a game whose battles are made of choices (Steal War)."""

    async def plays_here(self, channel_id: int) -> bool:
        """Tell whether the channel's game is played by battles."""
        ...

    async def flip(
        self,
        interaction: discord.Interaction[Any],
        *,
        game_id: int | None = None,
        round_shown: int | None = None,
    ) -> None:
        """Begin a battle from /flip or from a Flip button."""
        ...


class KrigCog(commands.Cog, name="Krig"):
    """Krig in server channels: challenges, flips, results and records."""

    def __init__(
        self,
        bot: commands.AutoShardedBot,
        *,
        service: GameService,
        storage: Storage,
        pictures: Pictures,
        tables: Tables,
        web: WebAccess,
        buttons: Buttons,
        battles: Battles,
    ) -> None:
        self.bot = bot
        self.service = service
        self.storage = storage
        self.pictures = pictures
        self.web = web
        self.battles = battles
        buttons.handle(AcceptButton, self.on_accept)
        buttons.handle(DeclineButton, self.on_decline)
        buttons.handle(FlipButton, self.on_flip_button)
        buttons.handle(ForfeitButton, self.on_forfeit_button)
        self._tables: dict[int, int] = {}
        """Game id -> the round a table reply of this process shows, or is on its way to show."""
        self.tables = tables
        """Every channel's turn and live message (the other cogs use it too)."""
        self.service.registry.on_finish.append(self._finished)
        self.service.deadlines.handle("challenge", self._expire)
        self._endings: asyncio.Task[None] | None = None

    async def _finished(self, row: GameRow, game: Variant) -> None:
        self._end_request_unknown(row, game)
        self.tables.end_game(row.id)

    def _end_request_unknown(self, row: GameRow, game: Variant) -> None:
        """Grey an open finish request this process does not hold (asked before a restart)."""
        request = FinishRequest.of(row.extra)
        if request is None or request.message is None or not own_token(row.extra):
            return
        if not request.waiting(row, game):
            return  # agreed: the last answer shows the end in it, or points below
        if any(s.message_id == request.message for s in self.tables.asides(row.id, FinishButton)):
            return  # end_game greys it
        lang = lang_for(row.extra.get("lang"))
        note = t(lang, "finish.game_ended")
        view = view_of(FinishButton(row.id, True, lang), FinishButton(row.id, False, lang))
        edit = editor(self.bot, row.channel_id, request.message)
        embed = finish_request_embed(row, request.by, [], lang, note=note)
        self.tables.retire(Shown(request.message, view, edit), embed=embed)

    async def cog_load(self) -> None:
        self._endings = asyncio.create_task(self._show_endings(), name="krig-tell-endings")

    async def _show_endings(self) -> None:
        """Show the ends of games that finished just before the bot stopped, as it does rounds.

        The end was committed, but the bot stopped before its message went out: without this,
        the channel would never learn the result.
        """
        await self.bot.wait_until_ready()
        try:
            endings = await self.service.recovery.unshown_endings()
        except StorageError as exc:
            log.warning("could not look for game ends never shown: %s", exc)
            return
        for row, game in endings:
            if not own_token(row.extra):
                continue  # no interaction reaches its chat after a restart: /krig status tells
            lang = lang_for(row.extra.get("lang"))
            embed = late_end_embed(row, game, lang)
            async with self.tables.turn(row.channel_id):
                over = await ending(self.service, row, game, lang, embed)
                channel = self.bot.get_partial_messageable(row.channel_id)
                try:
                    message = await channel.send(
                        embed=embed, view=over.view, allowed_mentions=NO_MENTIONS
                    )
                except discord.HTTPException as exc:
                    log.warning(
                        "could not show the end of game %s: %s", row.id, exc, extra=about(row)
                    )
                    continue
                edit = editor(self.bot, row.channel_id, message.id)
                self.tables.show(row.channel_id, Shown(message.id, over.view, edit))
                await over.sent(message.id)
                await self._grey_left_over(row, lang)

    async def _grey_left_over(self, row: GameRow, lang: Lang) -> None:
        """Grey the messages of a game that ended while the bot was down, each saying why.

        Its last table, its finish request and its autoplay's message kept the buttons they
        had when the bot stopped; a press on them would only answer that the game is over.
        """
        changes: dict[int, dict[str, Any]] = {}
        if row.table_message_id is not None:
            changes[row.table_message_id] = {"content": t(lang, "end.shown_below")}
        auto = Autoplay.of(row.extra)
        if auto is not None and auto.message is not None:
            changes[auto.message] = {"content": t(lang, "auto.ended")}
        request = FinishRequest.of(row.extra)
        if request is not None and request.message is not None:
            note = t(lang, "finish.game_ended")
            changes[request.message] = {
                "embed": finish_request_embed(row, request.by, [], lang, note=note)
            }
        for message_id, change in changes.items():
            try:
                await self.tables.edit(
                    self.bot, row.channel_id, message_id, True, **change, view=None
                )
            except discord.HTTPException as exc:
                log.info("could not grey message %s of game %s: %s", message_id, row.id, exc)

    async def cog_unload(self) -> None:
        self.service.deadlines.handle("challenge", None)
        if self._endings is not None:
            self._endings.cancel()
        await self.tables.close()

    # ------------------------------------------------------------------ challenges

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
        people = [o for o in opponents if o.id != self.service.registry.krigbot_id]
        if people and interaction.context.dm_channel:
            # Nobody but the player and Krigbot sees the bot's DM: a friend could never answer.
            await refuse(interaction, "krigbot.dm_only")
            return
        absent = _not_in_chat(interaction, people)
        if absent:
            # Only the people of a DM or group DM see it: anyone else could only let it expire.
            names = fmt_list([_display_name(user) for user in absent], user_lang(interaction))
            await refuse(interaction, "err.not_in_chat", names=names)
            return
        if best_of is not None and len(people) < len(opponents):
            # A match's wins reach the leaderboard: none are won against Krigbot.
            await refuse(interaction, "krigbot.no_match")
            return

        async def work() -> Reply:
            result = await self.service.challenges.challenge(
                guild_id=guild_id,
                channel_id=channel_id,
                challenger=_player(interaction.user),
                opponents=[_player(o) for o in opponents],
                variant=variant,
                options=options,
                extra={"lang": lang} | reach_extra(interaction),
            )
            row = result.row
            if result.replaced is not None:
                self.tables.end_game(result.replaced.id)
            if best_of is not None:
                row = await begin_match(self.service, row, best_of)
            lines = [" ".join(f"<@{o.id}>" for o in people), krigbot_line(result, lang) or ""]
            if result.replaced is not None:
                idle = fmt_duration(self.service.challenges.idle_after, lang)
                lines.append(t(lang, "game.abandoned", time=idle))
            self.tables.surfaces.new_game(interaction, lang)
            if result.game is not None:
                self._tables[row.id] = row.round
                started = started_reply(self.service, row, result.game, lang)
                started.content = "\n".join(line for line in lines if line)
                return started

            async def sent(message_id: int) -> None:
                await self.service.challenges.challenge_shown(row, message_id)

            return Reply(
                content="\n".join(line for line in lines if line),
                embed=challenge_embed(row, lang),
                view=self._challenge_view(row.id, lang),
                mentions=discord.AllowedMentions(
                    everyone=False, roles=False, users=[discord.Object(o.id) for o in people]
                ),
                sent=sent,
            )

        await respond_in_turn(interaction, self.tables, work())

    @staticmethod
    def _challenge_view(game_id: int, lang: Lang) -> discord.ui.View:
        return view_of(AcceptButton(game_id, lang), DeclineButton(game_id, lang))

    async def _expire(self, deadline: Deadline) -> None:
        """Show a challenge whose time ran out as expired, without its buttons."""
        game_id, channel_id, message_id = deadline.game_id, deadline.channel_id, deadline.message_id
        assert message_id is not None
        try:
            row = await self.service.challenges.expire(game_id)
        except StorageError as exc:
            # A press of its buttons or the next challenge here ends it instead.
            log.warning(
                "could not end the expired challenge %s: %s",
                game_id,
                exc,
                extra=context(game_id=game_id),
            )
            return
        if row is None:
            return
        lang = lang_for(row.extra.get("lang"))
        within = fmt_duration(self.service.challenges.challenge_ttl, lang)
        embed = challenge_embed(row, lang, note=t(lang, "challenge.expired", time=within))
        try:
            # Through the challenge's own interaction where nothing else reaches its chat.
            await self.tables.edit(
                self.bot,
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

    async def on_accept(self, interaction: discord.Interaction[Any], game_id: int) -> None:
        """Handle an Accept press."""
        lang = public_lang(interaction)
        pressed = interaction.message.id if interaction.message else None

        async def work() -> Reply:
            result = await self.service.challenges.accept(
                game_id,
                interaction.user.id,
                table_message_id=pressed,
                channel_id=interaction.channel_id,
            )
            row = result.row
            if result.game is None:
                return Reply(
                    embed=challenge_embed(row, lang),
                    view=self._challenge_view(row.id, lang),
                    update=True,
                )
            embed = add_time_left(
                dealt_embed(row, result.game, lang), self.service.time_limits.time_left(row), lang
            )
            self._tables[row.id] = 0
            self.pictures.draw_ahead(row, result.game, lang)
            return Reply(
                embed=embed, view=view_of(FlipButton(row.id, 0, lang)), update=True, durable=True
            )

        await respond_in_turn(interaction, self.tables, work(), update=True)

    async def on_decline(self, interaction: discord.Interaction[Any], game_id: int) -> None:
        """Handle a Decline press."""
        lang = public_lang(interaction)

        async def work() -> Reply:
            row = await self.service.challenges.decline(
                game_id, interaction.user.id, channel_id=interaction.channel_id
            )
            note = t(lang, "challenge.declined", name=safe_name(_display_name(interaction.user)))
            return Reply(embed=challenge_embed(row, lang, note=note), view=None, update=True)

        await respond_in_turn(interaction, self.tables, work(), update=True)

    # --------------------------------------------------------------------- playing

    async def _table_reply(self, result: FlipResult, lang: Lang, *, update: bool) -> Reply:
        row = result.row
        # Before anything is awaited: a press racing this flip must see a table is on its way.
        if result.outcome is None:
            self._tables[row.id] = row.round
        else:
            self._tables.pop(row.id, None)
        if result.last is None:
            # The time was up before this flip: the cards were counted, no round was played.
            embed = time_up_embed(row, result.game, lang)
        else:
            embed = round_embed(
                row, result.game, result.last, lang, played=result.played, wars=result.wars
            )
        files: list[discord.File] = []
        more: list[discord.Embed] = []
        if await self.pictures.enabled(row.guild_id):
            if result.last is not None:
                picture = await self.pictures.round_picture(
                    row, result.game, result.last, lang, embed
                )
                if picture is not None:
                    files.append(picture)
            if result.outcome is not None:
                story = await self.pictures.story_picture(row, result.game, lang)
                if story is not None:
                    more.append(story[0])
                    files.append(story[1])
        if result.outcome is not None:
            over = await ending(self.service, row, result.game, lang, embed, self.web)
            return Reply(
                embed=embed,
                more_embeds=more,
                files=files,
                view=over.view,
                update=update,
                sent=over.sent,
                durable=True,
            )
        view = view_of(FlipButton(row.id, row.round, lang))
        if update:  # flip() recorded the pressed message as the table
            return Reply(embed=embed, files=files, view=view, update=True, durable=True)

        async def sent(message_id: int) -> None:
            await self.service.registry.show_table(row.channel_id, row.id, row.round, message_id)

        return Reply(embed=embed, files=files, view=view, sent=sent, durable=True)

    async def _unseen_end(self, game_id: int, lang: Lang, refusal: Refusal) -> Reply:
        """Show on its table the end of a game that no message showed (its chat was out of the
        bot's reach when its time ran out, or the bot restarted); else refuse as ``refusal``."""
        row = await self.storage.games.get_game(game_id)
        if row is None or row.status != "finished" or row.extra.get(ENDING) is None:
            raise refusal
        try:
            game = load_game(row.state or {})
        except EngineError:
            raise refusal from None
        if game.outcome is None:
            raise refusal
        embed = late_end_embed(row, game, lang)
        over = await ending(self.service, row, game, lang, embed, self.web)
        return Reply(embed=embed, view=over.view, update=True, sent=over.sent, durable=True)

    async def _current_table(self, channel_id: int, game_id: int, lang: Lang) -> Reply:
        """Return the table as it stands now, for a table message that shows an older round."""
        found = await self.service.registry.game_in(channel_id)
        if found is None:
            raise Refusal("err.game_over")
        row, game = found
        if row.id != game_id or game is None:
            raise Refusal("err.game_over")
        embed = current_table_embed(row, game, lang)
        self._tables[row.id] = row.round
        view = view_of(FlipButton(row.id, row.round, lang))

        async def sent(message_id: int) -> None:
            await self.service.registry.show_table(channel_id, row.id, row.round, message_id)

        return Reply(embed=embed, view=view, update=True, durable=True, sent=sent)

    async def _too_late(
        self,
        interaction: discord.Interaction[Any],
        refusal: Refusal,
        game_id: int | None = None,
        *,
        key: str = "time.flip_too_late",
    ) -> None:
        """Refuse a move that came just after the game's time limit ended it: the time is up."""
        assert interaction.channel_id is not None
        row = await self.service.time_limits.time_ran_out(
            scope_of(interaction), interaction.channel_id, interaction.user.id, game_id
        )
        if row is not None:
            raise Refusal(key, game=row) from refusal

    @app_commands.command()
    @anywhere
    @app_commands.describe(count="Play several rounds at once (up to 50)")
    async def flip(
        self,
        interaction: discord.Interaction[Any],
        count: app_commands.Range[int, 1, MAX_FLIPS] = 1,
    ) -> None:
        """Flip the next card (play one round)"""
        assert interaction.channel_id is not None
        channel_id = interaction.channel_id
        lang = public_lang(interaction)
        if await self.battles.plays_here(channel_id):
            await self.battles.flip(interaction)  # a battle of choices, one at a time
            return

        async def work() -> Reply:
            try:
                result = await self.service.play.flip(channel_id, interaction.user.id, count)
            except Refusal as refusal:
                if refusal.key == "err.no_game":
                    await self._too_late(interaction, refusal)
                raise
            return await self._table_reply(result, lang, update=False)

        await respond_in_turn(interaction, self.tables, work())

    async def on_flip_button(
        self, interaction: discord.Interaction[Any], game_id: int, round_shown: int
    ) -> None:
        """Handle a Flip press: plays only if the button shows the round on the table."""
        assert interaction.channel_id is not None
        channel_id = interaction.channel_id
        if await self.battles.plays_here(channel_id):
            await self.battles.flip(interaction, game_id=game_id, round_shown=round_shown)
            return
        lang = public_lang(interaction)
        pressed = interaction.message.id if interaction.message else None

        async def work() -> Reply:
            try:
                result = await self.service.play.flip(
                    channel_id,
                    interaction.user.id,
                    1,
                    game_id=game_id,
                    expected_round=round_shown,
                    table_message_id=pressed,
                )
            except Refusal as refusal:
                if refusal.key == "err.game_over" and not reaches(interaction):
                    return await self._unseen_end(game_id, lang, refusal)
                if refusal.key == "err.game_over":
                    await self._too_late(interaction, refusal, game_id)
                if refusal.key != "flip.raced":
                    raise
                answer = await self.service.play.lost_race(
                    game_id, pressed, round_shown=round_shown, answering=self._tables.get(game_id)
                )
                if answer == "shown":
                    return Reply(silent=True)
                if answer == "current":
                    return await self._current_table(channel_id, game_id, lang)
                raise Refusal("err.stale_button") from None
            return await self._table_reply(result, lang, update=True)

        await respond_in_turn(interaction, self.tables, work(), update=True)

    @subcommand
    async def status(self, interaction: discord.Interaction[Any]) -> None:
        """Show the game in this channel"""
        assert interaction.channel_id is not None
        channel_id = interaction.channel_id
        lang = user_lang(interaction)

        async def work() -> Reply:
            try:
                found, unreachable = await self.service.registry.stored_game(channel_id)
            except StorageError as exc:
                # Nothing held here to show: a read changed nothing, so no "could not save".
                log.warning("/krig status: the database failed: %s", exc)
                return Reply(content=t(lang, "status.unreachable_none"), ephemeral=True)
            if found is None:
                return Reply(content=t(lang, "status.none"), ephemeral=True)
            row, game = found
            left = self.service.time_limits.time_left(row)
            embed = status_embed(row, game, lang, deadline=left)
            deadline = (
                self.service.choices.choice_deadline(row) if row.status == "running" else None
            )
            auto = Autoplay.of(row.extra)
            note = (
                None
                if auto is None
                else autoplay_text(auto.state, auto.speed, auto.by, lang, reason=auto.why or "")
            )
            request = FinishRequest.of(row.extra)
            waiting = () if request is None or game is None else request.waiting(row, game)
            add_status_lines(
                embed, row, game, lang, deadline=deadline, autoplay=note, finish_waiting=waiting
            )
            # A read needs no write: the table held here, saying the database is out of reach.
            note = t(lang, "status.unreachable") if unreachable else None
            reply = Reply(content=note, embed=embed, ephemeral=True)
            if unreachable:
                return reply  # whether pictures are on is stored there too
            if game is not None and game.round and await self.pictures.enabled(row.guild_id):
                story = await self.pictures.story_picture(row, game, lang)
                if story is not None:
                    reply.more_embeds.append(story[0])
                    reply.files.append(story[1])
            return reply

        await respond(interaction, work(), ephemeral=True)

    @subcommand
    async def forfeit(self, interaction: discord.Interaction[Any]) -> None:
        """Give up your game"""
        assert interaction.channel_id is not None
        channel_id = interaction.channel_id
        lang = user_lang(interaction)
        user_id = interaction.user.id

        async def work() -> Reply:
            # Refused before the confirmation, as the forfeit itself would be refused after it.
            try:
                row = await self.service.play.may_forfeit(channel_id, user_id)
            except Refusal as refusal:
                if refusal.key == "err.no_game":
                    await self._too_late(interaction, refusal, key="time.forfeit_too_late")
                raise
            view = view_of(
                ForfeitButton(row.id, user_id, True, lang),
                ForfeitButton(row.id, user_id, False, lang),
            )

            async def sent(message_id: int) -> None:
                edit = editor(self.bot, channel_id, message_id, interaction)
                ended = {"content": t(lang, "forfeit.game_ended")}
                self.tables.add_aside(row.id, Shown(message_id, view, edit, lambda: ended))

            return Reply(content=t(lang, "forfeit.confirm"), view=view, ephemeral=True, sent=sent)

        await respond(interaction, work(), ephemeral=True)

    async def on_forfeit_button(
        self, interaction: discord.Interaction[Any], game_id: int, user_id: int, confirm: bool
    ) -> None:
        """Handle the confirmation of /krig forfeit."""
        assert interaction.channel_id is not None
        channel_id = interaction.channel_id
        if interaction.user.id != user_id:
            await refuse(interaction, "err.not_player")
            return
        mine = user_lang(interaction)
        public = public_lang(interaction)
        if interaction.message is not None:
            self.tables.drop_aside(game_id, interaction.message.id)
        if not confirm:
            await Reply(content=t(mine, "forfeit.kept"), view=None, update=True).send(interaction)
            return

        async def work() -> Reply:
            result = await self.service.play.forfeit(channel_id, user_id, game_id)
            if result.outcome is not None and result.outcome.reason == "time_limit":
                return await self._counted_instead(interaction, result, mine, public)
            row = result.row
            seat = row.players.index(user_id)
            ended = result.outcome is not None
            embed = forfeit_embed(row, result.game, seat, public, over=ended)
            over: Ending | None = None
            if ended:
                over = await ending(self.service, row, result.game, public, embed, self.web)
            else:
                await self._request_without(row, result.game)

            # The game goes on (three or four players): the message is its table now, at the
            # bottom, with the Flip button; the one above goes grey.
            view = over.view if over is not None else view_of(FlipButton(row.id, row.round, public))

            async def sent(_: int) -> None:
                message = await interaction.followup.send(
                    embed=embed, view=view, allowed_mentions=NO_MENTIONS, wait=True
                )
                edit = editor(self.bot, channel_id, message.id, interaction, original=False)
                self.tables.show(channel_id, Shown(message.id, view, edit))
                if over is not None:
                    await over.sent(message.id)
                    return
                self._tables[row.id] = row.round
                await self.service.registry.show_table(channel_id, row.id, row.round, message.id)

            return Reply(content=t(mine, "forfeit.confirmed"), view=None, update=True, sent=sent)

        await respond_in_turn(interaction, self.tables, work(), update=True)

    async def _request_without(self, row: GameRow, game: Variant) -> None:
        """Let an open finish request stop waiting for a player who gave up."""
        request = FinishRequest.of(row.extra)
        if request is None:
            return
        lang = lang_for(row.extra.get("lang"))
        embed = finish_request_embed(row, request.by, request.waiting(row, game), lang)
        for shown in self.tables.asides(row.id, FinishButton):
            try:
                await shown.edit(embed=embed)
            except discord.HTTPException as exc:
                log.warning(
                    "could not update the finish request of game %s: %s",
                    row.id,
                    exc,
                    extra=about(row),
                )

    async def _counted_instead(
        self, interaction: discord.Interaction[Any], result: FlipResult, mine: Lang, public: Lang
    ) -> Reply:
        """Answer a forfeit that came after the deadline: the cards were counted instead."""
        row = result.row
        embed = time_up_embed(row, result.game, public)
        over = await ending(self.service, row, result.game, public, embed, self.web)

        async def sent(_: int) -> None:
            message = await interaction.followup.send(
                embed=embed, view=over.view, allowed_mentions=NO_MENTIONS, wait=True
            )
            edit = editor(self.bot, row.channel_id, message.id, interaction, original=False)
            self.tables.show(row.channel_id, Shown(message.id, over.view, edit))
            self.tables.end_game(row.id)
            await over.sent(message.id)

        return Reply(content=t(mine, "time.forfeit_too_late"), view=None, update=True, sent=sent)

    @subcommand
    async def cancel(self, interaction: discord.Interaction[Any]) -> None:
        """Cancel the game in this channel without a result"""
        assert interaction.channel_id is not None
        channel_id = interaction.channel_id
        lang = public_lang(interaction)
        actor = _actor(interaction)

        async def work() -> Reply:
            row = await self.service.play.cancel(
                channel_id, actor.user_id, moderator=actor.moderator, in_server=actor.in_server
            )
            name = safe_name(_display_name(interaction.user))
            # A challenge is no game yet: its challenger withdraws it, a moderator calls it off.
            withdrawn = row.status == "challenge" and interaction.user.id == row.challenger_id
            if row.status == "challenge" and row.challenge_message_id is not None:
                note = (
                    t(lang, "challenge.cancelled")
                    if withdrawn
                    else t(lang, "challenge.cancelled_by", name=name)
                )
                with contextlib.suppress(discord.HTTPException):
                    await self.tables.edit(
                        self.bot,
                        channel_id,
                        row.challenge_message_id,
                        own_token(row.extra),
                        embed=challenge_embed(row, lang, note=note),
                        view=None,
                    )
            live = self.tables.live(channel_id)
            if row.status == "challenge" and row.challenge_message_id is not None:
                self.tables.forget(channel_id, row.challenge_message_id)
            elif live is not None:
                # The game's table can do nothing any more, and says who ended it (named, not
                # pinged: the edit allows no mentions).
                self.tables.forget(channel_id, live.message_id)
                self.tables.retire(live, **_cancelled_table(row, lang, name))
            self.tables.end_game(row.id)
            if row.status == "challenge":
                key = "cancel.withdrawn" if withdrawn else "cancel.challenge"
                return Reply(content=t(lang, key, name=name))
            return Reply(content=t(lang, "cancel.done", name=name))

        await respond_in_turn(interaction, self.tables, work())

    # ----------------------------------------------------------------------- records

    @subcommand
    @app_commands.describe(period="Which period")
    @app_commands.choices(period=PERIOD_CHOICES)
    async def leaderboard(self, interaction: discord.Interaction[Any], period: str = "all") -> None:
        """This server's best players"""
        guild_id = scope_of(interaction)
        lang = public_lang(interaction)
        if period not in PERIODS:
            await refuse(interaction, "err.bad_option", reason=period)
            return
        window = PERIODS[period]

        async def work() -> Reply:
            since = None if window is None else self.service.registry.clock() - window
            rows = await self.storage.stats.leaderboard(guild_id, since=since, limit=10)
            users = [row.user_id for row in rows]
            matches = await self.storage.matches.match_records(guild_id, users, since=since)
            url = await self.web.leaderboard_url(guild_id, period)
            view = None if url is None else view_of(web_button(url, lang, "web.open_leaderboard"))
            embed = leaderboard_embed(
                rows, period, lang, matches=matches, place=place_of(interaction)
            )
            return Reply(embed=embed, view=view)

        await respond(interaction, work())

    @subcommand
    @app_commands.describe(user="Whose record (default: you)")
    async def stats(
        self, interaction: discord.Interaction[Any], user: discord.User | None = None
    ) -> None:
        """A player's record on this server"""
        guild_id = scope_of(interaction)
        target = user or interaction.user
        lang = public_lang(interaction)

        async def work() -> Reply:
            if target.id == self.service.registry.krigbot_id:
                own = await self.storage.stats.krigbot_record(guild_id, target.id)
                return Reply(
                    embed=krigbot_stats_embed(
                        _display_name(target), own, lang, place=place_of(interaction)
                    )
                )
            record = await self.storage.stats.player_stats(guild_id, target.id)
            matches = await self.storage.matches.match_records(guild_id, [target.id])
            everywhere = await self.storage.stats.record_everywhere(target.id)
            embed = stats_embed(
                _display_name(target),
                target.id,
                record,
                lang,
                matches=matches.get(target.id),
                everywhere=everywhere,
                place=place_of(interaction),
            )
            return Reply(embed=embed)

        await respond(interaction, work())

    @subcommand
    @app_commands.describe(
        images="Show the table and the game's story as pictures",
        web="Show the server's leaderboard, players and game replays on the web",
    )
    @app_commands.choices(images=IMAGES_CHOICES, web=WEB_CHOICES)
    async def settings(
        self,
        interaction: discord.Interaction[Any],
        images: str | None = None,
        web: str | None = None,
    ) -> None:
        """Server settings for Krig (moderators)"""
        if not reaches(interaction) or interaction.guild_id is None:
            raise Refusal("here.server_only")
        guild_id = interaction.guild_id
        lang = user_lang(interaction)
        may_moderate(_actor(interaction))
        if images is None and web is None:
            await refuse(interaction, "settings.choose")
            return
        for given, allowed in ((images, ("on", "off")), (web, WEB_SETTINGS)):
            if given is not None and given not in allowed:
                await refuse(interaction, "err.bad_option", reason=given)
                return

        async def work() -> Reply:
            lines = []
            if images is not None:
                await self.pictures.set_enabled(guild_id, images == "on")
                lines.append(t(lang, f"settings.images_{images}"))
            if web is not None:
                lines.append(await self._web_setting(guild_id, web, lang))
            return Reply(content="\n".join(lines), ephemeral=True)

        await respond(interaction, work(), ephemeral=True)

    async def _web_setting(self, guild_id: int, choice: str, lang: Lang) -> str:
        """Apply a moderator's web choice and return what to tell them."""
        access = self.web
        if choice == "rotate":
            await access.rotate(guild_id)
        else:
            await access.set_on(guild_id, choice == "on")
        if choice == "off":
            return t(lang, "settings.web_off")
        if not await access.is_on(guild_id):
            return t(lang, "settings.web_rotated_hidden")
        url = await access.leaderboard_url(guild_id)
        if url is None:
            return t(lang, "settings.web_on_unlinked")
        return t(lang, "settings.web_rotated" if choice == "rotate" else "settings.web_on", url=url)

    @subcommand
    @app_commands.describe(variant="Which rules to play")
    @app_commands.choices(variant=VARIANT_CHOICES)
    async def rules(
        self, interaction: discord.Interaction[Any], variant: str | None = None
    ) -> None:
        """How to play Krig and its variants"""
        if variant is not None and variant not in PRESETS:
            await refuse(interaction, "err.bad_option", reason=variant)
            return
        embed = rules_embed(variant, user_lang(interaction))
        await interaction.response.send_message(
            embed=embed, ephemeral=True, allowed_mentions=NO_MENTIONS
        )


def _cancelled_table(row: GameRow, lang: Lang, name: str) -> dict[str, Any]:
    """Return what a cancelled game's table shows instead: where it stood, and who cancelled."""
    note = t(lang, "cancel.done", name=name)
    try:
        game = load_game(row.state or {})
    except EngineError:
        return {"content": note}
    return {"embed": standing_embed(row, game, lang, note)}


def _display_name(user: discord.abc.User) -> str:
    return user.display_name


def _player(user: discord.abc.User) -> Player:
    return Player(user.id, _display_name(user), user.bot)


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


def _actor(interaction: discord.Interaction[Any]) -> Actor:
    """Return who acts, and whether Discord lets them manage messages in the channel."""
    if interaction.guild_id is None:
        return Actor(interaction.user.id, in_server=False)
    return Actor(interaction.user.id, interaction.permissions.manage_messages)
