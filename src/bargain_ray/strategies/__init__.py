"""Offline strategy agents that read the same prompts a model reads.

Each family module exposes ``respond(system, messages, params) -> str`` and
``recognizes(system) -> bool``; the simulated provider uses the same functions
to answer HTTP requests as a model would.
"""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType
from typing import Any

from bargain_ray.strategies import multi_issue

FAMILY_STRATEGIES: dict[str, ModuleType] = {"multi_issue": multi_issue}


def respond(system: str, messages: list[dict[str, str]], params: dict[str, Any]) -> str:
    """Answer a request as the strategy in ``params``, whatever family it is from."""
    for module in FAMILY_STRATEGIES.values():
        if module.recognizes(system):
            return module.respond(system, messages, params)
    raise ValueError("no strategy recognizes this prompt")


Responder = Callable[[str, list[dict[str, str]], dict[str, Any]], str]
