"""Shared test helpers live in tests/support/; no test imports another test module.

Every module under tests/ is a test module (``test_*.py``), a ``conftest.py``, a package's
``__init__.py``, the Discord stand-in (``tests/standin/``) or a shared helper in
``tests/support/``. Nothing imports a test module or a conftest, nor a tests package whose
``__init__.py`` defines anything (the stand-in's packages aside): what more than one test
needs is imported from tests/support/ (or from the stand-in). Every import counts, including
those inside functions and under ``if TYPE_CHECKING:``.
"""

from __future__ import annotations

import ast
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
"""The tests/ folder this file lives in."""

HELPER_HOMES = ("support", "standin")
"""The folders of tests/ where a module that is not a test, conftest or ``__init__`` lives."""


def module_name(path: Path, tests: Path) -> str:
    """Return the dotted name of a module under ``tests`` (``tests.support.players``)."""
    parts = [tests.name, *path.relative_to(tests).with_suffix("").parts]
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def module_file(name: str, tests: Path) -> Path | None:
    """Return the file of a dotted module name under ``tests``, or None if it is not one."""
    parts = name.split(".")
    if parts[0] != tests.name:
        return None
    folder = tests.joinpath(*parts[1:])
    if (folder / "__init__.py").is_file():
        return folder / "__init__.py"
    module = folder.with_suffix(".py")
    return module if len(parts) > 1 and module.is_file() else None


def imported(path: Path, tests: Path) -> Iterator[tuple[int, str]]:
    """Yield (line, dotted name) for each module under ``tests`` that a file imports.

    ``from a import b`` counts ``a``, and ``a.b`` too when that is a module of its own.
    """
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    package = module_name(path, tests).split(".")
    if path.name != "__init__.py":
        package.pop()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + 1]
                source = ".".join([*base, node.module] if node.module else base)
            else:
                source = node.module or ""
            yield node.lineno, source
            for alias in node.names:
                if module_file(f"{source}.{alias.name}", tests) is not None:
                    yield node.lineno, f"{source}.{alias.name}"


def defines_something(init: Path) -> bool:
    """Tell whether a package's ``__init__.py`` defines more than its docstring and re-exports."""
    for node in ast.parse(init.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Import | ast.ImportFrom):
            continue
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            continue
        if isinstance(node, ast.Assign) and [ast.unparse(t) for t in node.targets] == ["__all__"]:
            continue
        return True
    return False


def forbidden(target: Path, tests: Path) -> str | None:
    """Return why importing a module of tests/ is not allowed, or None if it is allowed.

    The stand-in is a package like any library's: its ``__init__.py`` files are its own.
    """
    if target.name.startswith("test_"):
        return "a test module"
    if target.name == "conftest.py":
        return "a conftest"
    in_standin = target.relative_to(tests).parts[0] == "standin"
    if target.name == "__init__.py" and not in_standin and defines_something(target):
        return "a tests package whose __init__.py defines helpers"
    return None


def import_problems(tests: Path) -> list[str]:
    """Return each import of a test module, a conftest or a helper-defining package __init__."""
    problems = []
    for path in sorted(tests.rglob("*.py")):
        for line, name in imported(path, tests):
            target = module_file(name, tests)
            if target is None or target == path:
                continue
            why = forbidden(target, tests)
            if why is not None:
                where = path.relative_to(tests.parent)
                problems.append(f"{where}:{line} imports {name}, {why}")
    return problems


def misplaced(tests: Path) -> list[str]:
    """Return each helper module that lives outside tests/support/ and tests/standin/."""
    problems = []
    for path in sorted(tests.rglob("*.py")):
        if path.name.startswith("test_") or path.name in ("conftest.py", "__init__.py"):
            continue
        if path.relative_to(tests).parts[0] not in HELPER_HOMES:
            problems.append(f"{path.relative_to(tests.parent)} belongs in tests/support/")
    return problems


def test_no_test_imports_another_test_module_a_conftest_or_a_helper_package() -> None:
    assert import_problems(TESTS) == []


def test_every_shared_helper_lives_in_tests_support_or_the_standin() -> None:
    assert misplaced(TESTS) == []


def write(tests: Path, files: dict[str, str]) -> None:
    """Write a small tests/ tree: each file's path under tests/ and its source."""
    for name, source in files.items():
        path = tests / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(source), encoding="utf-8")


@pytest.mark.parametrize(
    ("files", "expected"),
    [
        (
            {"cogs/test_a.py": "X = 1\n", "cogs/test_b.py": "from tests.cogs.test_a import X\n"},
            ["tests/cogs/test_b.py:1 imports tests.cogs.test_a, a test module"],
        ),
        (
            {
                "conftest.py": "BACKENDS = ()\n",
                "test_a.py": "from tests.conftest import BACKENDS\n",
            },
            ["tests/test_a.py:1 imports tests.conftest, a conftest"],
        ),
        (
            {
                "storage/__init__.py": "def at() -> int:\n    return 1\n",
                "storage/test_a.py": "def test() -> None:\n    from tests.storage import at\n",
            },
            [
                "tests/storage/test_a.py:2 imports tests.storage, "
                "a tests package whose __init__.py defines helpers"
            ],
        ),
        (
            {"engine/test_a.py": "X = 1\n", "engine/test_b.py": "from .test_a import X\n"},
            ["tests/engine/test_b.py:1 imports tests.engine.test_a, a test module"],
        ),
        (
            {"test_a.py": "X = 1\n", "sim/test_b.py": "from ..test_a import X\n"},
            ["tests/sim/test_b.py:1 imports tests.test_a, a test module"],
        ),
        (
            {"cogs/test_a.py": "X = 1\n", "test_b.py": "from tests.cogs import test_a\n"},
            ["tests/test_b.py:1 imports tests.cogs.test_a, a test module"],
        ),
        (
            {
                "standin/__init__.py": '"""Stand-in."""\nfrom .server import S\n__all__ = ["S"]\n',
                "standin/server.py": "S = 1\n",
                "support/players.py": "from tests.standin import S\n",
                "cogs/test_a.py": "from tests.support.players import S\n",
                "standin/routes/__init__.py": "ROUTES = []\n",
                "standin/world.py": "from .routes import ROUTES\n",
            },
            [],
        ),
    ],
)
def test_the_import_check_names_each_file_and_import_it_refuses(
    tmp_path: Path, files: dict[str, str], expected: list[str]
) -> None:
    tests = tmp_path / "tests"
    write(tests, files)
    assert import_problems(tests) == expected


def test_the_layout_check_names_each_helper_outside_support_and_the_standin(
    tmp_path: Path,
) -> None:
    tests = tmp_path / "tests"
    names = ["postgres.py", "cogs/helpers.py", "support/players.py", "standin/world.py"]
    names += ["cogs/test_a.py", "cogs/conftest.py", "cogs/__init__.py"]
    write(tests, dict.fromkeys(names, ""))
    assert misplaced(tests) == [
        "tests/cogs/helpers.py belongs in tests/support/",
        "tests/postgres.py belongs in tests/support/",
    ]
