"""Which environment variables are keys, and the environment a child process gets without them.

One predicate, so the processes Ray starts and every other child of the driver (``git``) are kept free of
keys by the same rule.
"""

from __future__ import annotations

import os
from collections.abc import Collection

KEY_SUFFIX = "_API_KEY"
"""Variables named like this are treated as keys even when no model of this sweep reads them."""


def is_key(name: str, names: Collection[str] = ()) -> bool:
    """Whether variable ``name`` holds a key: one of ``names`` (a model's own ``api_key_env``) or ``*_API_KEY``."""
    return name in names or name.endswith(KEY_SUFFIX)


def environ_without_keys(names: Collection[str] = ()) -> dict[str, str]:
    """This process's environment with every key left out, for a child process that calls no provider."""
    return {name: value for name, value in os.environ.items() if not is_key(name, names)}
