"""The ``>>>`` examples in the docstrings of krigbot/ and bot.py run as tests.

The engine's examples run in tests/engine/test_doctests.py; every other module is found here by
walking the package, so a new module's examples run without anyone listing it.
"""

from __future__ import annotations

import doctest
import importlib
import pkgutil
from pathlib import Path

import pytest

import krigbot


def _outside_the_engine(name: str) -> bool:
    return name != "krigbot.engine" and not name.startswith("krigbot.engine.")


MODULES = [
    "bot",
    "krigbot",
    *sorted(
        info.name
        for info in pkgutil.walk_packages(krigbot.__path__, "krigbot.")
        if _outside_the_engine(info.name)
    ),
]


def test_the_modules_are_found_by_walking_the_package() -> None:
    for name in ("krigbot.i18n", "krigbot.sim", "krigbot.render.chart", "krigbot.web.server"):
        assert name in MODULES
    assert not [name for name in MODULES if not _outside_the_engine(name)]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_hold(name: str) -> None:
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS, verbose=False)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples failed in {name}"
    # An example doctest cannot see (in a comment, say) would never run: each one must count.
    if ">>>" in Path(str(module.__file__)).read_text(encoding="utf-8"):
        assert result.attempted > 0, f"{name} shows examples that doctest does not run"
