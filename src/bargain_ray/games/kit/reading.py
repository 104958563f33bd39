"""How an offline strategy reads the request it answers: only the text a model would read."""

from __future__ import annotations

import re

RECORD_MARK = "Public record"
"""Every per-turn user message of the record-carrying families starts its record with this."""


def public_record(messages: list[dict[str, str]]) -> str:
    """The latest user message that carries the public record (a repair message does not)."""
    return next(m["content"] for m in reversed(messages) if m["role"] == "user" and RECORD_MARK in m["content"])


def find_match(pattern: re.Pattern[str], text: str) -> re.Match[str]:
    """The first match of ``pattern`` in a request's text; ValueError when it has none (a prompt the strategy
    cannot read)."""
    match = pattern.search(text)
    if match is None:
        raise ValueError(f"the request does not match {pattern.pattern!r}")
    return match


def within_words(text: str, limit: int) -> str:
    """``text`` cut to its first ``limit`` words: what a strategy says where the brief caps a message's words."""
    return " ".join(text.split()[:limit])
