"""A reply fails only as a format failure: whatever text a model sends, every JSON-speaking family's parse either
reads it or raises the rule ``not_one_json_object`` with its repair text; no other exception, and no number it
cannot hold exactly."""

from __future__ import annotations

import json
from functools import cache

import pytest

from bargain_ray.config import compose_dict
from bargain_ray.games import Game, load_game
from bargain_ray.games.base import RuleError
from bargain_ray.games.kit.replies import MAX_DEPTH, MAX_DIGITS, MAX_REPLY_CHARS, json_object

SPEAKERS = {"bargaining": None, "tickets": None, "scorable6": None, "orange": "observer"}
"""Each JSON-speaking family's shipped game, and the role whose replies are JSON (None: whoever moves first)."""


@cache
def game(name: str) -> Game:
    return load_game(compose_dict(f"game/{name}")["game"])


def nested(depth: int) -> str:
    """An object holding arrays ``depth`` deep in all."""
    return '{"a": ' + "[" * (depth - 1) + "]" * (depth - 1) + "}"


HOSTILE = {
    "brackets": "[" * 2000 + "]" * 2000,  # a small model looping on "[": RecursionError before
    "objects": '{"a": ' * 3000 + "1" + "}" * 3000,
    "fenced brackets": "```json\n" + "[" * 5000 + "]" * 5000 + "\n```",
    "one too deep": nested(MAX_DEPTH + 1),
    "huge exponent": '{"offer": 1e999999999, "action": "offer"}',  # decimal.Overflow before
    "tiny exponent": '{"offer": 1e-999999999, "action": "offer"}',  # read as a valid offer of 0 before
    "long integer": '{"offer": ' + "9" * 5000 + "}",  # its 5,000 digits in the repair text before
    "one digit too many": '{"offer": 1' + "0" * MAX_DIGITS + "}",
    "one place too many": '{"offer": 0.' + "0" * MAX_DIGITS + "1}",
    "too long": json.dumps({"message": "x" * MAX_REPLY_CHARS}),
}


@pytest.mark.parametrize("name", sorted(SPEAKERS))
@pytest.mark.parametrize("hostile", sorted(HOSTILE))
def test_a_reply_past_the_limits_is_a_format_failure_with_its_repair(name, hostile):
    g = game(name)
    state = g.start(1, None)
    role = SPEAKERS[name] or g.to_move(state)
    with pytest.raises(RuleError) as info:
        g.parse(state, role, HOSTILE[hostile])
    assert info.value.rule == "not_one_json_object"
    repair = g.repair_message(state, role, info.value)
    assert str(info.value) in repair and len(repair) < 1000


def test_the_limits_are_the_bounds_not_below_them():
    assert json_object(nested(MAX_DEPTH)) == {"a": json.loads(nested(MAX_DEPTH))["a"]}
    inside = {"message": "[{" * 5000}  # brackets inside a string are text, not nesting
    assert json_object(json.dumps(inside)) == inside
    widest = "9" * MAX_DIGITS
    assert str(json_object(f'{{"a": {widest}, "b": 0.{"0" * (MAX_DIGITS - 1)}1}}', exact=True)["a"]) == widest
    assert json_object(f'{{"a": 1e{MAX_DIGITS - 1}, "b": 1e-{MAX_DIGITS}}}') == {"a": 1e27, "b": 1e-28}
    assert json_object(json.dumps({"message": "x" * (MAX_REPLY_CHARS - 20)}))["message"]


def test_a_number_read_plainly_is_the_number_json_reads():
    text = '{"confidence": 0.85, "n": 12, "m": -3.5e2}'
    assert json_object(text) == json.loads(text)
    assert [type(v) for v in json_object(text).values()] == [float, int, float]
