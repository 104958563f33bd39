"""The walls of the architecture: one table of which layer may import which, kept by reading every module's
imports: absolute and relative, ``import_module`` calls, inside functions and under ``TYPE_CHECKING`` alike.
``check_walls`` reads any copy of the package, so ``test_walls.py`` can plant breaches and see it fail."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from graphlib import TopologicalSorter
from pathlib import Path

import pytest

import bargain_ray

PACKAGE = Path(bargain_ray.__file__).parent
EXTERNAL = ("ray", "anthropic", "openai", "hydra", "omegaconf")
"""Third-party packages the table walls in too: Ray, the provider SDKs (loaded with the first client), Hydra."""

# importer -> what it may import besides its own layer. A key is a layer (a folder or top-level module of
# src/bargain_ray/) or, for an exception, one module ("execution.sweep", "agents.__init__"): a module may import
# what its layer's line and its own line allow. A target is a layer, a module or an EXTERNAL package.
WALLS: dict[str, set[str]] = {
    "core": set(),
    "config": {"core", "hydra", "omegaconf"},
    "design": {"core", "config", "games"},
    "design.resolved": {"providers.routing"},  # the resolver types the provider= block and routes each model (providers' own rules), once
    "design.judging": {"providers.routing"},  # a judging run routes its panel's models as the resolver routes a sweep's
    "games": {"core"},
    "agents": {"core", "config", "clients", "games"},
    "play": {"core", "config", "games", "agents"},
    "clients": {"core", "config", "anthropic", "openai"},
    "clients.limiter": {"ray"},  # the limiter is a Ray actor: the one client module that imports Ray
    "clients._ray_private": {"ray"},  # Ray's private internals, in one module below both their users (limiter, execution)
    "providers": {"core", "config", "clients", "games"},
    "execution": {"core", "config", "design", "games", "agents", "play", "clients", "providers", "store", "seats",
                  "ray"},
    "seats": {"core", "agents", "store"},  # the seat server: a human agent's desk (agents.human), seats.json (store)
    "store": {"core", "config"},
    "store.status": {"clients.snapshot"},  # limiter.json holds the limiter's own model of its state (no SDK, no Ray)
    "analysis": {"core", "config", "games", "play", "store", "design.fingerprint"},  # play: re-scoring a folder replays its records through the loop; config: the packaged games for the provenance table; design.fingerprint: readers find a game's part by the design's name for it
    "analysis.view": {"clients.snapshot"},  # the live view shows the limiter's state as the limiter models it
    "__init__": {"config", "design", "play", "execution", "analysis"},  # the public API, imported on first use
    "__main__": {"core", "config", "design", "execution", "store", "__init__"},  # __init__: run_sweep, which builds the report
    "check": {"core", "config", "design", "analysis"},  # a grid's scenario checked (design) and its frontier drawn (analysis.svg), before any call
    "replay": {"core", "config", "play", "analysis.commands", "store", "design.fingerprint"},  # analysis.commands: the parser whose usage errors exit 1, as every command's; store, design.fingerprint: a game replayed from a sweep folder's journal under the config its manifest fixed
    "report": {"core", "store", "analysis"},
    "plan": {"core", "config", "design", "store", "analysis", "execution.plan"},  # a pilot's figures; execution.plan: the grown design checked and dry-run as `run.dry_run=true` does it
    "rescore": {"core", "store", "analysis"},  # re-derives a folder's figures from its journals with the current code
    "view": {"core", "store", "analysis"},
    "judge": {"core", "config", "design", "execution", "store", "analysis"},  # a judging run over a folder (execution), then its agreement figures (analysis)
}

# `import_module` calls whose argument is not a literal string: "file: argument" -> why the call is fine. Any other
# such call is a breach until someone reads it and adds it here.
REVIEWED: dict[str, str] = {
    "__init__.py: _API[name]": "the public API's modules, named in _API (strings naming a module count as imports)",
    'clients/__init__.py: f"bargain_ray.clients.{_MODULE_OF[name]}"': "an SDK-backed client module, within clients",
    "clients/_ray_private.py: module": "a Ray module the lean start uses, named in LEAN_USES (all under ray._private)",
    "clients/registry.py: module": "an API's part its registry entry names as module:attribute (the built-in ones "
                                   "name clients modules; another package's entry point names its own module)",
    'games/__init__.py: f"{__name__}.{name}"': "a family package, within games",
    'store/__init__.py: f"bargain_ray.store.{_MODULE_OF[name]}"': "a polars-backed table module, within store",
}


@dataclass(frozen=True)
class Import:
    """One import in one file under the package root; ``target`` is None for an ``import_module`` of a
    non-literal name (then ``source`` is the argument)."""

    file: str
    line: int
    source: str
    target: str | None


def module_name(root: Path, path: Path) -> str:
    """``store/paths.py`` -> ``store.paths``; a package's ``__init__.py`` keeps its name: ``agents.__init__``."""
    return ".".join(path.relative_to(root).with_suffix("").parts)


