"""Pictures on a phone: every text still reads when the picture is shown 360 pixels wide.

A text reads when its letters do: the ink of a capital or a digit in its font size, shown at a
phone's width, stands at least ``LEAST_TEXT`` pixels tall.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator

import pytest

from krigbot.engine import Round, Rules
from krigbot.engine.variant import new_game
from krigbot.i18n import t
from krigbot.render.chart import CHART_HEIGHT, CHART_WIDTH, chart_layout
from krigbot.render.fonts import LEAST_TEXT, PHONE_WIDTH, Written, font
from krigbot.render.story import Story, story_from
from krigbot.render.table import HEIGHT, WIDTH, table_texts

Box = tuple[float, float, float, float]
LONG = "Åse Marie Kristoffersen-Haugland von Stralsund"
CJK = "田中太郎 김민준 王小明"


def overlaps(a: Box, b: Box) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def grown(box: Box, by: float) -> Box:
    return (box[0] - by, box[1] - by, box[2] + by, box[3] + by)


def rounds(rules: Rules, count: int, seeds: int = 40) -> Iterator[Round]:
    """Yield rounds of seeded games: wars of every depth first, then plain ones and the last."""
    found = 0
    for seed in range(seeds):
        game = new_game(rules, seed)
        while not game.finished and found < count:
            played = game.play_round()
            if played.war_steps or played.outcome is not None or played.number % 50 == 1:
                found += 1
                yield played


def cap_height(size: int) -> int:
    """Return how tall the ink of a capital or digit is at a font size, regular or bold."""
    return min(
        round(-font(size, bold=bold).getbbox(letter, anchor="ls")[1])
        for bold in (False, True)
        for letter in "H0"
    )


def test_a_twenty_pixel_font_inks_its_digits_thirteen_pixels_tall() -> None:
    assert cap_height(20) == 13
    assert cap_height(28) == 19


def check_readable(texts: tuple[Written, ...], width: int, height: int) -> None:
    """Assert every text is tall enough on a phone, inside the picture and clear of the others."""
    for text in texts:
        assert cap_height(text.size) * PHONE_WIDTH / width >= LEAST_TEXT, text
        left, top, right, bottom = text.box
        assert min(left, top) >= 0, text
        assert right <= width, text
        assert bottom <= height, text
    for a, b in itertools.combinations(texts, 2):
        assert not overlaps(a.box, b.box), (a, b)


TABLES = [
    ("standard", 2, ("Ingrid", "Bjørn")),
    ("razboi", 2, ("Mette", "Kari 🎮")),
    ("standard", 2, (LONG, "שרה לוי")),
    ("standard", 2, (CJK, "さくら")),
    ("klassisk", 3, ("Ola", "Björn", "Ольга")),
    ("standard", 4, ("Ada", "Bo", "Cy", "Dag")),
    ("standard", 4, (LONG, CJK, "👨‍👩‍👧 Ελένη", "สมชาย")),
    ("lag", 4, ("Ada", "Bo", LONG, CJK)),
    ("steal", 3, ("Ada", "Bo", "Cy")),
]


@pytest.mark.parametrize(("preset", "players", "names"), TABLES)
def test_every_text_on_the_table_reads_on_a_phone(
    preset: str, players: int, names: tuple[str, ...]
) -> None:
    rules = Rules.preset(preset, players=players)
    seen_steps = set()
    for played in rounds(rules, 60):
        seen_steps.add(len(played.war_steps))
        texts = table_texts(played, names, "nb", total_cards=sum(played.counts), teams=rules.teams)
        check_readable(texts, WIDTH, HEIGHT)
    assert {0, 1, 2} <= seen_steps  # double wars among them


def four_player_games(count: int) -> Iterator[tuple[Story, tuple[str, ...]]]:
    """Yield the stories of seeded four-player games, some of them in teams."""
    for seed in range(count):
        rules = Rules.preset("lag") if seed % 4 == 3 else Rules.preset("standard", players=4)
        game = new_game(rules, seed)
        played: list[Round] = []
        while not game.finished:
            played.append(game.play_round())
        names = ("Ada", "Bo 🎲", CJK, LONG) if seed % 2 else ("Ada", "Bo", "Cy", "Dag")
        yield story_from(rules, played), names


def test_the_labels_of_a_four_player_chart_never_overlap_and_read_on_a_phone() -> None:
    for story, names in four_player_games(60):
        placed = chart_layout(
            story.counts,
            names,
            "en",
            wars=story.wars,
            winners=story.winners,
            title=t("en", "chart.title"),
            x_label=t("en", "chart.x_label"),
            y_label=t("en", "chart.y_label"),
            teams=story.teams,
        )
        for a, b in itertools.combinations(placed.labels, 2):
            # Apart, not merely not crossing: two pixels of background at least between them.
            assert not overlaps(grown(a, 1), grown(b, 1)), (story.counts[-1], a, b)
        check_readable(placed.texts, CHART_WIDTH, CHART_HEIGHT)


@pytest.mark.parametrize("names", [("Ingrid", "Bjørn"), (LONG, CJK), ("Kari 🎮", "שרה לוי")])
def test_every_text_of_a_two_player_chart_reads_on_a_phone(names: tuple[str, str]) -> None:
    for seed in range(6):
        rules = Rules.preset("standard")
        game = new_game(rules, seed)
        played: list[Round] = []
        while not game.finished and len(played) < 1500:
            played.append(game.play_round())
        story = story_from(rules, played)
        for title in (None, t("nb", "chart.title")):
            placed = chart_layout(
                story.counts,
                names,
                "nb",
                wars=story.wars,
                winners=story.winners,
                title=title,
                x_label=t("nb", "chart.x_label"),
                y_label=t("nb", "chart.y_label"),
            )
            check_readable(placed.texts, CHART_WIDTH, CHART_HEIGHT)
