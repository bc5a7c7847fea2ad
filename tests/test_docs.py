"""The documentation stands alone: every link leads to a file here or to a public page."""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = sorted([ROOT / "README.md", *(ROOT / "docs").glob("*.md")])
# [text](target) and ![alt](target), not inside `code`.
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
CODE = re.compile(r"`[^`\n]*`")
FENCE = re.compile(r"^```.*?^```", re.S | re.M)


def links_in(text: str) -> list[str]:
    """Return the link targets of a piece of Markdown, outside code."""
    return LINK.findall(CODE.sub("", FENCE.sub("", text)))


def links(path: Path) -> list[str]:
    """Return the link targets of a Markdown file."""
    return links_in(path.read_text(encoding="utf-8"))


def test_there_are_documents_to_check() -> None:
    names = {path.relative_to(ROOT).as_posix() for path in DOCS}
    assert {"README.md", "docs/rules.md", "docs/self-hosting.md"} <= names


@pytest.mark.parametrize("doc", DOCS, ids=lambda path: path.relative_to(ROOT).as_posix())
def test_every_link_leads_to_a_file_in_the_repository_or_a_public_page(doc: Path) -> None:
    for target in links(doc):
        parts = urlsplit(target)
        if parts.scheme:
            assert parts.scheme in ("https", "mailto"), f"{doc.name}: {target}"
            assert parts.hostname not in (None, "localhost", "127.0.0.1"), f"{doc.name}: {target}"
            continue
        if not parts.path:  # a link to a heading of the same page
            continue
        resolved = (doc.parent / unquote(parts.path)).resolve()
        assert resolved.is_relative_to(ROOT), f"{doc.name} links outside the repository: {target}"
        assert resolved.exists(), f"{doc.name} links to a missing file: {target}"


def test_links_are_read_from_text_images_and_titles_but_not_from_code() -> None:
    text = (
        'see [the rules](../shared/RULES.md), ![a table](docs/table.png "A table")'
        " and `[x](nowhere)`\n```\n[y](nowhere-either)\n```\n"
    )
    assert links_in(text) == ["../shared/RULES.md", "docs/table.png"]


def slug(heading: str) -> str:
    """Return the anchor GitHub gives a heading: lower case, no punctuation, dashes for spaces."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(path: Path) -> set[str]:
    """Return the anchors of a Markdown file's headings (a repeated one gets -1, -2 …)."""
    seen: dict[str, int] = {}
    found = set()
    for heading in re.findall(r"^#+ (.+)$", FENCE.sub("", path.read_text(encoding="utf-8")), re.M):
        base = slug(heading)
        count = seen.get(base, 0)
        seen[base] = count + 1
        found.add(base if count == 0 else f"{base}-{count}")
    return found


def test_headings_are_anchored_as_github_does() -> None:
    assert slug("Growing: many processes on PostgreSQL, measured") == (
        "growing-many-processes-on-postgresql-measured"
    )
    assert slug("Shards and many processes") == "shards-and-many-processes"


@pytest.mark.parametrize("doc", DOCS, ids=lambda path: path.relative_to(ROOT).as_posix())
def test_every_link_to_a_heading_finds_it(doc: Path) -> None:
    for target in links(doc):
        parts = urlsplit(target)
        if parts.scheme or not parts.fragment or not parts.path.endswith((".md", "")):
            continue
        page = (doc.parent / unquote(parts.path)).resolve() if parts.path else doc
        if page.suffix != ".md":
            continue
        assert parts.fragment in anchors(page), f"{doc.name}: no heading for {target}"


# The documents describe the product as it is; who changed what, and when, is git's to tell.
COMMIT = re.compile(r"\b(?=[0-9a-f]*[0-9])(?=[0-9a-f]*[a-f])[0-9a-f]{7,40}\b")
DIARY = re.compile(
    r"(?<![\w&/])#\d+\b"  # an issue or pull request
    r"|\b20\d\d-\d\d-\d\d\b"  # the day something was measured
    r"|\b(?:sitting|the lead|re-measured|issues? \d+)\b"
    r"|\b(?:this|that|earlier|later|same|other|previous|next) (?:sessions?|branch|sitting)\b"
    r"|\bbetween sessions\b|\bthe same day\b|\bleft for a decision\b",
    re.I,
)


def prose(text: str) -> str:
    """Return a piece of Markdown without its code (a date or a # in a command is no diary)."""
    return CODE.sub("", FENCE.sub("", text))


def test_the_diary_patterns_find_what_they_are_for() -> None:
    assert COMMIT.findall("the code before (`12a1b76`) and 70edfa3") == ["12a1b76", "70edfa3"]
    assert COMMIT.findall("10000000 rounds, a deadbeef-free 1,084-round game") == []
    text = "measured in issue #14 on 2026-12-01, in the lead's runs; earlier sessions were slower"
    assert len(DIARY.findall(prose(text))) == 4
    assert (
        DIARY.findall(prose("the seat, `#1`; a session invalidated; `krig-2026-12-01.dump`")) == []
    )


@pytest.mark.parametrize("doc", DOCS, ids=lambda path: path.relative_to(ROOT).as_posix())
def test_a_document_tells_of_the_product_not_of_its_making(doc: Path) -> None:
    text = doc.read_text(encoding="utf-8")
    assert COMMIT.findall(text) == [], f"{doc.name} names commits"
    assert DIARY.findall(prose(text)) == [], f"{doc.name} tells of who did what when"


