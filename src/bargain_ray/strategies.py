"""Offline strategy agents that read the same prompts a model reads.

Each family's ``strategy`` module exposes ``recognizes(system) -> bool`` and
``respond(system, messages, params) -> str``; the simulated provider uses the
same functions to answer HTTP requests as a model would.
"""

from __future__ import annotations

from typing import Any

from bargain_ray.games import families


def respond(system: str, messages: list[dict[str, str]], params: dict[str, Any]) -> str:
    """Answer a request as the strategy in ``params``, whatever family it is from."""
    for package in families().values():
        if package.strategy.recognizes(system):
            return package.strategy.respond(system, messages, params)
    raise ValueError("no strategy recognizes this prompt")
