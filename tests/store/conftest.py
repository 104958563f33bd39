"""Fixtures of the store's tests."""

from __future__ import annotations

from pathlib import Path

import pytest
from folders import play_demo


@pytest.fixture(scope="module")
def demo_folder(tmp_path_factory) -> Path:
    """A sweep folder of 12 demo games, whose files the tests copy into fresh folders."""
    path = tmp_path_factory.mktemp("demo")
    play_demo(path, 12)
    return path


@pytest.fixture(scope="module")
def demo_journal(demo_folder: Path) -> bytes:
    """The journal of the 12 demo games."""
    return (demo_folder / "journal.jsonl").read_bytes()


@pytest.fixture(scope="module")
def demo_manifest(demo_folder: Path) -> str:
    """The manifest of the demo folder, as the driver wrote it."""
    return (demo_folder / "manifest.json").read_text()
