"""The code that runs: its git commit and, when the checkout differs from it, a hash of the difference; recorded
in the manifest when a sweep starts, and shown in the dataset card and the report."""

from __future__ import annotations

import hashlib
import subprocess
from collections.abc import Collection
from pathlib import Path

from pydantic import BaseModel

from bargain_ray.core.secrets import environ_without_keys

HERE = Path(__file__).resolve().parent


class CodeVersion(BaseModel):
    """A git commit and whether the tracked files differed from it (``diff``: a hash of how)."""

    commit: str
    dirty: bool
    diff: str | None = None
    """sha256 of ``git diff HEAD`` (the tracked files' uncommitted changes, staged or not) when dirty: two runs
    with the same commit and the same hash ran the same code (None: a clean tree, or recorded before this field)."""

    def describe(self) -> str:
        return describe(self.commit, self.diff if self.dirty else None, self.dirty)


def describe(commit: str | None, diff: str | None, dirty: bool | None = None) -> str:
    """How a reader is told which code ran: ``commit abc`` or ``commit abc with uncommitted changes (diff sha256
    1f2e...)``; ``an unknown commit`` without one."""
    if commit is None:
        return "an unknown commit"
    if diff is None and not dirty:
        return f"commit {commit}"
    return f"commit {commit} with uncommitted changes" + (f" (diff sha256 {diff})" if diff else "")


def read_code_version(keys: Collection[str] = (), where: Path = HERE) -> CodeVersion | None:
    """The checkout this package runs from (``where``), or None when it is not one (an installed wheel) or git is
    absent.

    git is a child that calls no provider: it gets neither a ``*_API_KEY`` nor any variable named in ``keys``.
    """
    env = environ_without_keys(keys)

    def git(*args: str) -> str:
        return subprocess.run(["git", *args], cwd=where, capture_output=True, text=True, check=True,
                              env=env).stdout

    try:
        commit = git("rev-parse", "HEAD").strip()
        dirty = bool(git("status", "--porcelain", "--untracked-files=no").strip())
        diff = hashlib.sha256(git("diff", "HEAD", "--binary").encode()).hexdigest() if dirty else None
    except (OSError, subprocess.CalledProcessError):
        return None
    return CodeVersion(commit=commit, dirty=dirty, diff=diff)
