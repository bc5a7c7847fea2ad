"""Krig where the bot is no member: group DMs and DMs through a user install, servers without it.

Every test ends by checking what Discord would have refused: no channel call of the bot's own
token into a chat it cannot see (403 50001), and no webhook call past its token or its limits.
"""

from __future__ import annotations

import asyncio
import io
import logging
from pathlib import Path

import pytest

from krigbot import logs
from krigbot.bot import KrigBot
from krigbot.engine import Game, Rules, run_to_end
from krigbot.i18n import t
from tests.standin import Channel, CommandNotAvailableError, DiscordStandIn, Message
from tests.standin.contexts import add_outside_guild, install_for
from tests.standin.fixtures import SampleWorld
from tests.support.handsfree import command, edit_of, running_bot
from tests.support.players import (
    UPDATE_MESSAGE,
    ChosenSeeds,
    Clock,
    answer_of,
    buttons,
    challenge,
    enabled_buttons,
    flip,
    flip_button,
    forged_press,
    game_id_of,
    game_row,
    press,
    settled,
    start_game,
    text_of,
)
from tests.support.private import LONG_SEED, group, nothing_refused, short_tokens
from tests.support.steal_war import QUICK, STEAL_BY_DEFAULT, let_the_choice_time_out, steal_line
from tests.support.texts import pattern
from tests.support.time_limit import TIME_UP, bot_on, quick_ticks

__all__ = ["group", "quick_ticks", "short_tokens"]

STANDARD = Rules.preset("standard")
SHORT_SEED = 1230
"""Standard: 30 rounds, Alice (seat 0) takes every card."""


def finished(seed: int) -> Game:
    game = Game.new(STANDARD, seed)
    run_to_end(game)
    return game


async def test_krig_and_flip_are_offered_everywhere_through_both_installs(
    standin: DiscordStandIn, world: SampleWorld, db_path: Path
) -> None:
    async with running_bot(standin, db_path):
        for name in ("krig", "flip"):
            synced = standin.synced_command(name)
            assert sorted(synced["contexts"]) == [0, 1, 2]
            assert sorted(synced["integration_types"]) == [0, 1]


async def test_no_command_is_offered_in_a_group_dm_to_someone_without_the_install(
    standin: DiscordStandIn, world: SampleWorld, group: Channel, db_path: Path
) -> None:
    async with running_bot(standin, db_path):
        with pytest.raises(CommandNotAvailableError):
            await standin.slash("krig rules", user=world.carol, channel=group)


async def test_a_whole_game_in_a_group_dm_from_challenge_to_result(
    standin: DiscordStandIn, world: SampleWorld, group: Channel, db_path: Path, seeds: ChosenSeeds
) -> None:
    seeds.fix(SHORT_SEED)
    channel = group
    async with running_bot(standin, db_path, seeds) as bot:
        table = await start_game(standin, channel, world.alice, world.bob)
        assert table.message.channel is channel
        assert not table.message.ephemeral

        shown = await press(standin, table.message, flip_button(table.message), world.bob)
        assert shown.type == UPDATE_MESSAGE
        # Alice challenged in Norwegian: Bob's press in Swedish shows the table in Norwegian.
        assert t("nb", "table.title", round=1) in text_of(shown)

        answer = await command(standin, channel, world.bob, "auto", speed="fastest")
        assert answer.message is not None
        await edit_of(standin, answer.message, lambda text: t("nb", "auto.done") in text)
        await settled()

        row = await game_row(bot, table.game_id)
        assert row.status == "finished"
        assert row.guild_id == channel.id
        assert row.result is not None
        assert row.result["winners"] == [0]
        board = await command(standin, channel, world.bob, "leaderboard")
        assert world.alice.mention in text_of(board)
        elsewhere = await command(standin, world.no_channel, world.bob, "leaderboard")
        assert world.alice.mention not in text_of(elsewhere)
        # Her record in the server counts the group DM's game too, apart from the server's.
        stats = await command(standin, world.no_channel, world.alice, "stats")
        won = t("nb", "stats.line", wins=1, losses=0, draws=0)
        assert f"{t('nb', 'stats.in_chats')}: {won}" in text_of(stats)
        assert t("nb", "stats.in_servers") not in text_of(stats)


