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
