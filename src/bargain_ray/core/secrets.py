"""Which environment variables are keys, the environment a child process gets without them, and the mask that
keeps a key out of any text that comes from outside.

One predicate, so the processes Ray starts and every other child of the driver (``git``) are kept free of
keys by the same rule; one mask, so an error, a header, an id or a reply a provider echoed a key into is kept
free of it by the same rule (``clients``: on the one way each comes in).
"""

from __future__ import annotations

import itertools
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


FRAGMENT = 8
"""Characters of a key that are masked wherever they appear together: a server may echo a key in part."""


def mask(text: str, secret: str | None) -> str:
    """``text`` with the key and every run of ``FRAGMENT`` or more of its consecutive characters as ``***``.

    Our rule: a fragment that short still narrows the key for anyone reading the record, and no text from a
    provider needs one; a key shorter than ``FRAGMENT`` is masked only whole. Every run of ``FRAGMENT`` characters
    of the key holds one of its ``FRAGMENT // 2``-character blocks at a multiple of that, so a text holding none of
    them is returned as it is after one look for each block (a reply's text is read this way on every call).
    """
    if not secret:
        return text
    text = text.replace(secret, "***")
    half = FRAGMENT // 2
    if len(secret) < FRAGMENT or not any(secret[i:i + half] in text for i in range(0, len(secret) - half + 1, half)):
        return text
    windows = {secret[i:i + FRAGMENT] for i in range(len(secret) - FRAGMENT + 1)}
    hidden = [False] * len(text)
    for i in range(len(text) - FRAGMENT + 1):
        if text[i:i + FRAGMENT] in windows:
            hidden[i:i + FRAGMENT] = [True] * FRAGMENT
    runs = itertools.groupby(zip(text, hidden, strict=True), key=lambda pair: pair[1])
    return "".join("***" if masked else "".join(c for c, _ in run) for masked, run in runs)