async def test_autoplay_pauses_before_its_token_expires_and_a_resume_plays_on(
    standin: DiscordStandIn,
    world: SampleWorld,
    group: Channel,
    db_path: Path,
    seeds: ChosenSeeds,
    short_tokens: None,
) -> None:
    seeds.fix(LONG_SEED)
    expected = finished(LONG_SEED)
    channel = group
    async with running_bot(standin, db_path, seeds) as bot:
        table = await start_game(standin, channel, world.alice, world.bob)
        answer = await command(standin, channel, world.alice, "auto", speed="fast")
        message = answer.message
        assert message is not None
        paused_note = t("nb", "auto.token_paused")
        resumes = 0
        start = 0
        while True:
            event = await edit_of(
                standin,
                message,
                lambda text: paused_note in text or t("nb", "auto.done") in text,
                start=start,
            )
            start = standin.channel_events.items.index(event) + 1
            if t("nb", "auto.done") in text_of(event.revision):
                break
            resume = next(c for c in enabled_buttons(event.revision) if c.endswith(":resume"))
            shown = await press(standin, message, resume, world.bob)
            assert shown.type == UPDATE_MESSAGE
            resumes += 1
        await settled()

        assert resumes >= 2
        row = await game_row(bot, table.game_id)
        assert row.status == "finished"
        assert row.round == expected.round


async def test_a_restart_mid_game_leaves_the_next_press_to_show_the_table(
    standin: DiscordStandIn, world: SampleWorld, group: Channel, db_path: Path, seeds: ChosenSeeds
) -> None:
    seeds.fix(LONG_SEED)
    channel = group
    async with running_bot(standin, db_path, seeds):
        table = await start_game(standin, channel, world.alice, world.bob)
        await press(standin, table.message, flip_button(table.message), world.alice)
        answer = await command(standin, channel, world.alice, "auto", speed="slow")
        autoplay = answer.message
        assert autoplay is not None
        await edit_of(standin, autoplay, lambda text: t("nb", "table.title", round=2) in text)
    requests_before = len(standin.requests.items)

    async with running_bot(standin, db_path, seeds) as bot:
        await settled()
        # No interaction is left to reach the chat: the restarted bot writes nothing there.
        wrote = [
            r
            for r in standin.requests.items[requests_before:]
            if r.method in ("POST", "PATCH") and "/channels/" in r.path
        ]
        assert wrote == []
        pause = next(c for c in enabled_buttons(autoplay) if c.endswith(":pause"))
        paused = await press(standin, autoplay, pause, world.bob)
        assert paused.type == UPDATE_MESSAGE
        assert any(c.endswith(":resume") for c in buttons(paused))
        await settled()
        row = await game_row(bot, table.game_id)
        assert row.status == "running"
        resumed = await press(
            standin,
            autoplay,
            next(c for c in buttons(paused) if c.endswith(":resume")),
            world.alice,
        )
        assert resumed.type == UPDATE_MESSAGE
        before = row.round
        await edit_of(
            standin,
            autoplay,
            lambda text: t("nb", "table.title", round=before + 1) in text,
            start=len(standin.channel_events.items),
        )
        await command(standin, channel, world.alice, "cancel")
        await settled()


