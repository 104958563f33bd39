"""Each family's records are its own pydantic models: its engine and metrics return them, and a journal line written
by earlier code (the golden journal of commit 28e62c8, every family and status) reads back into them, writing the
same JSON in the same key order."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from helpers import game_config, play_replies

from bargain_ray.core.records import FamilyFields, FamilyOutcome, GameRecord
from bargain_ray.games import families, family
from bargain_ray.games.bargaining import BargainingGame
from bargain_ray.games.bargaining.records import BargainingOutcome, BargainingTurn
from bargain_ray.games.base import IncompleteFamily
from bargain_ray.games.freetext.records import FreeTextTurn, MessageTurn, VerdictTurn
from bargain_ray.games.multi_issue.records import MultiIssueOutcome
from bargain_ray.games.scorable.records import ScorableOutcome
from bargain_ray.play.rescore import ReplayFile, replay_transcript
from bargain_ray.store.journal import parse_record

DATA = Path(__file__).resolve().parents[1] / "data"
REPLAYS = ["seed001_replay.json", "bargaining_replay.json", "scorable_replay.json", "freetext_replay.json"]
GOLDEN_JOURNAL = DATA / "tables_28e62c8" / "journal.jsonl.gz"


def golden_lines() -> list[bytes]:
    with gzip.open(GOLDEN_JOURNAL) as f:
        return [line for line in f.read().splitlines() if line.strip()]


@pytest.mark.parametrize("name", REPLAYS)
def test_each_familys_engine_and_metrics_return_its_typed_models(name):
    record = replay_transcript(ReplayFile.model_validate_json((DATA / name).read_text()))
    game = family(record.unit.family).GAME
    assert type(record.outcome.scored) is game.Scored and issubclass(game.Scored, FamilyOutcome)
    legal = [t for t in record.turns if t.valid]
    assert legal and all(isinstance(t.fields, game.Fields) and type(t.fields) is not FamilyFields for t in legal)
    assert game.typed(record) is record  # a record played by this code is typed already


def test_a_journal_line_written_by_earlier_code_reads_back_into_each_familys_models():
    """Read at the core layer (the store knows no family) a line keeps its family parts as written; the family's
    Game types them into its models, which write back exactly the line's JSON, key order included."""
    seen: set[tuple[str, str]] = set()
    for line in golden_lines():
        read = parse_record(line)
        assert type(read) is GameRecord and type(read.outcome.scored) is FamilyOutcome
        game = family(read.unit.family).GAME
        typed = game.typed(read)
        as_written = json.loads(line)
        if as_written["outcome"]["known"] or not read.outcome.scored.blank:
            assert type(typed.outcome.scored) is game.Scored, read.unit.unit_id
        for turn, written in zip(typed.turns, as_written["turns"], strict=True):
            assert isinstance(turn.fields, game.Fields) or not written.get("fields")
            assert json.dumps(turn.fields.model_dump(mode="json")) == json.dumps(written.get("fields", {}))
        assert json.dumps(typed.outcome.model_dump(mode="json")) == json.dumps(as_written["outcome"])
        assert typed == read  # the same record, typed or as read
        seen.add((read.unit.family, read.outcome.status.value))
    assert {f for f, _ in seen} == set(families())
    assert {("multi_issue", "FORMAT_FAILURE"), ("freetext", "TECHNICAL_ERROR")} <= seen


def test_a_familys_reader_gets_its_model_from_a_record_as_read_back():
    """``of`` gives a family's reader its model whether or not the record was typed through its Game."""
    bargaining = next(parse_record(x) for x in golden_lines() if b'"family": "bargaining"' in x[:400])
    scored = BargainingOutcome.of(bargaining.outcome.scored)
    assert scored.available_surplus == scored.buyer_value - scored.seller_cost
    turn = BargainingTurn.of(bargaining.turns[0].fields)
    assert turn.public.round == turn.round and "reasoning_private" not in type(turn.public).model_fields


def test_free_text_turns_read_as_their_shape():
    record = replay_transcript(ReplayFile.model_validate_json((DATA / "freetext_replay.json").read_text()))
    untyped = GameRecord.model_validate_json(record.model_dump_json())
    shapes = [type(FreeTextTurn.of(t.fields)) for t in untyped.turns if t.valid]
    assert set(shapes) == {MessageTurn, VerdictTurn} and shapes[0] is MessageTurn


def test_outcome_shapes_keep_the_order_the_record_has_always_had():
    """The shapes a single field order cannot give: seed 001's role-named share figure, a scorable game without a
    result (``below_threshold`` last), one whose deal space was too large (``space_error`` after
    ``deals_enumerated``, else absent); each reads back from its JSON into the same model."""
    deal = {"issue0": "opt0", "issue1": "opt0", "issue2": "opt1", "issue3": "opt1", "issue4": "opt1"}

    def r(action: str, **fields: object) -> str:
        return "```json\n" + json.dumps({"action": action, **fields}) + "\n```"

    failed = play_replies(game_config("scorable6"), ["not json"] * 3, first_speaker="Avery").outcome
    large = play_replies(game_config("scorable6", max_enumerated_deals=100),
                         [r("propose", deal=deal)] + [r("accept", offer_id="P1")] * 5, first_speaker="Avery").outcome
    tickets = play_replies(game_config("tickets"), ["nope"] * 3).outcome
    head = ["deal", "options", "first_opener", "walked", "offers_tabled", "rounds_played", "deals_enumerated"]
    space = ["feasible_deals", "best_feasible", "pareto_optimal", "scores", "surplus"]
    ratios = ["welfare", "joint_surplus", "welfare_ratio", "surplus_ratio"]
    assert list(failed.scored.model_dump(mode="json")) == [*head, *space, *ratios, "below_threshold"]
    assert list(large.scored.model_dump(mode="json")) == [*head, "space_error", *space, "below_threshold", *ratios]
    assert list(tickets.scored.model_dump(mode="json"))[-2:] == ["buyer_share_of_joint_gain", "below_fallback"]
    for out, model in ((failed, ScorableOutcome), (large, ScorableOutcome), (tickets, MultiIssueOutcome)):
        written = out.scored.model_dump(mode="json")
        again = model.model_validate(written)
        assert again == out.scored and json.dumps(again.model_dump(mode="json")) == json.dumps(written)
    assert MultiIssueOutcome.of(tickets.scored).share_role == "buyer"


def test_a_family_without_its_record_models_is_refused_as_it_loads():
    with pytest.raises(IncompleteFamily, match="names no record model Fields or Scored"):
        type("Untyped", (BargainingGame,), {"Fields": dict, "Scored": None})
