"""Games in chats outside servers: their language after a restart, their records, who moderates."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from krigbot.bot import KrigBot
from krigbot.i18n import fmt_list, t
from tests.standin import Channel, DiscordStandIn, Message
from tests.standin.contexts import add_user_dm, install_for
from tests.standin.fixtures import SampleWorld
from tests.support.handsfree import command, edit_of, running_bot
from tests.support.players import (
    UPDATE_MESSAGE,
    ChosenSeeds,
    Clock,
    Table,
    answer_of,
    buttons,
    challenge,
    challenge_message,
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
from tests.support.texts import pattern
from tests.support.time_limit import TIME_UP, bot_on, quick_ticks

__all__ = ["group", "quick_ticks", "short_tokens"]


async def test_a_group_dms_table_keeps_its_language_after_a_restart_whoever_presses(
    standin: DiscordStandIn, world: SampleWorld, group: Channel, db_path: Path, seeds: ChosenSeeds
) -> None:
    seeds.fix(LONG_SEED)
    async with running_bot(standin, db_path, seeds):
        table = await start_game(standin, group, world.alice, world.bob)
        shown = await press(standin, table.message, flip_button(table.message), world.alice)
        assert t("nb", "table.title", round=1) in text_of(shown)

    async with running_bot(standin, db_path, seeds):
        # Bob reads Swedish; the game was challenged in Norwegian. First a button...
        shown = await press(standin, table.message, flip_button(shown), world.bob)
        assert t("nb", "table.title", round=2) in text_of(shown)
        assert t("sv", "table.title", round=2) not in text_of(shown)

    async with running_bot(standin, db_path, seeds):
        # ... then, after another restart, a command.
        flipped = await answer_of(
            standin, await standin.slash("flip", user=world.bob, channel=group)
        )
        assert t("nb", "table.title", round=3) in text_of(flipped)


async def test_the_records_of_a_chat_or_a_dm_say_where_they_are_from(
    standin: DiscordStandIn, world: SampleWorld, group: Channel, db_path: Path
) -> None:
    async with running_bot(standin, db_path):
        board = await command(standin, group, world.alice, "leaderboard")
        stats = await command(standin, group, world.bob, "stats")
        assert t("nb", "lb.empty_chat") in text_of(board)
        # A public answer in the game's language, the challenger's (none here yet: Bob's).
        assert t("sv", "stats.none_chat", name="Bob") in text_of(stats)

        dm = standin.dm_channel(world.alice)
        board = await command(standin, dm, world.alice, "leaderboard")
        stats = await command(standin, dm, world.alice, "stats")
        assert t("nb", "lb.empty_dm") in text_of(board)
        assert t("nb", "stats.none_dm", name="Alice") in text_of(stats)
        for shown in (board, stats):
            assert t("nb", "lb.empty") not in text_of(shown)
            assert t("nb", "stats.none", name="Alice") not in text_of(shown)

        replay = await command(standin, dm, world.alice, "replay", id=99)
        assert replay.content == t("nb", "replay.not_found_dm", id=99)
        replay = await command(standin, group, world.alice, "replay", id=99)
        assert replay.content == t("nb", "replay.not_found_chat", id=99)


async def test_in_a_group_dm_any_player_may_call_a_game_off_and_others_are_told_so(
    standin: DiscordStandIn, world: SampleWorld, group: Channel, db_path: Path
) -> None:
    install_for(standin, world.carol)
    async with running_bot(standin, db_path) as bot:
        game_id = game_id_of(await challenge_message(standin, group, world.alice, world.bob))
        refused = await command(standin, group, world.carol, "cancel")
        assert refused.ephemeral
        assert refused.content == t("en", "err.cancel_denied_chat")

        # Bob, challenged and not yet in, may call it off as well as Alice.
        called_off = await command(standin, group, world.bob, "cancel")
        assert not called_off.ephemeral
        assert called_off.content == t("nb", "cancel.challenge", name="Bob")
        await settled()
        assert (await game_row(bot, game_id)).status == "cancelled"


async def test_status_tells_that_the_bot_paused_autoplay_before_its_token_ran_out(
    standin: DiscordStandIn,
    world: SampleWorld,
    group: Channel,
    db_path: Path,
    seeds: ChosenSeeds,
    short_tokens: None,
) -> None:
    seeds.fix(LONG_SEED)
    async with running_bot(standin, db_path, seeds):
        await start_game(standin, group, world.alice, world.bob)
        answer = await command(standin, group, world.alice, "auto", speed="slow")
        assert answer.message is not None
        paused = await edit_of(
            standin, answer.message, lambda text: t("nb", "auto.token_paused") in text
        )
        assert t("nb", "auto.paused", name="Alice") not in text_of(paused.revision)
        await settled()

        status = await command(standin, group, world.bob, "status")
        assert t("sv", "auto.paused_token") in text_of(status)
        assert t("sv", "auto.paused", name="Alice") not in text_of(status)
        await command(standin, group, world.alice, "cancel")
        await settled()


async def test_a_user_dm_game_whose_time_ran_out_while_the_bot_was_down_says_so(
    standin: DiscordStandIn, world: SampleWorld, db_path: Path, quick_ticks: None
) -> None:
    install_for(standin, world.alice)
    install_for(standin, world.bob)
    dm = add_user_dm(standin, world.alice, world.bob)
    clock = Clock()
    async with bot_on(standin, db_path, clock):
        table = await start_game(standin, dm, world.alice, world.bob, minutes=5)
    clock.advance(minutes=5, seconds=1)
    async with bot_on(standin, db_path, clock) as bot:
        await settled()
        shown = await press(standin, table.message, flip_button(table.message), world.bob)

        assert shown.type == UPDATE_MESSAGE
        assert TIME_UP in text_of(shown)
        assert t("nb", "over.reason.time_limit", count=5, n=5) in text_of(shown)
        assert t("nb", "end.after_restart", game=table.game_id) not in text_of(shown)
        await settled()
        assert (await game_row(bot, table.game_id)).status == "finished"
    nothing_refused(standin)


async def test_a_challenge_in_a_dm_to_someone_not_in_it_is_refused_at_once_privately(
    standin: DiscordStandIn, world: SampleWorld, group: Channel, db_path: Path
) -> None:
    dm = add_user_dm(standin, world.alice, world.bob)
    dave = standin.add_user("dave", "Dave", locale="da")
    async with running_bot(standin, db_path) as bot:
        refused = await answer_of(standin, await challenge(standin, dm, world.alice, world.carol))
        assert refused.ephemeral
        assert refused.content == t("nb", "err.not_in_chat", names="Carol")
        assert await bot.storage.games.active_game(dm.id) is None

        # In a group DM too, naming everyone missing; those who are in it may be challenged.
        refused = await answer_of(
            standin, await challenge(standin, group, world.bob, world.alice, dave, world.owner)
        )
        assert refused.ephemeral
        names = fmt_list(["Dave", "Olav Owner"], "sv")
        assert refused.content == t("sv", "err.not_in_chat", names=names)
        assert await bot.storage.games.active_game(group.id) is None

        table = await start_game(standin, dm, world.alice, world.bob)
        assert not table.message.ephemeral


@pytest.mark.parametrize("answer", ["accept", "decline"])
async def test_a_challenge_that_expired_out_of_reach_says_so_through_the_next_press_on_it(
    standin: DiscordStandIn,
    world: SampleWorld,
    group: Channel,
    db_path: Path,
    quick_ticks: None,
    answer: str,
) -> None:
    clock = Clock()
    async with bot_on(standin, db_path, clock):
        message = await challenge_message(standin, group, world.alice, world.bob)
    game_id = game_id_of(message)
    clock.advance(minutes=5, seconds=1)
    async with bot_on(standin, db_path, clock) as bot:
        await settled()
        # No interaction of this process reaches the chat: the message still offers its buttons.
        assert buttons(message) != {}

        pressed = await press(standin, message, f"krig:{answer}:{game_id}", world.bob)

        assert pressed.type == UPDATE_MESSAGE
        assert pattern("nb", "challenge.expired").search(text_of(pressed))
        assert buttons(pressed) == {}
        assert (await game_row(bot, game_id)).status == "expired"


async def test_after_a_restart_autoplay_in_a_chat_is_told_paused_not_running_hand_flip_or_not(
    standin: DiscordStandIn, world: SampleWorld, group: Channel, db_path: Path, seeds: ChosenSeeds
) -> None:
    seeds.fix(LONG_SEED)
    async with running_bot(standin, db_path, seeds):
        table = await start_game(standin, group, world.alice, world.bob)
        answer = await command(standin, group, world.alice, "auto", speed="slow")
        autoplay = answer.message
        assert autoplay is not None
        await edit_of(standin, autoplay, lambda text: t("nb", "table.title", round=2) in text)

    async with running_bot(standin, db_path, seeds) as bot:
        # No interaction is left to play it with: the first answer in the chat says it paused.
        flipped = await flip(standin, group, world.bob)
        again = await flip(standin, group, world.alice)
        status = await command(standin, group, world.bob, "status")
        pause = next(c for c in enabled_buttons(autoplay) if c.endswith(":pause"))
        pressed = await press(standin, autoplay, pause, world.bob)
        await settled()
        row = await game_row(bot, table.game_id)

    running = t("sv", "auto.running", speed=t("sv", "speed.slow"), name="Alice")
    assert running not in text_of(status)
    assert t("sv", "auto.paused_restart") in text_of(status)
    assert t("nb", "auto.restart_untold") in text_of(flipped)
    assert t("nb", "auto.restart_untold") not in text_of(again)
    # Its message, reached by the press, says why it paused and offers Resume.
    assert pressed.type == UPDATE_MESSAGE
    assert t("nb", "auto.paused_restart") in text_of(pressed)
    assert f"krig:auto:{row.id}:resume" in enabled_buttons(pressed)
    assert row.extra["autoplay"]["state"] == "paused"


async def autoplay_ends_unseen(
    standin: DiscordStandIn, world: SampleWorld, group: Channel, bot: KrigBot
) -> tuple[Table, Message]:
    """Autoplay a game to its end in one step that Discord refuses to show (its token ended):
    return the game's first table and the autoplay's message, which still says it plays."""
    table = await start_game(standin, group, world.alice, world.bob, rounds=20)
    ended = asyncio.Event()

    async def finished(_row: object, _game: object) -> None:
        ended.set()

    bot.service.registry.on_finish.append(finished)
    rec = await standin.slash(
        "krig auto", user=world.alice, channel=group, options={"speed": "fastest"}
    )
    # Discord ends the token of the autoplay's message before its one step, the game's end.
    standin.fail_next(
        "*",
        rf"/webhooks/\d+/{rec.token}\b",
        status=401,
        code=50027,
        message="Invalid Webhook Token",
        times=1000,
    )
    autoplay = (await answer_of(standin, rec)).message
    assert autoplay is not None
    await asyncio.wait_for(ended.wait(), 10)
    await settled()
    row = await game_row(bot, table.game_id)
    assert (row.status, row.extra.get("ending")) == ("finished", "unshown")
    return table, autoplay


async def test_an_end_no_token_could_show_is_not_said_to_have_come_before_a_restart(
    standin: DiscordStandIn, world: SampleWorld, group: Channel, db_path: Path, seeds: ChosenSeeds
) -> None:
    seeds.fix(LONG_SEED)
    async with running_bot(standin, db_path, seeds) as bot:
        table, _ = await autoplay_ends_unseen(standin, world, group, bot)

        shown = await forged_press(standin, table.message, flip_button(table.message), world.bob)

    assert shown.type == UPDATE_MESSAGE, text_of(shown)
    assert t("nb", "end.after_restart", game=table.game_id) not in text_of(shown)
    assert t("nb", "end.unreached", game=table.game_id) in text_of(shown)
    standin.world.refused.clear()  # Discord's refusals of the dead token, made on purpose


async def test_an_end_no_token_could_show_is_still_not_said_to_have_come_before_a_restart_after_one(
    standin: DiscordStandIn, world: SampleWorld, group: Channel, db_path: Path, seeds: ChosenSeeds
) -> None:
    seeds.fix(LONG_SEED)
    async with running_bot(standin, db_path, seeds) as bot:
        table, _ = await autoplay_ends_unseen(standin, world, group, bot)
        autoplay = bot.get_cog("Autoplay")
        assert autoplay is not None
        task = autoplay.task(group.id)  # type: ignore[attr-defined]
        if task is not None:  # its last step: Discord refuses its edit, and it stops
            await asyncio.wait_for(asyncio.wait({task}), 10)
    async with running_bot(standin, db_path, seeds) as bot:
        await settled()
        shown = await forged_press(standin, table.message, flip_button(table.message), world.bob)
        await settled()
        row = await game_row(bot, table.game_id)

    assert shown.type == UPDATE_MESSAGE, text_of(shown)
    assert t("nb", "end.after_restart", game=table.game_id) not in text_of(shown)
    assert t("nb", "end.unreached", game=table.game_id) in text_of(shown)
    assert row.extra.get("ending") is None  # shown: nothing shows it again
    standin.world.refused.clear()  # Discord's refusals of the dead token, made on purpose


async def test_a_press_on_autoplays_message_shows_the_end_its_token_could_not(
    standin: DiscordStandIn, world: SampleWorld, group: Channel, db_path: Path, seeds: ChosenSeeds
) -> None:
    seeds.fix(LONG_SEED)
    async with running_bot(standin, db_path, seeds) as bot:
        table, autoplay = await autoplay_ends_unseen(standin, world, group, bot)
        pause = f"krig:auto:{table.game_id}:pause"
        assert pause in enabled_buttons(autoplay)  # it still claims to play

        shown = await press(standin, autoplay, pause, world.bob)
        await settled()
        row = await game_row(bot, table.game_id)

    assert shown.type == UPDATE_MESSAGE, text_of(shown)
    assert t("nb", "end.unreached", game=table.game_id) in text_of(shown)
    assert not any(c.startswith("krig:auto:") for c in buttons(shown))
    assert row.extra.get("ending") is None  # shown: nothing shows it again
    standin.world.refused.clear()  # Discord's refusals of the dead token, made on purpose


async def test_a_hand_flip_in_a_chat_stops_autoplay_on_its_message_and_in_status(
    standin: DiscordStandIn, world: SampleWorld, group: Channel, db_path: Path, seeds: ChosenSeeds
) -> None:
    seeds.fix(LONG_SEED)
    async with running_bot(standin, db_path, seeds) as bot:
        table = await start_game(standin, group, world.alice, world.bob)
        answer = await command(standin, group, world.alice, "auto", speed="slow")
        autoplay = answer.message
        assert autoplay is not None
        await edit_of(standin, autoplay, lambda text: t("nb", "table.title", round=2) in text)

        await flip(standin, group, world.bob)
        # Its message is reached through the interaction that showed it.
        stopped = await edit_of(standin, autoplay, lambda text: t("nb", "auto.hand_flip") in text)
        await settled()
        status = await command(standin, group, world.bob, "status")
        row = await game_row(bot, table.game_id)

    assert not any(c.startswith("krig:auto:") for c in buttons(stopped.revision))
    assert row.extra.get("autoplay") is None
    assert t("sv", "auto.heading") not in text_of(status)