async def test_in_a_group_dm_only_the_players_may_cancel_and_no_one_changes_settings(
    standin: DiscordStandIn, world: SampleWorld, group: Channel, db_path: Path
) -> None:
    install_for(standin, world.carol)
    channel = group
    async with running_bot(standin, db_path) as bot:
        table = await start_game(standin, channel, world.alice, world.bob)

        refused = await command(standin, channel, world.carol, "cancel")
        settings = await command(standin, channel, world.alice, "settings", images="off")

        assert refused.ephemeral
        assert refused.content == t("en", "err.cancel_denied_chat")
        assert settings.ephemeral
        assert settings.content == t("nb", "here.server_only")
        assert (await game_row(bot, table.game_id)).status == "running"

        cancelled = await command(standin, channel, world.bob, "cancel")
        assert not cancelled.ephemeral
        await settled()
        assert (await game_row(bot, table.game_id)).status == "cancelled"


async def test_a_button_from_a_group_dm_does_nothing_in_a_server(
    standin: DiscordStandIn, world: SampleWorld, group: Channel, db_path: Path
) -> None:
    async with running_bot(standin, db_path) as bot:
        private = await start_game(standin, group, world.alice, world.bob)
        public = await start_game(standin, world.no_channel, world.alice, world.bob)
        forged: Message = public.message

        answer = await forged_press(standin, forged, flip_button(private.message), world.alice)

        assert answer.ephemeral
        await settled()
        assert (await game_row(bot, private.game_id)).round == 0
        assert (await game_row(bot, public.game_id)).round == 0
        assert game_id_of(public.message) == public.game_id


async def test_a_server_that_denies_external_apps_is_told_once_privately_how_to_play(
    standin: DiscordStandIn, world: SampleWorld, db_path: Path
) -> None:
    install_for(standin, world.alice)
    _, strict = add_outside_guild(
        standin, "Strict", world.carol, world.alice, world.bob, external_apps=False
    )
    async with running_bot(standin, db_path) as bot:
        rec = await standin.slash(
            "krig start", user=world.alice, channel=strict, options={"opponent": world.bob}
        )
        answer = await answer_of(standin, rec)
        await settled()

        assert answer.ephemeral
        assert answer.content == t("nb", "here.hidden")
        assert len(rec.followups.items) == 0
        assert await bot.storage.games.active_game(strict.id) is None
    nothing_refused(standin)


async def test_a_server_without_the_bot_plays_through_a_members_install(
    standin: DiscordStandIn, world: SampleWorld, db_path: Path, seeds: ChosenSeeds
) -> None:
    install_for(standin, world.alice)
    guild, general = add_outside_guild(standin, "Open", world.carol, world.alice, world.bob)
    seeds.fix(SHORT_SEED)
    async with running_bot(standin, db_path, seeds) as bot:
        table = await start_game(standin, general, world.alice, world.bob)
        shown = await press(standin, table.message, flip_button(table.message), world.bob)

        assert shown.type == UPDATE_MESSAGE
        assert not table.message.ephemeral
        await settled()
        row = await game_row(bot, table.game_id)
        assert row.guild_id == guild.id
        assert row.round == 1
    nothing_refused(standin)


async def test_the_tokens_of_a_group_dms_interactions_are_never_logged(
    standin: DiscordStandIn,
    world: SampleWorld,
    group: Channel,
    db_path: Path,
    seeds: ChosenSeeds,
    short_tokens: None,
) -> None:
    buffer = io.StringIO()
    handler = logging.StreamHandler(buffer)
    handler.addFilter(logs.Redact(["fake-token"]))
    root = logging.getLogger()
    old_level = root.level
    root.addHandler(handler)
    root.setLevel(logging.DEBUG)
    seeds.fix(LONG_SEED)
    try:
        async with running_bot(standin, db_path, seeds):
            await start_game(standin, group, world.alice, world.bob)
            answer = await command(standin, group, world.alice, "auto", speed="fast")
            assert answer.message is not None
            # Edits and follow-ups through the interactions' webhooks, until the token runs out.
            paused = t("nb", "auto.token_paused")
            await edit_of(standin, answer.message, lambda text: paused in text)
            await settled()
    finally:
        root.removeHandler(handler)
        root.setLevel(old_level)

    text = buffer.getvalue()
    assert "/webhooks/" in text
    for record in standin.interactions.values():
        assert record.token not in text