BENCH = re.compile(r"python -m (bench\.\w+)((?: --?[\w-]+(?:[ =](?!python\b)[\w.,/-]+)?)*)")


def bench_commands() -> list[tuple[str, str, str]]:
    """Return every ``python -m bench.X …`` in the documents: (document, module, its options)."""
    return [
        (doc.name, module, options)
        for doc in DOCS
        for module, options in BENCH.findall(doc.read_text(encoding="utf-8"))
    ]


def test_the_documents_name_benches() -> None:
    assert {module for _, module, _ in bench_commands()} >= {"bench.bot", "bench.cluster"}


@pytest.mark.parametrize(
    "module", sorted({module for _, module, _ in bench_commands()}), ids=lambda name: name
)
def test_every_bench_a_document_names_exists_with_the_options_it_gives(module: str) -> None:
    path = ROOT / "bench" / f"{module.removeprefix('bench.')}.py"
    assert path.is_file(), f"no {module}"
    source = path.read_text(encoding="utf-8")
    assert re.search(r"^def main\(", source, re.M), f"{module} has no main"
    for doc, named, options in bench_commands():
        if named != module:
            continue
        for option in re.findall(r"(?<![\w-])(--[\w-]+)", options):
            assert f'"{option}"' in source, f"{doc}: {module} has no {option}"


# A constant a document quotes (`NAME` = 1 s, `NAME` = 128) is the one in the code.
QUOTED = re.compile(r"`([A-Z][A-Z0-9_]{2,})` = ([\d][\d,_.]*)")


def constants() -> dict[str, set[float]]:
    """Return every module-level constant of the code that is a plain number, by name."""
    found: dict[str, set[float]] = {}
    for path in [*(ROOT / "krigbot").rglob("*.py"), ROOT / "bot.py"]:
        for name, value in re.findall(
            r"^([A-Z][A-Z0-9_]+)(?:: [^=\n]+)? = ([\d_.]+)$", path.read_text(encoding="utf-8"), re.M
        ):
            found.setdefault(name, set()).add(float(value.replace("_", "")))
    return found


def test_the_constants_the_documents_quote_are_the_codes() -> None:
    code = constants()
    quoted = [
        (doc.name, name, float(value.rstrip(".").replace(",", "")))
        for doc in DOCS
        for name, value in QUOTED.findall(doc.read_text(encoding="utf-8"))
    ]
    assert {name for _, name, _ in quoted} >= {"DEFER_AFTER", "BUSY", "AHEAD_MOST"}
    for doc, name, value in quoted:
        assert code.get(name) == {value}, f"{doc}: `{name}` = {value:g}, the code: {code.get(name)}"


def test_the_deferral_is_stated_as_the_code_does_it() -> None:
    from krigbot.adapter.replies import DEFER_AFTER

    stated = [
        float(seconds)
        for doc in DOCS
        for seconds in re.findall(
            r"\bdefer(?:s|red|ring)?\b[^.|]{0,80}?\b(?:at|after) (\d+(?:\.\d+)?) s\b",
            prose(doc.read_text(encoding="utf-8")),
        )
    ]
    assert stated, "no document says when a reply is deferred"
    assert set(stated) == {DEFER_AFTER}


SIZE = re.compile(r"\d[\d,.]* ?(?:MiB|MB|KiB|KB|GB)(?!\w)")


def test_what_self_hosting_says_a_bot_needs_is_what_performance_md_measures() -> None:
    hosting = (ROOT / "docs" / "self-hosting.md").read_text(encoding="utf-8")
    needs = re.search(r"^## What it needs\n(.*?)^## ", hosting, re.S | re.M)
    assert needs is not None
    sizes = SIZE.findall(needs[1])
    assert len(sizes) >= 3  # memory, packages, fonts
    performance = (ROOT / "docs" / "performance.md").read_text(encoding="utf-8")
    assert [size for size in sizes if size not in performance] == []


def rule_sections() -> set[int]:
    """Return the numbers of docs/rules.md's numbered sections (``## 7. The end of a game``)."""
    text = (ROOT / "docs" / "rules.md").read_text(encoding="utf-8")
    return {int(number) for number in re.findall(r"^## (\d+)\. ", text, flags=re.MULTILINE)}


def repository_texts() -> list[Path]:
    """Return the code, catalogs and documents of the repository (not its vendored files)."""
    kinds = ("*.py", "*.po", "*.sql", "*.md", "*.html", "*.js", "*.service")
    places = [ROOT / "krigbot", ROOT / "bench", ROOT / "tests", ROOT / "docs", ROOT / "deploy"]
    found = [ROOT / "bot.py", ROOT / "README.md"]
    for place in places:
        found += [path for kind in kinds for path in place.rglob(kind)]
    return [path for path in found if "discord-api-spec" not in path.parts]


def test_the_rules_sections_are_numbered_in_order() -> None:
    assert rule_sections() == set(range(1, len(rule_sections()) + 1))
    assert len(rule_sections()) >= 12


def test_the_code_cites_the_repositorys_own_rules_and_only_sections_they_have() -> None:
    sections = rule_sections()
    for path in repository_texts():
        text = path.read_text(encoding="utf-8")
        where = path.relative_to(ROOT)
        # The workshop's files are not part of the product: cite docs/rules.md and its sections.
        assert not re.search(r"(?<![/\w])(RULES|STYLE)\.md|RULES \u00a7", text), where
        for cited in re.findall(r"rules §(\d+)", text):
            assert int(cited) in sections, (
                f"{where} cites rules §{cited}, which docs/rules.md lacks"
            )
