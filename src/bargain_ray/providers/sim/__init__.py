"""A simulated provider: real Anthropic and OpenAI HTTP APIs answered by strategy agents.

It lets a sweep rehearse the whole real design offline, at any latency, rate
limit and fault rate, with the real SDKs talking to it unchanged.
"""

from importlib import import_module
from typing import TYPE_CHECKING

from bargain_ray.providers.sim.config import SimSettings
from bargain_ray.providers.sim.log import LogEntry, requests_inside_waits

if TYPE_CHECKING:
    from bargain_ray.providers.sim.server import SimServer


def __getattr__(name: str) -> object:
    """The server (aiohttp) loads on first use: a worker that only reads the settings never imports it."""
    if name == "SimServer":
        return getattr(import_module("bargain_ray.providers.sim.server"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

__all__ = ["LogEntry", "SimServer", "SimSettings", "requests_inside_waits"]
