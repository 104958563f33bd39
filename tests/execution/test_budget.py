"""The budget is a hard cap for the sweep folder: reserved before a call, settled after, across invocations."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import polars as pl
import pytest
from helpers import DATA, assert_summary_sums

from bargain_ray.config import SweepConfig, compose_dict
from bargain_ray.core.errors import Failure, FailureKind
from bargain_ray.core.prompt import Message, Prompt
from bargain_ray.core.records import GameRecord
from bargain_ray.core.status import ExitCode
from bargain_ray.design import load_config, resolve
from bargain_ray.execution.budget import REPLACED, Budget, margin_usd, refusal, stopped_at, worst_case_usd
from bargain_ray.execution.sweep import run_sweep
from bargain_ray.execution.tally import failure_label
from bargain_ray.play.rescore import ReplayFile, replay_transcript
from bargain_ray.providers.sim import SimServer, SimSettings
from bargain_ray.store import CALLS_JOURNAL, GameJournal


def smoke(run_dir: Path, base_url: str, cap: float | None, *more: str) -> SweepConfig:
    """The C3 rehearsal with the default in-flight window (every game starts at once)."""
    overrides = ["+grid=c3_smoke", "provider=sim", f"provider.settings.base_url={base_url}", f"run.dir={run_dir}",
                 "run.progress=false", "run.report=false", f"run.max_cost_usd={'null' if cap is None else cap}", *more]
    return resolve(compose_dict("config", overrides))


def journal_usd(path: Path) -> tuple[int, float]:
    entries = [json.loads(line) for line in (path / CALLS_JOURNAL).read_bytes().splitlines()]
    return len(entries), sum(e["reply"]["cost_usd"] for e in entries)


def test_a_call_waits_for_room_and_is_refused_once_none_can_come() -> None:
    async def scenario() -> None:
        budget = Budget(cap_usd=1.0, spent_before_usd=0.2, margin=0.1)
        assert await budget.reserve("k1", "w", 0.5, "m") is None
        waiting = asyncio.create_task(budget.reserve("k2", "w", 0.5, "m"))  # 0.2 + 0.5 + 0.5 > 1
        await asyncio.sleep(0.01)
        assert not waiting.done(), "a call that could fit once k1 settles waits"
        await budget.settle("k1", "w", 0.05)
        assert await waiting is None  # k1 cost less than its worst case: room came back
        doomed = asyncio.create_task(budget.reserve("k3", "w", 0.6, "m"))
        await asyncio.sleep(0.01)
        assert not doomed.done()
        await budget.settle("k2", "w", 0.3)  # 0.2 + 0.05 + 0.3 spent: 0.45 left, k3 can never fit
        refused = await doomed
        assert refused.kind is FailureKind.BUDGET and refused.cap_usd == 1.0
        assert refused.detail.startswith("budget: run.max_cost_usd=1.0 ")
        assert budget.closed and await budget.reserve("k4", "w", 0.01, "m"), "closed at the first refusal"
        state = budget.state()
        assert state.spent_now_usd == pytest.approx(0.35) and state.reserved_usd == 0 and state.refused == 2

    asyncio.run(scenario())


def test_a_retired_runners_waiting_reservations_take_no_room_and_its_calls_in_flight_stay_counted() -> None:
    """The lost runner holds k1 and waits for room for k2 behind it; another runner waits for k3. Retired, its k2 is
    refused (it used to wake up and take the room for good) and k1 stays counted, so k3 gets what is left, no more."""
    async def scenario() -> None:
        budget = Budget(cap_usd=1.0, spent_before_usd=0.0, margin=0.0)
        assert await budget.reserve("k1", "lost", 0.25, "m") is None
        assert await budget.reserve("k0", "alive", 0.125, "m") is None
        its_own = asyncio.create_task(budget.reserve("k2", "lost", 0.75, "m"))
        other = asyncio.create_task(budget.reserve("k3", "alive", 0.6875, "m"))  # fits once k0 settles, if k2 waits
        await asyncio.sleep(0.01)
        assert not its_own.done() and not other.done()
        await budget.retire("lost")
        assert await its_own == REPLACED
        await asyncio.sleep(0.01)
        assert not other.done(), "k1 may have been sent and billed: its worst case is still counted"
        await budget.settle("k0", "alive", 0.0625)
        assert await other is None  # 0.0625 spent + 0.25 lost + 0.6875 held
        state = budget.state()
        assert (state.spent_now_usd, state.lost_usd, state.reserved_usd) == (0.0625, 0.25, 0.6875)
        assert state.left_usd == 0.6875 and not state.closed and state.refused == 0
        assert await budget.reserve("k4", "lost", 0.01, "m") == REPLACED, "a retired runner reserves nothing more"

    asyncio.run(scenario())


def test_a_retired_runner_alive_after_all_settles_its_calls_at_what_they_cost_beside_its_replacement() -> None:
    """The runner only stopped answering for a while: its replacement sends k1 again (a second request) while the
    old one's k1 comes back; each settles its own, whichever comes first, and nothing is counted twice or lost."""
    async def scenario() -> None:
        budget = Budget(cap_usd=1.0, spent_before_usd=0.0, margin=0.0)
        assert await budget.reserve("k1", "slow", 0.4, "m") is None
        await budget.retire("slow")
        assert await budget.reserve("k1", "new", 0.4, "m") is None, "the same call id, held apart"
        await budget.settle("k1", "new", 0.06)
        assert budget.state().lost_usd == pytest.approx(0.4)
        await budget.settle("k1", "slow", 0.05)
        await budget.settle("k1", "slow", 0.05)  # said twice: counted once
        state = budget.state()
        assert (state.spent_now_usd, state.lost_usd, state.reserved_usd) == pytest.approx((0.11, 0.0, 0.0))

    asyncio.run(scenario())


