"""Every storage test here runs against both backends, unless marked ``sqlite_only``."""

from __future__ import annotations

import pytest

from tests.conftest import BACKENDS


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Run each test that takes a storage once per backend."""
    if "backend" in metafunc.fixturenames:
        only = metafunc.definition.get_closest_marker("sqlite_only")
        metafunc.parametrize("backend", ["sqlite"] if only else BACKENDS)