async def test_a_steal_war_choice_not_made_in_time_is_shown_through_the_table_in_a_group_dm(
    standin: DiscordStandIn, world: SampleWorld, group: Channel, db_path: Path, seeds: ChosenSeeds
) -> None:
    plan = STEAL_BY_DEFAULT
    seeds.fix(plan.seed)
    async with running_bot(standin, db_path, seeds, choice_seconds=QUICK):
        started = await start_game(standin, group, world.alice, world.bob, variant="stjel")

        # The time-out edits the table through the press that showed it: Bob's, in Norwegian.
        shown = await let_the_choice_time_out(
            standin, started.message, plan, flipper=world.alice, last=world.bob
        )

        assert steal_line(plan) in shown
        await settled()


async def test_an_unanswered_challenge_in_a_group_dm_expires_through_its_own_command(
    standin: DiscordStandIn, world: SampleWorld, group: Channel, bot: KrigBot, clock: Clock
) -> None:
    rec = await challenge(standin, group, world.alice, world.bob)
    message = (await answer_of(standin, rec)).message
    assert message is not None
    game_id = game_id_of(message)
    watcher = standin.watch(group)  # from the challenge shown on

    clock.advance(minutes=5)  # the challenge's lifetime, on the service's clock
    expired = await watcher.next("edit", predicate=lambda e: e.message is message, timeout=5)

    assert pattern("nb", "challenge.expired").search(text_of(expired.revision))
    assert buttons(expired.revision) == {}
    assert len(rec.original_edits.items) == 1  # the /krig start's own webhook edited it
    assert (await game_row(bot, game_id)).status == "expired"


async def test_the_end_of_a_time_limit_is_a_follow_up_of_the_chats_newest_press(
    standin: DiscordStandIn, world: SampleWorld, group: Channel, db_path: Path, quick_ticks: None
) -> None:
    clock = Clock()
    async with bot_on(standin, db_path, clock):
        table = await start_game(standin, group, world.alice, world.bob, minutes=5)
        pressed = await standin.click(table.message, flip_button(table.message), user=world.bob)
        await answer_of(standin, pressed)
        watcher = standin.watch(group)

        clock.advance(minutes=5, seconds=1)
        event = await watcher.next(
            "create", predicate=lambda e: TIME_UP in text_of(e.revision), timeout=5
        )

        assert event.message in pressed.followups.items
        # A rematch greys the end's buttons through the press it followed, as nothing else can.
        rematch = next(c for c in buttons(event.revision) if c.startswith("krig:rematch:"))
        await press(standin, event.message, rematch, world.alice)
        greyed = await watcher.next(
            "edit", predicate=lambda e: e.message is event.message and bool(e.revision.components)
        )
        assert enabled_buttons(greyed.revision) == []
        await settled()


async def test_after_a_restart_the_next_press_shows_an_end_no_message_could_show(
    standin: DiscordStandIn, world: SampleWorld, group: Channel, db_path: Path, quick_ticks: None
) -> None:
    clock = Clock()
    async with bot_on(standin, db_path, clock):
        table = await start_game(standin, group, world.alice, world.bob, minutes=5)
    async with bot_on(standin, db_path, clock) as bot:
        ended = asyncio.Event()

        async def finished(_row: object, _result: object) -> None:
            ended.set()

        bot.service.registry.on_finish.append(finished)
        watcher = standin.watch(group)
        clock.advance(minutes=5, seconds=1)
        await asyncio.wait_for(ended.wait(), 5)
        await settled()
        assert watcher.pending() == []  # no interaction of this process reaches the chat

        shown = await press(standin, table.message, flip_button(table.message), world.alice)

        assert shown.type == UPDATE_MESSAGE
        # Its time ran out while nothing reached the chat: the table says so, not "ended before a
        # restart".
        assert TIME_UP in text_of(shown)
        assert t("nb", "end.after_restart", game=table.game_id) not in text_of(shown)
        await settled()
        row = await game_row(bot, table.game_id)
        assert row.status == "finished"
        assert row.extra.get("ending") is None  # shown now: a restart will not show it again


