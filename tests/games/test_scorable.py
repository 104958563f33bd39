"""The six-party scorable negotiation of seed 003: wording, every rule, privacy, exact figures, sweeps."""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
from fractions import Fraction

import polars as pl
import pytest
import yaml
from helpers import CONF, DATA, ROOT, game_config, play_replies

from bargain_ray.__main__ import main
from bargain_ray.config import compose_dict
from bargain_ray.core.figures import Figure
from bargain_ray.design import load_config, units
from bargain_ray.games import load_game
from bargain_ray.games.base import RuleError
from bargain_ray.games.scorable import metrics, prompts, strategy
from bargain_ray.store.journal import read_records

PARTIES = ["Avery", "Blake", "Casey", "Devon", "Ember", "Flynn"]
P1 = {"issue0": "opt0", "issue1": "opt0", "issue2": "opt1", "issue3": "opt1", "issue4": "opt2"}
P2 = {"issue0": "opt0", "issue1": "opt0", "issue2": "opt1", "issue3": "opt1", "issue4": "opt1"}


def r(action: str | None = None, **fields) -> str:
    """A reply as seed 003 asks for it: one fenced JSON object."""
    obj = {"action": action, **fields} if action else fields
    return "```json\n" + json.dumps(obj) + "\n```"


@pytest.fixture(scope="module")
def table():
    return load_game(game_config("scorable6"))


def play(game, first: str, replies: list[str]):
    """Engine only: parse and apply replies in turn order from ``first``'s opening."""
    state = game.start(0, first)
    for text in replies:
        role = game.to_move(state)
        state = game.apply(state, role, game.parse(state, role, text))
    return state


# --- wording -------------------------------------------------------------------------------

def test_every_private_prompt_of_seed_003_is_reproduced_word_for_word(table):
    seed = json.loads((DATA / "scorable_seed003_prompts.json").read_text())
    state = table.start(seed["seed"], None)
    assert len(seed["prompts"]) == 12
    for shown in seed["prompts"]:
        assert table.prompt(state, shown["party"]).system == shown["system"]
    # seed 4 lists its prompts from Ember on: seat (4 mod 6) opens round 1
    assert table.to_move(state) == "Ember" == seed["prompts"][0]["party"]


def test_private_score_sheets_change_only_the_information_block(table):
    game = load_game(game_config("scorable6", public_score_sheets=False))
    private = game.prompt(game.start(0, None), "Ember").system
    public = table.prompt(table.start(0, None), "Ember").system
    assert "All parties' score sheets" not in private and "(threshold" not in private
    assert "- issue0: opt0=100, opt1=0, opt2=50" not in private  # Blake's sheet
    assert "- issue2: opt0=0, opt1=64, opt2=32" in private and "Your acceptance threshold: 64 points." in private
    assert prompts.PRIVATE_INFORMATION in private and prompts.PUBLIC_INFORMATION in public
    head, tail = public.split(prompts.PUBLIC_INFORMATION)
    assert private == head + prompts.PRIVATE_INFORMATION + "\n\n=== PRIVATE" + tail.split("=== PRIVATE", 1)[1]


def test_the_turn_message_holds_the_public_record(table):
    state = play(table, "Avery", [
        r("propose", deal=P1, message="A start.", scratchpad="mine"),
        r("accept", offer_id="P1"),
        r("reject", offer_id="P1", message="Too little for me."),
        r("walk"),
    ])
    text = table.prompt(state, "Ember").messages[0].content
    assert text == (
        "Public record so far:\n"
        'Round 1, Avery: "A start."\n'
        "  Action: propose → P1 (issue0=opt0, issue1=opt0, issue2=opt1, issue3=opt1, issue4=opt2)\n"
        "Round 1, Blake: (no message)\n"
        "  Action: accept P1\n"
        'Round 1, Casey: "Too little for me."\n'
        "  Action: reject P1\n"
        "Round 1, Devon: (no message)\n"
        "  Action: walk (left the table for good)\n\n"
        "Live offers (each stays live until the game ends):\n"
        "- P1, tabled by Avery: issue0=opt0, issue1=opt0, issue2=opt1, issue3=opt1, issue4=opt2\n"
        "  Accepted by Avery, Blake; rejected by Casey; no answer yet from Ember, Flynn.\n\n"
        "Still at the table: Avery, Blake, Casey, Ember, Flynn. Walked: Devon.\n"
        "Round 1 of 4; this round's order: Avery, Blake, Casey, Ember, Flynn (Avery opens).\n"
        "It is your turn, Ember. Reply with ONLY the fenced JSON object."
    )
    assert "mine" not in text


