"""The commit of the code that runs: recorded in the manifest when a sweep starts, and in the dataset card."""

from __future__ import annotations

import subprocess
from collections.abc import Collection
from pathlib import Path

from pydantic import BaseModel

from bargain_ray.core.secrets import environ_without_keys

HERE = Path(__file__).resolve().parent


class CodeVersion(BaseModel):
    """A git commit and whether the tracked files differed from it."""

    commit: str
    dirty: bool


def read_code_version(keys: Collection[str] = ()) -> CodeVersion | None:
    """The checkout this package runs from, or None when it is not one (an installed wheel) or git is absent.

    git is a child that calls no provider: it gets neither a ``*_API_KEY`` nor any variable named in ``keys``.
    """
    env = environ_without_keys(keys)

    def git(*args: str) -> str:
        return subprocess.run(["git", *args], cwd=HERE, capture_output=True, text=True, check=True,
                              env=env).stdout.strip()

    try:
        return CodeVersion(commit=git("rev-parse", "HEAD"),
                           dirty=bool(git("status", "--porcelain", "--untracked-files=no")))
    except (OSError, subprocess.CalledProcessError):
        return None
