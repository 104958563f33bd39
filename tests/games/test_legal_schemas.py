"""Legal moves by construction: every reply a family's legal-move schema admits is accepted by its engine, in every
state a game reaches, and the schema refuses the moves the engine forbids there.

States are reached by playing replies drawn from the schemas themselves (``instances``), so the walk covers what a
constrained decoder can do: offers, acceptances, the final reply, walks, games that end every way.
"""

from __future__ import annotations

import json
import random
from decimal import Decimal
from typing import Any

import jsonschema
import pytest
import yaml
from helpers import CONF

from bargain_ray.clients.openai_chat import grid_for_llama_cpp
from bargain_ray.config import compose_dict
from bargain_ray.design import resolve
from bargain_ray.games import load_game
from bargain_ray.games.base import Game, RuleError
from bargain_ray.games.kit.schema import on_grid


def _game(name: str, **changes: Any) -> Game:
    return load_game({**yaml.safe_load((CONF / "game" / f"{name}.yaml").read_text()), **changes})


def instances(schema: dict[str, Any], rng: random.Random) -> Any:
    """One value the schema admits, drawn at random, boundaries and worst cases often (a string of its full length
    with a word per two characters, a number at its bounds)."""
    if "anyOf" in schema:
        return instances(rng.choice(schema["anyOf"]), rng)
    if "const" in schema:
        return schema["const"]
    if "enum" in schema:
        return rng.choice(schema["enum"])
    kind = schema["type"]
    if kind == "null":
        return None
    if kind == "object":
        return {key: instances(schema["properties"][key], rng) for key in schema["required"]}
    if kind == "string":
        n = schema["maxLength"]
        return rng.choice(["", ("a " * n)[:n], ("word " * n)[:n], "x" * n, ("\n\t" * n)[:n], "fine"[:n]])
    low, high = Decimal(str(schema["minimum"])), Decimal(str(schema["maximum"]))
    step = Decimal(str(schema.get("multipleOf", 1)))
    k = rng.choice([0, int((high - low) / step), rng.randint(0, int((high - low) / step))])
    value = low + k * step
    return int(value) if kind == "integer" else float(value)


def as_reply(obj: Any, rng: random.Random) -> str:
    return json.dumps(obj, indent=rng.choice([None, 2]))


GAMES = {
    "tickets": lambda: _game("tickets"),
    "tickets, whole numbers, short": lambda: _game("tickets", decimals=0, max_turns=3, max_message_words=1),
    "tickets, six decimals": lambda: _game("tickets", decimals=6, max_turns=4),
    "bargaining": lambda: _game("bargaining", max_rounds=6),
    "bargaining, no first-round rule": lambda: _game("bargaining", first_round_offer=False, reject_needs_offer=False,
                                                     max_message_chars=None, max_rounds=4),
    "scorable6": lambda: _game("scorable6"),
}


@pytest.mark.parametrize("name", sorted(GAMES))
def test_every_reply_a_schema_admits_is_legal_in_every_state_reached(name: str) -> None:
    game = GAMES[name]()
    states = 0
    for seed in range(12):
        rng = random.Random(seed)
        state = game.start(seed, None)
        while (role := game.to_move(state)) is not None:
            schema = game.prompt(state, role).json_schema
            assert schema is not None
            drawn = [instances(schema, rng) for _ in range(8)]
            for obj in drawn:
                try:
                    game.parse(state, role, as_reply(obj, rng))
                except RuleError as error:
                    pytest.fail(f"{name}, seed {seed}, state {states}: the schema admits {obj}, the engine says {error}")
            state = game.apply(state, role, game.parse(state, role, json.dumps(drawn[0])))
            states += 1
    assert states >= 2 * 12  # every game two moves at least


def _refused(schema: dict[str, Any], obj: Any) -> bool:
    return not jsonschema.Draft202012Validator(schema).is_valid(obj)


def _engine_refuses(game: Game, state: Any, role: str, obj: Any) -> bool:
    try:
        game.parse(state, role, json.dumps(obj))
    except RuleError:
        return True
    return False


