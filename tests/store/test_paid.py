"""What was paid, read one way from the call journal (``store.paid``): a reply and a cost-only line of the same call
tally alike (calls, tokens, dollars, 429s, drift), a void or a strategy's reply is no paid call, and a tail reads
each line once."""

from __future__ import annotations

import pytest

from bargain_ray.core.records import Reply, Served, Usage
from bargain_ray.store.calls import CallEntry, CallJournal, SpendEntry, VoidEntry, calls_journal_path
from bargain_ray.store.paid import SpendTail, read_spend, spend_of

RATE_LIMITED = "Error code: 429 - rate limited"


def reply(model: str = "m", version: str = "m-1", errors: tuple[str, ...] = (), cost: float = 0.25) -> Reply:
    return Reply(provider="anthropic", model=model, request={}, text="{}", cost_usd=cost, model_version=version,
                 usage=Usage(input_tokens=100, output_tokens=20), attempt_errors=list(errors))


def entries(replies: list[Reply], journaled: bool) -> list[CallEntry | SpendEntry]:
    """The lines a run leaves for ``replies``: each reply, or under ``run.journal_calls=false`` each one's cost."""
    return [CallEntry(unit_id="u", call_id=f"u-k{i:02d}", prompt="p", reply=r) if journaled
            else SpendEntry.of("u", f"u-k{i:02d}", r) for i, r in enumerate(replies, 1)]


RUN = [reply(errors=(RATE_LIMITED, "Timeout")), reply(), reply(version="m-2", errors=(RATE_LIMITED,)),
       reply(version="m-2"), reply("other", version="o-1", cost=1.0)]


@pytest.mark.parametrize("journaled", [True, False], ids=["replies", "costs only"])
def test_every_figure_is_the_same_whether_the_journal_holds_replies_or_costs_only(journaled: bool) -> None:
    spend = spend_of(entries(RUN, journaled))
    m, other = spend.models["anthropic:m"], spend.models["anthropic:other"]
    assert (m.calls, m.input_tokens, m.output_tokens, m.cost_usd, m.rate_limited, m.drifted) == (4, 400, 80, 1.0, 2, 2)
    assert (other.calls, other.cost_usd, other.drifted) == (1, 1.0, 0)
    assert (spend.calls, spend.cost_usd) == (5, 2.0)
    (drift,) = spend.drifts.values()  # the first answer of m is its reference: m-1
    assert (drift.model, drift.reference.model_version, drift.served.model_version, drift.calls, drift.first_call) \
        == ("anthropic:m", "m-1", "m-2", 2, "u-k03")


def test_a_recorded_reference_wins_over_the_first_answer() -> None:
    spend = spend_of(entries(RUN, True), references={"anthropic:m": Served(model_version="m-2")})
    assert spend.models["anthropic:m"].drifted == 2 and {d.served.model_version for d in spend.drifts.values()} == {
        "m-1"}


def test_a_void_line_and_a_strategy_reply_are_no_paid_call(tmp_path) -> None:
    strategy = Reply(provider="strategy", model="boulware", request={}, text="{}")
    journal = CallJournal(str(calls_journal_path(tmp_path)))
    journal.append(*entries(RUN[:2], True), VoidEntry(unit_id="u", call_id="u-k02", void="observer_failure"),
                   CallEntry(unit_id="u", call_id="u-k03", prompt="p", reply=strategy))
    journal.close()
    spend = read_spend(tmp_path)
    assert list(spend.models) == ["anthropic:m"] and (spend.calls, spend.cost_usd) == (2, 0.5)


def test_a_tail_reads_each_line_once_from_where_it_starts(tmp_path) -> None:
    journal = CallJournal(str(calls_journal_path(tmp_path)))
    journal.append(*entries(RUN[:2], True))
    tail = SpendTail.from_now(tmp_path)
    assert tail.read() == [] and tail.spend.calls == 0, "what was journaled before it started is not its"
    journal.append(*entries(RUN[2:], False))
    assert len(tail.read()) == 3 and tail.read() == []
    assert (tail.spend.calls, tail.spend.cost_usd) == (3, 1.5)
    journal.close()
