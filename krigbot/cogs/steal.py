"""Steal War at the table (rules §10): private looks, steals, top-card choices and time-outs.

A battle begins with a flip. Every player may press **Look at my card** on the table and is
answered privately with their next card and, when it matches an opponent's loot top, buttons
to steal (one pile, or every matching pile) or to play. The winner of a battle chooses the top
of their loot pile with buttons on the table. Each move is committed before anyone sees it;
buttons carry the choice they offer in their custom id and are checked against the engine when
pressed, so a stale one changes nothing. When the open choices' time is up
(``Settings.choice_seconds``, a deadline of the session layer's scheduler), the defaults of §10
are applied and this cog shows them.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any, Protocol, Unpack

import discord
from discord.ext import commands

from krigbot.adapter.activity import show_below
from krigbot.adapter.buttons import (
    LookButton,
    PlayButton,
    StealButton,
    TopButton,
)
from krigbot.adapter.endings import ending
from krigbot.adapter.parts import HasActivity, HasChoices, HasDeadlines, RoundParts
from krigbot.adapter.players import channel_of, pressed_message
from krigbot.adapter.races import lost_flip
from krigbot.adapter.replies import Reply, public_lang, respond, user_lang
from krigbot.adapter.steal import activity_look, choice_view, steal_move, table_view
from krigbot.adapter.surfaces import own_token
from krigbot.adapter.tables import respond_in_turn
from krigbot.adapter.weblinks import watch_live
from krigbot.engine.events import LookChoice, TopChoice
from krigbot.i18n import Lang, card_label, fmt_list, lang_for, t
from krigbot.logs import about
from krigbot.render.embeds import names_of
from krigbot.render.emoji import NO_FACES
from krigbot.render.play import time_up_embed
from krigbot.render.steal import look_text, steal_table_embed, superseded
from krigbot.sessions import Choice, ChoiceOptions, ChoiceResult, Refusal

if TYPE_CHECKING:
    from krigbot.render.emoji import CardFaces
    from krigbot.sessions import Deadline
    from krigbot.storage import GameRow

log = logging.getLogger(__name__)


def timeout_notes(result: ChoiceResult, lang: Lang, faces: CardFaces) -> list[str]:
    """Return what the table says about the choices a time-out made."""
    names = names_of(result.row)
    looks = [c.seat for c in result.timed_out if isinstance(c, LookChoice)]
    tops = [c.seat for c in result.timed_out if isinstance(c, TopChoice)]
    notes = []
    if looks:
        notes.append(t(lang, "steal.timed_out", names=fmt_list([names[s] for s in looks], lang)))
    for seat in tops:
        top = result.game.loot_top(seat)
        if top is not None:
            notes.append(
                t(lang, "steal.top_timed_out", name=names[seat], card=faces.text(top, lang))
            )
    return notes


def krigbot_notes(result: ChoiceResult, lang: Lang, faces: CardFaces) -> list[str]:
    """Return what the table says about the choices Krigbot itself made at once."""
    names = names_of(result.row)
    notes = []
    for move in result.krigbot_moves:
        card = faces.text(move.card, lang)
        if move.kind == "top":
            notes.append(t(lang, "krigbot.top", name=names[move.seat], card=card))
        else:
            victims = fmt_list([names[s] for s in move.targets], lang)
            notes.append(
                t(lang, "krigbot.steals", name=names[move.seat], victims=victims, card=card)
            )
    return notes


class StealParts(RoundParts, HasChoices, HasDeadlines, HasActivity, Protocol):
    """What the Steal War cog uses."""


class StealCog(commands.Cog, name="StealWar"):
    """Steal War's choices in Discord: looks, steals, top cards and their time-outs."""

    def __init__(self, parts: StealParts) -> None:
        self.parts = parts
        parts.buttons.handle(LookButton, self.on_look)
        parts.buttons.handle(
            StealButton,
            lambda pressed, game, seat, card, targets: self.on_choice(
                pressed, game, "steal", seat, card, targets=targets
            ),
        )
        parts.buttons.handle(
            PlayButton,
            lambda pressed, game, seat, card: self.on_choice(pressed, game, "play", seat, card),
        )
        parts.buttons.handle(
            TopButton,
            lambda pressed, game, round_won, seat, card: self.on_choice(
                pressed, game, "top", seat, card, expected_round=round_won
            ),
        )
        self.parts.deadlines.handle("choice", self._time_out)
        parts.activity.handle_choices(self.look_in_activity, self.choose_in_activity)
        self._edits: dict[int, asyncio.Lock] = {}
        self._shown: dict[int, int] = {}
        """Per game, the number of moves the table message shows (edits may finish out of
        order; an older state never replaces a newer one)."""

    async def cog_unload(self) -> None:
        self.parts.deadlines.handle("choice", None)

    async def plays_here(self, channel_id: int) -> bool:
        """Tell whether the channel's game is a running Steal War game."""
        try:
            found = await self.parts.registry.game_in(channel_id)
        except Refusal:
            return False  # the ordinary flip path refuses it properly
        return found is not None and found[1] is not None and found[1].has_choices

    def _superseded(
        self, channel_id: int, message_id: int, embed: discord.Embed, lang: Lang
    ) -> None:
        """Let a table say, once it is greyed, that it no longer counts down or waits."""
        live = self.parts.tables.live(channel_id)
        if live is not None and live.message_id == message_id:
            live.retired = lambda: {"embed": superseded(embed, lang)}

    # ------------------------------------------------------------------------ rendering

    def _table(
        self, result: ChoiceResult, lang: Lang, notes: Sequence[str] = ()
    ) -> tuple[discord.Embed, discord.ui.View | None]:
        """Return the table after a move; call it before any await, while the game is as saved."""
        row, game = result.row, result.game
        notes = [*notes, *krigbot_notes(result, lang, self.parts.faces)]
        if game.outcome is not None and result.played is None:
            # Its time was up between battles: the cards were counted (rules §7).
            embed = time_up_embed(row, game, lang)
            if notes:
                embed.description = "\n".join([*notes, embed.description or ""])
            return embed, table_view(row, game, lang)
        deadline = self.parts.choices.choice_deadline(row) if game.pending() else None
        embed = steal_table_embed(
            row,
            game,
            lang,
            played=result.played,
            notes=notes,
            deadline=deadline,
            faces=self.parts.faces,
        )
        return embed, table_view(row, game, lang)

    async def _live(self, row: GameRow, view: discord.ui.View | None, lang: Lang) -> None:
        """Add Watch live to a running game's table buttons, where the server has pages."""
        if view is not None:
            for link in await watch_live(self.parts.web, row, lang):
                view.add_item(link)

    async def _buttons(
        self, result: ChoiceResult, embed: discord.Embed, view: discord.ui.View | None, lang: Lang
    ) -> tuple[discord.ui.View | None, Callable[[int], Awaitable[None]] | None]:
        """Return the buttons of the table after a move, and what to do once it shows an end.

        A finished game's end is recorded and gets its own buttons; a running game's table gets
        Watch live."""
        if result.outcome is not None:
            over = await ending(
                self.parts.registry, result.row, result.game, lang, embed, self.parts.web
            )
            return over.view, over.sent
        await self._live(result.row, view, lang)
        return view, None

    async def _edit_table(
        self,
        row: GameRow,
        embed: discord.Embed,
        view: discord.ui.View | None,
        version: int,
    ) -> bool:
        """Show a new state on the table message, unless a newer one is already shown."""
        if row.table_message_id is None:
            return False
        async with self._edits.setdefault(row.id, asyncio.Lock()):
            if version < self._shown.get(row.id, -1):
                return False
            try:
                shown = await self.parts.tables.edit(
                    self.parts.bot,
                    row.channel_id,
                    row.table_message_id,
                    own_token(row.extra),
                    embed=embed,
                    view=view,
                )
            except discord.HTTPException as exc:
                log.warning(
                    "could not update the table of game %s: %s", row.id, exc, extra=about(row)
                )
                return False
            if not shown:
                return False
            self.parts.tables.changed(row.channel_id, row.table_message_id, view)
            self._shown[row.id] = version
            return True

    async def _show(self, result: ChoiceResult, lang: Lang, notes: Sequence[str] = ()) -> None:
        """Show on the table a move made away from it (a private press, a time-out).

        Await it right after the move: it renders before its first await, while the game is
        exactly as the move left it.
        """
        embed, view = self._table(result, lang, notes)
        version = result.game.moves_made
        self._after(result)
        view, sent = await self._buttons(result, embed, view, lang)
        table = result.row.table_message_id
        shown = await self._edit_table(result.row, embed, view, version)
        if shown and table is not None and result.outcome is None:
            self._superseded(result.row.channel_id, table, embed, lang)
        if shown and sent and table:
            await sent(table)
        elif result.outcome is not None and not own_token(result.row.extra):
            # Nothing reached the chat to show it: the next press there does, and says why.
            await self.parts.registry.ending_unreached(result.row.id)
        if result.outcome is not None:
            self._forget(result.row.id)

    def _shows(self, result: ChoiceResult) -> None:
        """Remember that the table message shows this result (it went out as an answer)."""
        version = result.game.moves_made
        self._shown[result.row.id] = max(self._shown.get(result.row.id, -1), version)
        self._after(result)
        if result.outcome is not None:
            self._forget(result.row.id)

    def _after(self, result: ChoiceResult) -> None:
        """Start the time-out of the choices now open (none once the game is over)."""
        self.parts.choices.watch_choices(result.row, result.game)

    def _forget(self, game_id: int) -> None:
        self._edits.pop(game_id, None)
        self._shown.pop(game_id, None)

    # --------------------------------------------------------------------------- timers

    async def _time_out(self, deadline: Deadline) -> None:
        """Make the open choices by default now that their time is up, and show them."""
        result = await self.parts.deadlines.attempt(
            deadline,
            self.parts.choices.time_out(deadline.channel_id, deadline.game_id),
            "make the timed-out choices",
        )
        if result is None:
            return
        if result.timed_out or result.krigbot_moves:
            lang = lang_for(result.row.extra.get("lang"))
            await self._show(result, lang, timeout_notes(result, lang, self.parts.faces))
        else:
            self._after(result)

    # ------------------------------------------------------------------------- handlers

    async def flip(
        self,
        interaction: discord.Interaction[Any],
        *,
        game_id: int | None = None,
        round_shown: int | None = None,
    ) -> None:
        """Begin a battle from /flip (a new table message) or a Flip button (that message)."""
        channel_id = channel_of(interaction)
        lang = public_lang(interaction)
        pressed = pressed_message(interaction) if game_id is not None else None

        async def work() -> Reply:
            try:
                result = await self.parts.choices.begin_battle(
                    channel_id,
                    interaction.user.id,
                    game_id=game_id,
                    expected_round=round_shown,
                    table_message_id=pressed,
                )
            except Refusal as refusal:
                if game_id is None:
                    raise
                return await lost_flip(self.parts.play, refusal, game_id, pressed)
            embed, view = self._table(result, lang)
            view, after = await self._buttons(result, embed, view, lang)

            async def sent(message_id: int) -> None:
                if result.outcome is None:
                    self._superseded(channel_id, message_id, embed, lang)
                if pressed is None and result.outcome is None:
                    row = result.row
                    await self.parts.registry.show_table(channel_id, row.id, row.round, message_id)
                if after is not None:
                    await after(message_id)
                self._shows(result)

            return Reply(
                embed=embed, view=view, update=pressed is not None, durable=True, sent=sent
            )

        await respond_in_turn(interaction, self.parts.tables, work(), update=pressed is not None)

    async def on_look(self, interaction: discord.Interaction[Any], game_id: int) -> None:
        """Answer a Look press privately: the presser's next card and their choices."""
        channel_id = channel_of(interaction)
        lang = user_lang(interaction)

        async def work() -> Reply:
            row, game, seat = await self.parts.choices.steal_seat(
                channel_id, interaction.user.id, game_id
            )
            return Reply(
                content=look_text(game, seat, names_of(row), lang, self.parts.faces),
                view=choice_view(row, game, seat, lang),
                ephemeral=True,
            )

        await respond(interaction, work(), ephemeral=True)

    async def on_choice(
        self,
        interaction: discord.Interaction[Any],
        game_id: int,
        choice: Choice,
        seat: int,
        card: int,
        **options: Unpack[ChoiceOptions],
    ) -> None:
        """Handle a steal, play or top-card press; the table shows the move to everyone."""
        channel_id = channel_of(interaction)
        mine = user_lang(interaction)
        public = public_lang(interaction)
        on_table = choice == "top"  # the top-card buttons are on the table; the others private

        async def work() -> Reply:
            result = await self.parts.choices.choose(
                channel_id,
                interaction.user.id,
                game_id,
                choice,
                seat=seat,
                card=card,
                **options,
            )
            row, game = result.row, result.game
            names = names_of(row)
            if on_table:
                shown_card = self.parts.faces.text(card, public)
                note = t(public, "steal.top_chosen", name=names[seat], card=shown_card)
                embed, view = self._table(result, public, [note])
                await self._live(row, view, public)

                async def shown(message_id: int) -> None:
                    self._superseded(channel_id, message_id, embed, public)
                    self._shows(result)

                return Reply(embed=embed, view=view, update=True, durable=True, sent=shown)
            done = self._done_line(result, choice, card, options.get("targets", ()), mine)
            lines = [done]
            private = choice_view(row, game, seat, mine)
            if result.played is not None and private is None:
                lines.append(t(mine, "steal.decided"))
            elif game.outcome is None:
                lines.append(look_text(game, seat, names, mine, self.parts.faces))
            await self._show(result, public)
            return Reply(content="\n".join(lines), view=private, update=True)

        if on_table:
            await respond_in_turn(interaction, self.parts.tables, work(), update=True)
        else:
            await respond(interaction, work(), update=True)

    # ----------------------------------------------------------------------- the Activity

    async def flip_in_activity(self, channel_id: int, user_id: int) -> None:
        """Begin a battle from the Activity's Flip: its table goes to the bottom of the channel."""
        tables = self.parts.tables
        async with tables.turn(channel_id):
            with tables.answering():
                result = await self.parts.choices.begin_battle(channel_id, user_id)
                row = result.row
                lang = lang_for(row.extra.get("lang"))
                embed, view = self._table(result, lang)
                view, after = await self._buttons(result, embed, view, lang)
                message_id = await show_below(self.parts.bot, tables, row, view=view, embed=embed)
                if message_id is None:
                    if result.outcome is not None:
                        await self.parts.registry.ending_unreached(row.id)
                    self._after(result)
                    return
                if result.outcome is None:
                    self._superseded(channel_id, message_id, embed, lang)
                    await self.parts.registry.show_table(channel_id, row.id, row.round, message_id)
                if after is not None:
                    await after(message_id)
                self._shows(result)

    async def look_in_activity(self, channel_id: int, user_id: int, lang: Lang) -> dict[str, Any]:
        """Answer a Look in the Activity: the player's next card and the choices open to them."""
        found = await self.parts.registry.game_in(channel_id)
        if found is None:
            raise Refusal("err.no_game")
        row, game, seat = await self.parts.choices.steal_seat(channel_id, user_id, found[0].id)
        return activity_look(row, game, seat, lang)

    async def choose_in_activity(
        self, channel_id: int, user_id: int, move: dict[str, Any], lang: Lang
    ) -> dict[str, Any]:
        """Make a choice the Activity offered, as its button would; answer with the look after.

        The move names what its button's custom id names, and is checked against the game the
        same way, so a stale or made-up one changes nothing.
        """
        choice, game_id, seat, card, targets, round_won = steal_move(move)
        public = lang_for(None)
        found = await self.parts.registry.game_in(channel_id)
        if found is not None:
            public = lang_for(found[0].extra.get("lang"))
        result = await self.parts.choices.choose(
            channel_id,
            user_id,
            game_id,
            choice,
            seat=seat,
            card=card,
            targets=targets,
            expected_round=round_won if choice == "top" else None,
        )
        if choice == "top":
            names = names_of(result.row)
            note = t(
                public,
                "steal.top_chosen",
                name=names[seat],
                card=self.parts.faces.text(card, public),
            )
            await self._show(result, public, [note])
        else:
            await self._show(result, public)
        done = (
            t(lang, "steal.top_chosen", name=result.row.names[seat], card=card_label(card, lang))
            if choice == "top"
            else self._done_line(result, choice, card, targets, lang, faces=NO_FACES)
        )
        after = (
            {"text": "", "options": []}
            if result.game.outcome is not None
            else activity_look(result.row, result.game, seat, lang)
        )
        return {"done": done, **after}

    def _done_line(
        self,
        result: ChoiceResult,
        choice: Choice,
        card: int,
        targets: Sequence[int],
        lang: Lang,
        *,
        faces: CardFaces | None = None,
    ) -> str:
        if choice == "play":
            return t(lang, "steal.played", card=(faces or self.parts.faces).text(card, lang))
        names = names_of(result.row)
        victims = fmt_list([names[s] for s in targets], lang)
        return t(lang, "steal.stole", count=len(targets), victims=victims)
