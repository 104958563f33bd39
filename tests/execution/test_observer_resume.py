"""An observer that cannot be read ends its game unknown; on resume only the observer is asked again.

The parties' journaled replies are valid, paid moves: they replay. The observer's unreadable replies made
the game unknown: the worker journals a void for them, and the resume asks the observer again (today's
alternative, replaying them, fails the game the same way on every resume).
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import polars as pl
from helpers import DATA

from bargain_ray.analysis.operational import operational
from bargain_ray.analysis.sweep import read_sweep
from bargain_ray.config import SweepConfig, compose_dict
from bargain_ray.core.records import Reply
from bargain_ray.core.status import ExitCode
from bargain_ray.design import resolve
from bargain_ray.execution.calljournal import failed_calls
from bargain_ray.execution.sweep import run_sweep
from bargain_ray.play.rescore import ReplayFile, replay_transcript
from bargain_ray.providers.sim import SimServer, SimSettings
from bargain_ray.store import read_calls, read_spend
from bargain_ray.store.calls import CallEntry, CallJournal, VoidEntry, calls_journal_path

PARTY, OBSERVER = "claude-haiku-5-5", "claude-opus-5-5"  # grid orange, pairing HHO: H talks, O observes


def entry(call_id: str, text: str, cost: float = 0.01) -> CallEntry:
    return CallEntry(unit_id="u", call_id=call_id, prompt=f"p-{call_id}",
                     reply=Reply(provider="sim", model="m", request={}, text=text, cost_usd=cost))


def test_a_void_takes_earlier_replies_out_of_replay_but_not_later_ones_nor_the_bill(tmp_path: Path):
    journal = CallJournal(str(calls_journal_path(tmp_path)))
    for call_id, text in (("u-k01", "party"), ("u-k02", "bad 1"), ("u-k03", "bad 2"), ("u-k04", "bad 3")):
        journal.append(entry(call_id, text))
    journal.append(*(VoidEntry(unit_id="u", call_id=c, void="observer_failure") for c in ("u-k02", "u-k03", "u-k04")))
    journal.append(entry("u-k02", "good verdict"))  # the resume's observer reply, under the same call id
    journal.close()
    replayable = [(e.call_id, e.reply.text) for e in read_calls(tmp_path, skip=set())["u"]]
    assert replayable == [("u-k01", "party"), ("u-k02", "good verdict")]
    assert read_spend(tmp_path).calls == 5  # the unreadable replies were paid: the budget still counts them


def test_failed_calls_are_the_exhausted_observer_turn_only():
    failed = replay_transcript(ReplayFile.model_validate_json((DATA / "freetext_observer_failure.json").read_text()))
    assert (failed.outcome.known, failed.outcome.reason) == (False, "observer_failure")
    observer = [c.call_id for c in failed.calls if c.role == "observer"]
    assert len(observer) == 3 and failed_calls(failed) == observer
    finished = replay_transcript(ReplayFile.model_validate_json((DATA / "freetext_replay.json").read_text()))
    assert finished.outcome.known and failed_calls(finished) == []


def orange_sweep(run_dir: Path, base_url: str) -> SweepConfig:
    """One orange game on the sim: two haiku parties, an opus observer."""
    retry = {"max_attempts": 2, "initial_s": 0.001, "max_s": 0.01, "timeout_s": 5.0}
    overrides = ["+grid=orange", "provider=sim", f"provider.settings.base_url={base_url}", f"run.dir={run_dir}",
                 "run.progress=false", "run.report=false", "run.workers=1", "grid.blocks=1"]
    overrides += [f"models.{m}.retry.{k}={v}" for m in ("O", "H") for k, v in retry.items()]
    data = compose_dict("config", overrides)
    design = data["grid"]["designs"][0] | {"pairings": ["HHO"]}
    data["grid"]["designs"] = [design]
    return resolve(data)


def requests_by_model(server: SimServer) -> Counter:
    return Counter(e.model for e in server.log)


def test_resume_replays_the_parties_and_asks_only_the_observer_again(ray_session: str, tmp_path: Path):
    # first invocation: the observer model only refuses, so its verdict cannot be read after its re-asks
    broken = SimServer(SimSettings(model_faults={OBSERVER: {"refusal": 1.0}}))
    with broken as url:
        assert run_sweep(orange_sweep(tmp_path, url)) == ExitCode.UNKNOWN_GAMES
    games = pl.read_parquet(tmp_path / "games.parquet")
    assert games.height == 1 and games.row(0, named=True)["reason"] == "observer_failure"
    first = requests_by_model(broken)
    assert first == {PARTY: 1, OBSERVER: 3}  # party A's message, then the observer asked 1 + max_repairs times
    ops = {r["model"]: r for r in operational(read_sweep(tmp_path)).iter_rows(named=True)}
    assert (ops[OBSERVER]["observer_calls"], ops[OBSERVER]["observer_reasks"]) == (3, 2)  # per observer model
    assert (ops[PARTY]["observer_calls"], ops[PARTY]["observer_reasks"]) == (0, 0)

    # resume with a working observer: party A's reply replays, the observer is asked again, the game ends known
    working = SimServer(SimSettings())
    with working as url:
        assert run_sweep(orange_sweep(tmp_path, url)) == 0
    game = pl.read_parquet(tmp_path / "games.parquet").row(0, named=True)
    calls = pl.read_parquet(tmp_path / "calls.parquet")
    assert game["known"] and game["status"] in ("AGREEMENT", "NO_AGREEMENT"), game["reason"]
    party, observer = (calls.filter(pl.col("role") != "observer"), calls.filter(pl.col("role") == "observer"))
    replayed = calls.filter(pl.col("resumed"))
    assert replayed["call_id"].to_list() == [f"{game['unit_id']}-k01"]  # party A's first message, not paid again
    assert replayed["role"].to_list() == ["party_a"]
    sent = requests_by_model(working)
    assert sent[PARTY] == party.height - 1  # every party call but the replayed one was new
    assert sent[OBSERVER] == observer.height >= 1  # every observer call was sent, none replayed
    assert observer.filter(pl.col("resumed")).height == 0
    assert game["observer_invalid"] == observer.filter(~pl.col("valid")).height == 0