def test_tickets_schema_refuses_what_the_engine_forbids() -> None:
    game = _game("tickets", max_turns=3)
    terms = {t.name: t.min for t in game.config.terms}
    offer = {"action": "OFFER", "offer_id": None, "terms": terms, "message": "hi"}
    accept = {"action": "ACCEPT", "offer_id": "O1", "terms": None, "message": "ok"}
    end = {"action": "END", "offer_id": None, "terms": None, "message": ""}
    none = {"action": "NONE", "offer_id": None, "terms": None, "message": ""}

    def play(state: Any, obj: Any) -> Any:
        return game.apply(state, game.to_move(state), game.parse(state, game.to_move(state), json.dumps(obj)))

    opening = game.start(0, None)
    after = play(opening, offer)  # O1 stands, the other side to move
    own = play(after, none)  # O1 stands, its proposer to move
    final = play(own, offer)  # O3 stands: the final reply
    first = next(iter(terms))
    illegal = [
        (opening, accept),  # no standing offer
        (opening, end),  # END outside the final reply
        (after, accept | {"offer_id": "O7"}),  # not the standing offer's id
        (after, end),
        (after, offer | {"terms": {**terms, first: terms[first] + 0.005}}),  # off the grid
        (after, offer | {"terms": {**terms, first: 10_000}}),  # out of range
        (after, offer | {"message": "a " * game.config.max_message_words + "a"}),  # one word too many
        (own, accept),  # one's own offer
        (final, offer),  # the final reply only accepts or ends
        (final, none),
        (final, accept),  # O3 stands now
    ]
    for state, obj in illegal:
        role = game.to_move(state)
        assert _engine_refuses(game, state, role, obj), obj
        assert _refused(game.prompt(state, role).json_schema, obj), f"the schema admits {obj}"
    for state, obj in ((after, accept), (final, accept | {"offer_id": "O3"}), (final, end)):
        assert not _refused(game.prompt(state, game.to_move(state)).json_schema, obj)


def test_bargaining_schema_refuses_what_the_engine_forbids() -> None:
    game = _game("bargaining")
    offer = {"stated_valuation": 50, "offer": 40.25, "action": "offer", "message": "", "reasoning_private": ""}
    opening = game.start(0, None)
    seller = game.to_move(opening)
    after = game.apply(opening, seller, game.parse(opening, seller, json.dumps(offer)))
    buyer = game.to_move(after)
    illegal = [
        (opening, seller, offer | {"action": "accept", "offer": None}),  # round 1 must be an offer
        (opening, seller, offer | {"action": "reject", "offer": None}),
        (after, buyer, offer | {"offer": 40.125}),  # off the price grid
        (after, buyer, offer | {"offer": 100.01}),  # out of range
        (after, buyer, offer | {"offer": None}),  # an offer names its price
        (after, buyer, offer | {"message": "x" * (game.config.max_message_chars + 1)}),
    ]
    for state, role, obj in illegal:
        assert _engine_refuses(game, state, role, obj), obj
        assert _refused(game.prompt(state, role).json_schema, obj), f"the schema admits {obj}"
    assert not _refused(game.prompt(after, buyer).json_schema, offer | {"action": "accept", "offer": None})


def test_scorable_schema_refuses_what_the_engine_forbids() -> None:
    game = _game("scorable6")
    deal = {i.name: i.options[0] for i in game.config.issues}
    propose = {"scratchpad": "", "message": "", "action": "propose", "deal": deal}
    opening = game.start(0, None)
    first = game.to_move(opening)
    after = game.apply(opening, first, game.parse(opening, first, json.dumps(propose)))
    second = game.to_move(after)
    illegal = [
        (opening, first, {"scratchpad": "", "message": "", "action": "accept", "offer_id": "P1"}),  # nothing live
        (after, second, {"scratchpad": "", "message": "", "action": "reject", "offer_id": "P2"}),  # not live
        (after, second, propose),  # the same package again
        (after, second, propose | {"deal": {**deal, next(iter(deal)): "nope"}}),  # no such option
    ]
    for state, role, obj in illegal:
        assert _engine_refuses(game, state, role, obj), obj
        assert _refused(game.prompt(state, role).json_schema, obj), f"the schema admits {obj}"
    vote = {"scratchpad": "", "message": "", "action": "accept", "offer_id": "P1"}
    assert not _refused(game.prompt(after, second).json_schema, vote)


@pytest.mark.parametrize(("decimals", "low", "high"), [(2, 0, 100), (2, 60.5, 61), (1, 0.3, 99.7), (6, 1, 1.0005)])
def test_llama_cpp_gets_only_grid_values(decimals: int, low: float, high: float) -> None:
    """What llama.cpp is sent for a grid number (a list, or whole numbers in range) holds only values of the grid,
    wherever the number sits in the schema."""
    sent = grid_for_llama_cpp({"anyOf": [{"properties": {"x": on_grid(low, high, decimals)}}]})
    term = sent["anyOf"][0]["properties"]["x"]
    values = term["enum"] if "enum" in term else range(term["minimum"], term["maximum"] + 1)
    assert values
    for value in values:
        exact = Decimal(str(value))
        assert Decimal(str(low)) <= exact <= Decimal(str(high))
        assert -exact.normalize().as_tuple().exponent <= decimals


def test_the_fingerprint_digests_the_schemas_only_when_output_is_constrained() -> None:
    """provider=local constrains every reply: each game's legal-move schemas are part of what determines its games
    (a changed schema names its state); a sweep whose models send none has no such part."""
    local = resolve(compose_dict("config", ["+grid=c3_smoke", "provider=local"]))
    sim = resolve(compose_dict("config", ["+grid=c3_smoke", "provider=sim"]))
    games = [key for key in local.components if key.startswith("game ")]
    assert games
    for key in games:
        assert set(local.components[key]["schemas"]) == {"opening", "offer_standing", "own_offer_standing",
                                                         "final_reply"}
        assert "schemas" not in sim.components[key]