# --- rules ---------------------------------------------------------------------------------

@pytest.mark.parametrize(
    ("bad", "rule", "says"),
    [
        ("I accept P1.", "not_one_json_object", "EXACTLY ONE fenced JSON object (```json ... ```) and nothing outside it"),
        ("Sure!\n" + r("accept", offer_id="P1"), "not_one_json_object", "nothing outside it"),
        (r("accept", offer_id="P1") + "\n" + r("none"), "not_one_json_object", "EXACTLY ONE fenced JSON object"),
        ("```json\n[1, 2]\n```", "not_one_json_object", "EXACTLY ONE fenced JSON object"),
        (r("accept", offer_id="P1", vote="yes"), "unknown_key", 'Unknown key "vote": the keys are "scratchpad", "message", "action", "deal", "offer_id".'),
        (r("none", message=5), "not_a_string", '"message" must be a string.'),
        (r("none", scratchpad=["x"]), "not_a_string", '"scratchpad" must be a string.'),
        (r("counter"), "unknown_action", 'Unknown action "counter": "action" must be one of "propose", "accept", "reject", "walk", "none".'),
        (r("ACCEPT", offer_id="P1"), "unknown_action", 'Unknown action "ACCEPT"'),
        (r("propose"), "missing_deal", '"propose" needs "deal": an object choosing one option for every issue (issue0, issue1, issue2, issue3, issue4).'),
        (r("propose", deal={k: v for k, v in P2.items() if k != "issue3"}), "missing_issue", 'The deal must choose an option for every issue; "issue3" is missing.'),
        (r("propose", deal=P2 | {"issue9": "opt0"}), "unknown_issue", 'Unknown issue "issue9": the issues are issue0, issue1, issue2, issue3, issue4.'),
        (r("propose", deal=P2 | {"issue2": "opt3"}), "unknown_option", 'Unknown option "opt3" for issue2: the options are opt0, opt1, opt2.'),
        (r("propose", deal=P2 | {"issue2": 1}), "unknown_option", "Unknown option 1 for issue2"),
        (r("propose", deal={"issue0": "opt9"}), "unknown_option", 'Unknown option "opt9" for issue0'),  # issue order
        (r("propose", deal=P1), "duplicate_offer", "That package is already live as P1: accept P1 instead of tabling it again."),
        (r("propose", deal=P2, offer_id="P1"), "offer_id_without_vote", '"offer_id" goes only with "accept" or "reject"; leave it out for "propose".'),
        (r("walk", offer_id="P1"), "offer_id_without_vote", 'leave it out for "walk"'),
        (r("accept", offer_id="P1", deal=P1), "deal_without_propose", '"deal" goes only with "propose"; leave it out for "accept".'),
        (r("accept", offer_id=1), "missing_offer_id", '"accept" MUST name a live offer id: give "offer_id", for example "P1".'),
        (r("reject", offer_id=1), "missing_offer_id", '"reject" MUST name a live offer id'),
        (r("accept", offer_id="P9"), "unknown_offer", '"P9" is not a live offer; the live offers are P1.'),
    ],
)
def test_each_rule_is_named_and_explained(table, bad, rule, says):
    state = play(table, "Avery", [r("propose", deal=P1)])
    with pytest.raises(RuleError) as info:
        table.parse(state, "Blake", bad)
    assert info.value.rule == rule
    assert says in str(info.value)
    assert says in table.repair_message(state, "Blake", info.value)


def test_before_any_offer_nothing_can_be_accepted(table):
    with pytest.raises(RuleError, match="There is no live offer yet: nothing can be accepted or rejected.") as info:
        table.parse(table.start(0, None), "Avery", r("reject", offer_id="P1"))
    assert info.value.rule == "unknown_offer"


