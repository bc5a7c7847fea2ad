"""Steal War at the table (rules §10): private looks, steals, top cards, time-outs, restarts."""

from __future__ import annotations

import dataclasses
import re
from datetime import UTC, datetime
from pathlib import Path

import pytest

from krigbot.adapter.steal import top_offer
from krigbot.bot import KrigBot
from krigbot.engine import OPTION_KEYS, Rules
from krigbot.engine.cards import card_code, card_value, parse_card
from krigbot.engine.events import TopChoice
from krigbot.engine.rules import played_options
from krigbot.engine.steal import StealGame
from krigbot.engine.variant import VARIANTS
from krigbot.i18n import LANGS, card_label, catalog, fmt_list, t
from krigbot.render.steal import in_war, look_text, steal_table_embed
from tests.standin import DiscordStandIn
from tests.standin.fixtures import SampleWorld
from tests.support.handsfree import running_bot
from tests.support.players import (
    PRIMARY,
    SUCCESS,
    UPDATE_MESSAGE,
    ChosenSeeds,
    answer_of,
    buttons,
    challenge,
    embed_text,
    flip,
    flip_button,
    game_id_of,
    game_row,
    press,
    public_messages,
    start_game,
    text_of,
)
from tests.support.rows import stored_row
from tests.support.steal_war import (
    QUICK,
    STEAL_BY_DEFAULT,
    STEAL_ONE,
    TWO,
    Plan,
    first_choice,
    let_the_choice_time_out,
    look,
    names,
    play_to_choice,
    shown_in,
    start_steal_war,
    steal_line,
    table_id,
    top_buttons,
)
from tests.support.texts import pattern

THREE = Rules.preset("stjel", players=3)
NOW = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)
ROW = stored_row(TWO, (1, 2), ("Alice", "Bob"), at=NOW)
"""A stored game row for rendering without a bot."""


STEAL_TWO = first_choice(THREE, lambda choice: len(choice.can_steal) == 2)


def expected_game(plan: Plan) -> StealGame:
    """Return the engine's own game after the moves the tests make up to the plan's choice."""
    game = StealGame.new(plan.rules, plan.seed)
    for card in plan.tops:
        assert game.begin_battle() is not None
        if card is not None:
            (top,) = game.pending()
            game.put_on_top(top.seat, card)
    assert game.begin_battle() is None
    return game


# ------------------------------------------------------------------------------ driving


def code(plan: Plan) -> str:
    """Return the code of the card the plan's choice is about."""
    return card_code(plan.choice.card)


# -------------------------------------------------------------------------------- tests


async def test_a_matching_card_is_shown_privately_and_steals_the_pile(
    standin: DiscordStandIn, world: SampleWorld, bot: KrigBot, seeds: ChosenSeeds
) -> None:
    plan = STEAL_ONE
    table, players = await start_steal_war(standin, world, seeds, plan)
    await play_to_choice(standin, table, plan, players)
    thief, victim = plan.choice.seat, plan.choice.can_steal[0]
    card = card_label(plan.choice.card, "nb")
    expected = expected_game(plan)
    pile = len(expected.loot[victim])

    shown = text_of(table)
    assert t("nb", "steal.waiting", names=f"**{names(plan)[thief]}**") in shown
    assert pattern("nb", "steal.deadline", when=re.compile(r"<t:\d+:R>")).search(shown)
    assert not any(c.startswith("krig:flip:") for c in buttons(table))
    answer = await look(standin, table, players[thief])

    mine = players[thief].locale
    assert answer.ephemeral
    assert answer.content.startswith(
        t(mine, "steal.your_card", card=card_label(plan.choice.card, mine))
    )
    steal_id = f"krig:steal:{table_id(table)}:{thief}:{code(plan)}:{victim}"
    label = t(mine, "steal.steal_from", name=names(plan)[victim], n=pile)
    assert buttons(answer)[steal_id]["label"] == label
    assert buttons(answer)[steal_id]["style"] == SUCCESS
    assert f"krig:play:{table_id(table)}:{thief}:{code(plan)}" in buttons(answer)
    assert all(card not in text_of(m) for m in public_messages(standin, world.no_channel))

    assert answer.message is not None
    stolen = await press(standin, answer.message, steal_id, players[thief])

    assert stolen.type == UPDATE_MESSAGE
    assert stolen.content.startswith(t(mine, "steal.stole", count=1, victims=names(plan)[victim]))
    thief_name, victim_name = names(plan)[thief], names(plan)[victim]
    stole = t(
        "nb", "table.steal", count=1, name=f"**{thief_name}**", victims=victim_name, card=card
    )
    assert stole in text_of(table)
    expected.steal(thief, [victim])
    row = await game_row(bot, table_id(table))
    assert row.state == expected.to_dict()