def test_a_retired_runners_calls_that_leave_too_little_close_the_budget_and_its_waiters_are_refused() -> None:
    """Under a binding cap the lost calls' worst case leaves less than the costliest reply: the budget closes, every
    call waiting is refused at once (the run ends with exit 3, instead of waiting on room that never comes)."""
    async def scenario() -> None:
        budget = Budget(cap_usd=0.5, spent_before_usd=0.0, margin=0.125)
        assert await budget.reserve("k1", "lost", 0.25, "m") is None
        waiting = asyncio.create_task(budget.reserve("k2", "alive", 0.375, "m"))
        await asyncio.sleep(0.01)
        assert not waiting.done()
        await budget.retire("lost")
        refused = await asyncio.wait_for(waiting, 1)
        assert refused is not None and refused.kind is FailureKind.BUDGET
        assert budget.closed and budget.state().left_usd == 0.25

    asyncio.run(scenario())


def test_a_lost_batched_call_is_taken_over_by_the_replacement_and_a_journaled_one_costs_what_it_says() -> None:
    """A batched call sent again is the same request (it waits for the batch it is in): the replacement takes its hold
    over, without more room, and settles it once. A lost call whose reply the journal holds costs what it says. An
    online call the journal does not hold stays counted at its worst case."""
    async def scenario() -> None:
        budget = Budget(cap_usd=1.0, spent_before_usd=0.0, margin=0.0)
        assert await budget.reserve("b1", "lost", 0.5, "m", batched=True) is None
        assert await budget.reserve("j1", "lost", 0.125, "m") is None
        assert await budget.reserve("o1", "lost", 0.25, "m") is None
        await budget.retire("lost")
        state = budget.state()
        assert (state.reserved_usd, state.lost_usd) == (0.5, 0.375)
        await budget.journaled({"j1": 0.0625, "k0": 9.0})  # k0: journaled before, held by nobody
        assert await asyncio.wait_for(budget.reserve("b1", "new", 0.5, "m", batched=True), 1) is None, "no more room"
        await budget.settle("b1", "new", 0.03125)
        state = budget.state()
        assert (state.spent_now_usd, state.reserved_usd, state.lost_usd) == (0.09375, 0.0, 0.25)

    asyncio.run(scenario())


def test_worst_case_bounds_the_real_cost_and_local_is_free() -> None:
    sweep = load_config("c3_smoke", ["provider=sim"])
    opus = sweep.models["O"]
    prompt = Prompt(system="Negotiate. " * 200, messages=(Message(role="user", content="Your turn. " * 50),))
    worst = worst_case_usd(opus, prompt)
    # the sim bills four characters a token; a byte-level tokenizer never exceeds one token a byte
    assert worst >= (len(prompt.system) + 500) * opus.price.input / 1e6 + opus.max_tokens * opus.price.output / 1e6
    assert margin_usd(sweep) == pytest.approx(opus.max_tokens * opus.price.output / 1e6)  # the costliest reply
    local = load_config("c3_smoke", ["provider=local"])
    assert worst_case_usd(local.models["O"], prompt) == 0.0


