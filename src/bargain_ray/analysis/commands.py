"""What the report and view commands share: a parser whose usage errors exit 1 (the README's exit-code table: a
user error), and hints that are commands as they can be typed here."""

from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path
from typing import NoReturn

from bargain_ray.core.status import ExitCode
from bargain_ray.store import MANIFEST

SHOWN = 3
"""Sweep folders a hint names at most."""


class Parser(argparse.ArgumentParser):
    """argparse whose usage error is one line that exits ``ExitCode.USER_ERROR`` (argparse's own exit is 2, which
    the project's table gives to "finished with unknown games")."""

    def error(self, message: str) -> NoReturn:
        print(f"error: {message}; see `{self.prog} --help`", file=sys.stderr)
        raise SystemExit(ExitCode.USER_ERROR)


def count(text: str) -> int:
    """An argument type: a whole number >= 1 (a judge's resamples)."""
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text} is not >= 1")
    return value


def share(text: str) -> float:
    """An argument type: a number strictly between 0 and 1 (a confidence level, a power)."""
    value = float(text)
    if not 0 < value < 1:
        raise argparse.ArgumentTypeError(f"{text} is not between 0 and 1")
    return value


def sweep_folders(root: Path) -> list[Path]:
    """The sweep folders directly under ``root`` (they hold a manifest), newest first."""
    if not root.is_dir():
        return []
    return sorted((p for p in root.iterdir() if (p / MANIFEST).is_file()), key=lambda p: -p.stat().st_mtime)


def hint(command: str, root: Path = Path("outputs")) -> str:
    """What to run instead: the command on the sweep folders there are (each works as printed), else how to make one."""
    folders = sweep_folders(root)[:SHOWN]
    if folders:
        return "; e.g. " + " or ".join(f"`{command} {shlex.quote(str(p))}`" for p in folders)
    return f"; no sweep folder is under {root}/ yet: run one, e.g. `python -m bargain_ray +grid=demo`"
