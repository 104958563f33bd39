"""One digest for everything that is compared by content (unit hashes, prompt keys, config parts), and one for
files (the dataset's, the published tables)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any


def digest(obj: Any) -> str:
    """16 hex digits of the SHA-256 of ``obj`` as canonical JSON (sorted keys)."""
    return hashlib.sha256(json.dumps(obj, sort_keys=True, default=str).encode()).hexdigest()[:16]


def file_digest(path: Path) -> str:
    """16 hex digits of the SHA-256 of a file's bytes."""
    with path.open("rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()[:16]
