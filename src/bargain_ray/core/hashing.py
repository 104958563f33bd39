"""One digest for everything that is compared by content (unit hashes, prompt keys, config parts)."""

from __future__ import annotations

import hashlib
import json
from typing import Any


def digest(obj: Any) -> str:
    """16 hex digits of the SHA-256 of ``obj`` as canonical JSON (sorted keys)."""
    return hashlib.sha256(json.dumps(obj, sort_keys=True, default=str).encode()).hexdigest()[:16]
