"""What a table says of a round a house rule decided: its narration and its picture's pill."""

from __future__ import annotations

import io
from datetime import UTC, datetime

from PIL import Image

from krigbot.engine import Game, Round, Rules
from krigbot.i18n import Lang
from krigbot.render.embeds import round_embed
from krigbot.render.table import HEADER, UPSET, WIDTH, render_round
from tests.support.pixels import pixels
from tests.support.rows import stored_row

NAMES = ("Ingrid", "Bjørn")


def narration(rules: Rules, game: Game, played: Round, lang: Lang = "en") -> list[str]:
    """Return the lines of the round's embed, as the players read them."""
    row = stored_row(rules, (1, 2), NAMES, at=datetime(2026, 12, 1, tzinfo=UTC))
    return (round_embed(row, game, played, lang).description or "").splitlines()


def pill_pixels(played: Round, lang: Lang) -> int:
    """Return how many pixels of the picture's header have the colour of a rule's pill."""
    png = render_round(played, NAMES, lang, total_cards=sum(played.counts), teams=False)
    header = Image.open(io.BytesIO(png)).convert("RGB").crop((0, 0, WIDTH, HEADER))
    return sum(1 for pixel in pixels(header) if pixel == UPSET)