def importable(root: Path) -> set[str]:
    """Every name a module of the package is imported by, without the package: ``agents``, ``agents.base``."""
    return {module_name(root, p).removesuffix(".__init__") for p in root.rglob("*.py")} - {"__init__"}


def resolve(dotted: str, package: str, modules: set[str]) -> str | None:
    """The module or layer an imported name lands in, or None for a package outside the walls:
    ``bargain_ray.analysis.svg.line`` -> ``analysis.svg``, ``bargain_ray.load_config`` -> ``__init__``."""
    head, *rest = dotted.split(".")
    if head != package:
        return head if head in EXTERNAL else None
    for n in range(len(rest), 0, -1):
        if ".".join(rest[:n]) in modules:
            return ".".join(rest[:n])
    return "__init__"


def absolute(node: ast.ImportFrom, importer: str, package: str) -> str:
    """The absolute module of a ``from`` import: ``from ..analysis import svg`` in ``store.paths`` ->
    ``bargain_ray.analysis``."""
    if not node.level:
        return node.module or ""
    base = [package, *importer.split(".")[:-1]]  # the importer's own package (``__init__`` counts as a module)
    base = base[: len(base) - node.level + 1]
    return ".".join(base + ([node.module] if node.module else []))


def named_imports(node: ast.AST, importer: str, package: str, modules: set[str]) -> Iterator[str | None]:
    """The absolute names ``node`` imports (None for a non-literal ``import_module``); nothing if it imports none."""
    if isinstance(node, ast.Import):
        yield from (alias.name for alias in node.names)
    elif isinstance(node, ast.ImportFrom):
        base = absolute(node, importer, package)
        for alias in node.names:
            sub = f"{base}.{alias.name}"
            yield sub if sub.removeprefix(f"{package}.") in modules else base
    elif isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", None)) in (
            "import_module", "__import__") and node.args:
        arg = node.args[0]
        literal = isinstance(arg, ast.Constant) and isinstance(arg.value, str) and not arg.value.startswith(".")
        yield arg.value if literal else None
    elif isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.startswith(f"{package}."):
        if node.value.removeprefix(f"{package}.") in modules:  # a string naming a module, as _API holds them
            yield node.value


def segment(lines: list[bytes], node: ast.AST) -> str:
    """The source of ``node``, as ``ast.get_source_segment`` gives it, from the file's lines split once (that
    function splits the whole file again on every call: most of a check's time)."""
    first, last = node.lineno - 1, node.end_lineno - 1
    if first == last:
        return lines[first][node.col_offset:node.end_col_offset].decode()
    return b"".join([lines[first][node.col_offset:], *lines[first + 1:last], lines[last][:node.end_col_offset]]).decode()


def read_imports(root: Path) -> Iterator[Import]:
    """Every import of every module under ``root`` (the package folder), wherever in the module it sits."""
    package, modules = root.name, importable(root)
    for path in sorted(root.rglob("*.py")):
        text, file, importer = path.read_text(), path.relative_to(root).as_posix(), module_name(root, path)
        lines = text.encode().splitlines(keepends=True)
        seen: set[tuple[int, str | None]] = set()  # ``from m import a, b``, or import_module's string: once a line
        for node in ast.walk(ast.parse(text)):  # breadth first: a call comes before the string it holds
            for name in named_imports(node, importer, package, modules):
                source = segment(lines, node.args[0] if name is None else node)
                target = None if name is None else resolve(name, package, modules)
                if (name is None or target is not None) and (node.lineno, target) not in seen:
                    seen.add((node.lineno, target))
                    yield Import(file, node.lineno, source, target)


def within(name: str, key: str) -> bool:
    """Whether module ``name`` is ``key`` or inside it: ``analysis.report`` is within ``analysis``."""
    return name == key or name.startswith(f"{key}.")


def allows(walls: dict[str, set[str]], importer: str, target: str) -> bool:
    """Whether the table lets module ``importer`` (``execution.sweep``) import ``target`` (``analysis.report``)."""
    if importer.split(".")[0] == target.split(".")[0]:
        return True
    lines = (allowed for key, allowed in walls.items() if within(importer, key))
    return any(within(target, entry) for allowed in lines for entry in allowed)


def layers_of(root: Path) -> set[str]:
    """The layers under ``root``: its folders and top-level modules."""
    return {p.stem for p in root.iterdir() if p.name != "__pycache__" and (p.is_dir() or p.suffix == ".py")}


