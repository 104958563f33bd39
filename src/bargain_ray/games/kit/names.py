"""Names a scenario gives its parts, checked where the config is read so every prompt that lists them reads one way.

A prompt writes names into formulas, score sheets and comma-separated lists, and a strategy (and a model) reads them
back from that text: a name holding the separator of its list would read as two names, or as part of the formula.
"""

from __future__ import annotations

import re
from typing import Annotated

from pydantic import AfterValidator

_IDENTIFIER = re.compile(r"\w+")
_SEPARATORS = re.compile(r"[,;:=\n\r]")


def _identifier(name: str) -> str:
    if not _IDENTIFIER.fullmatch(name):
        raise ValueError("use letters, digits and underscores only (ours: the brief writes it into its scoring "
                         "formula and the reply's JSON keys)")
    return name


def _listed(name: str) -> str:
    if not name.strip() or name != name.strip() or _SEPARATORS.search(name):
        raise ValueError("a name must not be empty, begin or end with a space, or hold , ; : = or a line break "
                         "(ours: the prompts list names with them)")
    return name


Identifier = Annotated[str, AfterValidator(_identifier)]
"""A term's name or symbol in a formula: letters, digits and underscores."""
Listed = Annotated[str, AfterValidator(_listed)]
"""A party, issue or option name the prompts list: no separator of theirs in it."""
