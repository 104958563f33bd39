"""Local servers a provider needs for the length of a sweep (simulated provider, local model)."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from bargain_ray.config import SweepConfig
from bargain_ray.providers.sim import SimServer, SimSettings


def _with_settings(sweep: SweepConfig, settings: dict[str, Any]) -> SweepConfig:
    provider = sweep.provider.model_copy(update={"settings": settings})
    return sweep.model_copy(update={"provider": provider})


def sim_settings(sweep: SweepConfig) -> SimSettings:
    """The sim's settings, with the API each model's own provider speaks (so its real client is used)."""
    settings = SimSettings.model_validate(sweep.provider.settings)
    apis = {m.name: m.provider for m in sweep.models.values() if m.is_llm}
    return settings.model_copy(update={"apis": {**apis, **settings.apis}})


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


@contextmanager
def provider_service(sweep: SweepConfig) -> Iterator[SweepConfig]:
    """Start what ``sweep.provider`` needs and yield the sweep pointed at it; stop it after."""
    name = sweep.provider.name
    if name == "sim":
        settings = sim_settings(sweep)
        if settings.base_url:  # a sim already serving elsewhere (``python -m bargain_ray.providers.sim``)
            yield _with_settings(sweep, settings.model_dump())
            return
        with quiet_client_resets(), SimServer(settings) as base_url:
            yield _with_settings(sweep, settings.model_copy(update={"base_url": base_url}).model_dump())
    elif name == "local":
        from bargain_ray.providers.local import MODEL_NAME, serve  # optional extra: imported only when used

        settings = dict(sweep.provider.settings)
        with serve(settings) as base_url:
            yield _with_settings(sweep, {**settings, "base_url": base_url, "name": settings.get("name") or MODEL_NAME})
    else:
        yield sweep
