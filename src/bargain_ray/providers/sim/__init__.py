"""A simulated provider: real Anthropic and OpenAI HTTP APIs answered by strategy agents.

It lets a sweep rehearse the whole real design offline, at any latency, rate
limit and fault rate, with the real SDKs talking to it unchanged.
"""

from bargain_ray.providers.sim.config import SimSettings
from bargain_ray.providers.sim.server import SimServer, requests_inside_waits

__all__ = ["SimServer", "SimSettings", "requests_inside_waits"]
