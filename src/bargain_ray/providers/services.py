"""Local servers a provider needs for the length of a sweep (simulated provider, local model)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Protocol, Self, TypeVar

from bargain_ray.providers.routing import LocalProvider, Provider, SimProvider
from bargain_ray.providers.sim import SimServer


class Served(Protocol):
    """What the service reads of a resolved sweep (``design.ResolvedSweep``): its provider, and the same sweep
    with the provider's server at an address."""

    @property
    def provider(self) -> Provider: ...

    def served_at(self, base_url: str) -> Self: ...


S = TypeVar("S", bound=Served)


@contextmanager
def provider_service(sweep: S) -> Iterator[S]:
    """Start what ``sweep.provider`` needs and yield the sweep pointed at it; stop it after."""
    provider = sweep.provider
    if isinstance(provider, SimProvider | LocalProvider) and provider.settings.base_url:
        yield sweep  # a server already serving elsewhere (``python -m bargain_ray.providers.sim``, a llama.cpp server)
    elif isinstance(provider, SimProvider):
        with SimServer(provider.settings) as base_url:
            yield sweep.served_at(base_url)
    elif isinstance(provider, LocalProvider):
        from bargain_ray.providers.local import serve  # optional extra: imported only when used

        with serve(provider.settings) as base_url:
            yield sweep.served_at(base_url)
    else:
        yield sweep