async def test_one_card_steals_two_matching_piles_at_once(
    standin: DiscordStandIn, world: SampleWorld, bot: KrigBot, seeds: ChosenSeeds
) -> None:
    plan = STEAL_TWO
    table, players = await start_steal_war(standin, world, seeds, plan)
    await play_to_choice(standin, table, plan, players)
    thief = plan.choice.seat
    victims = list(plan.choice.can_steal)
    expected = expected_game(plan)
    both = sum(len(expected.loot[v]) for v in victims)
    bystander = next(s for s in range(3) if s != thief)

    waiting = await look(standin, table, players[bystander])
    answer = await look(standin, table, players[thief])

    assert waiting.ephemeral
    assert t(players[bystander].locale, "steal.will_play") in waiting.content
    assert buttons(waiting) == {}
    every = f"krig:steal:{table_id(table)}:{thief}:{code(plan)}:{victims[0]}-{victims[1]}"
    mine = players[thief].locale
    offer = t(
        mine, "steal.can_steal", count=2, victims=fmt_list([names(plan)[v] for v in victims], mine)
    )
    assert offer in answer.content  # two piles, said in the plural
    labels = [b["label"] for b in buttons(answer).values()]
    assert labels == [
        t(mine, "steal.steal_from", name=names(plan)[victims[0]], n=len(expected.loot[victims[0]])),
        t(mine, "steal.steal_from", name=names(plan)[victims[1]], n=len(expected.loot[victims[1]])),
        t(mine, "steal.steal_all", n=both),
        t(mine, "steal.play", card=card_label(plan.choice.card, mine)),
    ]
    assert answer.message is not None
    stolen = await press(standin, answer.message, every, players[thief])

    victim_names = [names(plan)[v] for v in victims]
    assert stolen.content.startswith(
        t(mine, "steal.stole", count=2, victims=fmt_list(victim_names, mine))
    )
    together = fmt_list(victim_names, "nb")
    card = card_label(plan.choice.card, "nb")
    thief_name = f"**{names(plan)[thief]}**"
    stole = t("nb", "table.steal", count=2, name=thief_name, victims=together, card=card)
    assert stole in text_of(table)
    expected.steal(thief, victims)
    row = await game_row(bot, table_id(table))
    assert row.state == expected.to_dict()


