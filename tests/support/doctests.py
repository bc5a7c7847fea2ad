"""Running the examples in the docs and docstrings."""

from __future__ import annotations

import doctest
import importlib
import inspect
import re
from types import ModuleType

EXAMPLE = re.compile(r"^\s*>>> ", re.MULTILINE)


def examples_in_source(module: ModuleType) -> int:
    """Return how many ``>>>`` lines a module's source holds."""
    return len(EXAMPLE.findall(inspect.getsource(module)))


def assert_every_example_runs(name: str) -> None:
    """Run a module's examples; each ``>>>`` line of its source must run, and hold."""
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS, verbose=False)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples failed in {name}"
    # An example where doctest does not look (an attribute's string, a copied object) would
    # otherwise pass unseen.
    assert result.attempted == examples_in_source(module), f"examples in {name} that never run"
