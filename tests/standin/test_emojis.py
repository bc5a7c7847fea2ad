"""The stand-in keeps Discord's rules for an application's own emojis, read through discord.py."""

from __future__ import annotations

import base64
import io
from typing import Any

import discord
import pytest
from PIL import Image

from krigbot.bot import KrigBot
from tests.standin import DiscordStandIn

pytestmark = pytest.mark.usefixtures("standin_world")


def png() -> bytes:
    out = io.BytesIO()
    Image.new("RGBA", (16, 16), (200, 24, 44, 255)).save(out, "PNG")
    return out.getvalue()


def uri(data: bytes, kind: str = "png") -> str:
    return f"data:image/{kind};base64,{base64.b64encode(data).decode()}"


async def create(bot: KrigBot, name: str, image: str) -> dict[str, Any]:
    """Upload through discord.py's own route, with the image as given (no checks of ours)."""
    assert bot.application_id is not None
    answer = await bot.http.create_application_emoji(bot.application_id, name, image)
    return dict(answer)


async def refusal(bot: KrigBot, name: str, image: str) -> discord.HTTPException:
    with pytest.raises(discord.HTTPException) as refused:
        await create(bot, name, image)
    return refused.value


async def test_an_uploaded_emoji_is_listed_edited_and_deleted_as_discord_does(
    bot: KrigBot, standin: DiscordStandIn
) -> None:
    created = await bot.create_application_emoji(name="krig_QD", image=png())

    [listed] = await bot.fetch_application_emojis()
    assert (listed.id, listed.name, listed.animated) == (created.id, "krig_QD", False)
    raw = await create(bot, "krig_KS", uri(png()))
    assert set(raw) == {
        "id",
        "name",
        "user",
        "roles",
        "require_colons",
        "managed",
        "animated",
        "available",
    }
    assert (raw["roles"], raw["require_colons"], raw["available"]) == ([], True, True)
    assert raw["user"]["id"] == str(bot.application_id)

    renamed = await listed.edit(name="krig_QH")
    assert renamed.name == "krig_QH"
    await renamed.delete()
    assert [e.name for e in await bot.fetch_application_emojis()] == ["krig_KS"]
    with pytest.raises(discord.NotFound) as gone:
        await bot.fetch_application_emoji(created.id)
    assert gone.value.code == 10014


async def test_a_name_taken_or_against_the_rule_is_refused_with_50035(
    bot: KrigBot, standin: DiscordStandIn
) -> None:
    await bot.create_application_emoji(name="krig_QD", image=png())

    for name in ("krig_QD", "krig-QD", "kø", "x"):
        refused = await refusal(bot, name, uri(png()))
        assert (refused.status, refused.code) == (400, 50035), name
    assert [e.name for e in await bot.fetch_application_emojis()] == ["krig_QD"]
    standin.refused_bodies.clear()  # the 1-letter name breaks Discord's schema too, on purpose


async def test_the_2001st_emoji_is_refused_with_30056(
    bot: KrigBot, standin: DiscordStandIn
) -> None:
    for n in range(1999):
        standin.app.emojis[n + 1] = {"id": str(n + 1), "name": f"e{n}"}
    await bot.create_application_emoji(name="krig_2000", image=png())

    refused = await refusal(bot, "krig_2001", uri(png()))

    assert (refused.status, refused.code) == (400, 30056)
    assert len(standin.app.emojis) == 2000


BAD_IMAGES = [
    ("not a data URI", base64.b64encode(png()).decode()),
    ("not base64", "data:image/png;base64,not*base64"),
    ("a BMP", uri(b"BM" + bytes(60), "bmp")),
    ("a PNG that is a JPEG", uri(b"\xff\xd8\xff" + bytes(60))),
    ("over 256 KiB", uri(b"\x89PNG\r\n\x1a\n" + bytes(256 * 1024))),
]


@pytest.mark.parametrize(("what", "image"), BAD_IMAGES, ids=[what for what, _ in BAD_IMAGES])
async def test_a_bad_image_is_refused_with_50035(
    bot: KrigBot, standin: DiscordStandIn, what: str, image: str
) -> None:
    refused = await refusal(bot, "krig_QD", image)

    assert (refused.status, refused.code) == (400, 50035), what
    assert standin.app.emojis == {}


async def test_an_image_of_256_kib_is_taken(bot: KrigBot) -> None:
    await create(bot, "krig_big", uri(b"\x89PNG\r\n\x1a\n" + bytes(256 * 1024 - 8)))

    assert [e.name for e in await bot.fetch_application_emojis()] == ["krig_big"]
