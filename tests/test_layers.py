"""The layers of krigbot/ import downwards only, as docs/architecture.md draws them.

cogs → adapter (the Discord adapter); cogs, adapter and web → sessions → storage and engine;
render → engine and i18n; nothing imports cogs;
the engine imports nothing of ours. Every import of every module counts, including those inside
functions and under ``if TYPE_CHECKING:``, with one allowance: the renderers may name storage's
plain row types (``GameRow`` and the like) for type checking only. Such an import loads nothing
when the bot runs (``TYPE_CHECKING`` is False then), and a row is only values, so render still
depends on the engine and i18n alone; the second half of this file checks that at run time.
"""

from __future__ import annotations

import ast
import dataclasses
import functools
import importlib
import json
import pkgutil
import subprocess
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import pytest

import krigbot.engine
import krigbot.render

ROOT = Path(__file__).resolve().parents[1]

LAYER_OF = {
    "bot": "top",
    "cogs": "cogs",
    "adapter": "adapter",
    "web": "web",
    "sessions": "sessions",
    "storage": "storage",
    "render": "render",
    "sim": "sim",
    "fairness": "sim",  # the fairness check's command line is sim's
    "engine": "engine",
    "i18n": "i18n",
    "config": "low",
    "logs": "low",
    "load": "low",
    "monitoring": "low",
}
"""The layer of each name directly under krigbot/ (a module or a package)."""

LAYERS = frozenset(LAYER_OF.values())

ALLOWED: dict[str, frozenset[str]] = {
    # bot.py and krigbot/bot.py wire everything together.
    "top": LAYERS,
    # The cogs put the web view's signed links on their messages; the web view never imports a
    # cog. The cogs hand the renderers the fairness check's command line, which sim builds.
    # Alone of the layers, the cogs may not import their own: each cog module stands alone.
    "cogs": frozenset(
        {"adapter", "web", "sessions", "storage", "render", "sim", "engine", "i18n", "low"}
    ),
    # The adapter answers, orders, writes and draws for the cogs; it never imports a cog.
    "adapter": frozenset({"web", "sessions", "storage", "render", "sim", "engine", "i18n", "low"}),
    "web": frozenset({"sessions", "storage", "render", "engine", "i18n", "low"}),
    "sessions": frozenset({"storage", "engine", "low"}),
    "storage": frozenset({"low"}),
    "render": frozenset({"engine", "i18n"}),
    "sim": frozenset({"engine"}),
    # Card names are the engine's cards in the reader's language.
    "i18n": frozenset({"engine", "low"}),
    "engine": frozenset(),
    "low": frozenset(),
}
"""Which other layers a layer may import (its own it always may)."""


STORAGE = "krigbot.storage"


@dataclass(frozen=True, slots=True)
class Source:
    """One module's source, as found on disk."""

    path: str
    module: str
    text: str


@dataclass(frozen=True, slots=True)
class Import:
    """One imported module of ours, where it is imported and what names it gives."""

    line: int
    target: str
    names: tuple[str, ...]
    type_only: bool


def module_name(path: Path) -> str:
    """Return the dotted name of a module of krigbot/ (or ``bot`` for bot.py)."""
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


@functools.cache
def project_sources() -> tuple[Source, ...]:
    """Return every module of krigbot/ and the entry point bot.py."""
    paths = [*sorted((ROOT / "krigbot").rglob("*.py")), ROOT / "bot.py"]
    return tuple(
        Source(str(path.relative_to(ROOT)), module_name(path), path.read_text(encoding="utf-8"))
        for path in paths
    )


def is_package(source: Source) -> bool:
    return source.path.endswith("__init__.py")


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _walk(nodes: Iterable[ast.AST], type_only: bool) -> Iterator[tuple[ast.AST, bool]]:
    """Yield every node below ``nodes``, and whether it sits under ``if TYPE_CHECKING:``."""
    for node in nodes:
        yield node, type_only
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            yield from _walk(node.body, True)
            yield from _walk(node.orelse, type_only)
        else:
            yield from _walk(ast.iter_child_nodes(node), type_only)


