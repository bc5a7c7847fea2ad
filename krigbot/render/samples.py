"""Write sample pictures of the table and of a game's chart, to look at while working on them.

    python -m krigbot.render.samples OUT_DIR

Beside the pictures, ``phone_*.png`` sheets show them as a phone does: 360 pixels wide on
Discord's dark grey, two to a row.

Each table picture is a round found by playing seeded games until one shows what the sample is
for (a double war, a Război war with nine cards down, ...), so the samples are real rounds and
the same on every run.
"""

from __future__ import annotations

import argparse
import io
import sys
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from PIL import Image

from krigbot.engine import Game, Round, Rules, card_value, is_joker, parse_card
from krigbot.engine.tournament import Bracket, next_round, record, start
from krigbot.i18n import Lang, t
from krigbot.render.bracket import draw_bracket
from krigbot.render.cards import card_face, card_width
from krigbot.render.chart import render_chart
from krigbot.render.emoji import EMOJI_CARDS, emoji_image
from krigbot.render.story import Story, story_from
from krigbot.render.table import render_round
from krigbot.render.tournament import Shown

SEEDS = range(3000)
STANDARD = Rules.preset("standard")
FOUR_PLAYERS = Rules.preset("standard", players=4)
FOUR_NAMES = ("Ada", "Bo", "Cy", "Dag")


@dataclass(frozen=True, slots=True)
class TableSample:
    """A round to find and draw."""

    file: str
    rules: Rules
    wanted: Callable[[Round], bool]
    names: tuple[str, ...]
    lang: Lang


def _plain(played: Round) -> bool:
    return not played.war_steps and played.number >= 5 and played.taken == 2


def _war(played: Round) -> bool:
    return len(played.war_steps) == 1 and played.number >= 5


def _double_war(played: Round) -> bool:
    return len(played.war_steps) == 2


def _many_down(played: Round) -> bool:
    return bool(played.war_steps) and len(played.war_steps[0].face_down[0]) >= 9


def _three_fight(played: Round) -> bool:
    return bool(played.war_steps) and len(played.war_steps[0].fighters) == 3


def _team_war(played: Round) -> bool:
    return bool(played.war_steps) and len(played.battle) == 4 and played.number >= 5


def _jokers_tie(played: Round) -> bool:
    return sum(is_joker(card) for _, card in played.battle) == 2


TABLE_SAMPLES = (
    TableSample("plain.png", STANDARD, _plain, ("Ingrid", "Bjørn"), "nb"),
    TableSample("war.png", STANDARD, _war, ("Ingrid", "Bjørn"), "nb"),
    TableSample(
        "double_war.png",
        STANDARD,
        _double_war,
        ("Åse Marie Kristoffersen-Haugland", "שרה לוי"),
        "nb",
    ),
    TableSample("razboi_war.png", Rules.preset("razboi"), _many_down, ("Mette", "Kari 🎮"), "da"),
    TableSample("four_players.png", FOUR_PLAYERS, _three_fight, FOUR_NAMES, "en"),
    TableSample("teams.png", Rules.preset("lag"), _team_war, FOUR_NAMES, "nb"),
    TableSample(
        "jokers.png",
        Rules.preset("jokere", players=3),
        _jokers_tie,
        ("Ola", "Björn", "Ольга"),
        "sv",
    ),
)


def _middle_seat_out(played: Round) -> bool:
    return [seat for seat, _ in played.battle] == [0, 2] and len(played.war_steps) == 1


def _two_sit_out(played: Round) -> bool:
    return (
        len(played.battle) == 4
        and bool(played.war_steps)
        and len(played.war_steps[0].fighters) == 2
    )


def _court_war(played: Round) -> bool:
    face_up = [card for step in played.war_steps for card in step.face_up]
    battle = [card for _, card in played.battle]
    return bool(face_up) and all(
        card is not None and 11 <= card_value(card) <= 14 for card in (*battle, *face_up)
    )


CARD_SAMPLES = (
    TableSample(
        "three_players_one_out.png",
        Rules.preset("standard", players=3),
        _middle_seat_out,
        ("Ingrid", "Bjørn", "Åsa"),
        "nb",
    ),
    TableSample("sitting_out.png", FOUR_PLAYERS, _two_sit_out, FOUR_NAMES, "en"),
    TableSample("court_cards.png", STANDARD, _court_war, ("Mette", "Kari"), "da"),
)
"""Rounds that show the cards' faces and the seats not in play."""

FACES_HEIGHT = 200
FACES = (
    ("nb", ("JH", "QS", "KD", "AS", "AH", "X1", "X2")),
    ("da", ("JS", "QD", "KC", "AD", "AC", "KH", "QC")),
    ("en", ("JC", "QH", "KS", "AH", "AD", "JD", "X2")),
)
"""Court cards, aces and jokers, a row per language: the letters differ, the faces do not."""


