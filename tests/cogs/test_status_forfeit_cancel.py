"""/krig status, /krig forfeit with its confirmation, and /krig cancel."""

from __future__ import annotations

from krigbot.bot import KrigBot
from krigbot.engine import load_game
from krigbot.i18n import t
from tests.standin import DiscordStandIn, InteractionResponse, Message, User
from tests.standin.fixtures import SampleWorld
from tests.support.players import (
    DANGER,
    SECONDARY,
    UPDATE_MESSAGE,
    answer_of,
    buttons,
    challenge_message,
    enabled_buttons,
    flip,
    flip_button,
    game_id_of,
    game_row,
    press,
    public_messages,
    settled,
    start_game,
    text_of,
)


async def command(
    standin: DiscordStandIn, world: SampleWorld, name: str, user: User
) -> InteractionResponse:
    """Run a /krig subcommand without options in the Norwegian channel."""
    rec = await standin.slash(f"krig {name}", user=user, channel=world.no_channel)
    return await answer_of(standin, rec)


def forfeit_ids(game_id: int, user: User) -> tuple[str, str]:
    """Return the custom ids of the confirm and call-off buttons."""
    return f"krig:forfeit:{game_id}:{user.id}:yes", f"krig:forfeit:{game_id}:{user.id}:no"


# ------------------------------------------------------------------------------ status


async def test_status_where_there_is_no_game_says_so_to_the_asker(
    standin: DiscordStandIn, world: SampleWorld, bot: KrigBot
) -> None:
    answer = await command(standin, world, "status", world.bob)

    assert answer.ephemeral
    assert answer.content == t("sv", "status.none")


async def test_status_of_a_challenge_says_it_waits_for_answers(
    standin: DiscordStandIn, world: SampleWorld, bot: KrigBot
) -> None:
    await challenge_message(standin, world.no_channel, world.alice, world.bob, variant="fem")

    answer = await command(standin, world, "status", world.alice)

    assert answer.ephemeral
    shown = text_of(answer)
    assert t("nb", "status.challenge") in shown
    assert t("nb", "rule.face_down", count=5, n=5) in shown


async def test_status_of_a_running_game_shows_round_counts_and_rules_in_the_askers_language(
    standin: DiscordStandIn, world: SampleWorld, bot: KrigBot
) -> None:
    table = await start_game(standin, world.no_channel, world.alice, world.bob)
    await flip(standin, world.no_channel, world.alice, count=3)
    counts = load_game((await game_row(bot, table.game_id)).state or {}).counts

    answer = await command(standin, world, "status", world.carol)

    assert answer.ephemeral
    shown = text_of(answer)
    assert t("en", "status.title") in shown
    assert t("en", "status.round", round=3) in shown
    assert f"Alice: **{counts[0]}**" in shown
    assert f"Bob: **{counts[1]}**" in shown
    assert t("en", "rule.face_down", count=1, n=1) in shown
    assert t("en", "game.id", game=table.game_id) in shown


# ----------------------------------------------------------------------------- forfeit


async def ask_to_forfeit(
    standin: DiscordStandIn, world: SampleWorld, user: User
) -> tuple[InteractionResponse, Message]:
    answer = await command(standin, world, "forfeit", user)
    assert answer.message is not None
    return answer, answer.message


async def test_forfeit_asks_for_confirmation_and_changes_nothing_yet(
    standin: DiscordStandIn, world: SampleWorld, bot: KrigBot
) -> None:
    table = await start_game(standin, world.no_channel, world.alice, world.bob)

    answer, _ = await ask_to_forfeit(standin, world, world.alice)

    assert answer.ephemeral
    assert answer.content == t("nb", "forfeit.confirm")
    yes, no = forfeit_ids(table.game_id, world.alice)
    shown = buttons(answer)
    assert (shown[yes]["label"], shown[yes]["style"]) == (t("nb", "forfeit.yes"), DANGER)
    assert (shown[no]["label"], shown[no]["style"]) == (t("nb", "forfeit.no"), SECONDARY)
    assert (await game_row(bot, table.game_id)).status == "running"
    assert len(public_messages(standin, world.no_channel)) == 1


