"""/flip and the Flip button: one round or many, what the table shows, who may play."""

from __future__ import annotations

import pytest

from krigbot.bot import KrigBot
from krigbot.engine import PRESETS, Round, Rules
from krigbot.i18n import card_label, fmt_list, t
from tests.standin import DiscordStandIn
from tests.standin.fixtures import SampleWorld
from tests.support.players import (
    PRIMARY,
    UPDATE_MESSAGE,
    ChosenSeeds,
    answer_of,
    buttons,
    challenge_message,
    find_seed,
    first_shown,
    flip,
    flip_button,
    game_row,
    press,
    public_messages,
    replay,
    start_game,
    text_of,
)
from tests.support.settings import BACKENDS
from tests.support.texts import pattern

STANDARD = Rules.preset("standard")
PLAIN_SEED = find_seed(STANDARD, lambda played: not played.is_war)
DOUBLE_WAR_SEED = find_seed(STANDARD, lambda played: len(played.war_steps) >= 2)
NAMES = ("Alice", "Bob")


def battle_lines(played: Round) -> list[str]:
    """Return the lines that show each player's card, in Norwegian."""
    return [
        t("nb", "table.battle", name=f"**{NAMES[seat]}**", card=card_label(card, "nb"))
        for seat, card in played.battle
    ]


@pytest.mark.parametrize("backend", BACKENDS)
async def test_flip_plays_one_round_and_shows_cards_winner_counts_and_round(
    standin: DiscordStandIn, world: SampleWorld, bot: KrigBot, seeds: ChosenSeeds
) -> None:
    seeds.fix(PLAIN_SEED)
    table = await start_game(standin, world.no_channel, world.alice, world.bob)
    game, (played,) = replay(STANDARD, PLAIN_SEED, 1)

    answer = await flip(standin, world.no_channel, world.alice)

    assert not answer.ephemeral
    (embed,) = answer.embeds
    assert embed["title"] == t("nb", "table.title", round=1)
    for line in battle_lines(played):
        assert line in embed["description"]
    winner = NAMES[played.winner]  # type: ignore[index]
    assert "➜ " + t("nb", "table.takes", count=2, name=f"**{winner}**", n=2) in embed["description"]
    counts = embed["fields"][0]
    assert counts["name"] == t("nb", "table.counts_heading")
    for seat, name in enumerate(NAMES):
        assert f"{name}: **{game.counts[seat]}** " in counts["value"]
    assert counts["value"].count("▰") + counts["value"].count("▱") == 20  # one bar each
    assert embed["footer"]["text"] == t("nb", "table.round_footer", round=1, game=table.game_id)
    assert flip_button(answer) == f"krig:flip:{table.game_id}:1"
    assert buttons(answer)[flip_button(answer)]["style"] == PRIMARY
    assert answer.allowed_mentions == {"parse": []}
    row = await game_row(bot, table.game_id)
    assert row.round == 1
    assert row.state == game.to_dict()


async def test_a_war_shows_every_war_step_and_the_whole_pot_taken(
    standin: DiscordStandIn, world: SampleWorld, bot: KrigBot, seeds: ChosenSeeds
) -> None:
    seeds.fix(DOUBLE_WAR_SEED)
    await start_game(standin, world.no_channel, world.alice, world.bob)
    _, (played,) = replay(STANDARD, DOUBLE_WAR_SEED, 1)

    answer = await flip(standin, world.no_channel, world.bob)

    description = answer.embeds[0]["description"]
    for line in battle_lines(played):
        assert line in description
    assert "⚔️ " + t("nb", "table.war", names=fmt_list(NAMES, "nb")) in description
    for number, step in enumerate(played.war_steps, start=1):
        ups = " – ".join(
            f"{NAMES[seat]} {card_label(card, 'nb')}"
            for seat, card in zip(step.fighters, step.compared, strict=True)
        )
        step_line = t("nb", "table.war_step", count=1, n=number, down=1, cards=ups)
        assert step_line in description
    winner = NAMES[played.winner]  # type: ignore[index]
    assert (
        "➜ " + t("nb", "table.takes", count=played.taken, name=f"**{winner}**", n=played.taken)
        in description
    )
    assert played.taken >= 10  # 2 battle cards + 2 war steps of 2 down and up each


