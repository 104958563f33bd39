"""Local servers a provider needs for the length of a sweep (simulated provider, local model)."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Protocol, Self, TypeVar

from bargain_ray.providers.routing import LocalProvider, Provider, SimProvider


class Served(Protocol):
    """What the service reads of a resolved sweep (``design.ResolvedSweep``): its provider, and the same sweep
    with the provider's server at an address."""

    @property
    def provider(self) -> Provider: ...

    def served_at(self, base_url: str) -> Self: ...


S = TypeVar("S", bound=Served)


class _ClientGone(logging.Filter):
    """aiohttp logs "Error handling request" with a traceback when a client goes away mid-request (a
    ``ConnectionResetError`` while the body is read); a client the run's stop ended (a worker killed at Ctrl-C)
    is no fault of the server, so that record is dropped. Any other error of the server still prints."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not (record.exc_info and isinstance(record.exc_info[1], ConnectionError))


@contextmanager
def quiet_client_resets() -> Iterator[None]:
    """While an in-process server runs: its clients' resets print nothing (``_ClientGone``)."""
    server, gone = logging.getLogger("aiohttp.server"), _ClientGone()
    server.addFilter(gone)
    try:
        yield
    finally:
        server.removeFilter(gone)


def check_service(sweep: Served) -> None:
    """Before Ray starts: the local model's server and weights are installed, or ``LocalModelUnavailable`` says what
    to install (a server already serving elsewhere needs nothing here)."""
    provider = sweep.provider
    if isinstance(provider, LocalProvider) and not provider.settings.base_url:
        from bargain_ray.providers.local import check_installed  # optional extra: imported only when used

        check_installed(provider.settings)


@contextmanager
def provider_service(sweep: S) -> Iterator[S]:
    """Start what ``sweep.provider`` needs and yield the sweep pointed at it; stop it after."""
    provider = sweep.provider
    if isinstance(provider, SimProvider | LocalProvider) and provider.settings.base_url:
        yield sweep  # a server already serving elsewhere (``python -m bargain_ray.providers.sim``, a llama.cpp server)
    elif isinstance(provider, SimProvider):
        from bargain_ray.providers.sim import SimServer  # aiohttp's server: loaded by the driver that serves it only

        with quiet_client_resets(), SimServer(provider.settings) as base_url:
            yield sweep.served_at(base_url)
    elif isinstance(provider, LocalProvider):
        from bargain_ray.providers.local import serve  # optional extra: imported only when used

        with serve(provider.settings) as base_url:
            yield sweep.served_at(base_url)
    else:
        yield sweep
