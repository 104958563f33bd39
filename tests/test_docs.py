"""The docs say what the code does: every shell block marked runnable runs as the page says, every test a page
cites exists, every link between pages resolves, and the README's test command is the one ``.ci/run`` runs.

A fenced block whose info string starts with ``bash runnable`` runs in a fresh temporary directory, joined to the
tests' Ray (``sweep_env``), after every block of the same page whose info string carries ``file=PATH`` has been
written there. Every command must exit 0, except that with ``exit=N`` in the info string the block's last command must exit N
(docs/README.md says so to writers)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = sorted([ROOT / "README.md", ROOT / "jobs" / "README.md", ROOT / "bench" / "RESULTS.md",
                *(ROOT / "docs").glob("*.md")])
FENCE = re.compile(r"^```([^\n`]*)\n(.*?)^```$", re.M | re.S)
RUNNABLE = "bash runnable"
FILE = re.compile(r"\bfile=(\S+)")
EXIT = re.compile(r"\bexit=(\d+)")
CITED = re.compile(r"\b(tests/[\w/]+\.py)(?:::(\w+))?")
LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")
README_LINES = 250
BLOCK_TIMEOUT_S = 180


@dataclass(frozen=True)
class Block:
    page: Path
    line: int
    info: str
    text: str

    @property
    def name(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"

    def commands(self) -> list[str]:
        """The block's commands, a line continued with a backslash joined to the next; comments and blanks left out."""
        joined = self.text.replace("\\\n", " ")
        return [line for line in joined.splitlines() if line.strip() and not line.lstrip().startswith("#")]


def blocks(page: Path) -> list[Block]:
    """The fenced blocks of ``page``, each with the line its fence opens on."""
    text = page.read_text()
    return [Block(page, text.count("\n", 0, m.start()) + 1, m[1].strip(), m[2]) for m in FENCE.finditer(text)]


RUNNABLE_BLOCKS = [b for page in PAGES for b in blocks(page) if b.info.startswith(RUNNABLE)]


@pytest.fixture(scope="module")
def python_on_path(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A folder whose ``python`` runs this interpreter, so a block's ``python -m bargain_ray`` runs this install (a
    script that execs it by its own path: a symlink elsewhere would leave a virtual environment's interpreter its base
    one, which finds no ``pyvenv.cfg`` beside the link)."""
    folder = tmp_path_factory.mktemp("bin")
    (folder / "python").write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n')
    (folder / "python").chmod(0o755)
    return str(folder)


def run(script: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", "-e", "-o", "pipefail", "-c", script], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=BLOCK_TIMEOUT_S)


def test_the_docs_have_runnable_blocks() -> None:
    assert len(RUNNABLE_BLOCKS) >= 5, [b.name for b in RUNNABLE_BLOCKS]


@pytest.mark.parametrize("block", RUNNABLE_BLOCKS, ids=lambda b: b.name)
def test_a_runnable_block_runs_as_the_page_says(block: Block, tmp_path: Path, sweep_env: dict[str, str],
                                                python_on_path: str) -> None:
    for other in blocks(block.page):
        if (target := FILE.search(other.info)) is not None:
            path = tmp_path / target[1]
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(other.text)
    env = sweep_env | {"PATH": python_on_path + os.pathsep + sweep_env.get("PATH", "")}
    expected = EXIT.search(block.info)
    *before, last = block.commands()
    steps = [("\n".join(before), 0), (last, int(expected[1]))] if expected else [(block.text, 0)]
    for script, code in steps:
        done = run(script, tmp_path, env)
        assert done.returncode == code, (f"{block.name}: exited {done.returncode}, not {code}\n{script}\n"
                                         f"{done.stdout}\n{done.stderr}")


def test_every_test_the_docs_cite_exists() -> None:
    cited = [(page, m[1], m[2]) for page in PAGES for m in CITED.finditer(page.read_text())]
    assert cited
    missing = [f"{page.relative_to(ROOT)}: {path}" + (f"::{name}" if name else "") for page, path, name in cited
               if not (ROOT / path).is_file()
               or (name and not re.search(rf"^(async )?def {name}\(", (ROOT / path).read_text(), re.M))]
    assert not missing, "\n".join(missing)


def test_every_link_between_pages_resolves() -> None:
    links = [(page, m[1]) for page in PAGES for m in LINK.finditer(page.read_text()) if "://" not in m[1]]
    assert links
    broken = [f"{page.relative_to(ROOT)}: {target}" for page, target in links if not (page.parent / target).exists()]
    assert not broken, "\n".join(broken)


def test_the_readme_is_short_and_its_test_command_is_what_ci_runs() -> None:
    readme = (ROOT / "README.md").read_text().splitlines()
    assert len(readme) <= README_LINES
    command = readme[readme.index("# 2. the tests (what .ci/run runs)") + 1]
    assert command in (ROOT / ".ci" / "run").read_text().splitlines()