async def test_flip_count_plays_several_rounds_with_a_summary(
    standin: DiscordStandIn, world: SampleWorld, bot: KrigBot, seeds: ChosenSeeds
) -> None:
    seeds.fix(DOUBLE_WAR_SEED)
    table = await start_game(standin, world.no_channel, world.alice, world.bob)
    game, played = replay(STANDARD, DOUBLE_WAR_SEED, 12)
    wars = sum(1 for r in played if r.is_war)

    answer = await flip(standin, world.no_channel, world.alice, count=12)

    embed = answer.embeds[0]
    assert embed["title"] == t("nb", "table.title", round=12)
    assert embed["description"].startswith(
        t("nb", "table.summary", count=12, n=12, wars=wars) + "\n"
    )
    for line in battle_lines(played[-1]):
        assert line in embed["description"]
    assert flip_button(answer) == f"krig:flip:{table.game_id}:12"
    row = await game_row(bot, table.game_id)
    assert row.round == 12
    assert row.state == game.to_dict()


async def test_the_last_round_shows_the_result_reason_rounds_wars_and_biggest_pot(
    standin: DiscordStandIn, world: SampleWorld, bot: KrigBot, seeds: ChosenSeeds
) -> None:
    seeds.fix(DOUBLE_WAR_SEED)
    table = await start_game(standin, world.no_channel, world.alice, world.bob, rounds=5)
    game, _ = replay(STANDARD.replace(max_rounds=5), DOUBLE_WAR_SEED, 5)
    outcome = game.outcome
    assert outcome is not None

    answer = await flip(standin, world.no_channel, world.alice, count=50)

    embed = answer.embeds[0]
    assert embed["title"] == t("nb", "table.title", round=5)
    assert pattern("nb", "table.summary", count=5, n=5).match(embed["description"])
    result = next(f for f in embed["fields"] if f["name"] == t("nb", "over.title"))
    if outcome.winner is None:
        assert t("nb", "over.draw") in result["value"]
    else:
        assert (
            "🏆 " + t("nb", "over.winner", name=f"**{NAMES[outcome.winner]}**") in result["value"]
        )
    assert t("nb", "over.reason.round_limit", count=5, n=5) in result["value"]
    pot = max(game.biggest_pot)
    assert t("nb", "over.stats", rounds=5, wars=game.war_rounds, pot=pot) in result["value"]
    assert list(buttons(answer)) == [f"krig:rematch:{table.game_id}"]  # no Flip: a rematch
    row = await game_row(bot, table.game_id)
    assert row.status == "finished"
    assert row.round == 5


@pytest.mark.parametrize("backend", BACKENDS)
async def test_the_flip_button_plays_the_next_round_on_the_table_message(
    standin: DiscordStandIn, world: SampleWorld, bot: KrigBot, seeds: ChosenSeeds
) -> None:
    seeds.fix(PLAIN_SEED)
    table = await start_game(standin, world.no_channel, world.alice, world.bob)
    _, (played,) = replay(STANDARD, PLAIN_SEED, 1)

    answer = await press(standin, table.message, flip_button(table.message), world.bob)

    assert answer.type == UPDATE_MESSAGE
    shown = text_of(table.message)
    assert t("nb", "table.title", round=1) in shown
    for line in battle_lines(played):
        assert line in shown
    assert flip_button(table.message) == f"krig:flip:{table.game_id}:1"
    assert len(public_messages(standin, world.no_channel)) == 1  # the same message, edited
    assert (await game_row(bot, table.game_id)).round == 1


async def test_pressing_flip_again_plays_the_round_after(
    standin: DiscordStandIn, world: SampleWorld, bot: KrigBot
) -> None:
    table = await start_game(standin, world.no_channel, world.alice, world.bob)

    for expected in (1, 2, 3):
        await press(standin, table.message, flip_button(table.message), world.alice)
        assert t("nb", "table.title", round=expected) in text_of(table.message)

    assert (await game_row(bot, table.game_id)).round == 3


async def test_someone_who_is_not_playing_cannot_flip(
    standin: DiscordStandIn, world: SampleWorld, bot: KrigBot
) -> None:
    table = await start_game(standin, world.no_channel, world.alice, world.bob)
    before = text_of(table.message)

    by_command = await flip(standin, world.no_channel, world.carol)
    by_button = await press(standin, table.message, flip_button(table.message), world.carol)

    for answer in (by_command, by_button):
        assert answer.ephemeral
        assert answer.content == t("en", "err.not_player")
    assert text_of(table.message) == before
    assert len(public_messages(standin, world.no_channel)) == 1
    assert (await game_row(bot, table.game_id)).round == 0


