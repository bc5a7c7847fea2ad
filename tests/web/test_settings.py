"""/krig settings web:on|off|rotate, and the links to the web view on the bot's messages."""

from __future__ import annotations

import pytest

from krigbot.bot import KrigBot
from krigbot.i18n import t
from krigbot.web.access import KEY_SETTING, SETTING
from tests.standin import DiscordStandIn
from tests.standin.fixtures import SampleWorld
from tests.support.handsfree import command
from tests.support.players import ChosenSeeds, answer_of
from tests.support.web import Web
from tests.support.web_games import BOB_WINS, links, play, web_on

LOCALES = [("nb", "nb"), ("sv-SE", "sv"), ("da", "da"), ("en-US", "en")]


async def settings(
    standin: DiscordStandIn, world: SampleWorld, locale: str = "nb", **options: str
) -> tuple[bool, str]:
    """Run /krig settings as the moderator; return whether the answer was private, and its text."""
    record = await standin.slash(
        "krig settings",
        user=world.moderator,
        channel=world.no_channel,
        options=options,
        locale=locale,
    )
    answer = await answer_of(standin, record)
    return answer.ephemeral, answer.content


@pytest.mark.parametrize(("locale", "lang"), LOCALES)
async def test_a_moderator_turns_the_web_view_on_and_off_in_their_language(
    standin: DiscordStandIn, world: SampleWorld, web: Web, locale: str, lang: str
) -> None:
    private, text = await settings(standin, world, locale, web="on")
    board = await web.bot.web.leaderboard_url(world.no_guild.id)
    assert board is not None
    assert board.startswith(web.base + "/s/")
    assert private
    assert text == t(lang, "settings.web_on", url=board)
    assert await web.bot.storage.settings.get_setting(world.no_guild.id, SETTING) == "on"

    private, text = await settings(standin, world, locale, web="off")
    assert private
    assert text == t(lang, "settings.web_off")
    assert await web.bot.web.leaderboard_url(world.no_guild.id) is None

    private, text = await settings(standin, world, locale, web="on")
    assert text == t(lang, "settings.web_on", url=board)  # the same links as before

    private, text = await settings(standin, world, locale, web="rotate")
    rotated = await web.bot.web.leaderboard_url(world.no_guild.id)
    assert rotated not in (None, board)
    assert private
    assert text == t(lang, "settings.web_rotated", url=rotated)


async def test_new_links_made_while_the_web_view_is_off_stay_hidden(
    standin: DiscordStandIn, world: SampleWorld, web: Web
) -> None:
    await settings(standin, world, web="on")
    await settings(standin, world, web="off")
    private, text = await settings(standin, world, web="rotate")
    assert private
    assert text == t("nb", "settings.web_rotated_hidden")
    assert await web.bot.web.leaderboard_url(world.no_guild.id) is None


async def test_only_a_moderator_changes_the_web_view(
    standin: DiscordStandIn, world: SampleWorld, web: Web
) -> None:
    for choice in ("on", "off", "rotate"):
        record = await standin.slash(
            "krig settings", user=world.carol, channel=world.no_channel, options={"web": choice}
        )
        refused = await answer_of(standin, record)
        assert refused.ephemeral
        assert refused.content == t("en", "settings.denied")  # Carol reads English
    assert await web.bot.storage.settings.get_setting(world.no_guild.id, SETTING) is None
    assert await web.bot.storage.settings.get_setting(world.no_guild.id, KEY_SETTING) is None


async def test_settings_without_a_choice_asks_for_one(
    standin: DiscordStandIn, world: SampleWorld, web: Web
) -> None:
    private, text = await settings(standin, world, "da")
    assert private
    assert text == t("da", "settings.choose")


async def test_pictures_and_the_web_view_change_together(
    standin: DiscordStandIn, world: SampleWorld, web: Web
) -> None:
    private, text = await settings(standin, world, images="off", web="on")
    board = await web.bot.web.leaderboard_url(world.no_guild.id)
    assert private
    assert text.splitlines()[0] == t("nb", "settings.images_off")
    assert text.split("\n", 1)[1] == t("nb", "settings.web_on", url=board)
    assert await web.bot.storage.settings.get_setting(world.no_guild.id, "images") == "off"


@pytest.mark.slow
async def test_on_a_bot_without_a_web_view_it_is_on_but_has_no_links(
    standin: DiscordStandIn, world: SampleWorld, bot: KrigBot, seeds: ChosenSeeds
) -> None:
    seeds.fix(BOB_WINS)
    private, text = await settings(standin, world, "en-US", web="on")
    assert private
    assert text == t("en", "settings.web_on_unlinked")
    game = await play(standin, world.no_channel, world.alice, world.bob)
    assert links(game.over) == {}
    board = await command(standin, world.no_channel, world.alice, "leaderboard")
    assert links(board) == {}


async def test_the_game_over_replay_and_leaderboard_link_to_the_web_where_it_is_on(
    standin: DiscordStandIn, world: SampleWorld, web: Web, seeds: ChosenSeeds
) -> None:
    seeds.fix(BOB_WINS, BOB_WINS)
    await web_on(standin, world, web.bot)
    game = await play(standin, world.no_channel, world.alice, world.bob)
    url = await web.bot.web.game_url(world.no_guild.id, game.game_id)
    assert links(game.over) == {t("nb", "web.watch"): url}

    replay = await command(standin, world.no_channel, world.carol, "replay", id=game.game_id)
    assert replay.ephemeral
    assert links(replay) == {t("en", "web.watch"): url}

    week = await command(standin, world.no_channel, world.alice, "leaderboard", period="week")
    board = await web.bot.web.leaderboard_url(world.no_guild.id, "week")
    assert board is not None
    assert board.endswith("?period=week")
    assert links(week) == {t("nb", "web.open_leaderboard"): board}

    # The other server has not turned it on: no links there.
    other = await play(standin, world.sv_channel, world.alice, world.bob)
    assert links(other.over) == {}
    replay = await command(standin, world.sv_channel, world.alice, "replay", id=other.game_id)
    assert links(replay) == {}
    board_there = await command(standin, world.sv_channel, world.alice, "leaderboard")
    assert links(board_there) == {}
