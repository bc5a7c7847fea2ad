"""The storage every test of this folder gets: a new database file, closed after the test."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from krigbot.storage import Storage

if TYPE_CHECKING:
    from collections.abc import AsyncIterator
    from pathlib import Path


@pytest.fixture
async def storage(tmp_path: Path) -> AsyncIterator[Storage]:
    opened = await Storage.open(tmp_path / "krig.db")
    yield opened
    await opened.close()