async def test_a_confirmed_forfeit_ends_a_two_player_game_and_the_other_wins(
    standin: DiscordStandIn, world: SampleWorld, bot: KrigBot
) -> None:
    table = await start_game(standin, world.no_channel, world.alice, world.bob)
    await flip(standin, world.no_channel, world.alice)
    _, confirm = await ask_to_forfeit(standin, world, world.bob)
    watcher = standin.watch(world.no_channel)

    answer = await press(standin, confirm, forfeit_ids(table.game_id, world.bob)[0], world.bob)

    assert answer.type == UPDATE_MESSAGE
    assert confirm.content == t("sv", "forfeit.confirmed")  # Bob's own message, in Swedish
    assert buttons(confirm) == {}
    announced = await watcher.next("create", predicate=lambda e: not e.message.ephemeral)
    shown = text_of(announced.revision)  # everyone's message, in the server's Norwegian
    assert t("nb", "forfeit.done", name="Bob") in shown
    assert "🏆 " + t("nb", "over.winner", name="**Alice**") in shown
    # The title says it; the result does not repeat it.
    result = shown.replace(t("nb", "forfeit.done", name="Bob"), "", 1)
    assert t("nb", "over.reason.forfeit", name="Bob") not in result
    assert announced.message.mentions == []
    row = await game_row(bot, table.game_id)
    assert row.status == "finished"
    (winner,) = await bot.storage.stats.leaderboard(world.no_guild.id, limit=1)
    assert (winner.user_id, winner.wins) == (world.alice.id, 1)


async def test_keep_playing_leaves_the_game_running(
    standin: DiscordStandIn, world: SampleWorld, bot: KrigBot
) -> None:
    table = await start_game(standin, world.no_channel, world.alice, world.bob)
    _, confirm = await ask_to_forfeit(standin, world, world.alice)

    await press(standin, confirm, forfeit_ids(table.game_id, world.alice)[1], world.alice)

    assert confirm.content == t("nb", "forfeit.kept")
    assert buttons(confirm) == {}
    assert (await game_row(bot, table.game_id)).status == "running"
    assert len(public_messages(standin, world.no_channel)) == 1


async def test_someone_not_playing_cannot_forfeit(
    standin: DiscordStandIn, world: SampleWorld, bot: KrigBot
) -> None:
    table = await start_game(standin, world.no_channel, world.alice, world.bob)

    answer = await command(standin, world, "forfeit", world.carol)

    assert answer.ephemeral
    assert answer.content == t("en", "err.not_player")
    assert buttons(answer) == {}
    assert (await game_row(bot, table.game_id)).status == "running"


async def test_forfeit_where_there_is_no_game_says_so(
    standin: DiscordStandIn, world: SampleWorld, bot: KrigBot
) -> None:
    answer = await command(standin, world, "forfeit", world.alice)

    assert answer.ephemeral
    assert answer.content == t("nb", "err.no_game")


async def test_a_player_who_forfeits_a_three_player_game_is_out_and_the_rest_play_on(
    standin: DiscordStandIn, world: SampleWorld, bot: KrigBot
) -> None:
    table = await start_game(standin, world.no_channel, world.alice, world.bob, world.carol)
    _, confirm = await ask_to_forfeit(standin, world, world.carol)
    watcher = standin.watch(world.no_channel)

    await press(standin, confirm, forfeit_ids(table.game_id, world.carol)[0], world.carol)

    announced = await watcher.next("create", predicate=lambda e: not e.message.ephemeral)
    shown = text_of(announced.revision)
    assert t("nb", "forfeit.done", name="Carol") in shown
    assert "Alice: **" in shown  # the counts of those still playing
    assert (await game_row(bot, table.game_id)).status == "running"
    # It is the table now, at the bottom: its Flip button is the one that works.
    await settled()
    assert enabled_buttons(announced.message) == [f"krig:flip:{table.game_id}:0"]
    assert enabled_buttons(table.message) == []
    out = await flip(standin, world.no_channel, world.carol)
    assert out.ephemeral
    assert out.content == t("en", "err.out_of_game")
    played = await press(standin, announced.message, flip_button(announced.message), world.alice)
    assert played.embeds[0]["title"] == t("nb", "table.title", round=1)


