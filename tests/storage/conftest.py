"""Every storage test here that takes a storage runs against both backends."""

from __future__ import annotations

import pytest

from tests.support.settings import BACKENDS


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Run each test that takes a storage once per backend."""
    if "backend" in metafunc.fixturenames:
        metafunc.parametrize("backend", BACKENDS)
