"""A value as a one-line message shows it: a config error (``config.errors``) and a resume refusal
(``store.manifest``) name values alike, so a user reads the same spelling in both."""

from __future__ import annotations

import json
import math
from typing import Any

ABSENT = object()
"""A key one side of a comparison lacks; shown as ``(absent)``."""

WIDTH = 60
"""Characters a value takes in a message at most (ours)."""


def show(value: Any, width: int = WIDTH) -> str:
    """``value`` as a user types it on the command line: strings bare, inf and nan as typed (not JSON's
    ``Infinity``), the rest as JSON; cut to ``width`` characters."""
    if value is ABSENT:
        return "(absent)"
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    text = value if isinstance(value, str) else json.dumps(value, default=str)
    return text if len(text) <= width else text[: width - 1] + "…"