def imports_of(source: Source, modules: frozenset[str]) -> Iterator[Import]:
    """Yield every import of a module of ours in ``source``, wherever in the module it is."""
    package = source.module if is_package(source) else source.module.rpartition(".")[0]
    for node, type_only in _walk([ast.parse(source.text, source.path)], False):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield Import(node.lineno, alias.name, (), type_only)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                origin = ".".join([*base, *([node.module] if node.module else [])])
            else:
                origin = node.module or ""
            names = tuple(alias.name for alias in node.names)
            # ``from krigbot import logs`` imports the module krigbot.logs, not the package.
            submodules = [name for name in names if f"{origin}.{name}" in modules]
            for name in submodules:
                yield Import(node.lineno, f"{origin}.{name}", (), type_only)
            rest = tuple(name for name in names if name not in submodules)
            if rest:
                yield Import(node.lineno, origin, rest, type_only)


def layer_of(module: str) -> str | None:
    """Return a module's layer; None if it is not ours, ``?`` if ours but in no layer."""
    if module == "bot":
        return "top"
    parts = module.split(".")
    if parts[0] != "krigbot":
        return None
    if len(parts) == 1:
        return "low"  # the package itself, which only names the project
    return LAYER_OF.get(parts[1], "?")


def is_row_type(name: str) -> bool:
    """Tell whether storage exports ``name`` as a plain row type: a dataclass of values."""
    storage = importlib.import_module(STORAGE)
    found = getattr(storage, name, None)
    return name in storage.__all__ and isinstance(found, type) and dataclasses.is_dataclass(found)


def is_allowed(importer: str, found: Import) -> bool:
    """Tell whether a module may import what it imports, by the layers and the allowance."""
    here, there = layer_of(importer), layer_of(found.target)
    if here == there == "cogs":
        return False  # no cog module imports another: what cogs share is the adapter's
    if there is None or here == there:
        return True
    if here is not None and there in ALLOWED.get(here, frozenset()):
        return True
    return (
        here == "render"
        and found.type_only
        and found.target == STORAGE
        and bool(found.names)
        and all(is_row_type(name) for name in found.names)
    )


def forbidden_edges(
    sources: Iterable[Source], modules: frozenset[str] | None = None
) -> Iterator[tuple[Source, Import]]:
    """Yield every import that goes against the layers (``modules``: every module there is)."""
    listed = list(sources)
    known = frozenset(source.module for source in listed) if modules is None else modules
    for source in listed:
        for found in imports_of(source, known):
            if not is_allowed(source.module, found):
                yield source, found


def describe(source: Source, found: Import) -> str:
    kind = " (type only)" if found.type_only else ""
    edge = f"{layer_of(source.module)} → {layer_of(found.target)}"
    return f"{source.path}:{found.line}: {source.module} imports {found.target}{kind}: {edge}"


def test_every_module_belongs_to_a_layer() -> None:
    lost = [source.path for source in project_sources() if layer_of(source.module) == "?"]
    assert lost == [], f"give these a layer in LAYER_OF: {lost}"


def test_no_module_imports_a_layer_it_may_not() -> None:
    found = [describe(source, edge) for source, edge in forbidden_edges(project_sources())]
    assert found == [], "imports against the layers:\n" + "\n".join(found)


@pytest.mark.parametrize(
    ("path", "text", "forbidden"),
    [
        ("krigbot/engine/x.py", "def f():\n    from krigbot.cogs.play import PlayCog\n", True),
        ("krigbot/engine/x.py", "from ..render import embeds\n", True),
        ("krigbot/engine/x.py", "from . import rules\nfrom .cards import is_joker\n", False),
        ("krigbot/sessions.py", "import krigbot.render.play\n", True),
        ("krigbot/web/x.py", "from krigbot.cogs import play\n", True),
        ("krigbot/render/x.py", "from krigbot.storage import GameRow\n", True),
        ("krigbot/render/x.py", "from krigbot import sim\n", True),
        (
            "krigbot/render/x.py",
            "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
            "    from krigbot.storage import GameRow, PlayerStats\n",
            False,
        ),
        (
            "krigbot/render/x.py",
            "import typing\nif typing.TYPE_CHECKING:\n    from krigbot.storage import Storage\n",
            True,
        ),
        (
            "krigbot/render/x.py",
            "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    pass\nelse:\n"
            "    from krigbot.storage import GameRow\n",
            True,
        ),
        ("krigbot/cogs/x.py", "from krigbot.fairness import fairness_command\n", False),
        ("krigbot/cogs/x.py", "from krigbot.cogs.play import PlayCog\n", True),
        ("krigbot/cogs/x.py", "from . import matches\n", True),
        ("krigbot/cogs/x.py", "from krigbot.adapter.endings import ending\n", False),
        ("bot.py", "from krigbot.cogs.play import PlayCog\n", False),
    ],
)
def test_the_check_tells_a_forbidden_import_from_an_allowed_one(
    path: str, text: str, forbidden: bool
) -> None:
    probe = Source(path, module_name(ROOT / path), text)
    modules = frozenset(source.module for source in project_sources()) | {probe.module}

    found = [edge for _, edge in forbidden_edges([probe], modules)]

    assert bool(found) == forbidden, found
    if found:
        assert describe(probe, found[0]).startswith(f"{path}:{found[0].line}: {probe.module}")


