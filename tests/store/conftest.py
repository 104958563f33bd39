"""Fixtures of the store's tests."""

from __future__ import annotations

import pytest
from folders import play_demo


@pytest.fixture(scope="module")
def demo_journal(tmp_path_factory) -> bytes:
    """The journal of 12 demo games, to copy into fresh folders."""
    path = tmp_path_factory.mktemp("demo")
    play_demo(path, 12)
    return (path / "journal.jsonl").read_bytes()
