"""Where a model's provider is resolved, once, into what a client needs; the simulated provider and
the bundled local model live here too.

``provider=default`` keeps each model's own API; ``provider=sim`` routes every
LLM to the simulated provider (each through its own API's real SDK);
``provider=local`` to the bundled local model's OpenAI-compatible server.
"""

from bargain_ray.providers.clients import ClientPool, make_client
from bargain_ray.providers.local import LocalModelUnavailable
from bargain_ray.providers.routing import effective_model, key_env, key_env_vars, key_names, missing_keys
from bargain_ray.providers.services import check_service, provider_service

__all__ = ["ClientPool", "LocalModelUnavailable", "check_service", "effective_model", "key_env", "key_env_vars", "key_names", "make_client", "missing_keys",
           "provider_service"]