def test_a_bare_object_and_an_omitted_action_are_taken(table):
    state = table.start(0, None)
    assert table.parse(state, "Avery", json.dumps({"action": "propose", "deal": P1})).deal == P1
    quiet = table.parse(state, "Avery", r(message="Just talking."))
    assert quiet.kind == "none" and quiet.message == "Just talking."
    assert table.parse(state, "Avery", '```\n{"action": "walk"}\n```').kind == "walk"


def test_the_opener_rotates_each_round_over_a_fixed_rotation():
    record = play_replies(game_config("scorable6"), [r("none")] * 24, first_speaker="Casey")
    order = [t.role for t in record.turns]
    rounds = [order[i:i + 6] for i in range(0, 24, 6)]
    assert rounds == [
        ["Casey", "Devon", "Ember", "Flynn", "Avery", "Blake"],
        ["Devon", "Ember", "Flynn", "Avery", "Blake", "Casey"],
        ["Ember", "Flynn", "Avery", "Blake", "Casey", "Devon"],
        ["Flynn", "Avery", "Blake", "Casey", "Devon", "Ember"],
    ]
    out = record.outcome
    assert out.status == "NO_AGREEMENT" and out.reason == "rounds_exhausted" and out.calls_attempted == 24
    assert [t.fields.round for t in record.turns] == [1] * 6 + [2] * 6 + [3] * 6 + [4] * 6


def test_an_accept_without_an_id_does_nothing(table):
    """Seed 003: '"I accept" with no id does nothing': a turn with no formal move, not an invalid reply."""
    state = play(table, "Avery", [r("propose", deal=P1)])
    for bare in (r("accept", message="I accept."), json.dumps({"action": "accept", "offer_id": None})):
        move = table.parse(state, "Blake", bare)
        assert move.kind == "none" and move.offer_id is None
    after = table.apply(state, "Blake", table.parse(state, "Blake", r("accept", message="I accept.")))
    assert after.offers[0].supporters == ("Avery",) and after.ended is None
    assert table.to_move(after) == "Casey" and after.record[-1].action.message == "I accept."
    record = play_replies(game_config("scorable6", rounds=1), [r("propose", deal=P1)] + [r("accept")] * 5,
                          first_speaker="Avery")
    assert record.outcome.invalid_attempts == [] and record.outcome.repairs_used == 0
    assert [t.fields.action for t in record.turns] == ["propose"] + ["none"] * 5
    assert record.outcome.reason == "rounds_exhausted"


def test_the_opener_rotates_every_round_also_after_a_walk():
    """Casey walks in round 1; round 2 would open at Casey's seat, so Devon opens it, and round 3
    opens at the next party after Devon (Ember), never Devon twice."""
    replies = [r("none"), r("walk")] + [r("none")] * 30
    record = play_replies(game_config("scorable6", rounds=4), replies, first_speaker="Blake")
    rounds: dict[int, list[str]] = {}
    for t in record.turns:
        rounds.setdefault(t.fields.round, []).append(t.role)
    assert rounds == {
        1: ["Blake", "Casey", "Devon", "Ember", "Flynn", "Avery"],
        2: ["Devon", "Ember", "Flynn", "Avery", "Blake"],
        3: ["Ember", "Flynn", "Avery", "Blake", "Devon"],
        4: ["Flynn", "Avery", "Blake", "Devon", "Ember"],
    }
    openers = [order[0] for order in rounds.values()]
    assert all(a != b for a, b in zip(openers, openers[1:], strict=False))
    assert "(Devon opens)" in record.calls[6].request["messages"][0]["content"]


def test_a_walk_is_final_and_the_rotation_skips_the_walker():
    replies = [r("walk")] + [r("none")] * 20
    record = play_replies(game_config("scorable6", rounds=2), replies, first_speaker="Flynn")
    order = [t.role for t in record.turns]
    assert order == ["Flynn", "Avery", "Blake", "Casey", "Devon", "Ember", "Avery", "Blake", "Casey", "Devon", "Ember"]
    assert record.outcome.scored.walked == ["Flynn"] and record.outcome.reason == "rounds_exhausted"
    assert record.outcome.scored.surplus["Flynn"] == Figure(exact="0", value=0)


