"""The ``>>>`` examples in the engine's docstrings run as tests, every one of them."""

from __future__ import annotations

import doctest
import importlib
import inspect
import pkgutil
import re
from types import ModuleType

import pytest

import krigbot.engine

EXAMPLE = re.compile(r"^\s*>>> ", re.MULTILINE)


def examples_in_source(module: ModuleType) -> int:
    """Return how many ``>>>`` lines a module's source holds."""
    return len(EXAMPLE.findall(inspect.getsource(module)))


def modules_with_examples(package: ModuleType) -> list[str]:
    """Return the package and each of its modules whose source holds ``>>>`` examples."""
    names = [package.__name__] + [
        f"{package.__name__}.{info.name}" for info in pkgutil.iter_modules(package.__path__)
    ]
    return sorted(n for n in names if examples_in_source(importlib.import_module(n)))


def assert_every_example_runs(name: str) -> None:
    """Run a module's examples; each ``>>>`` line of its source must run, and hold."""
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS, verbose=False)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples failed in {name}"
    # An example where doctest does not look (an attribute's string, a copied object) would
    # otherwise pass unseen.
    assert result.attempted == examples_in_source(module), f"examples in {name} that never run"


ENGINE_MODULES = modules_with_examples(krigbot.engine)


def test_the_engine_has_modules_with_examples() -> None:
    assert len(ENGINE_MODULES) >= 2


@pytest.mark.parametrize("name", ENGINE_MODULES)
def test_every_docstring_example_of_the_engine_runs_and_holds(name: str) -> None:
    assert_every_example_runs(name)