async def test_flip_where_there_is_no_game_says_so(
    standin: DiscordStandIn, world: SampleWorld, bot: KrigBot
) -> None:
    answer = await flip(standin, world.no_channel, world.alice)

    assert answer.ephemeral
    assert answer.content == t("nb", "err.no_game")


async def test_flip_before_everyone_has_accepted_plays_nothing(
    standin: DiscordStandIn, world: SampleWorld, bot: KrigBot
) -> None:
    await challenge_message(standin, world.no_channel, world.alice, world.bob)

    answer = await flip(standin, world.no_channel, world.bob)

    assert answer.ephemeral
    assert answer.content == t("sv", "err.not_running")


async def test_a_forged_count_above_fifty_plays_nothing(
    standin: DiscordStandIn, world: SampleWorld, bot: KrigBot
) -> None:
    table = await start_game(standin, world.no_channel, world.alice, world.bob)
    (count_option,) = standin.synced_command("flip")["options"]
    assert count_option["max_value"] == 50  # what the Discord client enforces

    # A client that ignores the limit: Discord checks it, the bot must not trust that alone.
    rec = await standin.slash_raw(
        "flip",
        user=world.alice,
        channel=world.no_channel,
        options=[{"name": "count", "type": 4, "value": 51}],
    )
    answer = await answer_of(standin, rec)

    assert answer.ephemeral
    assert answer.content == t("nb", "err.count_range")
    assert (await game_row(bot, table.game_id)).round == 0


async def test_the_flip_button_of_a_finished_game_plays_nothing(
    standin: DiscordStandIn, world: SampleWorld, bot: KrigBot
) -> None:
    table = await start_game(standin, world.no_channel, world.alice, world.bob, rounds=2)
    await flip(standin, world.no_channel, world.alice, count=2)

    answer = await press(standin, table.message, flip_button(table.message), world.alice)

    assert answer.ephemeral
    assert answer.content == t("nb", "err.game_over")
    assert (await game_row(bot, table.game_id)).round == 2


async def test_a_three_player_round_names_everyone_in_the_war(
    standin: DiscordStandIn, world: SampleWorld, bot: KrigBot, seeds: ChosenSeeds
) -> None:
    rules = Rules.preset("standard", players=3)
    seed = find_seed(rules, lambda played: played.is_war and len(played.war_steps[0].fighters) == 3)
    seeds.fix(seed)
    await start_game(standin, world.no_channel, world.alice, world.bob, world.carol)

    answer = await flip(standin, world.no_channel, world.carol)

    description = answer.embeds[0]["description"]
    assert (
        "⚔️ " + t("nb", "table.war", names=fmt_list(["Alice", "Bob", "Carol"], "nb")) in description
    )
    counts = answer.embeds[0]["fields"][0]["value"]
    assert [line.split(":")[0] for line in counts.splitlines()] == ["Alice", "Bob", "Carol"]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("variant", list(PRESETS))
async def test_every_variant_can_be_challenged_and_played(
    standin: DiscordStandIn, world: SampleWorld, bot: KrigBot, variant: str
) -> None:
    dave = standin.add_user("dave", "Dave", locale="da")
    standin.add_member(world.no_guild, dave)
    opponents = (world.bob, world.carol, dave) if variant == "lag" else (world.bob,)
    name = t("nb", f"variant.{variant}.name")

    table = await start_game(standin, world.no_channel, world.alice, *opponents, variant=variant)
    assert name in text_of(first_shown(table.message))  # the challenge, before it was accepted
    assert t("nb", "table.title", round=0) in text_of(table.message)
    answer = await flip(standin, world.no_channel, world.alice, count=50)

    # The stand-in refuses what Discord would (embed limits...), so a reply here is a valid one.
    assert not answer.ephemeral
    row = await game_row(bot, table.game_id)
    embed, *story = answer.embeds
    # A game that ended within the 50 rounds also shows its story (pictures are on).
    assert len(story) == (1 if row.status == "finished" else 0)
    assert pattern("nb", "table.title").fullmatch(embed["title"])
    assert all(f"{p}: **" in text_of(answer) for p in ("Alice", "Bob"))
    assert row.variant == variant
    if variant == "poeng":
        assert any(f["name"] == t("nb", "table.points") for f in embed["fields"])
    if Rules.preset(variant).target_tricks is not None:  # hurtig, best3, best5
        assert any(f["name"] == t("nb", "table.tricks") for f in embed["fields"])