def faces_picture() -> bytes:
    """Return a PNG of court cards, aces and both jokers on the felt, one row per language."""
    width, gap = card_width(FACES_HEIGHT), 12
    columns = max(len(codes) for _, codes in FACES)
    sheet = Image.new(
        "RGB",
        (gap + columns * (width + gap), gap + len(FACES) * (FACES_HEIGHT + gap)),
        (34, 112, 66),
    )
    for row, (lang, codes) in enumerate(FACES):
        for column, code in enumerate(codes):
            face = card_face(parse_card(code), FACES_HEIGHT, lang)
            sheet.paste(
                face, (gap + column * (width + gap), gap + row * (FACES_HEIGHT + gap)), face
            )
    out = io.BytesIO()
    sheet.quantize(256, method=Image.Quantize.FASTOCTREE).save(out, "PNG")
    return out.getvalue()


EMOJI_SHOWN: Final = (22, 32, 48)
"""The sizes Discord shows an emoji at: in a line of text, in an embed's larger lines, alone."""
THEMES: Final = ((49, 51, 56), (255, 255, 255))
"""Discord's dark grey (#313338) and light (#FFFFFF) backgrounds."""


def emoji_picture() -> bytes:
    """Return a PNG of every card emoji at the sizes Discord shows them, on dark and on light."""
    per_row, gap = 14, 6
    rows = -(-len(EMOJI_CARDS) // per_row)
    bands = [(theme, size) for theme in THEMES for size in EMOJI_SHOWN]
    height = sum(gap + rows * (size + gap) for _, size in bands)
    width = gap + per_row * (max(EMOJI_SHOWN) + gap)
    sheet = Image.new("RGB", (width, height))
    y = 0
    for theme, size in bands:
        band_height = gap + rows * (size + gap)
        sheet.paste(theme, (0, y, width, y + band_height))
        for i, card in enumerate(EMOJI_CARDS):
            # Discord scales the uploaded picture down with a smooth filter, as here.
            small = emoji_image(card).resize((size, size), Image.Resampling.LANCZOS)
            row, column = divmod(i, per_row)
            at = (gap + column * (size + gap), y + gap + row * (size + gap))
            sheet.paste(small, at, small)
        y += band_height
    out = io.BytesIO()
    sheet.quantize(256, method=Image.Quantize.MEDIANCUT).save(out, "PNG")
    return out.getvalue()


def _write_card_samples(out_dir: Path) -> list[Path]:
    written = [_write_table(sample, out_dir) for sample in CARD_SAMPLES]
    written.append(_write(out_dir, "faces.png", faces_picture()))
    written.append(_write(out_dir, "emojis.png", emoji_picture()))
    return written


def _write(out_dir: Path, file: str, png: bytes) -> Path:
    path = out_dir / file
    path.write_bytes(png)
    return path


def _write_table(sample: TableSample, out_dir: Path) -> Path:
    played = find_round(sample.rules, sample.wanted)
    png = render_round(
        played,
        sample.names,
        sample.lang,
        total_cards=sum(played.counts),
        teams=sample.rules.teams,
    )
    return _write(out_dir, sample.file, png)


def _played(rules: Rules, seed: int) -> Iterator[Round]:
    """Yield the rounds of one seeded game as they are played."""
    game = Game.new(rules, seed)
    while not game.finished:
        yield game.play_round()


def _rounds(rules: Rules) -> Iterator[Round]:
    for seed in SEEDS:
        yield from _played(rules, seed)


def find_round(rules: Rules, wanted: Callable[[Round], bool]) -> Round:
    """Return the first round of the seeded games that is wanted; LookupError if none is."""
    for played in _rounds(rules):
        if wanted(played):
            return played
    raise LookupError("no such round in the sample seeds")


def long_game(rules: Rules, *, rounds: int) -> Story:
    """Return the story of the first seeded game longer than ``rounds``."""
    for seed in SEEDS:
        played = list(_played(rules, seed))
        if len(played) >= rounds:
            return story_from(rules, played)
    raise LookupError(f"no game of more than {rounds} rounds in the sample seeds")


def _chart(story: Story, names: Sequence[str], lang: Lang) -> bytes:
    played = len(story.counts) - 1
    return render_chart(
        story.counts,
        names,
        lang,
        wars=story.wars,
        winners=story.winners,
        title=t(lang, "chart.title"),
        x_label=t(lang, "table.summary", count=played, n=played, wars=len(story.wars)),
        y_label=t(lang, "table.counts_heading"),
        teams=story.teams,
    )


@dataclass(frozen=True, slots=True)
class ChartSample:
    """A seeded game to find and chart."""

    file: str
    rules: Rules
    rounds: int
    """The game is the first one at least this long."""
    names: tuple[str, ...]
    lang: Lang


CHART_SAMPLES = (
    ChartSample("chart_long_game.png", STANDARD, 1000, ("Ingrid", "Bjørn"), "nb"),
    ChartSample("chart_two_players.png", STANDARD, 150, ("Ada", "田中太郎"), "en"),
    ChartSample("chart_four_players.png", FOUR_PLAYERS, 200, ("Ada", "Bo 🎲", "Cy", "Dag"), "en"),
    ChartSample("chart_teams.png", Rules.preset("lag"), 100, FOUR_NAMES, "sv"),
)


def _names_round(played: Round) -> bool:
    return not played.war_steps and played.number >= 3


NAME_SAMPLES = (
    TableSample("names_cjk.png", STANDARD, _war, ("田中太郎", "김민준 王小明"), "en"),
    TableSample("names_emoji.png", STANDARD, _names_round, ("Kari 🎮🎲", "שרה 🌙"), "nb"),
    TableSample(
        "names_scripts.png",
        FOUR_PLAYERS,
        _three_fight,
        ("नमस्ते", "محمد", "👨‍👩‍👧 Ελένη", "สมชาย"),
        "da",
    ),
)


PHONE_WIDTH = 360
DISCORD_GREY = (0x31, 0x33, 0x38)
"""The background of Discord's dark theme, where the pictures are seen."""
SHEET_GAP = 16


def phone_sheet(pictures: Sequence[Path]) -> bytes:
    """Return a PNG of pictures shrunk to a phone's width on Discord's grey, two to a row."""
    shrunk: list[Image.Image] = []
    for path in pictures:
        with Image.open(path) as picture:
            height = round(picture.height * PHONE_WIDTH / picture.width)
            shrunk.append(
                picture.convert("RGB").resize((PHONE_WIDTH, height), Image.Resampling.LANCZOS)
            )
    rows = [shrunk[i : i + 2] for i in range(0, len(shrunk), 2)]
    heights = [max(image.height for image in row) for row in rows]
    sheet = Image.new(
        "RGB",
        (
            SHEET_GAP + 2 * (PHONE_WIDTH + SHEET_GAP),
            SHEET_GAP + sum(h + SHEET_GAP for h in heights),
        ),
        DISCORD_GREY,
    )
    y = SHEET_GAP
    for row, height in zip(rows, heights, strict=True):
        for column, shown in enumerate(row):
            sheet.paste(shown, (SHEET_GAP + column * (PHONE_WIDTH + SHEET_GAP), y))
        y += height + SHEET_GAP
    out = io.BytesIO()
    sheet.save(out, "PNG")
    return out.getvalue()


def write_samples(out_dir: Path) -> list[Path]:
    """Write every sample picture into ``out_dir``, and the phone sheets; return the files."""
    out_dir.mkdir(parents=True, exist_ok=True)
    tables = [_write_table(sample, out_dir) for sample in TABLE_SAMPLES]
    names = [_write_table(sample, out_dir) for sample in NAME_SAMPLES]
    cards = _write_card_samples(out_dir)
    charts = []
    for chart in CHART_SAMPLES:
        story = long_game(chart.rules, rounds=chart.rounds)
        charts.append(_write(out_dir, chart.file, _chart(story, chart.names, chart.lang)))
    brackets = [
        _write(out_dir, file, draw_bracket(shown, lang)) for file, shown, lang in _tournaments()
    ]
    sheets = [
        _write(out_dir, "phone_tables.png", phone_sheet(tables)),
        _write(out_dir, "phone_names.png", phone_sheet([*names, *cards[:-1]])),
        _write(out_dir, "phone_charts.png", phone_sheet(charts)),
        _write(out_dir, "phone_tournaments.png", phone_sheet(brackets)),
    ]
    return [*tables, *names, *cards, *charts, *brackets, *sheets]


TOURNAMENT_NAMES = (
    "Alice",
    "Bob",
    "田中太郎",
    "Øyvind",
    "שרה 🎮",
    "Zoë",
    "Åse Marie Haugland",
    "Kai",
)


def _tournaments() -> list[tuple[str, Shown, Lang]]:
    """Return a knockout of 8 in its final and Swiss standings of 7 after three rounds."""
    knockout = next_round(start("knockout", range(8), 11))
    for number, pairing in enumerate(knockout.current):
        knockout = record(knockout, number, pairing.a)
    knockout = next_round(knockout)
    for number, pairing in enumerate(knockout.current):
        knockout = record(knockout, number, pairing.b)
    knockout = next_round(knockout)
    swiss = start("swiss", range(7), 5)
    for _ in range(3):
        swiss = next_round(swiss)
        for number, pairing in enumerate(swiss.current):
            if not pairing.done:
                winner = None if (pairing.a + number) % 5 == 0 else max(pairing.players)
                swiss = record(swiss, number, winner)
    return [
        ("tournament_knockout.png", _tournament("Vårcupen", knockout), "nb"),
        ("tournament_swiss.png", _tournament("Höstturneringen", swiss), "sv"),
    ]


def _tournament(name: str, bracket: Bracket) -> Shown:
    return Shown(
        name=name,
        format=bracket.format,
        variant="standard",
        best_of=1,
        size=8,
        seed=bracket.seed,
        status="finished" if bracket.finished else "running",
        players=[(n, TOURNAMENT_NAMES[n]) for n in bracket.players],
        bracket=bracket,
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Write the samples into the folder named on the command line."""
    parser = argparse.ArgumentParser(
        prog="python -m krigbot.render.samples", description=__doc__.splitlines()[0]
    )
    parser.add_argument("out_dir", metavar="OUT_DIR", type=Path, help="the folder to write into")
    args = parser.parse_args(argv)
    for path in write_samples(args.out_dir):
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
