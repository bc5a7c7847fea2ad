"""What the bot tells, read closely: each fighter's war step, the result, the durations it names."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any

from krigbot.bot import KrigBot
from krigbot.engine import Round, Rules
from krigbot.i18n import card_label, fmt_duration, t
from tests.standin import DiscordStandIn
from tests.standin.fixtures import SampleWorld
from tests.support.bot_fixtures import CHALLENGE_SECONDS
from tests.support.handsfree import command, running_bot
from tests.support.players import (
    ChosenSeeds,
    Clock,
    answer_of,
    challenge_message,
    flip,
    game_id_of,
    replay,
    start_game,
    text_of,
)
from tests.support.texts import pattern

NAMES = ("Alice", "Bob", "Carol")


def fighter_line(key: str, **fields: Any) -> str:
    """Return a fighter's line of a war step as the Norwegian table shows it."""
    return "• " + t("nb", f"table.fighter.{key}", **fields)


def step_heading(number: int) -> str:
    return t("nb", "table.war_step_mixed", n=number)


async def test_a_short_fighter_under_lose_places_their_cards_down_and_the_other_nothing(
    standin: DiscordStandIn, world: SampleWorld, bot: KrigBot, seeds: ChosenSeeds
) -> None:
    # Five down: round 4 ties twice; Alice has 4 cards left for a step that needs 6.
    seed, rounds = 8133, 4
    seeds.fix(seed)
    await start_game(standin, world.no_channel, world.alice, world.bob, variant="fem")
    _, played = replay(Rules.preset("fem"), seed, rounds)
    step = played[-1].war_steps[1]
    assert step.knocked_out == (0,)
    assert (len(step.face_down[0]), len(step.face_down[1])) == (4, 0)

    answer = await flip(standin, world.no_channel, world.alice, count=rounds)

    lines = answer.embeds[0]["description"].splitlines()
    heading = lines.index(step_heading(2))
    assert lines[heading + 1 : heading + 3] == [
        fighter_line("short_out", count=4, name="Alice", n=4),
        fighter_line("unneeded", name="Bob", out="Alice"),
    ]
    assert t("nb", "table.eliminated", name="Alice") in lines


async def test_a_short_fighter_under_last_card_is_told_with_the_cards_they_placed(
    standin: DiscordStandIn, world: SampleWorld, bot: KrigBot, seeds: ChosenSeeds
) -> None:
    # Classic: in round 12 Bob has 2 cards for a step of 3 down and 1 up.
    seed, rounds = 4511, 12
    seeds.fix(seed)
    await start_game(standin, world.no_channel, world.alice, world.bob, variant="klassisk")
    _, played = replay(Rules.preset("klassisk"), seed, rounds)
    (step,) = played[-1].war_steps
    alice_up, bob_up = (card_label(card, "nb") for card in step.face_up if card is not None)

    answer = await flip(standin, world.no_channel, world.bob, count=rounds)

    lines = answer.embeds[0]["description"].splitlines()
    heading = lines.index(step_heading(1))
    assert lines[heading + 1 : heading + 3] == [
        fighter_line("placed", count=3, name="Alice", n=3, card=alice_up),
        fighter_line("last_card", count=1, name="Bob", n=1, card=bob_up),
    ]
    three_down = pattern("nb", "table.war_step", count=3, down=3)
    assert not any(three_down.search(line) for line in lines)


def three_player_round() -> tuple[int, Round]:
    """Return the seed of a Classic deal for three whose round 2 has a fighter standing."""
    return 611, replay(Rules.preset("klassisk", players=3), 611, 2)[1][-1]


