"""Every rule, setting, metric and text carries its source; every seed label quotes the seed's own words."""

from __future__ import annotations

import re
from fnmatch import fnmatch
from pathlib import Path
from typing import Annotated

import pytest
from pydantic import ValidationError

from bargain_ray.analysis import provenance
from bargain_ray.analysis.provenance import MissingProvenance, markdown, settings, sweep_items
from bargain_ray.config import choices, compose_dict
from bargain_ray.games import families, load_game
from bargain_ray.games.bargaining.config import BargainingConfig
from bargain_ray.games.kit.wording import rule_table
from bargain_ray.games.provenance import Provenance, Setting, ours
from bargain_ray.play.rescore import ReplayFile, replay_transcript
from bargain_ray.store import read_manifest

ROOT = Path(__file__).resolve().parents[2]
SEEDS = ROOT / "tests" / "data" / "seeds"
DATA = ROOT / "tests" / "data"
IDENTITY = {"unit_id", "turn", "role"}
"""Per-turn row columns that name the turn rather than measure it."""


def flat(text: str) -> str:
    return " ".join(text.split())


SEED_TEXT = {path.stem: flat(path.read_text(encoding="utf-8")) for path in SEEDS.glob("00*.txt")}


def every_config() -> list:
    """Each shipped game config as written and under each shipped condition that changes it."""
    games = [load_game(compose_dict(f"game/{g}")["game"]) for g in choices("game")]
    conditions = [compose_dict(f"condition/{c}")["condition"] for c in choices("condition")]
    variants = []
    for game in games:
        for condition in conditions:
            raw = compose_dict(f"game/{game.config.name}")["game"]
            try:
                variants.append(load_game(raw | condition.get("game", {})))
            except (ValidationError, ValueError):  # a condition of another family
                continue
    return games + variants


def test_seed_copies_are_the_five_seed_documents():
    assert sorted(SEED_TEXT) == ["000", "001", "002", "003", "004"]


def test_a_seed_label_needs_a_quote_and_ours_a_reason():
    with pytest.raises(ValidationError, match="quote the seed's own words"):
        Provenance(source="seed 002")
    with pytest.raises(ValidationError, match="give a one-line reason"):
        Provenance(source="ours")
    with pytest.raises(ValidationError, match="name seed 000"):
        Provenance(source="seed 005", quote="anything")
    with pytest.raises(ValidationError, match="a quote belongs to a seed"):
        Provenance(source="ours", reason="why", quote="words")
    assert Provenance(source="seed 003 + ours", quote="x", reason="y").seeds == ("003",)


def test_a_config_field_without_a_source_fails():
    class Knob(BargainingConfig):
        extra_knob: int = 3

    game = load_game(compose_dict("game/bargaining")["game"])
    game.config = Knob(**game.config.model_dump())
    with pytest.raises(MissingProvenance, match="Knob.extra_knob declares no provenance"):
        settings(game)

    class Labelled(BargainingConfig):
        extra_knob: Annotated[int, Setting(ours("a test knob"))] = 3

    game.config = Labelled(**game.config.model_dump(exclude={"extra_knob"}))
    assert settings(game)[-1].name == "extra_knob" and settings(game)[-1].provenance.reason == "a test knob"


def items() -> list:
    out = provenance.readme_items()
    for game in every_config():
        out += provenance.game_items(game, game.config.name)
    return out


def test_every_seed_label_quotes_words_of_that_seed():
    """A `seed NNN` label is true only if the seed's own text has its words (whitespace aside)."""
    checked = 0
    for item in items():
        p = item.provenance
        for piece in (p.quote or "").split(" … ") if p.seeds else []:
            assert any(flat(piece) in SEED_TEXT[n] for n in p.seeds), (
                f"{item.family} {item.kind} {item.name}: {piece!r} is not in seed {', '.join(p.seeds)}")
            checked += 1
    assert checked > 150


