"""The wall test tested: each kind of breach planted in a copy of the package makes ``check_walls`` fail, naming
the file, the line and the import; the unmodified copy passes."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from test_layout import PACKAGE, check_walls


def copy_package(tmp_path: Path) -> Path:
    """A copy of the package to plant breaches in (named as the package: imports are read against its name)."""
    return Path(shutil.copytree(PACKAGE, tmp_path / PACKAGE.name, ignore=shutil.ignore_patterns("__pycache__")))


def test_the_unmodified_copy_passes(tmp_path: Path) -> None:
    assert check_walls(copy_package(tmp_path)) == []


@pytest.mark.parametrize(("file", "planted", "statement", "why"), [
    ("store/paths.py", "from ..analysis import svg", "from ..analysis import svg", "store may not import analysis.svg"),
    ("core/text.py", "from .. import analysis", "from .. import analysis", "core may not import analysis"),
    ("design/units.py", "import bargain_ray.execution", "import bargain_ray.execution",
     "design may not import execution"),
    ("play/loop.py", 'def _planted():\n    return importlib.import_module("bargain_ray.analysis")',
     'importlib.import_module("bargain_ray.analysis")', "play may not import analysis"),
    ("agents/llm.py", "def _planted():\n    from bargain_ray.execution import worker",
     "from bargain_ray.execution import worker", "agents may not import execution.worker"),
    ("games/base.py", "if TYPE_CHECKING:\n    from bargain_ray.store import paths", "from bargain_ray.store import paths",
     "games may not import store.paths"),
    ("config/schema.py", 'API = {"run": "bargain_ray.execution.sweep"}', '"bargain_ray.execution.sweep"',
     "config may not import execution.sweep"),
    ("store/lock.py", "import ray", "import ray", "store may not import ray"),
    ("clients/http.py", "from ray import remote", "from ray import remote", "clients may not import ray"),
    ("execution/plan.py", "from bargain_ray.analysis import report", "from bargain_ray.analysis import report",
     "execution may not import analysis.report"),  # the exception of execution/sweep.py opens no other module
    ("analysis/view.py", "def _planted(name):\n    return import_module(name)", "import_module(name)",
     "needs review"),
])
def test_a_planted_breach_fails_the_walls(file: str, planted: str, statement: str, why: str, tmp_path: Path) -> None:
    root = copy_package(tmp_path)
    path = root / file
    path.write_text(f"{path.read_text()}\n{planted}\n")
    breaches = check_walls(root)
    assert len(breaches) == 1 and statement in breaches[0] and why in breaches[0], breaches
    where = re.match(rf"{re.escape(file)}:(\d+): ", breaches[0])
    assert where, breaches
    assert statement.split("(")[0] in path.read_text().splitlines()[int(where[1]) - 1]  # the line it names


def test_a_module_outside_every_layer_fails_the_walls(tmp_path: Path) -> None:
    root = copy_package(tmp_path)
    (root / "util.py").write_text('"""Helpers."""\n')
    assert check_walls(root) == ["util: a layer the table of walls has no line for"]
