"""The model APIs the runner can call, by the name a model config gives as its ``provider``.

An API is one ``API`` entry: its client class, its retry classification (which of its SDK's errors are worth
another attempt, and the ``FailureKind`` of each), its header reader, its key variable, its batch API, and
where the simulated provider serves it. The built-in ones are registered below; a package adds one with
``register`` in its own module, found by every process of a sweep (the driver, each Ray worker) through an
entry point of the ``bargain_ray.apis`` group naming that ``API``: one module and a model YAML, no edit here.

Parts that need an SDK are named as ``"module:attribute"`` and loaded on first use, so checking a config (which
reads ``names``) imports no SDK.
"""

from __future__ import annotations

import gc
import sys
from collections.abc import Callable
from dataclasses import dataclass
from importlib import import_module
from importlib.metadata import EntryPoint, entry_points
from typing import TYPE_CHECKING, Any

from bargain_ray.clients.headers import Announced, read_headers

if TYPE_CHECKING:
    from bargain_ray.clients.batches import BatchAPI, BatchRoute
    from bargain_ray.clients.http import HTTPClient
    from bargain_ray.clients.retry import SDKErrors
    from bargain_ray.config import ModelConfig

GROUP = "bargain_ray.apis"
"""The entry point group through which another package's module hands over its ``API``."""


def load(ref: Any) -> Any:
    """``"module:attribute"`` imported, or the object itself.

    A module's first import runs with the cyclic garbage collector paused (then left as it was), and what the
    process holds then is frozen out of later collections (``gc.freeze``): an SDK's first import (``anthropic``:
    about 2,000 modules and their pydantic models) allocates objects that all live on, which the collections its
    allocations set off would walk again and again, and which the first collections after it (one of every
    generation, 0.15-0.2 s on 2 cores) would walk once more, just as the runner sends its first request. Paused, a
    GameRunner imported the Anthropic SDK in 0.75-0.93 s (median 0.76 s) against 0.83-0.99 s (median 0.88 s), five
    alternated ``+grid=c3_smoke provider=sim`` runs each on 2 cores. The price, once per module: the cyclic garbage
    the import left (0.7-0.8 MB for an SDK's client module), and any other not collected yet, is never freed. A
    module imported already is only looked up: nothing is frozen twice."""
    if not isinstance(ref, str):
        return ref
    module, _, attribute = ref.partition(":")
    if module in sys.modules:
        return getattr(import_module(module), attribute)  # through the import lock: another thread's import ends first
    collecting = gc.isenabled()
    gc.disable()
    try:
        loaded = import_module(module)
        gc.freeze()  # what the import made lives as long as its module: no collection need walk it
    finally:
        if collecting:
            gc.enable()
    return getattr(loaded, attribute)


@dataclass(frozen=True)
class API:
    """One model API: everything the runner needs to call it, retry it, pace it and rehearse it."""

    name: str
    """What a model config gives as its ``provider``."""
    key_env: str | None
    """The environment variable of its key, unless a model names its own ``api_key_env``."""
    client: Any
    """Its ``HTTPClient`` subclass (or ``"module:Class"``): built as ``client(model, label, key, base_url, api)``."""
    errors: Any
    """Its SDK's retry classification, a ``clients.retry.SDKErrors`` (or ``"module:NAME"``)."""
    batches: Any = None
    """Its ``BatchAPI`` subclass (or ``"module:Class"``); None: it has no batch API."""
    sim_path: str | None = None
    """Where the simulated provider serves it, below the sim's address (``""``, ``"/v1"``); None: it does not."""
    read_headers: Callable[[dict[str, str]], Announced] = read_headers
    """What its rate-limit headers announce (``clients.headers``)."""

    def sdk_errors(self) -> SDKErrors:
        return load(self.errors)

    def make_client(self, model: ModelConfig, label: str, key: str, base_url: str | None) -> HTTPClient:
        """A client of this API for ``model`` under ``key`` (``label`` is the provider recorded on each call)."""
        return load(self.client)(model, label, key, base_url, self)

    def make_batches(self, route: BatchRoute) -> BatchAPI:
        if self.batches is None:
            raise ValueError(f"the {self.name} API has no batch API")
        return load(self.batches)(route, self)


_REGISTERED: dict[str, API] = {}


def register(api: API) -> API:
    """Make ``api`` callable by its name in this process (registering a name again replaces it)."""
    _REGISTERED[api.name] = api
    return api


def _entry_points() -> dict[str, EntryPoint]:
    return {ep.name: ep for ep in entry_points(group=GROUP)}


def names() -> list[str]:
    """Every API a model config may name as its ``provider``: registered here or by an entry point."""
    return sorted(set(_REGISTERED) | set(_entry_points()))


def get(name: str) -> API:
    """The API named ``name`` (an entry point's is loaded and registered on first use); KeyError if none."""
    if name not in _REGISTERED:
        found = _entry_points().get(name)
        if found is None:
            raise KeyError(f"no model API named {name!r}; known: {', '.join(names())}")
        api = found.load()
        if not isinstance(api, API) or api.name != name:
            raise KeyError(f"entry point {name!r} of {GROUP} does not name an API called {name!r}")
        register(api)
    return _REGISTERED[name]


MESSAGES = "bargain_ray.clients.anthropic_messages"
CHAT = "bargain_ray.clients.openai_chat"

register(API(name="anthropic", key_env="ANTHROPIC_API_KEY", client=f"{MESSAGES}:AnthropicClient",
             errors=f"{MESSAGES}:ERRORS", batches="bargain_ray.clients.anthropic_batches:AnthropicBatches",
             sim_path=""))
register(API(name="openai", key_env="OPENAI_API_KEY", client=f"{CHAT}:OpenAIClient", errors=f"{CHAT}:ERRORS",
             batches="bargain_ray.clients.openai_batches:OpenAIBatches", sim_path="/v1"))
register(API(name="openai_compatible", key_env="OPENAI_API_KEY", client=f"{CHAT}:CompatibleClient",
             errors=f"{CHAT}:ERRORS", sim_path="/v1"))
