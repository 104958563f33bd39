"""Text from outside made valid Unicode: one rule, applied where JSON is decoded into text.

JSON can spell a lone surrogate (``"\\ud800"``) that no UTF-8 can carry: the SDKs' request encoding,
parquet and the report's file would all refuse it. It can only enter where JSON is decoded into
a Python str: a provider's response body (``Reply.text``) and a model's JSON reply
(``games.kit.replies.json_object``). Both apply ``whole_characters``; every later step then holds
valid Unicode. A pair written as two escapes joins into its character; a lone half becomes U+FFFD.
"""

from __future__ import annotations

from typing import Any


def whole_characters(text: str) -> str:
    """``text`` with lone surrogates replaced by U+FFFD (unchanged, and cheap, when it has none)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
    return text


def whole_strings(value: Any) -> Any:
    """Every string (keys too) of a decoded JSON value through ``whole_characters``."""
    if isinstance(value, str):
        return whole_characters(value)
    if isinstance(value, dict):
        return {whole_characters(k): whole_strings(v) for k, v in value.items()}
    if isinstance(value, list):
        return [whole_strings(v) for v in value]
    return value
