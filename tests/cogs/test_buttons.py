"""Every button's custom id is made from one field list, the same on the wire as ever."""

from __future__ import annotations

import inspect
import re
from typing import Any

import discord
import pytest

from krigbot.adapter.buttons import (
    AcceptButton,
    AutoplayButton,
    Buttons,
    DeclineButton,
    FinishButton,
    FlipButton,
    ForfeitButton,
    GameButton,
    LookButton,
    PlayButton,
    RematchButton,
    StealButton,
    TopButton,
)
from krigbot.adapter.tournaments import JoinButton, LeaveButton
from krigbot.bot import KrigBot
from krigbot.cogs.history import HistoryButton, ReplayButton
from krigbot.engine.cards import parse_card

CARD = r"[2-9TJQKA][SHDC]|X[12]"
TEMPLATES: dict[type[GameButton], str] = {
    AcceptButton: r"krig:accept:(?P<game>\d+)",
    DeclineButton: r"krig:decline:(?P<game>\d+)",
    FlipButton: r"krig:flip:(?P<game>\d+):(?P<round>\d+)",
    ForfeitButton: r"krig:forfeit:(?P<game>\d+):(?P<user>\d+):(?P<choice>yes|no)",
    LookButton: r"krig:look:(?P<game>\d+)",
    StealButton: (
        rf"krig:steal:(?P<game>\d+):(?P<seat>[0-3]):(?P<card>{CARD}):(?P<targets>[0-3](?:-[0-3])*)"
    ),
    PlayButton: rf"krig:play:(?P<game>\d+):(?P<seat>[0-3]):(?P<card>{CARD})",
    TopButton: rf"krig:top:(?P<game>\d+):(?P<round>\d+):(?P<seat>[0-3]):(?P<card>{CARD})",
    RematchButton: r"krig:rematch:(?P<game>\d+)",
    HistoryButton: r"krig:history:(?P<user>\d+):(?P<page>\d+):(?P<way>prev|next)",
    ReplayButton: r"krig:replay:(?P<game>\d+):(?P<round>\d+):(?P<move>first|prev|next|war|last)",
    AutoplayButton: r"krig:auto:(?P<game>\d+):(?P<action>pause|resume|stop)",
    FinishButton: r"krig:finish:(?P<game>\d+):(?P<choice>yes|no)",
    JoinButton: r"krig:tjoin:(?P<tournament>\d+)",
    LeaveButton: r"krig:tleave:(?P<tournament>\d+)",
}
"""The templates of the buttons as they were before they shared one base, written out."""

USER = 123456789012345678
SAMPLES: list[tuple[GameButton, str]] = [
    (AcceptButton(7, "en"), "krig:accept:7"),
    (DeclineButton(7), "krig:decline:7"),
    (FlipButton(7, 12, "sv"), "krig:flip:7:12"),
    (ForfeitButton(7, USER, True), f"krig:forfeit:7:{USER}:yes"),
    (ForfeitButton(7, USER, False), f"krig:forfeit:7:{USER}:no"),
    (LookButton(7), "krig:look:7"),
    (StealButton(7, 1, parse_card("QD"), (0, 2, 3), "x"), "krig:steal:7:1:QD:0-2-3"),
    (StealButton(7, 3, parse_card("X1"), [0]), "krig:steal:7:3:X1:0"),
    (PlayButton(7, 2, parse_card("TS")), "krig:play:7:2:TS"),
    (TopButton(7, 40, 0, parse_card("AH"), default=True, row=2), "krig:top:7:40:0:AH"),
    (RematchButton(7), "krig:rematch:7"),
    (HistoryButton(USER, 3, "next", disabled=True), f"krig:history:{USER}:3:next"),
    (HistoryButton(0, 0, "prev"), "krig:history:0:0:prev"),
    (ReplayButton(7, 5, "war"), "krig:replay:7:5:war"),
    (ReplayButton(7, 1, "first", "da", disabled=True), "krig:replay:7:1:first"),
    (AutoplayButton(7, "resume"), "krig:auto:7:resume"),
    (FinishButton(7, True), "krig:finish:7:yes"),
    (FinishButton(7, False), "krig:finish:7:no"),
    (JoinButton(3, "sv"), "krig:tjoin:3"),
    (LeaveButton(3), "krig:tleave:3"),
]


def all_buttons() -> set[type[GameButton]]:
    """Return every kind of button the bot has."""
    return set(GameButton.__subclasses__())


def test_every_button_keeps_its_old_template() -> None:
    assert set(TEMPLATES) == all_buttons()
    for button, template in TEMPLATES.items():
        assert button.__discord_ui_compiled_template__.pattern == template, button.__name__


@pytest.mark.parametrize(("button", "custom_id"), SAMPLES, ids=[s[1] for s in SAMPLES])
async def test_a_custom_id_is_as_it_was_and_rebuilds_the_same_button(
    button: GameButton, custom_id: str
) -> None:
    assert button.custom_id == custom_id
    match = re.fullmatch(TEMPLATES[type(button)], custom_id)
    assert match is not None

    rebuilt = await type(button).from_custom_id(None, button.item, match)  # type: ignore[arg-type]

    assert type(rebuilt) is type(button)
    assert rebuilt.custom_id == custom_id
    assert rebuilt.values == tuple(button.values)


def test_a_value_the_template_does_not_allow_makes_no_button() -> None:
    with pytest.raises(ValueError, match="must match the template"):
        HistoryButton(USER, 0, "sideways")


def test_every_button_has_one_handler_that_takes_its_fields(bot: KrigBot) -> None:
    assert set(bot.buttons.kinds()) == all_buttons()
    pressed: Any = object()
    for button, custom_id in SAMPLES:
        handler = bot.buttons.handler(type(button))
        inspect.signature(handler).bind(pressed, *button.values)  # raises if it cannot take them
        assert custom_id.startswith(f"krig:{type(button).kind}:")


async def test_a_press_goes_to_the_handler_its_cog_registered() -> None:
    calls: list[tuple[object, ...]] = []

    async def on_flip(interaction: object, game_id: int, round_shown: int) -> None:
        calls.append((interaction, game_id, round_shown))

    class Client(discord.Client):
        def __init__(self) -> None:
            super().__init__(intents=discord.Intents.none())
            self.buttons = Buttons()

    client = Client()
    client.buttons.handle(FlipButton, on_flip)
    interaction: Any = type("Pressed", (), {"client": client})()

    await FlipButton(7, 12).callback(interaction)
    await client.close()

    assert calls == [(interaction, 7, 12)]


def test_a_kind_of_button_has_one_handler() -> None:
    async def handler(interaction: object, game_id: int) -> None:
        return None

    buttons = Buttons()
    buttons.handle(AcceptButton, handler)

    with pytest.raises(ValueError, match="AcceptButton"):
        buttons.handle(AcceptButton, handler)