def modules_loaded_by(modules: Iterable[str]) -> list[str]:
    """Return the modules a fresh interpreter loads to import these."""
    script = (
        "import importlib, json, sys\n"
        "before = set(sys.modules)\n"
        f"for name in {sorted(modules)!r}:\n"
        "    importlib.import_module(name)\n"
        "print(json.dumps(sorted(set(sys.modules) - before)))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    loaded: list[str] = json.loads(done.stdout)
    return loaded


def all_modules(package: str) -> list[str]:
    found = importlib.import_module(package)
    return [package, *(info.name for info in pkgutil.walk_packages(found.__path__, f"{package}."))]


def test_the_play_renderer_loads_neither_storage_nor_sim() -> None:
    loaded = modules_loaded_by(["krigbot.render.play"])

    assert "krigbot.render.play" in loaded
    assert [name for name in loaded if name.split(".")[0] == "aiosqlite"] == []
    assert [name for name in loaded if name.startswith(("krigbot.storage", "krigbot.sim"))] == []


def test_the_renderers_load_only_the_engine_and_i18n_of_ours() -> None:
    modules = all_modules(krigbot.render.__name__)
    assert "krigbot.render.embeds" in modules

    loaded = modules_loaded_by(modules)

    # The package krigbot itself is loaded first, as for any of its modules; it only names us.
    ours = [name for name in loaded if layer_of(name) is not None and name != "krigbot"]
    beyond = [name for name in ours if layer_of(name) not in {"render", *ALLOWED["render"]}]
    assert beyond == [], f"importing the renderers loads {beyond}"


def test_the_engine_loads_only_the_standard_library() -> None:
    loaded = modules_loaded_by(all_modules(krigbot.engine.__name__))

    outside = [
        name
        for name in loaded
        if name.split(".")[0] not in sys.stdlib_module_names
        and not name.startswith("krigbot.engine")
        and name != "krigbot"
    ]
    assert outside == [], f"importing the engine loads {outside}"


def classes_of_ours() -> list[type]:
    """Return every class defined in a module of krigbot/, each once."""
    found: dict[str, type] = {}
    for name in all_modules("krigbot"):
        module = importlib.import_module(name)
        for value in vars(module).values():
            if isinstance(value, type) and value.__module__ == name:
                found[f"{name}.{value.__qualname__}"] = value
    return list(found.values())


def is_ours(cls: type) -> bool:
    return cls.__module__.split(".")[0] == "krigbot"


def builds_on(cls: type) -> list[type]:
    """Return the classes of ours that ``cls`` inherits behaviour from (not protocols)."""
    return [
        base
        for base in cls.__mro__[1:]
        if is_ours(base) and not getattr(base, "_is_protocol", False)
    ]


def test_no_class_is_built_on_more_than_one_class_of_ours() -> None:
    # Errors are a family by nature (every StorageError is caught as one); behaviour is composed.
    towers = [
        f"{cls.__module__}.{cls.__qualname__} builds on "
        + ", ".join(base.__qualname__ for base in builds_on(cls))
        for cls in classes_of_ours()
        if not issubclass(cls, BaseException) and len(builds_on(cls)) > 1
    ]
    assert towers == [], "compose these instead of inheriting:\n" + "\n".join(towers)


def test_the_check_finds_a_tower() -> None:
    class Part:
        pass

    class Other:
        pass

    Part.__module__ = Other.__module__ = "krigbot.sessions.x"

    class Tower(Part, Other):
        pass

    class Alone(Part):
        pass

    assert builds_on(Tower) == [Part, Other]
    assert builds_on(Alone) == [Part]


COGS = ROOT / "krigbot" / "cogs"
MOST_LINES_OF_A_COG = 500


def test_every_module_in_cogs_defines_a_cog_and_is_short() -> None:
    from discord.ext import commands

    problems = []
    for path in sorted(COGS.glob("[!_]*.py")):
        module = importlib.import_module(module_name(path))
        cogs = [
            value
            for value in vars(module).values()
            if isinstance(value, type)
            and issubclass(value, commands.Cog)
            and value.__module__ == module.__name__
        ]
        if not cogs:
            problems.append(f"{path.relative_to(ROOT)} defines no cog: it belongs in adapter/")
        lines = len(path.read_text(encoding="utf-8").splitlines())
        if lines >= MOST_LINES_OF_A_COG:
            problems.append(f"{path.relative_to(ROOT)} has {lines} lines")
    assert problems == []


def test_cogs_are_defined_only_in_cogs() -> None:
    from discord.ext import commands

    elsewhere = [
        f"{cls.__module__}.{cls.__qualname__}"
        for cls in classes_of_ours()
        if issubclass(cls, commands.Cog) and not cls.__module__.startswith("krigbot.cogs.")
    ]
    assert elsewhere == []


def test_the_discord_adapter_is_a_package_of_its_own() -> None:
    adapter = importlib.import_module("krigbot.adapter")

    assert adapter.__doc__ is not None
    assert "Discord adapter" in adapter.__doc__
    assert LAYER_OF["adapter"] == "adapter"
    assert "cogs" not in ALLOWED["adapter"]


def parts_taken(cls: type) -> type | None:
    """Return the type a cog's (or loop's) constructor takes its ``parts`` as, if it takes them."""
    named = cls.__init__.__annotations__.get("parts")  # type: ignore[misc]
    if named is None:
        return None
    # The annotations are strings (postponed), naming a class of the cog's module or one it
    # imports for type checking only; Parts itself is such an import.
    taken = vars(sys.modules[cls.__module__]).get(named)
    if taken is None and named == "Parts":
        from krigbot.adapter.parts import Parts

        taken = Parts
    return taken if isinstance(taken, type) else None


def parts_declared(protocol: type) -> dict[str, type]:
    """Return each part a Protocol names, with the Protocol of its MRO that names it."""
    return {
        name: base
        for base in reversed(protocol.__mro__)
        if getattr(base, "_is_protocol", False)
        for name in vars(base).get("__annotations__", {})
    }


def test_every_part_has_a_protocol_of_its_own() -> None:
    from krigbot.adapter import parts

    names = {field.name for field in dataclasses.fields(parts.Parts)}
    protocols = {
        name: value
        for name, value in vars(parts).items()
        if isinstance(value, type) and getattr(value, "_is_protocol", False) and is_ours(value)
    }
    expected = {"Has" + name.title().replace("_", ""): name for name in names}
    own = {name: set(vars(value).get("__annotations__", {})) for name, value in protocols.items()}
    assert {name: declared for name, declared in own.items() if declared} == {
        protocol: {name} for protocol, name in expected.items()
    }
    # The others only group parts that always go together (``TableParts``), from the same module.
    grouped = [value for name, value in protocols.items() if not own[name]]
    assert [
        base.__qualname__
        for value in grouped
        for base in value.__bases__
        if base is not Protocol and base.__module__ != parts.__name__
    ] == []


def test_every_cog_receives_only_the_parts_it_uses() -> None:
    """A cog names what it takes of the bot's parts in a Protocol composed of the parts' own
    (``HasRegistry``), so the type checker refuses it any other part; and it names nothing it
    does not use."""
    from discord.ext import commands

    from krigbot.adapter.autoplayer import Autoplayer
    from krigbot.adapter.parts import Parts

    every = {field.name for field in dataclasses.fields(Parts)}
    problems = []
    takers = [cls for cls in classes_of_ours() if issubclass(cls, commands.Cog)] + [Autoplayer]
    for cls in takers:
        taken = parts_taken(cls)
        if taken is None:
            continue
        name = f"{cls.__module__}.{cls.__qualname__}"
        if taken is Parts or not getattr(taken, "_is_protocol", False):
            problems.append(f"{name} takes all of Parts, not a Protocol of what it uses")
            continue
        declared = parts_declared(taken)
        problems += [
            f"{name} declares {part} in {base.__qualname__}, not by a Protocol of adapter/parts.py"
            for part, base in declared.items()
            if base.__module__ != "krigbot.adapter.parts"
        ]
        source = Path(sys.modules[cls.__module__].__file__ or "").read_text(encoding="utf-8")
        used = {part for part in every if f"parts.{part}" in source}
        if set(declared) != used:
            problems.append(f"{name} declares {sorted(declared)} but uses {sorted(used)}")
    assert problems == []
    assert len(takers) > 8  # every cog is checked, not none