async def test_with_three_players_a_fighter_with_no_cards_keeps_their_standing_card(
    standin: DiscordStandIn, world: SampleWorld, bot: KrigBot, seeds: ChosenSeeds
) -> None:
    seed, played = three_player_round()
    third, fourth = played.war_steps[2], played.war_steps[3]
    assert len(third.face_down[1]) == 2  # Carol runs short
    assert fourth.face_up[1] is None  # and has nothing left to turn
    seeds.fix(seed)
    await start_game(
        standin, world.no_channel, world.alice, world.bob, world.carol, variant="klassisk"
    )

    answer = await flip(standin, world.no_channel, world.carol, count=2)

    lines = answer.embeds[0]["description"].splitlines()
    carol_last = card_label(third.compared[1], "nb")
    alice_fourth = card_label(fourth.compared[0], "nb")
    assert lines[lines.index(step_heading(3)) + 2] == fighter_line(
        "last_card", count=2, name="Carol", n=2, card=carol_last
    )
    assert lines[lines.index(step_heading(4)) + 1 : lines.index(step_heading(4)) + 3] == [
        fighter_line("placed", count=3, name="Alice", n=3, card=alice_fourth),
        fighter_line("standing", name="Carol", card=carol_last),
    ]


# ------------------------------------------------------------------------ the result


async def test_a_draw_gets_no_trophy(
    standin: DiscordStandIn, world: SampleWorld, bot: KrigBot, seeds: ChosenSeeds
) -> None:
    seed = 4  # two rounds, one each: 26–26 at the round limit
    seeds.fix(seed)
    await start_game(standin, world.no_channel, world.alice, world.bob, rounds=2)

    answer = await flip(standin, world.no_channel, world.alice, count=2)

    result = next(f for f in answer.embeds[0]["fields"] if f["name"] == t("nb", "over.title"))
    assert result["value"].splitlines()[0] == t("nb", "over.draw")
    assert "🏆" not in text_of(answer)


async def test_a_team_holding_every_card_is_a_plural_subject(
    standin: DiscordStandIn, world: SampleWorld, bot: KrigBot, seeds: ChosenSeeds
) -> None:
    guild = standin.add_guild("War club", locale="en-US", owner=world.owner)
    channel = standin.add_channel(guild, "war")
    dave = standin.add_user("dave", "Dave", locale="en-GB")
    for user in (world.alice, world.bob, world.carol, dave):
        standin.add_member(guild, user)
    seed = 2532  # Alice and Carol take every card in round 13, both still holding some
    seeds.fix(seed)
    await start_game(standin, channel, world.alice, world.bob, world.carol, dave, variant="lag")

    answer = await flip(standin, channel, world.alice, count=13)

    shown = text_of(answer)
    assert t("en", "over.reason.all_cards", count=2, name="Alice and Carol") in shown
    # Exact English on purpose: the plural form must read "have", which no key can show.
    assert "Alice and Carol have all the cards" in shown
    assert "Alice and Carol has" not in shown


# ------------------------------------------------------------------------ durations


async def test_an_expired_challenge_names_the_configured_lifetime(
    standin: DiscordStandIn, world: SampleWorld, quick_bot: KrigBot
) -> None:
    clock = Clock()
    quick_bot.service.registry.clock = clock
    message = await challenge_message(standin, world.no_channel, world.alice, world.bob)
    watcher = standin.watch(world.no_channel)  # from the challenge shown on

    clock.advance(seconds=CHALLENGE_SECONDS)
    expired = await watcher.next("edit", predicate=lambda e: e.message is message, timeout=5)

    lifetime = fmt_duration(timedelta(seconds=CHALLENGE_SECONDS), "nb")
    assert lifetime == "0,5 sekunder"  # exact on purpose: the configured half second, as read
    assert t("nb", "challenge.expired", time=lifetime) in text_of(expired.revision)
    assert t("nb", "unit.minutes", count=5, n=5) not in text_of(expired.revision)


async def test_a_game_idle_for_an_hour_and_a_half_is_said_to_be_so(
    standin: DiscordStandIn, world: SampleWorld, db_path: Path
) -> None:
    async with running_bot(standin, db_path, idle_hours=1.5) as bot:
        clock = Clock()
        bot.service.registry.clock = clock
        await start_game(standin, world.no_channel, world.alice, world.bob)
        await flip(standin, world.no_channel, world.alice)
        clock.advance(hours=1.5, seconds=1)

        message = await challenge_message(standin, world.no_channel, world.carol, world.bob)

    idle = fmt_duration(timedelta(hours=1.5), "nb")
    assert t("nb", "game.abandoned", time=idle) in (message.content or "")