SUPPORT_NOTE = """Each seed-labelled item, reviewed by hand against its seed: the words its quote must hold for the quote
to support the item (its distinguishing words or values), not merely to occur in the seed. A text quotes its own
opening instead (the seed's words it renders)."""
SUPPORT: dict[str, tuple[str, ...]] = {
    # the loop, the replay and the layout
    "every family rule technical_failure": ("unknown", "not scored"),
    "every family rule call_ids": ("-k01",),
    "every family rule replay_record": ('"unit_id"', '"block"', '"position"'),
    "every family rule unit_id": ("negotiation-c3rep40-20261027-b04-p04-oo-a3",),
    "every family rule common_random_numbers": ("every cell", "same", "draws"),
    "every family rule raw_logs": ("raw/", "{cell}_s{seed}.jsonl"),
    "every family rule spec": ("spec/full.json", "spec copy"),
    # seed 002: price bargaining
    "bargaining rule alternation": ("alternating", "seller moves first", "20 rounds"),
    "bargaining rule valuations": ("Uniform[0, 100]", "drawn per game from the seed"),
    "bargaining rule common_random_numbers": ("same seed", "identical valuations"),
    "bargaining rule payoff": ("0.95^(t−1)", "p − cost", "value − p", "no agreement pays both zero"),
    "bargaining rule offer": ("`offer` sets the standing offer",),
    "bargaining rule accept": ("`accept` closes",),
    "bargaining rule reject": ("`reject` withdraws", "without countering", "passes the turn"),
    "bargaining rule no_exit": ("running out the clock", "no explicit exit action"),
    "bargaining rule cheap_talk": ("cheap talk is allowed", "any valuation or none"),
    "bargaining rule private_reasoning": ("private reasoning", "never", "counterparty"),
    "bargaining rule offer_shown_on_reject": ('"reject"', "does not become a standing offer", "visible"),
    "bargaining rule format_failure": ("re-prompted with the error", "twice", "format_failure"),
    "bargaining rule unknown_key": ("stated_valuation",),
    "bargaining rule unknown_action": ("`offer`", "`accept`", "`reject`"),
    "bargaining metric seller_cost": ("seller_cost", "true private valuations"),
    "bargaining metric buyer_value": ("buyer_value", "true private valuations"),
    "bargaining metric available_surplus": ("available_surplus", "buyer_value − seller_cost"),
    "bargaining metric price": ("`price`", "agreed price"),
    "bargaining metric seller_payoff": ("seller_payoff", "discounted payoffs", "0.95^(round−1)"),
    "bargaining metric buyer_payoff": ("buyer_payoff", "discounted payoffs", "0.95^(round−1)"),
    "bargaining metric sigma_b": ("surplus-share", "real gap"),
    "bargaining metric sensitivity": ("when to walk away",),
    "bargaining metric false_positive_rate": ("any deal", "destroys value"),
    "bargaining metric round": ("turn index",),
    "bargaining metric action": ("`offer`", "`accept`", "`reject`"),
    "bargaining metric offer": ("price proposed on this turn",),
    "bargaining metric stated_valuation": ("claimed", "or null"),
    "bargaining metric actual_valuation": ("actually",),
    "bargaining metric self_serving_bias": ("stated_valuation", "actual_valuation", "misrepresentation"),
    "bargaining metric disclosure": ("state any valuation or none",),
    "bargaining metric truthful": ("stated_valuation", "actual_valuation", "misrepresentation"),
    "bargaining metric claim_violation": ("against `offer`", "claim-action consistency"),
    "bargaining metric msg_leakage": ("leakage", "any numeral", "equal to the agent's true valuation"),
    "bargaining setting valuation_min": ("Uniform[0, 100]",),
    "bargaining setting valuation_max": ("Uniform[0, 100]",),
    "bargaining setting first_speaker": ("seller moves first",),
    "bargaining setting max_rounds": ("20 rounds",),
    "bargaining setting discount": ("0.95",),
    "bargaining setting max_repairs": ("up to twice",),
    "bargaining setting messages": ("cheap talk is allowed",),
    "bargaining setting prompt_variant": ("prompt variants",),
    # seed 004: free text and its observer
    "freetext rule alternation": ("strict alternation",),
    "freetext rule first_speaker": ("Party A, then",),
    "freetext rule observer_judges": ("observes every message", "classifies the outcome"),
    "freetext rule observer_closes": ("closed when that observer judges", "agreement"),
    "freetext rule observer_silent": ("they never see your output",),
    "freetext rule turn_limit": ("run out of turns",),
    "freetext rule sentences_measured": ("2 to 4 sentences",),
    "freetext rule observer_failure": ("unknown", "not scored"),
    "freetext rule agreement_not_boolean": ("agreement_reached to true",),
    "freetext rule unknown_allocation_type": ("fixed taxonomy",),
    "freetext rule empty_text": ("allocation:", "one plain sentence"),
    "freetext rule confidence_out_of_range": ("confidence", "between 0 and 1"),
    "freetext rule inconsistent_verdict": ("none:", "no agreement"),
    "freetext metric agreement": ("closed when that observer judges", "agreement"),
    "freetext metric allocation_type": ("allocation_type",),
    "freetext metric integrative": ("part axis",),
    "freetext metric observer_confidence": ("confidence", "between 0 and 1"),
    "freetext metric *_questions": ("asking the other side what they need",),
    "freetext metric sentences": ("2 to 4 sentences",),
    "freetext metric question": ("asking the other side what they need",),
    "freetext metric agreement_reached": ("agreement_reached",),
    "freetext setting max_turns": ("run out of turns",),
    "freetext setting min_sentences": ("2 to 4 sentences",),
    "freetext setting max_sentences": ("2 to 4 sentences",),
    "freetext setting object": ("orange",),
    "freetext setting parties": ("you promised you will bring",),
    "freetext setting observer": ("you take most of the juice, I'll take the peel",),
    # seeds 000 and 001: the concert tickets
    "multi_issue rule alternation": ("12 turns", "alternating between the two sides"),
    "multi_issue rule fresh_request": ('"role": "user"', "Public situation:"),
    "multi_issue rule offer": ("an offer is binding", "replaces any earlier standing offer"),
    "multi_issue rule offer_ids": ('"offer_id": "O8"',),
    "multi_issue rule accept": ("binding agreement on exactly that offer",),
    "multi_issue rule none": ("NONE: no offer and no acceptance",),
    "multi_issue rule message_no_effect": ("never make, change or accept a deal",),
    "multi_issue rule final_reply": ("one final reply", "ACCEPT that offer or END"),
    "multi_issue rule turn_limit": ("end of turn 12", "no deal", "no-agreement points"),
    "multi_issue rule not_one_json_object": ("exactly one JSON object and nothing else",),
    "multi_issue rule unknown_key": ('"action"', '"offer_id"', '"terms"'),
    "multi_issue rule missing_key": ('"action"', '"offer_id"', '"terms"'),
    "multi_issue rule unknown_action": ('"OFFER"', '"ACCEPT"', '"NONE"'),
    "multi_issue rule accept_without_offer": ("ACCEPT", "current standing offer"),
    "multi_issue rule accept_own_offer": ("cannot accept your own offer",),
    "multi_issue rule accept_stale_offer": ("ACCEPT", "current standing offer"),
    "multi_issue rule message_too_long": ("at most 80 words",),
    "multi_issue rule offer_id_on_offer": ('"offer_id" is null',),
    "multi_issue rule terms_without_offer": ('"terms" are null',),
    "multi_issue rule accept_without_id": ('"offer_id" is the ID',),
    "multi_issue rule offer_id_without_accept": ('"offer_id" and "terms" are null',),
    "multi_issue rule terms_missing": ('"terms" gives every negotiated term',),
    "multi_issue rule unknown_term": ("every negotiated term listed above",),
    "multi_issue rule missing_term": ("every negotiated term listed above",),
    "multi_issue rule term_not_number": ("as a number",),
    "multi_issue rule too_many_decimals": ("at most two decimal places",),
    "multi_issue rule term_out_of_range": ("inside its range",),
    "multi_issue metric no_deal": ('"no_deal"',),
    "multi_issue metric proposer": ('"proposer"',),
    "multi_issue metric acceptor": ('"acceptor"',),
    "multi_issue metric offer_id": ('"offer_id"',),
    "multi_issue metric deal_*": ('"unit_price_usd": "64.50"',),
    "multi_issue metric utility_*": ('"utilities"', "2531/40"),
    "multi_issue metric gain_*": ('"gains"', "1731/40"),
    "multi_issue metric joint": ('"joint"', "1013/8"),
    "multi_issue metric joint_gain": ('"joint_gain"', "693/8"),
    "multi_issue metric efficiency": ('"efficiency"', "77/80"),
    "multi_issue metric efficiency_all_assigned": ('"efficiency_all_assigned"', "77/80"),
    "multi_issue metric *_share_of_joint_gain": ('"buyer_share_of_joint_gain"', "577/1155"),
    "multi_issue metric below_fallback": ('"below_fallback"',),
    "multi_issue setting situation": ("Northfield Analytics (the Buyer)", "Marquee Ticket Agency (the Seller)"),
    "multi_issue setting terms": ("unit_price_usd: the price of each ticket",),
    "multi_issue setting roles": ("You negotiate for Northfield Analytics, the Buyer",),
    "multi_issue setting share_role": ("buyer_share_of_joint_gain",),
    "multi_issue setting max_turns": ("at most 12 turns",),
    "multi_issue setting max_message_words": ("at most 80 words",),
    "multi_issue setting decimals": ("two decimal places",),
    "multi_issue setting messages": ("shown to the other side",),
    # seed 003: the scorable table
    "scorable rule rotation": ("fixed rotation",),
    "scorable rule opener_rotates": ("opening proposal rotates from round to round",),
    "scorable rule rounds": ("4 rounds of turns",),
    "scorable rule deal_closes": ("every party still at the table", "SAME standing offer"),
    "scorable rule proposer_supports": ("records you as supporting it",),
    "scorable rule offer_ids": ("offer id (P1, P2, ...)",),
    "scorable rule offers_stay_live": ("live offer",),
    "scorable rule reject_withdraws": ('"reject"', "reject a specific live offer"),
    "scorable rule walk": ("WALK", "leave for good", "no-deal outcome"),
    "scorable rule veto": ("veto party accepts",),
    "scorable rule no_deal_outcome": ("worse for you than no deal",),
    "scorable rule accept_without_id": ('"I accept" with no id does nothing',),
    "scorable rule action_default": ("Omitting the action",),
    "scorable rule scratchpad_private": ('"scratchpad"', "NEVER shown to any other party"),
    "scorable rule message_public": ('"message"', "spoken aloud to every party"),
    "scorable rule not_one_json_object": ("EXACTLY ONE fenced JSON object",),
    "scorable rule unknown_key": ('"action"',),
    "scorable rule unknown_action": ('"propose"', '"accept"', '"reject"', '"walk"', '"none"'),
    "scorable rule deal_without_propose": ('"propose" + "deal"',),
    "scorable rule offer_id_without_vote": ('"accept" + "offer_id"',),
    "scorable rule missing_offer_id": ("MUST name a live offer id",),
    "scorable rule unknown_offer": ("live offer by its id",),
    "scorable rule missing_deal": ('"propose" + "deal"',),
    "scorable rule unknown_issue": ("every issue -> one option",),
    "scorable rule missing_issue": ("every issue -> one option",),
    "scorable rule unknown_option": ("one option must be chosen for every issue",),
    "scorable metric feasible_deals": ("below this", "worse for you than no deal"),
    "scorable metric option_*": ("one option must be chosen for every issue",),
    "scorable metric score_*": ("sum of your points for the chosen options",),
    "scorable metric leaked_threshold": ("never reveal these numbers",),
    "scorable metric leaked_scores": ("never reveal these numbers",),
    "scorable metric leakage": ("never reveal these numbers",),
    "scorable metric *_leakage": ("never reveal these numbers",),
    "scorable metric leakage_any": ("never reveal these numbers",),
    "scorable metric focal_seat": ("Seat-swap",),
    "scorable setting parties": ("Avery (threshold 82)",),
    "scorable setting issues": ("issue0: opt0, opt1, opt2",),
    "scorable setting veto": ("Blake (veto party",),
    "scorable setting rounds": ("4 rounds",),
    "scorable setting public_score_sheets": ("score sheet is common knowledge",),
    "scorable setting messages": ("message channel is open",),
}


