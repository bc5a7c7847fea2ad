"""/krig start: the challenge, its buttons, its refusals, its expiry, and idle games it replaces."""

from __future__ import annotations

import datetime
import re

import pytest

from krigbot.bot import KrigBot
from krigbot.engine import Game, Rules, load_game
from krigbot.i18n import fmt_duration, fmt_list, t
from tests.standin import DiscordStandIn
from tests.standin.fixtures import SampleWorld
from tests.support.bot_fixtures import CHALLENGE_SECONDS
from tests.support.players import (
    DANGER,
    PRIMARY,
    SUCCESS,
    UPDATE_MESSAGE,
    ChosenSeeds,
    Clock,
    answer_of,
    buttons,
    challenge,
    challenge_message,
    enabled_buttons,
    first_shown,
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
from tests.support.texts import pattern

MESSAGE_COMPONENT = 3


async def test_challenge_states_the_rules_in_force(
    standin: DiscordStandIn, world: SampleWorld, bot: KrigBot
) -> None:
    message = await challenge_message(
        standin,
        world.no_channel,
        world.alice,
        world.bob,
        variant="klassisk",
        rounds=200,
        pickup="table",
        shortage="lose",
    )

    shown = text_of(message)
    assert t("nb", "challenge.body", challenger="Alice", players="Bob") in shown
    assert t("nb", "variant.klassisk.name") in shown
    assert t("nb", "rule.face_down", count=3, n=3) in shown
    assert t("nb", "rule.shortage.lose") in shown  # shortage overridden
    assert t("nb", "rule.pickup.table") in shown
    assert t("nb", "rule.max_rounds", count=200, n=200) in shown


async def test_classic_for_three_states_and_plays_the_wide_war(
    standin: DiscordStandIn, world: SampleWorld, bot: KrigBot, seeds: ChosenSeeds
) -> None:
    # rules §8: seed 2 opens with three tied; the first war step is 1 down and 1 up.
    rules = Rules.preset("klassisk", players=3)
    expected = Game.new(rules, 2)
    first = expected.play_round()
    assert [len(down) for down in first.war_steps[0].face_down] == [1, 1, 1]
    seeds.fix(2)

    table = await start_game(
        standin, world.no_channel, world.alice, world.bob, world.carol, variant="klassisk"
    )
    assert t("nb", "rule.wide_war") in text_of(first_shown(table.message))  # the challenge
    await flip(standin, world.no_channel, world.alice)

    row = await game_row(bot, table.game_id)
    assert row.state is not None
    assert load_game(row.state).counts == expected.counts


async def test_classic_for_two_does_not_state_the_wide_war(
    standin: DiscordStandIn, world: SampleWorld, bot: KrigBot
) -> None:
    message = await challenge_message(
        standin, world.no_channel, world.alice, world.bob, variant="klassisk"
    )

    assert t("nb", "rule.wide_war") not in text_of(message)


async def test_challenge_pings_exactly_the_challenged_players(
    standin: DiscordStandIn, world: SampleWorld, bot: KrigBot
) -> None:
    message = await challenge_message(
        standin, world.no_channel, world.alice, world.bob, world.carol
    )

    assert {user.id for user in message.mentions} == {world.bob.id, world.carol.id}
    assert not message.mention_everyone
    assert message.mention_role_ids == []
    assert message.allowed_mentions is not None
    assert message.allowed_mentions.get("parse") == []
    assert {int(u) for u in message.allowed_mentions["users"]} == {world.bob.id, world.carol.id}


async def test_challenge_has_a_green_accept_and_a_red_decline_button(
    standin: DiscordStandIn, world: SampleWorld, bot: KrigBot
) -> None:
    message = await challenge_message(standin, world.no_channel, world.alice, world.bob)
    game_id = game_id_of(message)

    shown = buttons(message)
    assert set(shown) == {f"krig:accept:{game_id}", f"krig:decline:{game_id}"}
    assert shown[f"krig:accept:{game_id}"]["style"] == SUCCESS
    assert shown[f"krig:accept:{game_id}"]["label"] == t("nb", "challenge.accept")
    assert shown[f"krig:decline:{game_id}"]["style"] == DANGER
    assert shown[f"krig:decline:{game_id}"]["label"] == t("nb", "challenge.decline")


async def test_the_game_is_dealt_when_everyone_has_accepted(
    standin: DiscordStandIn, world: SampleWorld, bot: KrigBot
) -> None:
    message = await challenge_message(
        standin, world.no_channel, world.alice, world.bob, world.carol
    )
    game_id = game_id_of(message)

    first = await press(standin, message, f"krig:accept:{game_id}", world.bob)
    assert first.type == UPDATE_MESSAGE
    assert t("nb", "challenge.waiting", players="Carol") in text_of(message)
    assert (await game_row(bot, game_id)).status == "challenge"

    await press(standin, message, f"krig:accept:{game_id}", world.carol)

    shown = text_of(message)
    assert t("nb", "table.title", round=0) in shown
    # Three players: 52 cards, one set aside, 17 each.
    for name in ("Alice", "Bob", "Carol"):
        assert f"{name}: **17**" in shown
    flip_id = flip_button(message)
    assert flip_id == f"krig:flip:{game_id}:0"
    assert buttons(message)[flip_id]["style"] == PRIMARY
    assert buttons(message)[flip_id]["label"] == t("nb", "table.flip")
    assert message.mentions == []  # the table pings nobody
    assert (await game_row(bot, game_id)).status == "running"


async def test_only_the_challenged_can_answer_a_challenge(
    standin: DiscordStandIn, world: SampleWorld, bot: KrigBot
) -> None:
    message = await challenge_message(standin, world.no_channel, world.alice, world.bob)
    game_id = game_id_of(message)
    before = text_of(message)

    for user, custom_id in [
        (world.carol, f"krig:accept:{game_id}"),
        (world.carol, f"krig:decline:{game_id}"),
        (world.alice, f"krig:accept:{game_id}"),
    ]:
        answer = await press(standin, message, custom_id, user)
        assert answer.ephemeral
        assert answer.content == t(user.locale, "err.not_challenged")

    assert answer.content == t("nb", "err.not_challenged")  # alice reads Norwegian
    assert text_of(message) == before
    assert len(buttons(message)) == 2
    assert (await game_row(bot, game_id)).status == "challenge"


async def test_declining_ends_the_challenge_and_removes_the_buttons(
    standin: DiscordStandIn, world: SampleWorld, bot: KrigBot
) -> None:
    message = await challenge_message(standin, world.no_channel, world.alice, world.bob)
    game_id = game_id_of(message)

    answer = await press(standin, message, f"krig:decline:{game_id}", world.bob)

    assert answer.type == UPDATE_MESSAGE
    assert t("nb", "challenge.declined", name="Bob") in text_of(message)
    assert buttons(message) == {}
    assert (await game_row(bot, game_id)).status == "declined"


async def test_an_accepted_player_pressing_accept_again_is_told_to_wait(
    standin: DiscordStandIn, world: SampleWorld, bot: KrigBot
) -> None:
    message = await challenge_message(
        standin, world.no_channel, world.alice, world.bob, world.carol
    )
    game_id = game_id_of(message)
    await press(standin, message, f"krig:accept:{game_id}", world.bob)

    again = await press(standin, message, f"krig:accept:{game_id}", world.bob)

    assert again.ephemeral
    assert again.content == t("sv", "challenge.already_accepted")
    assert (await game_row(bot, game_id)).status == "challenge"


async def test_a_press_that_crossed_a_decline_is_refused(
    standin: DiscordStandIn, world: SampleWorld, bot: KrigBot
) -> None:
    message = await challenge_message(
        standin, world.no_channel, world.alice, world.bob, world.carol
    )
    game_id = game_id_of(message)
    as_carol_saw_it = message.to_json()
    await press(standin, message, f"krig:decline:{game_id}", world.bob)

    # Carol pressed Accept before Bob's decline reached her; her press arrives after it.
    crossed = await standin.send_interaction(
        MESSAGE_COMPONENT,
        {"custom_id": f"krig:accept:{game_id}", "component_type": 2},
        user=world.carol,
        channel=world.no_channel,
        message=message,
        extra={"message": as_carol_saw_it},
    )
    answer = await answer_of(standin, crossed)

    assert answer.ephemeral
    assert answer.content == t("en", "err.challenge_over")
    assert (await game_row(bot, game_id)).status == "declined"
    assert buttons(message) == {}


async def test_an_unanswered_challenge_expires_and_says_so(
    standin: DiscordStandIn, world: SampleWorld, bot: KrigBot, clock: Clock
) -> None:
    message = await challenge_message(standin, world.no_channel, world.alice, world.bob)
    game_id = game_id_of(message)
    watcher = standin.watch(world.no_channel)  # from the challenge shown on

    clock.advance(minutes=5)  # the challenge's lifetime, on the service's clock
    expired = await watcher.next("edit", predicate=lambda e: e.message is message, timeout=5)

    assert pattern("nb", "challenge.expired").search(text_of(expired.revision))
    assert buttons(expired.revision) == {}
    assert (await game_row(bot, game_id)).status == "expired"


async def test_a_press_after_the_deadline_is_refused_and_the_challenge_shown_expired(
    standin: DiscordStandIn, world: SampleWorld, quick_bot: KrigBot
) -> None:
    clock = Clock()
    quick_bot.service.registry.clock = clock
    message = await challenge_message(standin, world.no_channel, world.alice, world.bob)
    game_id = game_id_of(message)
    watcher = standin.watch(world.no_channel)
    clock.advance(minutes=6)  # the press reaches the bot after the challenge's lifetime

    answer = await press(standin, message, f"krig:accept:{game_id}", world.bob)

    assert answer.ephemeral
    assert answer.content == t("sv", "err.challenge_over")
    assert (await game_row(quick_bot, game_id)).status == "expired"
    expired = await watcher.next(
        "edit", predicate=lambda e: e.message is message, timeout=CHALLENGE_SECONDS + 5
    )
    assert pattern("nb", "challenge.expired").search(text_of(expired.revision))
    assert buttons(expired.revision) == {}


async def test_a_challenge_can_be_accepted_until_five_minutes_have_passed(
    standin: DiscordStandIn, world: SampleWorld, bot: KrigBot, clock: Clock
) -> None:
    late = await challenge_message(standin, world.no_channel, world.alice, world.bob)
    clock.advance(minutes=5)
    refused = await press(standin, late, f"krig:accept:{game_id_of(late)}", world.bob)
    assert refused.ephemeral
    assert refused.content == t("sv", "err.challenge_over")

    in_time = await challenge_message(standin, world.no_channel, world.alice, world.bob)
    clock.advance(minutes=4, seconds=59)
    accepted = await press(standin, in_time, f"krig:accept:{game_id_of(in_time)}", world.bob)
    assert accepted.type == UPDATE_MESSAGE
    assert t("nb", "table.title", round=0) in text_of(in_time)


@pytest.mark.parametrize("who", ["yourself", "a bot", "the same person twice"])
async def test_an_impossible_challenge_is_refused_privately(
    standin: DiscordStandIn, world: SampleWorld, bot: KrigBot, who: str
) -> None:
    robot = standin.add_user("robot", "Robot", bot=True)
    standin.add_member(world.no_guild, robot)
    opponents = {
        "yourself": (world.alice,),
        "a bot": (robot,),
        "the same person twice": (world.bob, world.bob),
    }[who]
    expected = {
        "yourself": t("nb", "err.self"),
        "a bot": t("nb", "err.bot"),
        "the same person twice": t("nb", "err.duplicate", name="Bob"),
    }[who]

    answer = await answer_of(
        standin, await challenge(standin, world.no_channel, world.alice, *opponents)
    )

    assert answer.ephemeral
    assert answer.content == expected
    assert public_messages(standin, world.no_channel) == []
    assert await bot.storage.games.game_count() == 0


async def test_a_second_challenge_in_a_busy_channel_links_to_the_game_there(
    standin: DiscordStandIn, world: SampleWorld, bot: KrigBot
) -> None:
    table = await start_game(standin, world.no_channel, world.alice, world.bob)

    answer = await answer_of(
        standin, await challenge(standin, world.no_channel, world.carol, world.bob)
    )

    assert answer.ephemeral
    link = (
        f"https://discord.com/channels/{world.no_guild.id}/{world.no_channel.id}/{table.message.id}"
    )
    assert answer.content == t("en", "err.busy", link=link)
    assert len(public_messages(standin, world.no_channel)) == 1
    assert await bot.storage.games.game_count() == 1


async def test_a_pending_challenge_also_keeps_the_channel_busy(
    standin: DiscordStandIn, world: SampleWorld, bot: KrigBot
) -> None:
    message = await challenge_message(standin, world.no_channel, world.alice, world.bob)

    answer = await answer_of(
        standin, await challenge(standin, world.no_channel, world.carol, world.bob)
    )

    assert answer.ephemeral
    link = re.compile(rf"\S+/{world.no_channel.id}/{message.id}")
    assert pattern("en", "err.busy", link=link).fullmatch(answer.content)


async def test_another_channel_is_free_while_one_is_busy(
    standin: DiscordStandIn, world: SampleWorld, bot: KrigBot
) -> None:
    await start_game(standin, world.no_channel, world.alice, world.bob)

    message = await challenge_message(standin, world.sv_channel, world.alice, world.bob)

    assert t("sv", "challenge.body", challenger="Alice", players="Bob") in text_of(message)


async def test_teams_need_exactly_four_players(
    standin: DiscordStandIn, world: SampleWorld, bot: KrigBot
) -> None:
    answer = await answer_of(
        standin, await challenge(standin, world.no_channel, world.alice, world.bob, variant="lag")
    )

    assert answer.ephemeral
    assert answer.content == t("nb", "err.players", variant=t("nb", "variant.lag.name"), n=4)
    assert await bot.storage.games.game_count() == 0
    in_english = await answer_of(
        standin, await challenge(standin, world.no_channel, world.carol, world.bob, variant="lag")
    )
    assert in_english.content == t("en", "err.players", variant=t("en", "variant.lag.name"), n=4)

    dave = standin.add_user("dave", "Dave", locale="da")
    standin.add_member(world.no_guild, dave)
    message = await challenge_message(
        standin, world.no_channel, world.alice, world.bob, world.carol, dave, variant="lag"
    )
    assert t(
        "nb",
        "rule.teams",
        team1=fmt_list(["Alice", "Carol"], "nb"),
        team2=fmt_list(["Bob", "Dave"], "nb"),
    ) in text_of(message)


async def test_a_new_challenge_replaces_a_game_idle_for_24_hours(
    standin: DiscordStandIn, world: SampleWorld, bot: KrigBot, clock: Clock
) -> None:
    old = await start_game(standin, world.no_channel, world.alice, world.bob)
    await flip(standin, world.no_channel, world.alice)
    clock.advance(hours=24, seconds=1)

    message = await challenge_message(standin, world.no_channel, world.carol, world.bob)

    idle = fmt_duration(datetime.timedelta(hours=24), "nb")
    assert t("nb", "game.abandoned", time=idle) in message.content
    abandoned = await game_row(bot, old.game_id)
    assert abandoned.status == "abandoned"
    assert abandoned.result is None
    assert await bot.storage.stats.leaderboard(world.no_guild.id) == []
    # The idle game's tables cannot be played any more: their buttons are grey.
    await settled()
    tables = public_messages(standin, world.no_channel)[:-1]
    assert [enabled_buttons(table) for table in tables] == [[], []]
    assert flip_button(old.message) == f"krig:flip:{old.game_id}:0"


async def test_a_game_idle_for_less_than_24_hours_still_holds_the_channel(
    standin: DiscordStandIn, world: SampleWorld, bot: KrigBot, clock: Clock
) -> None:
    old = await start_game(standin, world.no_channel, world.alice, world.bob)
    clock.advance(hours=23, minutes=59)

    answer = await answer_of(
        standin, await challenge(standin, world.no_channel, world.carol, world.bob)
    )

    assert answer.ephemeral
    assert pattern("en", "err.busy").match(answer.content)
    assert (await game_row(bot, old.game_id)).status == "running"