# ------------------------------------------------------------------------------ cancel


async def test_a_moderator_can_cancel_a_running_game_which_then_counts_for_nobody(
    standin: DiscordStandIn, world: SampleWorld, bot: KrigBot
) -> None:
    table = await start_game(standin, world.no_channel, world.alice, world.bob)
    newest = (await flip(standin, world.no_channel, world.alice, count=5)).message
    assert newest is not None

    answer = await command(standin, world, "cancel", world.moderator)

    assert not answer.ephemeral
    assert answer.content == t("nb", "cancel.done", name="Mona Mod")
    row = await game_row(bot, table.game_id)
    assert (row.status, row.result) == ("cancelled", None)
    assert await bot.storage.stats.leaderboard(world.no_guild.id) == []
    await settled()
    # Neither table can be played any more: their Flip buttons are grey.
    assert flip_button(newest) == f"krig:flip:{table.game_id}:5"
    assert enabled_buttons(newest) == []
    assert enabled_buttons(table.message) == []
    # The newest table says so, and who: where it stood, not "press Flip".
    assert t("nb", "cancel.done", name="Mona Mod") in text_of(newest)
    assert t("nb", "table.title", round=5) in text_of(newest)
    # The channel is free again.
    await challenge_message(standin, world.no_channel, world.bob, world.carol)


async def test_a_table_cancelled_before_its_first_round_says_so_not_press_flip(
    standin: DiscordStandIn, world: SampleWorld, bot: KrigBot
) -> None:
    table = await start_game(standin, world.no_channel, world.alice, world.bob)

    await command(standin, world, "cancel", world.moderator)
    await settled()

    assert enabled_buttons(table.message) == []
    shown = text_of(table.message)
    assert t("nb", "cancel.done", name="Mona Mod") in shown
    assert t("nb", "table.dealt") not in shown


async def test_the_challenger_can_withdraw_a_challenge_before_everyone_accepted(
    standin: DiscordStandIn, world: SampleWorld, bot: KrigBot
) -> None:
    message = await challenge_message(standin, world.no_channel, world.alice, world.bob)
    game_id = game_id_of(message)
    watcher = standin.watch(world.no_channel)

    answer = await command(standin, world, "cancel", world.alice)

    assert answer.content == t(
        "nb", "cancel.withdrawn", name="Alice"
    )  # no game was dealt to cancel
    withdrawn = await watcher.next("edit", predicate=lambda e: e.message is message)
    assert t("nb", "challenge.cancelled") in text_of(withdrawn.revision)
    assert buttons(withdrawn.revision) == {}
    assert (await game_row(bot, game_id)).status == "cancelled"


async def test_the_challenger_cannot_cancel_once_everyone_accepted(
    standin: DiscordStandIn, world: SampleWorld, bot: KrigBot
) -> None:
    table = await start_game(standin, world.no_channel, world.alice, world.bob)

    answer = await command(standin, world, "cancel", world.alice)

    assert answer.ephemeral
    assert answer.content == t("nb", "err.cancel_denied")
    assert (await game_row(bot, table.game_id)).status == "running"


async def test_a_challenged_player_cannot_cancel(
    standin: DiscordStandIn, world: SampleWorld, bot: KrigBot
) -> None:
    message = await challenge_message(standin, world.no_channel, world.alice, world.bob)

    answer = await command(standin, world, "cancel", world.bob)

    assert answer.ephemeral
    assert answer.content == t("sv", "err.cancel_denied")
    assert (await game_row(bot, game_id_of(message))).status == "challenge"
    assert len(buttons(message)) == 2


async def test_cancel_where_there_is_no_game_says_so(
    standin: DiscordStandIn, world: SampleWorld, bot: KrigBot
) -> None:
    answer = await command(standin, world, "cancel", world.moderator)

    assert answer.ephemeral
    assert answer.content == t("nb", "err.no_game")