def test_every_seed_quote_supports_its_item():
    """A quote that is only a generic phrase of the seed (the brief's opening for a score sheet, "NEVER shown to any
    other party" for a scratchpad its writer never sees again) fails: it must hold its item's words."""
    reviewed = set()
    for item in items():
        p = item.provenance
        if not p.seeds:
            continue
        key = f"{item.family} {item.kind} {item.name}"
        quote = flat(p.quote or "").lower()
        if item.kind == "text":  # the text is the seed's: its quote is its own opening
            shown = flat(item.what.removesuffix("…")).lower()
            assert quote.startswith(shown[:60]) or shown.startswith(quote[:60]), key
            continue
        assert key in SUPPORT, f"{key}: review its quote {p.quote!r} and list the words that make it support the item"
        missing = [w for w in SUPPORT[key] if flat(w).lower() not in quote]
        assert not missing, f"{key}: {p.quote!r} lacks {missing}"
        reviewed.add(key)
    assert reviewed == set(SUPPORT)  # no review of an item that is gone


def test_a_seed_label_claims_no_more_than_its_quote():
    rules = {d.name: d for d in families()["scorable"].GAME.rules()}
    scratchpad = rules["scratchpad_private"]  # seed 003: "NEVER shown to any other party"; its writer: ours
    assert scratchpad.provenance.ours and "writer" in (scratchpad.provenance.reason or "")