async def test_the_winner_chooses_the_top_of_their_loot_pile_and_only_they_may(
    standin: DiscordStandIn, world: SampleWorld, bot: KrigBot, seeds: ChosenSeeds
) -> None:
    plan = STEAL_ONE
    table, players = await start_steal_war(standin, world, seeds, plan)
    expected = StealGame.new(TWO, plan.seed)
    assert expected.begin_battle() is not None
    (top,) = expected.pending()
    assert isinstance(top, TopChoice)
    default = expected.loot_top(top.seat)
    other = next(card for card in top.cards if card != default)
    winner, loser = players[top.seat], players[1 - top.seat]

    await press(standin, table, flip_button(table), world.alice)

    assert t("nb", "steal.choosing_top", name=f"**{names(plan)[top.seat]}**") in text_of(table)
    tops = top_buttons(table)
    assert [b["label"] for b in tops.values()] == [card_label(c, "nb") for c in top.cards]
    assert [b["style"] == PRIMARY for b in tops.values()] == [c == default for c in top.cards]
    assert not any(c.startswith("krig:flip:") for c in buttons(table))
    waiting = await flip(standin, world.no_channel, loser)
    assert waiting.ephemeral
    assert waiting.content == t(loser.locale, "steal.top_pending", name=names(plan)[top.seat])
    other_id = next(c for c in tops if c.endswith(f":{card_code(other)}"))
    by_loser = await press(standin, table, other_id, loser)
    by_stranger = await press(standin, table, other_id, world.moderator)

    assert by_loser.ephemeral
    assert by_loser.content == t(loser.locale, "steal.not_yours", name=names(plan)[top.seat])
    assert by_stranger.ephemeral
    assert by_stranger.content == t("nb", "err.not_player")
    chosen = await press(standin, table, other_id, winner)

    assert chosen.type == UPDATE_MESSAGE
    label = card_label(other, "nb")
    assert t("nb", "steal.top_chosen", name=names(plan)[top.seat], card=label) in text_of(table)
    assert t("nb", "table.loot", card=label, n=len(top.cards)) in text_of(table)
    assert top_buttons(table) == {}
    assert flip_button(table) == f"krig:flip:{table_id(table)}:1"
    expected.put_on_top(top.seat, other)
    row = await game_row(bot, table_id(table))
    assert row.state == expected.to_dict()


async def test_looking_and_stale_choices_are_refused_to_the_wrong_people(
    standin: DiscordStandIn, world: SampleWorld, bot: KrigBot, seeds: ChosenSeeds
) -> None:
    plan = STEAL_ONE
    table, players = await start_steal_war(standin, world, seeds, plan)
    await play_to_choice(standin, table, plan, players)
    thief = players[plan.choice.seat]

    stranger = await look(standin, table, world.carol)
    first = await look(standin, table, thief)
    second = await look(standin, table, thief)
    assert first.message is not None
    assert second.message is not None
    play_id = f"krig:play:{table_id(table)}:{plan.choice.seat}:{code(plan)}"
    played = await press(standin, first.message, play_id, thief)
    again = await press(standin, second.message, play_id, thief)

    mine = thief.locale
    assert stranger.ephemeral
    assert stranger.content == t("en", "err.not_player")  # Carol's English
    assert played.content.startswith(
        t(mine, "steal.played", card=card_label(plan.choice.card, mine))
    )
    assert again.ephemeral
    assert again.content == t(mine, "steal.stale")
    row = await game_row(bot, table_id(table))
    assert row.state is not None
    assert row.state["actions"].count(["play", plan.choice.seat]) == 1


async def test_a_choice_not_made_in_time_is_made_by_default(
    standin: DiscordStandIn, world: SampleWorld, db_path: Path, seeds: ChosenSeeds
) -> None:
    plan = STEAL_BY_DEFAULT
    seeds.fix(plan.seed)
    async with running_bot(standin, db_path, seeds, choice_seconds=QUICK) as bot:
        started = await start_game(
            standin, world.no_channel, world.alice, world.bob, variant="stjel"
        )

        shown = await let_the_choice_time_out(
            standin, started.message, plan, flipper=world.alice, last=world.alice
        )

        assert steal_line(plan) in shown
        row = await game_row(bot, started.game_id)
        assert row.state is not None
        steal = ["steal", plan.choice.seat, list(plan.choice.can_steal)]
        assert steal in row.state["actions"]


