"""The ``>>>`` examples in the engine's docstrings run as tests, every one of them."""

from __future__ import annotations

import importlib
import pkgutil
from types import ModuleType

import pytest

import krigbot.engine
from tests.support.doctests import assert_every_example_runs, examples_in_source


def modules_with_examples(package: ModuleType) -> list[str]:
    """Return the package and each of its modules whose source holds ``>>>`` examples."""
    names = [package.__name__] + [
        f"{package.__name__}.{info.name}" for info in pkgutil.iter_modules(package.__path__)
    ]
    return sorted(n for n in names if examples_in_source(importlib.import_module(n)))


ENGINE_MODULES = modules_with_examples(krigbot.engine)


def test_the_engine_has_modules_with_examples() -> None:
    assert len(ENGINE_MODULES) >= 2


@pytest.mark.parametrize("name", ENGINE_MODULES)
def test_every_docstring_example_of_the_engine_runs_and_holds(name: str) -> None:
    assert_every_example_runs(name)
