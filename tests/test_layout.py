"""The walls of the architecture, kept by reading every module's imports (function-level ones too)."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

import bargain_ray

PACKAGE = Path(bargain_ray.__file__).parent
LAYERS = ("core", "config", "design", "games", "agents", "play", "clients", "providers", "execution", "store", "analysis")


def modules() -> dict[str, set[str]]:
    """module name -> every module it imports (absolute names)."""
    out = {}
    for path in PACKAGE.rglob("*.py"):
        rel = path.relative_to(PACKAGE.parent).with_suffix("")
        name = ".".join(rel.parts).removesuffix(".__init__")
        imported = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                imported.update(a.name for a in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                imported.add(node.module)
                imported.update(f"{node.module}.{a.name}" for a in node.names)
        out[name] = imported
    return out


MODULES = modules()


def layer(name: str) -> str | None:
    parts = name.split(".")
    return parts[1] if len(parts) > 1 and parts[0] == "bargain_ray" else None


def imports_of(package: str) -> dict[str, set[str]]:
    return {m: {layer(i) for i in imp if layer(i)} for m, imp in MODULES.items() if layer(m) == package}


def test_every_layer_is_a_package_with_a_docstring_and_all():
    for name in LAYERS:
        init = PACKAGE / name / "__init__.py"
        assert init.exists(), name
        tree = ast.parse(init.read_text())
        assert ast.get_docstring(tree), f"{name}/__init__.py has no docstring"
    top = sorted(p.name for p in PACKAGE.glob("*.py"))
    assert top == ["__init__.py", "__main__.py", "replay.py", "report.py", "rescore.py", "view.py"], top  # only the package and its commands


@pytest.mark.parametrize(("package", "forbidden"), [
    ("core", set(LAYERS) - {"core"}),
    ("games", {"execution", "clients", "store", "analysis", "providers", "agents", "play", "design"}),
    ("clients", {"games", "execution", "store", "analysis", "providers", "agents", "play", "design"}),
    ("store", {"games", "execution", "clients", "analysis", "providers", "agents", "play", "design"}),
    ("analysis", {"execution", "clients", "providers"}),
    ("config", {"games", "execution", "clients", "store", "analysis", "providers", "agents", "play", "design"}),
])
def test_imports_point_one_way(package, forbidden):
    leaks = {m: sorted(used & forbidden) for m, used in imports_of(package).items() if used & forbidden}
    assert not leaks, f"{package}/ imports what it must not: {leaks}"


def test_only_execution_and_the_limiter_import_ray():
    users = sorted(m for m, imp in MODULES.items() if any(i == "ray" or i.startswith("ray.") for i in imp))
    assert users and all(m.startswith("bargain_ray.execution.") or m == "bargain_ray.clients.limiter" for m in users), users


def test_function_level_imports_are_read():
    """The lazy import of the optional local model is seen, so no import hides inside a function."""
    assert "bargain_ray.providers.local" in MODULES["bargain_ray.providers.services"]


@pytest.mark.parametrize("args", [["--help"], ["+grid=c3_smoke", "run.workers=0"], ["+grid=c3_smoke", "models.O.x=1"]])
def test_checking_a_config_loads_no_sdk_and_no_ray(args: list[str], tmp_path: Path) -> None:
    """``--help`` and a refused config answer in well under a second: no provider SDK is imported (they load
    with the first client, in the worker that calls) and Ray is not imported at all."""
    code = ("import sys; from bargain_ray.__main__ import main; rc = main(sys.argv[1:]); "
            "print(sorted(m for m in ('anthropic', 'openai', 'ray') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code, *args, f"run.dir={tmp_path / 's'}"], capture_output=True,
                          text=True, timeout=120, env={k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"})
    assert done.stdout.strip().splitlines()[-1] == "[]", done.stdout + done.stderr