def test_the_folder_remembers_the_cap_it_stopped_at(tmp_path: Path) -> None:
    game = replay_transcript(ReplayFile.model_validate_json((DATA / "seed001_replay.json").read_text()))

    def record(unit: str, known: bool, failure: Failure | None) -> GameRecord:
        outcome = {"known": known, "reason": str(failure) if failure else "agreement", "failure": failure}
        return game.model_copy(update={"unit": game.unit.model_copy(update={"unit_id": unit}),
                                       "outcome": game.outcome.model_copy(update=outcome)})

    down = Failure(kind=FailureKind.CONNECTION, detail="sim x: APIConnectionError: Connection error.")
    journal = GameJournal(tmp_path)
    journal.append_many([record("u1", False, refusal(0.5, "sim m", 0.1)), record("u2", False, refusal(0.75, "sim m", 0.1)),
                         record("u2", True, None), record("u3", False, down)])
    journal.close()
    assert stopped_at(tmp_path) == 0.5, "u2 finished since: only unfinished games count"
    assert failure_label(refusal(0.5, "sim m", 0.1)) == "refused by the budget"
    assert failure_label(down).startswith("connection")


def test_budget_caps_the_spend_of_a_sweep_folder_across_invocations(ray_session: str, tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    base = smoke(tmp_path, "http://unused", None)
    cap = round(4 * margin_usd(base), 4)  # room for a few of the costliest replies, far less than the sweep
    with SimServer(SimSettings(seed=3)) as url:
        assert run_sweep(smoke(tmp_path, url, cap)) == ExitCode.BUDGET
        first = capsys.readouterr().out
        calls, usd = journal_usd(tmp_path)
        assert 0 < usd <= cap, "spend never crosses the cap, with every game in flight at once"
        games = pl.read_parquet(tmp_path / "games.parquet")
        unknown = games.filter(~pl.col("known")).height
        assert unknown > 0 and first.strip().splitlines()[-1].startswith(f"{unknown} games unknown: ")
        assert "refused by the budget" in first and "raise run.max_cost_usd" in first
        assert f"paid now: {calls} calls, ${usd:.4f}" in first
        assert assert_summary_sums(first)[0] == calls, "the per-model lines sum to it (a budget stop's summary)"

        assert run_sweep(smoke(tmp_path, url, cap)) == ExitCode.BUDGET
        again = capsys.readouterr().out
        assert journal_usd(tmp_path) == (calls, usd), "the same cap pays nothing more"
        assert f"paid in earlier invocations: {calls} calls, ${usd:.4f}" in again

        assert run_sweep(smoke(tmp_path, url, None)) == ExitCode.OK  # the cap lifted: the run goes on
        last = capsys.readouterr().out
    games = pl.read_parquet(tmp_path / "games.parquet")
    assert games.height == 16 and games["known"].all()
    entries = [json.loads(line)["call_id"] for line in (tmp_path / CALLS_JOURNAL).read_bytes().splitlines()]
    assert len(entries) == len(set(entries)), "no call paid twice"
    replayed = pl.read_parquet(tmp_path / "calls.parquet")["resumed"].sum()
    assert replayed > 0 and f"replayed free: {replayed} calls" in last


def test_the_cap_holds_across_invocations_without_a_call_journal(ray_session: str, tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """``run.journal_calls=false``: no reply is journaled, yet every paid call's cost is, so a later invocation's
    cap counts what earlier ones paid; and no summary promises a free replay."""
    margin = margin_usd(smoke(tmp_path, "http://unused", None))
    cap, raised = round(2 * margin, 4), round(4 * margin, 4)  # the sweep costs more than 4 (above)
    server = SimServer(SimSettings(seed=3))
    with server as url:
        assert run_sweep(smoke(tmp_path, url, cap, "run.journal_calls=false")) == ExitCode.BUDGET
        first = capsys.readouterr().out
        entries = [json.loads(line) for line in (tmp_path / CALLS_JOURNAL).read_bytes().splitlines()]
        assert entries and not any("reply" in e for e in entries), "only costs: no reply is journaled"
        calls, usd = len(entries), sum(e["cost_usd"] for e in entries)
        assert 0 < usd <= cap
        assert "replayed free when" not in first and "paid again when they run again" in first

        assert run_sweep(smoke(tmp_path, url, raised, "run.journal_calls=false")) == ExitCode.BUDGET
        again = capsys.readouterr().out
        assert f"paid in earlier invocations: {calls} calls, ${usd:.4f}" in again
        costs = [json.loads(line)["cost_usd"] for line in (tmp_path / CALLS_JOURNAL).read_bytes().splitlines()]
        assert usd < sum(costs) <= raised, "the second cap counts the first invocation's spend"
        assert len(costs) == sum(e.status == 200 for e in server.log), "every call served has its line"