async def test_autoplay_whose_token_discord_ends_early_pauses_at_once_and_status_says_so(
    standin: DiscordStandIn, world: SampleWorld, group: Channel, db_path: Path, seeds: ChosenSeeds
) -> None:
    seeds.fix(LONG_SEED)
    channel = group
    async with running_bot(standin, db_path, seeds) as bot:
        table = await start_game(standin, channel, world.alice, world.bob)
        rec = await standin.slash("krig auto", user=world.alice, channel=channel, options={})
        message = (await answer_of(standin, rec)).message
        assert message is not None
        await edit_of(standin, message, lambda text: t("nb", "table.title", round=3) in text)
        # Discord ends the token of the autoplay's message long before its 15 minutes.
        standin.fail_next(
            "*",
            rf"/webhooks/\d+/{rec.token}/",
            status=401,
            code=50027,
            message="Invalid Webhook Token",
            times=1000,
        )
        tried = len(standin.requests)
        cog = bot.get_cog("Autoplay")
        assert cog is not None
        task = cog.task(channel.id)  # type: ignore[attr-defined]
        assert task is not None
        await asyncio.wait_for(task, 10)
        row = await game_row(bot, table.game_id)
        refused = [r for r in standin.requests.items[tried:] if rec.token in r.path]
        status = await command(standin, channel, world.bob, "status")
        # A press on the message it could not update shows the pause, with Resume.
        pressed = await press(standin, message, f"krig:auto:{table.game_id}:pause", world.bob)

    assert row.extra["autoplay"]["state"] == "paused"  # stored, as a Pause press is
    assert len(refused) <= 2  # the step that failed (and the note it tried): no more steps
    assert t("sv", "auto.token_lost") in text_of(status)
    assert pressed.type == UPDATE_MESSAGE, text_of(pressed)
    assert t("nb", "table.title", round=row.round) in text_of(pressed)
    assert f"krig:auto:{table.game_id}:resume" in enabled_buttons(pressed)
    standin.world.refused.clear()  # Discord's refusals of the dead token, made on purpose


async def test_the_next_flip_in_a_chat_says_once_that_autoplay_paused_when_nothing_could_tell(
    standin: DiscordStandIn, world: SampleWorld, group: Channel, db_path: Path, seeds: ChosenSeeds
) -> None:
    seeds.fix(LONG_SEED)
    async with running_bot(standin, db_path, seeds) as bot:
        await start_game(standin, group, world.alice, world.bob)
        rec = await standin.slash("krig auto", user=world.alice, channel=group, options={})
        message = (await answer_of(standin, rec)).message
        assert message is not None
        await edit_of(standin, message, lambda text: t("nb", "table.title", round=3) in text)
        # Discord ends the autoplay message's token early; no other interaction reaches the chat.
        standin.fail_next(
            "*",
            rf"/webhooks/\d+/{rec.token}\b",  # its message's edits and its follow-ups
            status=401,
            code=50027,
            message="Invalid Webhook Token",
            times=1000,
        )
        cog = bot.get_cog("Autoplay")
        assert cog is not None
        task = cog.task(group.id)  # type: ignore[attr-defined]
        assert task is not None
        await asyncio.wait_for(task, 10)
        said = [m for m in group.messages if t("nb", "auto.token_lost") in text_of(m)]

        first = await flip(standin, group, world.bob)
        second = await flip(standin, group, world.alice)

    assert said == []  # nothing reached the chat when autoplay paused
    assert t("nb", "auto.token_lost_untold") in text_of(first)
    assert first.embeds  # still the round's table, below the line
    assert t("nb", "auto.token_lost_untold") not in text_of(second)
    standin.world.refused.clear()  # Discord's refusals of the dead token, made on purpose