def check_walls(root: Path, walls: dict[str, set[str]] = WALLS, reviewed: dict[str, str] = REVIEWED) -> list[str]:
    """Every breach of the walls in the package at ``root``, as ``file:line: statement: why``; empty when they hold."""
    present, lined = layers_of(root), {key.split(".")[0] for key in walls}
    breaches = [f"{layer}: a layer the table of walls has no line for" for layer in sorted(present - lined)]
    for imp in read_imports(root):
        importer = module_name(root, root / imp.file)
        if imp.target is None and f"{imp.file}: {imp.source}" not in reviewed:
            breaches.append(f"{imp.file}:{imp.line}: import_module({imp.source}): a name that is not a literal "
                            f"string needs review (add '{imp.file}: {imp.source}' to REVIEWED)")
        elif imp.target is not None and not allows(walls, importer, imp.target):
            breaches.append(f"{imp.file}:{imp.line}: {imp.source}: {importer.split('.')[0]} may not import "
                            f"{imp.target}")
    return breaches


def test_the_walls_hold():
    breaches = check_walls(PACKAGE)
    assert not breaches, "imports the table of walls does not allow:\n" + "\n".join(breaches)


def test_the_table_has_a_line_for_every_layer_and_only_for_layers():
    assert {key.split(".")[0] for key in WALLS} == layers_of(PACKAGE)
    assert {key for key in WALLS if "." not in key} == layers_of(PACKAGE)  # each layer's own line, exceptions aside


def test_every_exception_is_still_needed():
    """A module's own line allows something only while that module still imports it: when the import moves (the
    TODOs above), its exception goes too, so the wall closes behind it."""
    found = list(read_imports(PACKAGE))
    imports = [(module_name(PACKAGE, PACKAGE / i.file), i.target) for i in found if i.target]
    layer_lines = {key: allowed for key, allowed in WALLS.items() if "." not in key}
    unused = {(key, entry) for key, allowed in WALLS.items() if "." in key for entry in allowed
              if not any(allows({key: {entry}}, m, t) and not allows(layer_lines, m, t) for m, t in imports)}
    unused |= {(key, "") for key in REVIEWED if key not in {f"{i.file}: {i.source}" for i in found if not i.target}}
    assert not unused, f"exceptions nothing needs any more (delete them): {sorted(unused)}"


def test_the_layers_form_no_cycle():
    """The table itself points one way: no layer can reach itself through what it may import."""
    edges: dict[str, set[str]] = {key.split(".")[0]: set() for key in WALLS}
    for key, allowed in WALLS.items():
        edges[key.split(".")[0]] |= {entry.split(".")[0] for entry in allowed if entry not in EXTERNAL}
    TopologicalSorter(edges).prepare()  # raises CycleError naming the cycle


def test_every_layer_is_a_package_with_a_docstring():
    for name in sorted(key for key in WALLS if "." not in key and (PACKAGE / key).is_dir()):
        init = PACKAGE / name / "__init__.py"
        assert init.exists(), name
        assert ast.get_docstring(ast.parse(init.read_text())), f"{name}/__init__.py has no docstring"
    top = sorted(p.name for p in PACKAGE.glob("*.py"))
    assert top == ["__init__.py", "__main__.py", "check.py", "judge.py", "plan.py", "replay.py", "report.py", "rescore.py",
                   "view.py"], top  # only the commands


@pytest.mark.parametrize("args", [["--help"], ["+grid=c3_smoke", "run.workers=0"], ["+grid=c3_smoke", "models.O.x=1"]])
def test_checking_a_config_loads_no_sdk_and_no_ray(args: list[str], tmp_path: Path) -> None:
    """``--help`` and a refused config answer in well under a second: no provider SDK is imported (they load
    with the first client, in the worker that calls) and Ray is not imported at all."""
    code = ("import sys; from bargain_ray.__main__ import main; rc = main(sys.argv[1:]); "
            "print(sorted(m for m in ('anthropic', 'openai', 'ray') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code, *args, f"run.dir={tmp_path / 's'}"], capture_output=True,
                          text=True, timeout=120, env={k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"})
    assert done.stdout.strip().splitlines()[-1] == "[]", done.stdout + done.stderr


@pytest.mark.parametrize(("modules", "absent"), [
    (("execution.worker", "execution.calljournal", "execution.budget", "execution.batcher", "clients.limiter"),
     ("hydra", "omegaconf")),
    (("__main__", "execution.sweep", "execution.driver"), ("polars",)),
    (("execution.journal_actor", "execution.budget"),
     ("bargain_ray.agents", "bargain_ray.design", "bargain_ray.games", "bargain_ray.store.manifest")),
])
def test_start_up_loads_only_what_it_uses(modules: tuple[str, ...], absent: tuple[str, ...]) -> None:
    """An actor reads a composed config but never composes one: the modules Ray's worker processes import for the
    sweep's actors leave Hydra and OmegaConf unloaded (~0.3 s of CPU per actor process at start). The driver writes
    its tables after the games: up to then it loads no polars (~0.3 s of CPU before Ray starts). The call journal's
    and the budget's actors load no game, agent or design (~0.25 s of CPU at each start)."""
    code = (f"import sys, {', '.join(f'bargain_ray.{m}' for m in modules)}; "
            f"print(sorted(m for m in {absent!r} if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.stdout.strip().splitlines()[-1] == "[]", done.stdout + done.stderr