def labelled_files() -> list[Path]:
    """Every file of the project a reader takes labels from: the README, the docs, the YAML, the code."""
    return [ROOT / "README.md", *(ROOT / "docs").glob("*.md"), *(ROOT / "conf").rglob("*.yaml"),
            *(ROOT / "src" / "bargain_ray").rglob("*.py")]


def test_no_label_calls_our_c3_design_the_seeds():
    """Seed 001 gives condition C3, pairing OO, assignment 3 and the name c3rep40; the other pairings and
    assignments and the 16 x 40 layout are ours, so no text may call the design the seeds'."""
    claim = re.compile(r"seeds?'?\s+C3 design|C3 design of (?:the )?seeds|the seeds' protocol", re.I)
    found = [f"{path.relative_to(ROOT)}: {m[0]}" for path in labelled_files()
             for m in claim.finditer(path.read_text(encoding="utf-8"))]
    assert found == []
    grid = (ROOT / "conf" / "grid" / "c3_full.yaml").read_text()
    assert "the 16 cells x 40 blocks layout" in grid and "are ours" in grid


def test_a_model_file_cites_a_seeds_requests_only_for_a_model_they_request():
    """``As seed 000's requests show it`` is true of claude-haiku-5-5 (seed 000 requests it), not of claude-opus-5-5."""
    cited = 0
    for path in (ROOT / "conf" / "model").glob("*.yaml"):
        text = path.read_text()
        name = re.search(r"^name: (\S+)", text, re.M)[1]
        for number in re.findall(r"seed (\d{3})'s requests show it", text):
            assert f'"model": "{name}"' in SEED_TEXT[number], (path.name, number)
            cited += 1
    assert cited >= 1


