"""Every house rule of rules §1 through the bot: /krig start offers it, states it, refuses it for
Steal War, and /krig rules lists it; written once for each option declared as a house rule.

What a house rule does to a game at the table is tested in its own file
(tests/cogs/test_peace.py, tests/cogs/test_two_beats_ace.py).
"""

from __future__ import annotations

from typing import Any

import pytest

from krigbot.bot import KrigBot
from krigbot.i18n import Lang, t
from tests.standin import DiscordStandIn
from tests.standin.fixtures import SampleWorld
from tests.support.house_rules import HOUSE_RULES
from tests.support.players import (
    answer_of,
    challenge,
    challenge_message,
    game_id_of,
    game_row,
    press,
    public_messages,
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
