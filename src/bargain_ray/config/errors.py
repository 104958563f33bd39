"""Config mistakes as the user reads them: one line each, with the dotted key as typed on the command line.

Pydantic's own text (a model name, a location tuple, a URL per error) and Hydra's (a hint to add ``+``
that then fails) are written for developers; this module turns both into lines such as
``run.workers=0: must be >= 1`` or ``unknown key run.max_cost; did you mean run.max_cost_usd?``.
"""

from __future__ import annotations

import difflib
import math
import types
from collections.abc import Iterable, Sequence
from typing import Any, TypeVar, Union, get_args, get_origin

from pydantic import BaseModel, ValidationError
from pydantic_core import ErrorDetails

from bargain_ray.core.display import show

M = TypeVar("M", bound=BaseModel)

KeyPath = Sequence[str | int]
"""A dotted key as parts: ``("grid", "designs", 0)``."""

BOUNDS = {"greater_than_equal": ">=", "greater_than": ">", "less_than_equal": "<=", "less_than": "<"}
"""Pydantic's range error types, as the sign a user reads."""


class ConfigError(Exception):
    """The config cannot run; ``problems`` holds one readable line per mistake."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("\n".join(problems))
        self.problems = problems


def dotted(path: KeyPath) -> str:
    """``("grid", "designs", 0, "pairings")`` as ``grid.designs.0.pairings``: the key as an override writes it."""
    return ".".join(str(part) for part in path)


def _unwrap(annotation: Any) -> Any:
    """``X | None`` as ``X``; any other type unchanged."""
    if get_origin(annotation) in (Union, types.UnionType):
        args = [a for a in get_args(annotation) if a is not type(None)]
        return args[0] if len(args) == 1 else annotation
    return annotation


def _is_model(node: Any) -> bool:
    return isinstance(node, type) and issubclass(node, BaseModel)


def _child(node: Any, part: str | int) -> Any:
    """The type found one step below ``node``; None when the schema says nothing there (``Any``, open dicts)."""
    if _is_model(node):
        field = node.model_fields.get(str(part))
        return _unwrap(field.annotation) if field is not None else None
    args = get_args(node)
    if get_origin(node) is dict and len(args) == 2:
        return _unwrap(args[1])
    if get_origin(node) is list and args:
        return _unwrap(args[0])
    return None


def schema_keys(model: type[BaseModel], path: KeyPath) -> list[str] | None:
    """The keys ``model`` allows right below ``path``; None where any key is allowed or the schema is silent."""
    node: Any = model
    for part in path:
        node = _child(node, part)
        if node is None:
            return None
    return list(node.model_fields) if _is_model(node) else None


def nearest(name: str, names: Iterable[str]) -> str | None:
    """The valid name closest to a mistyped one (difflib's ratio >= 0.6), if any."""
    match = difflib.get_close_matches(name, sorted(set(names)), n=1, cutoff=0.6)
    return match[0] if match else None


def unknown_key(path: Sequence[str | int], at: int, candidates: Iterable[str]) -> str:
    """One line for a key nobody knows: the nearest valid key at the level where it goes wrong (``at``)."""
    names = sorted(set(candidates))
    match = nearest(str(path[at]), names)
    if match:
        return f"unknown key {dotted(path)}; did you mean {dotted([*path[:at], match, *path[at + 1:]])}?"
    where = dotted(path[:at]) or "the config"
    return f"unknown key {dotted(path)}; {where} has " + (", ".join(names) if names else "no keys")


FINITE = "should be a finite number"


def non_finite(data: Any, path: KeyPath = ()) -> list[str]:
    """One line per NaN or infinite float anywhere in composed config data (game configs and provider settings
    included, whichever schema reads them later): no knob of any schema means anything by one."""
    if isinstance(data, float) and not math.isfinite(data):
        return [f"{dotted(path)}={show(data)}: {FINITE}"]
    if isinstance(data, dict):
        return [line for k, v in data.items() for line in non_finite(v, (*path, str(k)))]
    if isinstance(data, list):
        return [line for i, v in enumerate(data) for line in non_finite(v, (*path, i))]
    return []


def _rule(error: ErrorDetails) -> str:
    kind, ctx = error["type"], error.get("ctx") or {}
    if kind in BOUNDS:
        bound = next(iter(ctx.values()), "?")
        return f"must be {BOUNDS[kind]} {f'{bound:g}' if isinstance(bound, float) else bound}"
    if kind == "too_short":
        return f"must hold at least {ctx.get('min_length', 1)} item(s)"
    message = str(error["msg"]).removeprefix("Value error, ").removeprefix("Input ")
    return message[:1].lower() + message[1:]


def validation_problems(exc: ValidationError, model: type[BaseModel] | None, prefix: KeyPath = ()) -> list[str]:
    """One line per error of ``exc``, raised validating ``model`` (its fields name the nearest key) at ``prefix``."""
    problems = []
    for error in exc.errors(include_url=False):
        loc = tuple(error["loc"])
        path = dotted((*prefix, *loc))
        if error["type"] == "extra_forbidden":
            candidates = (schema_keys(model, loc[:-1]) if model else None) or []
            problems.append(unknown_key([*prefix, *loc], len(prefix) + len(loc) - 1, candidates))
        elif error["type"] == "missing":
            problems.append(f"{path} is missing")
        elif not loc:
            problems.append(f"{dotted(prefix) + ': ' if prefix else ''}{_rule(error)}")
        else:
            problems.append(f"{path}={show(error['input'])}: {_rule(error)}")
    return problems


def validated(schema: type[M], data: dict[str, Any]) -> M:  # free-form: a composed config, before validation
    """``data`` read by ``schema``, or ConfigError with one line per mistake (a NaN or infinite float anywhere too)."""
    if problems := non_finite(data):
        raise ConfigError(problems)
    try:
        return schema.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(validation_problems(exc, schema)) from None