async def test_a_restart_during_a_choice_keeps_the_choice_and_its_buttons(
    standin: DiscordStandIn, world: SampleWorld, db_path: Path, seeds: ChosenSeeds
) -> None:
    plan = STEAL_ONE
    async with running_bot(standin, db_path, seeds):
        table, players = await start_steal_war(standin, world, seeds, plan)
        await play_to_choice(standin, table, plan, players)
    thief, victim = plan.choice.seat, plan.choice.can_steal[0]

    async with running_bot(standin, db_path, seeds) as restarted:
        answer = await look(standin, table, players[thief])
        assert answer.message is not None
        steal_id = f"krig:steal:{table_id(table)}:{thief}:{code(plan)}:{victim}"
        stolen = await press(standin, answer.message, steal_id, players[thief])

        assert stolen.type == UPDATE_MESSAGE
        card = card_label(plan.choice.card, "nb")
        stole = pattern("nb", "table.steal", count=1, victims=names(plan)[victim], card=card)
        assert stole.search(text_of(table))
        expected = expected_game(plan)
        expected.steal(thief, [victim])
        row = await game_row(restarted, table_id(table))
        assert row.state == expected.to_dict()


async def test_a_choice_open_at_a_restart_still_times_out(
    standin: DiscordStandIn, world: SampleWorld, db_path: Path, seeds: ChosenSeeds
) -> None:
    plan = STEAL_ONE
    async with running_bot(standin, db_path, seeds):
        table, players = await start_steal_war(standin, world, seeds, plan)
        await play_to_choice(standin, table, plan, players)
    watcher = standin.watch(world.no_channel)
    thief = names(plan)[plan.choice.seat]

    async with running_bot(standin, db_path, seeds, choice_seconds=QUICK):
        timed_out = await watcher.next(
            "edit", predicate=shown_in(table, pattern("nb", "steal.timed_out", names=thief))
        )

    assert pattern("nb", "table.steal", count=1).search(text_of(timed_out.revision))


@pytest.mark.parametrize(
    ("lang", "option", "value"),
    [
        ("nb", "shortage", "last_card"),
        ("sv", "pickup", "shuffled"),
        # The values Steal War plays by: refused all the same, as it does not take the option.
        ("en", "shortage", "lose"),
        ("da", "pickup", "winner_first"),
        ("nb", "pickup", "winner_first"),
    ],
)
async def test_a_challenge_to_steal_war_refuses_an_option_it_does_not_take_and_names_it(
    standin: DiscordStandIn, world: SampleWorld, bot: KrigBot, lang: str, option: str, value: str
) -> None:
    # rules §10: an option Steal War would show but not play is refused, whatever the value,
    # in the sender's language, before anything is posted or stored.
    readers = {"nb": world.alice, "sv": world.bob, "en": world.carol}
    if lang == "da":
        readers["da"] = standin.add_user("dorte", "Dorte", locale="da")
        standin.add_member(world.no_guild, readers["da"])
    challenger = readers[lang]
    opponent = world.carol if challenger is not world.carol else world.alice
    answer = await answer_of(
        standin,
        await challenge(
            standin, world.no_channel, challenger, opponent, variant="stjel", **{option: value}
        ),
    )

    assert answer.ephemeral
    assert answer.content == t(lang, f"err.fixed.{option}", variant=t(lang, "variant.stjel.name"))
    assert t(lang, f"opt.{option}.name") in answer.content  # named as the command names it
    assert public_messages(standin, world.no_channel) == []
    assert await bot.storage.games.active_game(world.no_channel.id) is None


def test_every_option_a_kind_of_game_does_not_take_has_its_refusal_in_every_language() -> None:
    missing = [
        (lang, kind.name, key)
        for kind in VARIANTS.values()
        for key in OPTION_KEYS
        if key not in played_options(kind.name)
        for lang in LANGS
        if f"err.fixed.{key}" not in catalog(lang)
    ]
    assert missing == []
    assert any(key not in StealGame.plays for key in OPTION_KEYS)


async def test_nobody_can_give_up_in_the_middle_of_a_battle(
    standin: DiscordStandIn, world: SampleWorld, bot: KrigBot, seeds: ChosenSeeds
) -> None:
    plan = STEAL_ONE
    table, players = await start_steal_war(standin, world, seeds, plan)
    await play_to_choice(standin, table, plan, players)

    answer = await answer_of(
        standin, await standin.slash("krig forfeit", user=world.alice, channel=world.no_channel)
    )

    assert answer.ephemeral
    assert buttons(answer) == {}  # refused at once, not after a confirmation
    assert answer.content == t("nb", "steal.forfeit_in_battle")  # Alice: nb
    row = await game_row(bot, table_id(table))
    assert row.status == "running"