def test_a_condition_says_which_of_its_described_rules_are_ours():
    """A condition's description is shown as its label: the repair limit no seed gives reads as ours there."""
    for path in (ROOT / "conf" / "condition").glob("*.yaml"):
        description = re.search(r"^description: (.*)$", path.read_text(), re.M)[1]
        if "repair" in description:
            assert re.search(r"repairs? (?:per|a) turn \(ours\)", description), (path.name, description)


def test_every_rule_code_a_family_raises_is_declared():
    for game in every_config():
        declared = {d.name for d in type(game).rules()}
        codes = {code.split("/")[0] for code in rule_table(game.prompts.RULES)}
        assert codes <= declared, (game.config.name, sorted(codes - declared))


REPLAYS = ["seed001_replay.json", "bargaining_replay.json", "scorable_replay.json", "freetext_replay.json"]


@pytest.mark.parametrize("name", REPLAYS)
def test_every_metric_column_a_family_computes_is_declared(name):
    record = replay_transcript(ReplayFile.model_validate_json((DATA / name).read_text()))
    declared = type_of(record).metrics.METRICS
    columns = set(record.metrics) | {k for row in record.turn_metrics for k in row} - IDENTITY
    assert record.metrics and columns
    undeclared = [c for c in columns if not any(fnmatch(c, pattern) for pattern in declared)]
    assert not undeclared, undeclared


