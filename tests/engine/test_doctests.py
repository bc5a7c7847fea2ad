"""The ``>>>`` examples in the engine's docstrings run as tests."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import krigbot.engine

MODULES = sorted(
    f"krigbot.engine.{info.name}" for info in pkgutil.iter_modules(krigbot.engine.__path__)
)


def test_the_engine_modules_are_found() -> None:
    for name in ("cards", "rules", "game", "fast", "events", "errors", "steal"):
        assert f"krigbot.engine.{name}" in MODULES


@pytest.mark.parametrize("name", ["krigbot.engine", *MODULES])
def test_docstring_examples_hold(name: str) -> None:
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS, verbose=False)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples failed in {name}"


@pytest.mark.parametrize("name", ["krigbot.engine.cards", "krigbot.engine.rules"])
def test_modules_with_examples_have_them(name: str) -> None:
    module = importlib.import_module(name)
    assert doctest.testmod(module, verbose=False).attempted > 0
