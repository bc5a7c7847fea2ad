"""Every house rule of rules §1 through the bot: /krig start offers it, states it, refuses it for
Steal War, /krig rules lists it, and at the table the battle it decides says so; written once for
each option declared as a house rule.
"""

from __future__ import annotations

import functools
from typing import Any

import pytest

from krigbot.bot import KrigBot
from krigbot.engine import Rules
from krigbot.i18n import Lang, t
from krigbot.render.reasons import NAMED
from krigbot.sessions.challenges import Challenges
from krigbot.sessions.results import Refusal
from tests.standin import DiscordStandIn
from tests.standin.fixtures import SampleWorld
from tests.support.house_rules import HOUSE_RULES, with_house_rule
from tests.support.players import (
    ChosenSeeds,
    answer_of,
    challenge,
    challenge_message,
    find_seed,
    flip,
    game_id_of,
    game_row,
    press,
    public_messages,
    replay,
    text_of,
)

DISCORD_LOCALES: dict[str, Lang] = {
    "no": "nb",
    "sv-SE": "sv",
    "da": "da",
    "en-US": "en",
    "en-GB": "en",
}
"""Discord's locales and the catalog each reads."""


def house_rule_choices(standin: DiscordStandIn) -> list[dict[str, Any]]:
    """Return the choices of ``/krig start house_rule:`` as Discord stored them."""
    (krig,) = [c for c in standin.synced_commands() if c["name"] == "krig"]
    (start,) = [o for o in krig["options"] if o["name"] == "start"]
    (house,) = [o for o in start["options"] if o["name"] == "house_rule"]
    choices: list[dict[str, Any]] = house["choices"]
    return choices


def test_krig_start_offers_every_house_rule_and_nothing_else(
    standin: DiscordStandIn, bot: KrigBot
) -> None:
    assert [choice["value"] for choice in house_rule_choices(standin)] == list(HOUSE_RULES)


@pytest.mark.parametrize("key", HOUSE_RULES)
def test_krig_starts_choice_of_a_house_rule_is_named_in_every_language(
    standin: DiscordStandIn, bot: KrigBot, key: str
) -> None:
    (choice,) = [c for c in house_rule_choices(standin) if c["value"] == key]
    # A locale without a catalog (German, say) sees the choice's own name: the English text.
    assert choice["name"] == t("en", f"house.{key}")
    for locale, lang in DISCORD_LOCALES.items():
        shown = choice.get("name_localizations", {}).get(locale, choice["name"])
        assert shown == t(lang, f"house.{key}"), locale


@pytest.mark.parametrize("key", HOUSE_RULES)
async def test_a_challenge_with_a_house_rule_states_it_and_the_game_is_saved_with_it(
    standin: DiscordStandIn, world: SampleWorld, bot: KrigBot, key: str
) -> None:
    message = await challenge_message(
        standin, world.no_channel, world.alice, world.bob, house_rule=key
    )
    assert t("nb", f"rule.{key}") in text_of(message)
    game_id = game_id_of(message)
    await press(standin, message, f"krig:accept:{game_id}", world.bob)

    row = await game_row(bot, game_id)
    assert row.rules[key] is True


@pytest.mark.parametrize("key", HOUSE_RULES)
async def test_a_challenge_without_a_house_rule_does_not_state_it(
    standin: DiscordStandIn, world: SampleWorld, bot: KrigBot, key: str
) -> None:
    message = await challenge_message(standin, world.no_channel, world.alice, world.bob)
    assert t("nb", f"rule.{key}") not in text_of(message)
    row = await game_row(bot, game_id_of(message))
    assert row.rules[key] is False


@pytest.mark.parametrize("key", HOUSE_RULES)
async def test_steal_war_refuses_a_house_rule_in_the_senders_language(
    standin: DiscordStandIn, world: SampleWorld, bot: KrigBot, key: str
) -> None:
    answer = await answer_of(
        standin,
        await challenge(
            standin, world.no_channel, world.alice, world.bob, variant="stjel", house_rule=key
        ),
    )

    assert answer.ephemeral
    assert answer.content == t("nb", f"err.fixed.{key}", variant=t("nb", "variant.stjel.name"))
    assert public_messages(standin, world.no_channel) == []
    assert await bot.storage.games.active_game(world.no_channel.id) is None


@pytest.mark.parametrize("key", HOUSE_RULES)
async def test_krig_rules_lists_a_house_rule_in_the_readers_language(
    standin: DiscordStandIn, world: SampleWorld, bot: KrigBot, key: str
) -> None:
    rec = await standin.slash("krig rules", user=world.carol, channel=world.no_channel)
    answer = await answer_of(standin, rec)

    (embed,) = answer.embeds
    (house,) = [f for f in embed["fields"] if f["name"] == t("en", "rules.house_heading")]
    assert t("en", f"house.{key}") in house["value"]
    assert t("en", f"rule.{key}") in house["value"]


@functools.cache
def battle_seed(key: str) -> int:
    """Return a deal whose first battle is won, without a war, by the house rule ``key``."""
    return find_seed(
        with_house_rule(key), lambda played: played.won_by == key and not played.is_war
    )


def said(key: str) -> str:
    """Return the table's line for a battle the house rule ``key`` decided, in Norwegian."""
    emoji: dict[str, str] = {reason: emoji for reason, emoji in NAMED.items()}
    return f"{emoji[key]} {t('nb', f'table.{key}')}"


@pytest.mark.parametrize("key", HOUSE_RULES)
async def test_with_a_house_rule_its_battle_goes_its_way_and_the_table_says_so(
    standin: DiscordStandIn, world: SampleWorld, bot: KrigBot, seeds: ChosenSeeds, key: str
) -> None:
    seeds.fix(battle_seed(key))
    message = await challenge_message(
        standin, world.no_channel, world.alice, world.bob, house_rule=key
    )
    game_id = game_id_of(message)
    await press(standin, message, f"krig:accept:{game_id}", world.bob)

    answer = await flip(standin, world.no_channel, world.alice)

    game, (played,) = replay(with_house_rule(key), battle_seed(key), 1)
    assert played.won_by == key
    (embed,) = answer.embeds
    assert said(key) in embed["description"]
    row = await game_row(bot, game_id)
    assert row.state == game.to_dict()


@pytest.mark.parametrize("key", HOUSE_RULES)
async def test_without_the_house_rule_the_same_battle_goes_the_other_way_and_nothing_is_said(
    standin: DiscordStandIn, world: SampleWorld, bot: KrigBot, seeds: ChosenSeeds, key: str
) -> None:
    seeds.fix(battle_seed(key))
    message = await challenge_message(standin, world.no_channel, world.alice, world.bob)
    game_id = game_id_of(message)
    await press(standin, message, f"krig:accept:{game_id}", world.bob)

    answer = await flip(standin, world.no_channel, world.alice)

    _, (played,) = replay(Rules.preset("standard"), battle_seed(key), 1)
    _, (with_rule,) = replay(with_house_rule(key), battle_seed(key), 1)
    assert played.winner != with_rule.winner
    assert said(key) not in answer.embeds[0]["description"]


def test_a_challenge_asking_for_two_house_rules_is_refused_naming_both() -> None:
    # /krig start offers one house rule at a time; a challenge built with more is refused.
    with pytest.raises(Refusal) as caught:
        Challenges._rules("standard", 2, dict.fromkeys(HOUSE_RULES, True))
    assert caught.value.key == "err.bad_option"
    reason = caught.value.fields["reason"]
    for key in HOUSE_RULES:
        assert key in reason
