"""Pictures in Discord: the table image on every round, the game's story, the server setting."""

from __future__ import annotations

import io

from PIL import Image

from krigbot.bot import KrigBot
from krigbot.i18n import t
from krigbot.render.chart import render_chart
from krigbot.render.story import story_of
from tests.standin import DiscordStandIn
from tests.standin.fixtures import SampleWorld
from tests.support.players import answer_of, flip, flip_button, game_row, press, start_game
from tests.support.texts import pattern


def png_size(data: bytes) -> tuple[int, int]:
    return Image.open(io.BytesIO(data)).size


async def test_a_round_message_carries_the_table_as_a_picture(
    standin: DiscordStandIn, standin_world: SampleWorld, bot: KrigBot
) -> None:
    w = standin_world
    await start_game(standin, w.no_channel, w.alice, w.bob)
    answer = await flip(standin, w.no_channel, w.alice)
    assert answer.message is not None
    (name, data), *_ = answer.message.files
    assert name == "round.png"
    assert png_size(data) == (480, 320)
    assert answer.embeds[0]["image"]["url"] == "attachment://round.png"
    # The compact text line stays, for notifications and screen readers.
    assert pattern("nb", "table.battle").search(answer.embeds[0]["description"])


async def test_a_flip_button_replaces_the_picture_instead_of_adding_one(
    standin: DiscordStandIn, standin_world: SampleWorld, bot: KrigBot
) -> None:
    w = standin_world
    await start_game(standin, w.no_channel, w.alice, w.bob)
    first = await flip(standin, w.no_channel, w.alice)
    assert first.message is not None
    before = first.message.files[0][1]
    second = await press(standin, first.message, flip_button(first), w.bob)
    assert second.type == 7
    assert [name for name, _ in first.message.files] == ["round.png"]
    assert first.message.files[0][1] != before  # round 2 drawn over round 1


async def test_the_last_round_shows_the_game_s_story_as_a_chart(
    standin: DiscordStandIn, standin_world: SampleWorld, bot: KrigBot
) -> None:
    w = standin_world
    await start_game(standin, w.no_channel, w.alice, w.bob, variant="hurtig")
    answer = await flip(standin, w.no_channel, w.alice, count=50)  # first to 10 tricks
    assert answer.message is not None
    files = dict(answer.message.files)
    assert set(files) == {"round.png", "story.png"}
    assert png_size(files["story.png"]) == (480, 300)
    story = answer.embeds[1]
    assert story["title"] == t("nb", "chart.title")
    assert story["image"]["url"] == "attachment://story.png"
    forms = (pattern("nb", "chart.lead_changes", count=n) for n in (1, 2))  # .one and .other
    assert any(form.search(story["description"]) for form in forms)


async def test_the_chart_at_the_end_names_the_winner_in_its_title(
    standin: DiscordStandIn, standin_world: SampleWorld, bot: KrigBot
) -> None:
    w = standin_world
    await start_game(standin, w.no_channel, w.alice, w.bob, variant="hurtig")
    answer = await flip(standin, w.no_channel, w.alice, count=50)
    assert answer.message is not None
    row = await game_row(bot, 1)  # the server's first game, just over
    assert row.state is not None
    assert row.result is not None

    story = story_of(row.state)
    drawn = [
        render_chart(
            story.counts,
            ["Alice", "Bob"],
            "nb",
            wars=story.wars,
            winners=won,
            title=t("nb", "chart.title"),
            x_label=t("nb", "chart.x_label"),
            y_label=t("nb", "chart.y_label"),
        )
        for won in (tuple(row.result["winners"]), None)
    ]
    assert dict(answer.message.files)["story.png"] == drawn[0]
    assert drawn[0] != drawn[1]  # the title with the winner is not the plain one


async def test_status_shows_the_story_so_far(
    standin: DiscordStandIn, standin_world: SampleWorld, bot: KrigBot
) -> None:
    w = standin_world
    await start_game(standin, w.no_channel, w.alice, w.bob)
    await flip(standin, w.no_channel, w.alice, count=5)
    record = await standin.slash("krig status", user=w.carol, channel=w.no_channel)
    status = await answer_of(standin, record)
    assert status.ephemeral
    assert [name for name, _ in status.files] == ["story.png"]
    assert status.embeds[1]["title"] == t("en", "chart.title")  # Carol reads English


async def test_a_moderator_turns_pictures_off_and_on_for_the_server(
    standin: DiscordStandIn, standin_world: SampleWorld, bot: KrigBot
) -> None:
    w = standin_world
    off = await answer_of(
        standin,
        await standin.slash(
            "krig settings", user=w.moderator, channel=w.no_channel, options={"images": "off"}
        ),
    )
    assert off.ephemeral
    assert "av" in off.content
    assert await bot.storage.settings.get_setting(w.no_guild.id, "images") == "off"

    await start_game(standin, w.no_channel, w.alice, w.bob)
    answer = await flip(standin, w.no_channel, w.alice)
    assert answer.message is not None
    assert answer.message.files == []
    assert "image" not in answer.embeds[0]

    # The other server keeps its pictures.
    await start_game(standin, w.sv_channel, w.alice, w.bob)
    other = await flip(standin, w.sv_channel, w.alice)
    assert other.message is not None
    assert [name for name, _ in other.message.files] == ["round.png"]

    await standin.slash(
        "krig settings", user=w.moderator, channel=w.no_channel, options={"images": "on"}
    )
    again = await flip(standin, w.no_channel, w.bob)
    assert again.message is not None
    assert [name for name, _ in again.message.files] == ["round.png"]


async def test_only_a_moderator_changes_the_settings(
    standin: DiscordStandIn, standin_world: SampleWorld, bot: KrigBot
) -> None:
    w = standin_world
    refused = await answer_of(
        standin,
        await standin.slash(
            "krig settings", user=w.alice, channel=w.no_channel, options={"images": "off"}
        ),
    )
    assert refused.ephemeral
    assert "moderator" in refused.content
    assert await bot.storage.settings.get_setting(w.no_guild.id, "images") is None