def test_a_deal_closes_once_everyone_at_the_table_backs_the_same_offer(table):
    opening = [r("propose", deal=P1)] + [r("accept", offer_id="P1")] * 4  # Avery tables, Blake..Ember accept
    state = play(table, "Avery", opening)
    assert state.ended is None and state.offers[0].supporters == ("Avery", "Blake", "Casey", "Devon", "Ember")
    state = play(table, "Avery", [*opening, r("propose", deal=P2)])  # Flynn tables P2 instead
    assert state.ended is None and state.offers[1].supporters == ("Flynn",)
    done = play(table, "Avery", [*opening, r("accept", offer_id="P1")])
    assert done.ended.reason == "deal" and done.deal.offer_id == "P1" and len(done.record) == 6


def test_reject_withdraws_support_and_accept_restores_it(table):
    steps = [r("propose", deal=P1)] + [r("accept", offer_id="P1")] * 4 + [r("reject", offer_id="P1")]
    state = play(table, "Avery", steps)  # Flynn rejects
    assert state.ended is None and state.offers[0].rejecters == ("Flynn",)
    # round 2 opens at Blake: Blake withdraws, Flynn comes round, Blake's return closes the deal
    steps += [r("reject", offer_id="P1")] + [r("none")] * 3 + [r("accept", offer_id="P1")]
    state = play(table, "Avery", steps)
    assert state.ended is None and "Blake" not in state.offers[0].supporters
    steps += [r("none")]  # Avery
    steps += [r("none")] * 5 + [r("accept", offer_id="P1")]  # round 3 opens at Casey; Blake is last
    state = play(table, "Avery", steps)
    assert state.ended.reason == "deal" and state.deal.supporters[-1] == "Blake" and state.round == 3


def test_a_veto_party_walking_ends_the_game_and_a_walk_can_close_a_deal(table):
    state = play(table, "Avery", [r("propose", deal=P1), r("walk")])
    assert state.ended.status == "NO_AGREEMENT" and state.ended.reason == "veto_party_walked"
    steps = [r("propose", deal=P1)] + [r("accept", offer_id="P1")] * 4 + [r("walk")]
    state = play(table, "Avery", steps)  # Flynn walks: everyone left backs P1
    assert state.ended.reason == "deal" and state.walked == ("Flynn",)
    loose = load_game(game_config("scorable6", veto=[]))
    state = play(loose, "Avery", [r("walk")] * 5)
    assert state.ended.reason == "too_few_at_table"


def test_repairs_reach_the_model_and_run_out_into_a_format_failure():
    record = play_replies(game_config("scorable6"), ["I accept.", r("none")] + [r("none")] * 23, first_speaker="Avery")
    second = record.calls[1]
    assert second.repair == 1 and second.request["messages"][1] == {"role": "assistant", "content": "I accept."}
    assert "Your reply was not accepted: Your reply must be EXACTLY ONE fenced JSON object" in second.request["messages"][2]["content"]
    record = play_replies(game_config("scorable6"), ["junk"] * 3, first_speaker="Avery")
    out = record.outcome
    assert out.status == "FORMAT_FAILURE" and out.known is True and out.calls_attempted == 3
    assert out.scored.scores is None and out.scored.surplus is None and out.scored.feasible_deals == 37


# --- privacy -------------------------------------------------------------------------------

def test_no_party_ever_sees_another_partys_scratchpad():
    spec = json.loads((DATA / "scorable_replay.json").read_text())
    replies = []
    for k, text in enumerate(spec["replies"]):
        if text.startswith("```json"):
            obj = json.loads(text.removeprefix("```json\n").removesuffix("\n```"))
            text = r(**(obj | {"scratchpad": f"SECRET-{k:02d}"}))
        replies.append(text)
    record = play_replies(game_config("scorable6"), replies, first_speaker="Ember")
    assert record.outcome.status == "AGREEMENT"
    pads = {t.fields.scratchpad: t.role for t in record.turns}
    assert len(pads) == 12
    for call in record.calls:
        first_ask = json.dumps({"system": call.request["system"], "first": call.request["messages"][0]})
        assert "SECRET-" not in first_ask
        for pad, owner in pads.items():
            if owner != call.role:
                assert pad not in json.dumps(call.request)


# --- metrics -------------------------------------------------------------------------------