# ------------------------------------------------------------------ a withdrawn challenge

MESSAGE_COMPONENT = 3


async def test_a_press_on_a_withdrawn_challenge_says_it_was_withdrawn(
    standin: DiscordStandIn, world: SampleWorld, bot: KrigBot
) -> None:
    message = await challenge_message(standin, world.no_channel, world.alice, world.bob)
    game_id = game_id_of(message)
    as_bob_saw_it = message.to_json()
    await command(standin, world.no_channel, world.alice, "cancel")

    # Bob pressed Accept before the withdrawal reached him; his press arrives after it.
    crossed = await standin.send_interaction(
        MESSAGE_COMPONENT,
        {"custom_id": f"krig:accept:{game_id}", "component_type": 2},
        user=world.bob,
        channel=world.no_channel,
        message=message,
        extra={"message": as_bob_saw_it},
    )
    answer = await answer_of(standin, crossed)

    assert answer.ephemeral
    assert answer.content == t("sv", "err.challenge_withdrawn")
    assert answer.content != t("sv", "err.challenge_over")


async def test_a_moderator_calls_a_challenge_off_and_history_says_it_was_never_dealt(
    standin: DiscordStandIn, world: SampleWorld, bot: KrigBot
) -> None:
    message = await challenge_message(standin, world.no_channel, world.alice, world.bob)
    watcher = standin.watch(world.no_channel)  # from the challenge shown on

    answer = await command(standin, world.no_channel, world.moderator, "cancel")

    assert answer.content == t("nb", "cancel.challenge", name="Mona Mod")
    edited = await watcher.next("edit", predicate=lambda e: e.message is message)
    assert t("nb", "challenge.cancelled_by", name="Mona Mod") in text_of(edited.revision)
    history = await command(standin, world.no_channel, world.alice, "history")
    (line,) = history.embeds[0]["description"].splitlines()
    assert line.endswith(" · Alice – Bob · " + t("nb", "history.cancelled_challenge"))


# ------------------------------------------------------------------------ Steal War's rules

STEAL_RULES = [t("en", f"rule.steal.{key}") for key in ("loot", "steal", "refill")]
PLAIN_PICKUP = [
    t("en", f"rule.pickup.{pickup}") for pickup in ("winner_first", "table", "shuffled")
]


async def test_steal_wars_rules_tell_of_loot_piles_stealing_and_the_top_card(
    standin: DiscordStandIn, world: SampleWorld, bot: KrigBot
) -> None:
    rules = await command(standin, world.no_channel, world.carol, "rules", variant="stjel")
    english = standin.add_guild("Steal club", locale="en-GB", owner=world.owner)
    channel = standin.add_channel(english, "steal")
    for user in (world.alice, world.bob, world.carol):
        standin.add_member(english, user)
    challenge = await challenge_message(standin, channel, world.alice, world.bob, variant="stjel")
    status = await command(standin, channel, world.carol, "status")  # Carol reads English

    for shown in (text_of(rules), text_of(challenge), text_of(status)):
        for line in STEAL_RULES:
            assert line in shown
        assert not any(pickup in shown for pickup in PLAIN_PICKUP)


# ---------------------------------------------------------------------------- history


async def test_history_tells_a_quick_game_by_the_tricks_it_was_played_to(
    standin: DiscordStandIn, world: SampleWorld, bot: KrigBot, seeds: ChosenSeeds
) -> None:
    seeds.fix(5)
    await start_game(standin, world.no_channel, world.alice, world.bob, variant="hurtig")
    while "🏆" not in text_of(await flip(standin, world.no_channel, world.alice, count=50)):
        pass

    history = await command(standin, world.no_channel, world.alice, "history")

    (line,) = history.embeds[0]["description"].splitlines()
    assert f" · {t('nb', 'history.reason.target', count=10, n=10)} · " in line