def type_of(record):
    return families()[record.unit.family].GAME


def test_the_readme_table_names_every_item_and_its_source():
    table = provenance.readme_table()
    assert table.startswith("| where | kind | source | items |")
    for fam in families():
        assert f"| {fam} | rule | " in table
    assert "| bargaining | setting | ours | name, item, price_min, price_max, decimals, max_message_chars" in table
    assert "| freetext | rule | seed 000 + ours | observer_failure |" in table
    assert re.search(r"\| scorable \| rule \| ours \| [^|]*opener_past_walk, first_opener", table)


def test_a_sweep_collects_its_settings_with_values_and_renders_them(finished_sweep, tmp_path):
    folder = finished_sweep(["+grid=bargaining_demo", "run.progress=false", "run.report=false",
                             "games.bargaining.max_rounds=8"], tmp_path / "s")
    collected = sweep_items(read_manifest(folder))
    rounds = [i for i in collected if i.kind == "setting" and i.name == "max_rounds"]
    assert {(i.condition, i.value, i.default) for i in rounds} == {("default", "8", "20"),
                                                                   ("explicit_objective", "8", "20")}
    off = {(i.name, i.condition) for i in provenance.settings_off_default(collected)}
    assert off == {("max_rounds", "default"), ("max_rounds", "explicit_objective"),
                   ("prompt_variant", "explicit_objective")}
    variant = [i for i in collected if i.kind == "setting" and i.name == "prompt_variant"]
    assert {i.value for i in variant} == {'"default"', '"explicit_objective"'}
    objective = next(i for i in collected if i.name == "sentence:objective")
    assert objective.provenance.source == "seed 002" and objective.condition == "explicit_objective"
    md = markdown(collected, values=True)
    assert "| bargaining / default | setting | max_rounds |  | 8 (default 20) | seed 002 |" in md
    page = provenance.html(collected, values=True)
    assert page.count('<tr class="ours">') == sum(1 for line in md.splitlines()[2:] if "| **ours** |" in line
                                                   or "+ **ours** |" in line)
    assert "&lt;unit id&gt;-k&lt;nn&gt;" in page  # text is escaped


def test_the_readme_table_command_prints_the_table_and_nothing_else():
    """``python -m bargain_ray.analysis.provenance`` as the README gives it: the table on stdout, stderr empty (no
    runpy warning from a package that imported the module before it ran as a script)."""
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-m", "bargain_ray.analysis.provenance"], capture_output=True, text=True,
                          cwd=ROOT, timeout=120)
    assert done.returncode == 0 and done.stderr == "", done.stderr
    assert done.stdout == provenance.readme_table() + "\n"