def brute_force() -> tuple[list[tuple[str, ...]], dict[tuple[str, ...], dict[str, Fraction]]]:
    """Every package and every party's points, straight from the YAML (independent of the engine)."""
    raw = yaml.safe_load((CONF / "game" / "scorable6.yaml").read_text())
    issues = [i["name"] for i in raw["issues"]]
    space = list(itertools.product(*(i["options"] for i in raw["issues"])))
    points = {
        combo: {p: sum(Fraction(str(raw["parties"][p]["scores"][i][o])) for i, o in zip(issues, combo, strict=True)) for p in PARTIES}
        for combo in space
    }
    return space, points


def test_feasible_deals_and_the_best_feasible_deal_match_brute_force(table):
    raw = yaml.safe_load((CONF / "game" / "scorable6.yaml").read_text())
    bar = {p: Fraction(str(raw["parties"][p]["threshold"])) for p in PARTIES}
    space, points = brute_force()
    assert len(space) == 243
    feasible = [c for c in space if all(points[c][p] >= bar[p] for p in PARTIES)]
    best = max(feasible, key=lambda c: sum(points[c].values()))
    figures, best_welfare = metrics.placement(table.config, None)
    assert figures.feasible_deals == len(feasible) == 37
    assert figures.best_feasible.options == dict(zip([f"issue{i}" for i in range(5)], best, strict=True))
    assert best == ("opt0", "opt0", "opt1", "opt1", "opt1")
    assert best_welfare == sum(points[best].values()) == 1086
    assert figures.best_feasible.joint_surplus == Figure(exact="510437/1000", value=510.437)
    assert 1086 - sum(bar.values()) == Fraction("510.437")


def test_pareto_optimality_matches_brute_force(table):
    space, points = brute_force()

    def dominated(c):
        return any(all(points[d][p] >= points[c][p] for p in PARTIES) and points[d] != points[c] for d in space)

    optimal = {c for c in space if not dominated(c)}
    for combo in space:
        deal = dict(zip([f"issue{i}" for i in range(5)], combo, strict=True))
        assert metrics.placement(table.config, deal)[0].pareto_optimal == (combo in optimal)
    assert 0 < len(optimal) < len(space)


def test_a_deal_space_past_the_limit_is_reported_not_enumerated():
    small = load_game(game_config("scorable6", max_enumerated_deals=100))
    with pytest.raises(metrics.SpaceTooLarge, match="243 possible deals exceed max_enumerated_deals=100"):
        list(metrics.deals(small.config))
    record = play_replies(game_config("scorable6", max_enumerated_deals=100),
                          [r("propose", deal=P2)] + [r("accept", offer_id="P1")] * 5, first_speaker="Avery")
    out = record.outcome
    assert out.status == "AGREEMENT" and out.scored.feasible_deals is None and out.scored.pareto_optimal is None
    assert "243 possible deals exceed max_enumerated_deals=100" in out.scored.space_error
    assert out.scored.scores["Avery"].value == 155 and out.scored.welfare_ratio is None


def test_replay_rescores_the_recorded_transcript():
    proc = subprocess.run(
        [sys.executable, "-m", "bargain_ray.replay", str(DATA / "scorable_replay.json")],
        capture_output=True, text=True, check=True, cwd=ROOT,
    )
    out = json.loads(proc.stdout)
    assert out["status"] == "AGREEMENT" and out["reason"] == "deal" and out["technical_pass"] is True
    assert out["calls_attempted"] == 13 and out["repairs_used"] == 1
    assert [i["rule"] for i in out["invalid_attempts"]] == ["not_one_json_object"]
    assert out["deal"] == {"offer_id": "P2", "proposer": "Avery", "supporters": ["Avery", "Blake", "Casey", "Flynn", "Ember"]}
    assert out["options"] == P2 and out["walked"] == ["Devon"] and out["first_opener"] == "Ember"
    assert {p: f["value"] for p, f in out["scores"].items()} == {
        "Avery": 155, "Blake": 275, "Casey": 180, "Devon": 248, "Ember": 145, "Flynn": 83}
    assert out["surplus"]["Casey"] == {"exact": "14703/250", "value": 58.812}
    assert out["surplus"]["Devon"] == {"exact": "0", "value": 0}  # walked: the no-deal outcome
    assert out["feasible_deals"] == 37 and out["pareto_optimal"] is True and out["below_threshold"] == []
    assert out["welfare"] == {"exact": "7667/8", "value": 958.375}
    assert out["welfare_ratio"]["exact"] == "7667/8688"
    assert out["surplus_ratio"]["exact"] == "382812/510437"
    assert out["best_feasible"]["welfare"] == {"exact": "1086", "value": 1086}