async def test_a_steal_war_game_ends_with_its_result_and_no_choices_left(
    standin: DiscordStandIn, world: SampleWorld, bot: KrigBot, seeds: ChosenSeeds
) -> None:
    rules = Rules.preset("stjel", players=2, max_rounds=1)
    expected = StealGame.new(rules, STEAL_ONE.seed)
    played = expected.play_round()
    assert played.winner is not None
    seeds.fix(STEAL_ONE.seed, STEAL_ONE.seed)  # the game, then its rematch
    started = await start_game(
        standin, world.no_channel, world.alice, world.bob, variant="stjel", rounds=1
    )

    answer = await flip(standin, world.no_channel, world.bob)

    assert not answer.ephemeral
    winner = ("Alice", "Bob")[played.winner]
    assert "🏆 " + t("nb", "over.winner", name=f"**{winner}**") in text_of(answer)
    # The check of the result states Steal War's own rules, not the plain pickup.
    assert t("nb", "rule.steal.loot") in text_of(answer)
    assert t("nb", "rule.pickup.winner_first") not in text_of(answer)
    assert not any(c.startswith(("krig:look:", "krig:top:", "krig:flip:")) for c in buttons(answer))
    row = await game_row(bot, started.game_id)
    assert row.status == "finished"
    assert row.state == expected.to_dict()

    # A rematch asks for the options the game set, none that Steal War refuses.
    assert answer.message is not None
    again = await press(standin, answer.message, f"krig:rematch:{started.game_id}", world.alice)
    assert not again.ephemeral, text_of(again)
    challenged = await game_row(bot, game_id_of(again))
    assert (challenged.status, challenged.rules) == ("challenge", row.rules)


# ------------------------------------------------------------------ what the table shows


def war_choice(rules: Rules) -> StealGame:
    """Return a game (by defaults) stopped at the first choice of a war's face-up card."""
    for seed in range(3000):
        game = StealGame.new(rules, seed)
        while not game.finished and game.round < 60:
            played = game.begin_battle()
            while played is None and game.in_battle:
                if in_war(game) and game.pending():
                    return game
                played = game.apply_defaults()
    raise AssertionError("no seed found")


def test_a_war_under_way_shows_face_down_cards_only_as_a_number() -> None:
    game = war_choice(THREE)
    saved = game.to_dict()["battle"]
    (step,) = saved["steps"]
    face_down = [card_label(code, "nb") for cards in step["face_down"] for code in cards]
    chooser = game.pending()[0].seat
    row = dataclasses.replace(
        ROW, rules=THREE.to_dict(), players=(1, 2, 3), names=("Alice", "Bob", "Carol")
    )

    embed = steal_table_embed(row, game, "nb", deadline=ROW.created_at)
    shown = embed.description or ""

    assert pattern("nb", "table.war").search(shown)
    assert pattern("nb", "table.war_step", count=3, n=1, down=3).search(shown)
    public = embed_text(embed.to_dict())
    assert not any(label in public for label in face_down)
    war_card = game.look(chooser)
    assert war_card is not None
    assert card_label(war_card, "nb") not in public
    looked = look_text(game, chooser, ["Alice", "Bob", "Carol"], "nb")
    assert pattern("nb", "steal.your_war_card").match(looked)


def test_a_big_pot_offers_one_top_card_per_rank_with_the_default_among_them() -> None:
    cards = tuple(parse_card(code) for code in [f"{r}{s}" for s in "SHDC" for r in "23456789"])
    default = parse_card("7D")

    offered = top_offer(TopChoice(0, cards), default)

    assert len(offered) == 8
    assert {card_value(card) for card in offered} == set(range(2, 10))
    assert default in offered
    assert offered == [card for card in cards if card in offered]  # in the order placed