# --- strategy, design, sweep ---------------------------------------------------------------

@pytest.mark.parametrize("public", [True, False])
@pytest.mark.parametrize("kind", ["boulware", "linear", "conceder"])
def test_strategy_never_backs_a_package_below_its_threshold(public, kind):
    game = load_game(game_config("scorable6", public_score_sheets=public))
    for seed in range(3):
        state = game.start(seed, None)
        while (role := game.to_move(state)) is not None:
            p = game.prompt(state, role)
            assert strategy.recognizes(p.system)
            action = game.parse(state, role, strategy.respond(p.system, [m.model_dump() for m in p.messages], {"kind": kind}))
            state = game.apply(state, role, action)
            backed = action.deal if action.kind == "propose" else (
                next(o.deal for o in state.offers if o.offer_id == action.offer_id) if action.kind == "accept" else None)
            if backed is not None:
                assert game.config.points(role, backed) >= game.config.threshold(role)
        assert state.ended is not None


def test_the_seat_swap_grid_puts_the_focal_model_at_each_seat_in_turn():
    sweep = load_config("scorable_seatswap")
    all_units = list(units(sweep, "20261129"))
    assert len(all_units) == 2 * 6 * 6
    game = load_game(sweep.games["scorable6"])
    for u in all_units:
        seat = PARTIES[u.assignment - 1]
        assert u.agent_of_role[seat] == "A" and sum(a == "A" for a in u.agent_of_role.values()) == 1
        if u.pairing == "FO":
            assert u.models_by_role == {p: "claude-opus-5-5" if p == seat else "claude-haiku-5-5" for p in PARTIES}
        else:
            assert set(u.models_by_role.values()) == {"claude-haiku-5-5"}
    openers = {(u.pairing, u.assignment): set() for u in all_units}
    for u in all_units:
        openers[(u.pairing, u.assignment)].add(game.to_move(game.start(u.seed, u.first_speaker)))
    assert all(o == set(PARTIES) for o in openers.values())  # every seat opens once per cell
    assert all_units[0].unit_id.startswith("scorable_negotiation-seatswap-20261129-b01-p01-")


def test_scorable_demo_sweep_runs_offline(tmp_path, ray_session):
    assert main(["+grid=scorable_demo", f"run.dir={tmp_path}", "run.report=false"]) == 0  # in-process
    games = pl.read_parquet(tmp_path / "games.parquet")
    assert games.height == 36 and set(games["family"]) == {"scorable"} and games["known"].all()
    assert set(games["status"]) <= {"AGREEMENT", "NO_AGREEMENT"} and games["agreement"].sum() > 0
    assert set(games["condition"]) == {"public", "private"}
    journaled = list(read_records(tmp_path))
    records = [r.model_dump(mode="json") for r in journaled]
    config = load_game(compose_dict("game/scorable6")["game"]).config
    rows = [metrics.per_game(config, r) for r in journaled]
    for rec, row in zip(records, rows, strict=True):
        assert row["focal_seat"] == PARTIES[rec["unit"]["assignment"] - 1]
        assert row["first_opener"] == PARTIES[rec["unit"]["seed"] % 6]
        assert row["below_threshold"] == 0 and row["feasible_deals"] == 37
        assert all(t["fields"]["scratchpad"] for t in rec["turns"])  # kept for the record, never shown
    deals = [row for row in rows if row["welfare_ratio"] is not None]
    assert deals and all(0 < row["welfare_ratio"] <= 1 for row in deals)
    turns = pl.read_parquet(tmp_path / "turns.parquet")
    assert set(turns["action"]) <= {"propose", "accept", "reject", "walk", "none"}


def test_strategy_walks_when_no_package_reaches_its_threshold():
    config = game_config("scorable6")
    config["parties"]["Flynn"]["threshold"] = 500  # Flynn's best package scores 164
    game = load_game(config)
    state = game.start(0, "Flynn")
    p = game.prompt(state, "Flynn")
    reply = strategy.respond(p.system, [m.model_dump() for m in p.messages], {"kind": "linear"})
    assert game.parse(state, "Flynn", reply).kind == "walk"
