"""The terminal from the first second: each model's calls sent, in flight and answered, its spend and its 429s
before any game ends (from the call journal and the limiter, no Ray traffic of the bar's own); counts that change
together; and a summary whose per-model lines sum to its totals in every ending."""

from __future__ import annotations

import asyncio
import json
import re
import time
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from aiohttp import web
from helpers import assert_summary_sums, game_config, play_replies, serve_app

from bargain_ray.clients.limiter import Feedback, Limiter
from bargain_ray.config import Limits, SweepConfig, compose_command, compose_dict
from bargain_ray.core.records import GameRecord, Reply, utc_now
from bargain_ray.core.status import ExitCode, Status
from bargain_ray.design import resolve
from bargain_ray.execution.live import CallTail, LiveCalls
from bargain_ray.execution.progress import SweepBar
from bargain_ray.execution.sweep import run_sweep
from bargain_ray.execution.tally import Tally
from bargain_ray.store import CALLS_JOURNAL


def journal_reply(folder: Path, unit_id: str, n: int, errors: list[str] = (), model: str = "claude-x",
                  **more: object) -> None:
    """A paid reply of ``model`` ($0.25) as the call journal holds it; ``more``: other fields of its ``Reply``."""
    reply = Reply(provider="anthropic", model=model, request={}, cost_usd=0.25, text="{}",
                  attempt_errors=list(errors), **more)
    line = {"unit_id": unit_id, "call_id": f"{unit_id}-k{n:02d}", "prompt": "p", "reply": reply.model_dump(mode="json")}
    with (folder / CALLS_JOURNAL).open("a") as f:
        f.write(json.dumps(line) + "\n")


def played(unit_id: str, agreed: bool = False, model: str = "claude-x") -> GameRecord:
    """A real game whose three calls are paid calls of ``model``, the first after a 429 (as journaled above)."""
    record = play_replies(game_config("tickets"), ["not json"] * 3)
    calls = [c.model_copy(update={"provider": "anthropic", "model": model, "cost_usd": 0.25, "unit_id": unit_id,
                                  "attempt_errors": ["Error code: 429 - rate limited"] if i == 0 else []})
             for i, c in enumerate(record.calls)]
    outcome = record.outcome.model_copy(update={"status": Status.AGREEMENT, "known": True}) if agreed else \
        record.outcome
    return record.model_copy(update={"calls": calls, "outcome": outcome,
                                     "unit": record.unit.model_copy(update={"unit_id": unit_id})})


def frames(err: str) -> list[str]:
    return [f for f in err.replace("\n", "\r").split("\r") if "game" in f]


def test_before_the_first_game_ends_the_bar_shows_each_models_calls_from_the_journal_and_the_limiter(
        ray_session, tmp_path, capsys) -> None:
    live = LiveCalls(tmp_path, {"claude-x"})
    bar, tally = SweepBar(total=2, enabled=True, live=live), Tally()
    limiter = Limiter("anthropic:progress-test:claude-x", Limits())
    ticket = asyncio.run(limiter.acquire(10, 10))  # a call on its way
    try:
        journal_reply(tmp_path, "u1", 1, ["Error code: 429 - rate limited", "Timeout"])
        journal_reply(tmp_path, "u1", 2)
        deadline = time.monotonic() + 60
        while not live.sent and time.monotonic() < deadline:  # the limiter's snapshot, polled every 2 s
            bar.tick(tally)
            time.sleep(0.05)
        assert bar.bar.n == 0 and bar.bar.postfix == (
            "agree=0 unknown=0 | claude-x: 3 sent, 1 in flight, 2 answered, $0.50, 1 429s")
        journal_reply(tmp_path, "u1", 3)  # the call in flight is answered
        bar.tick(tally)
        assert bar.bar.postfix == "agree=0 unknown=0 | claude-x: 3 sent, 0 in flight, 3 answered, $0.75, 1 429s"
    finally:
        limiter.release(ticket, Feedback(status=200))
    bar.close()
    shown = frames(capsys.readouterr().err)
    assert "0/2" in shown[-1] and "3 answered, $0.75, 1 429s" in shown[-1], shown


def test_the_first_request_is_when_the_first_reply_was_sent_not_when_the_driver_read_it(tmp_path) -> None:
    """The start-up line's first request: a reply answered 2 s ago after 0.5 s on its way was sent 2.5 s ago, however
    late the driver reads it; the earliest of the replies read. A node's clock that runs ahead puts no send after
    its read, one that runs behind none before the tail opened. (No delay of this machine changes the figures.)"""
    def monotonic(at: datetime) -> float:
        return at.timestamp() - (time.time() - time.monotonic())

    tail = CallTail(tmp_path)
    tail.opened -= 10  # as if the sweep had started 10 s ago
    first, second = utc_now() - timedelta(seconds=2), utc_now() - timedelta(seconds=1)
    journal_reply(tmp_path, "u1", 1, latency_s=0.5, answered_at=first)
    journal_reply(tmp_path, "u1", 2, latency_s=0.1, answered_at=second)
    assert tail.read() and tail.first_sent == pytest.approx(monotonic(first) - 0.5, abs=0.01)
    earlier = utc_now() - timedelta(seconds=5)
    journal_reply(tmp_path, "u2", 1, latency_s=0.2, answered_at=earlier)
    assert tail.read() and tail.first_sent == pytest.approx(monotonic(earlier) - 0.2, abs=0.01), "read later"

    ahead, behind = CallTail(tmp_path / "ahead"), CallTail(tmp_path / "behind")
    for t in (ahead, behind):
        t.paid.file.parent.mkdir()
        t.opened -= 10
    journal_reply(ahead.paid.file.parent, "u1", 1, latency_s=0.5, answered_at=utc_now() + timedelta(seconds=30))
    journal_reply(behind.paid.file.parent, "u1", 1, latency_s=0.5, answered_at=utc_now() - timedelta(seconds=60))
    before = time.monotonic()
    assert ahead.read() and behind.read()
    assert before - 0.5 <= ahead.first_sent <= time.monotonic() - 0.5, "not after it was read, less its latency"
    assert behind.first_sent == behind.opened, "not before the tail opened"


def test_the_agreements_shown_are_those_of_the_games_shown_at_every_update(ray_session, tmp_path, capsys) -> None:
    live = LiveCalls(tmp_path, {"claude-y"})  # a model the cluster's limiter never saw (above: x)
    bar, tally = SweepBar(total=3, enabled=True, live=live), Tally()
    bar.bar.mininterval = 0  # every update drawn
    for i in (1, 2, 3):
        record = played(f"u{i}", agreed=True, model="claude-y")
        for n in (1, 2, 3):
            journal_reply(tmp_path, f"u{i}", n, ["Error code: 429 - rate limited"] if n == 1 else [], "claude-y")
        tally.add(record)
        bar.show([record], tally)
    bar.close()
    shown = [f for f in frames(capsys.readouterr().err) if "agree=" in f]
    assert shown and all(f"{f.split('/')[0].split()[-1]}/3" in f for f in shown)
    for frame in shown:
        games = int(frame.split("/3")[0].split()[-1])
        assert f"agree={games} " in frame, frame
    assert "claude-y: 9 sent, 0 in flight, 9 answered, $2.25, 3 429s" in shown[-1], shown[-1]


def sim_sweep(tmp_path: Path, *overrides: str) -> SweepConfig:
    args = ["+grid=c3_smoke", "provider=sim", f"run.dir={tmp_path}", "run.progress=false", "run.report=false",
            *overrides]
    return resolve(compose_dict("config", args))


def paid_lines(folder: Path) -> int:
    return sum(1 for line in (folder / CALLS_JOURNAL).read_bytes().splitlines() if b'"reply"' in line) \
        if (folder / CALLS_JOURNAL).exists() else 0


def test_the_summary_per_model_sums_to_its_totals_and_to_the_call_journal(ray_session, tmp_path, capsys) -> None:
    """A finished sweep. The same sums are checked in the other endings where their sweeps run: a budget stop
    (test_budget.py's first invocation), an unreachable provider (test_signals.py), SIGTERM and SIGINT
    (test_signals.py) and a refused key (below)."""
    assert run_sweep(sim_sweep(tmp_path, "games.tickets.max_turns=4")) == ExitCode.OK  # the sums hold at any length
    out = capsys.readouterr().out
    calls, _ = assert_summary_sums(out)
    assert calls == paid_lines(tmp_path), "the paid figure is the call journal's"
    marks = re.search(r"^start-up: plan ([\d.]+) s, ray ([\d.]+) s, first request ([\d.]+) s, "
                      r"first game ([\d.]+) s$", out, re.M)
    assert marks and float(marks[1]) <= float(marks[2]) and max(map(float, marks.groups())) == float(marks[4]), out


async def _refuse_key(request: web.Request) -> web.Response:
    return web.json_response({"type": "error", "error": {"type": "authentication_error", "message": "invalid key"}},
                             status=401)


def test_with_a_bad_key_no_model_line_says_paid(ray_session, tmp_path, capsys, monkeypatch) -> None:
    """The real client against a provider that refuses the key (401): nothing answered, nothing paid."""
    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", _refuse_key)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-not-a-real-key-0000000000")
    with serve_app(app) as url:
        args = ["+grid=c3_smoke", f"run.dir={tmp_path}", "run.progress=false", "run.report=false",
                f"models.O.base_url={url}", f"models.H.base_url={url}"]
        assert run_sweep(resolve(compose_command(args))) == ExitCode.UNKNOWN_GAMES
    out = capsys.readouterr().out
    assert assert_summary_sums(out) == (0, 0.0) and paid_lines(tmp_path) == 0
    assert "0 calls paid, 0 replayed free, " in out and "failed after their retries" in out, out
    assert out.strip().splitlines()[-1].startswith("16 games unknown: 16 refused keys (401/403)"), out


def test_a_run_of_mostly_format_failures_names_the_scenario_or_the_prompt():
    """A rehearsal of a scenario its strategies could not play ended "FORMAT_FAILURE 40" beside "every game has a
    known result", with nothing saying the scenario was the likely cause."""
    from bargain_ray.execution.summary import format_failure_line
    from bargain_ray.execution.tally import Tally

    flagged = format_failure_line(Tally(games=40, statuses={"FORMAT_FAILURE": 40}, known=40), "used_car")
    assert len(flagged) == 1 and flagged[0].startswith("format failures: 40 of 40 games (100%, more than the 50% ")
    assert "the scenario or the prompt is the likely cause" in flagged[0]
    assert "python -m bargain_ray.check +grid=used_car" in flagged[0]
    assert format_failure_line(Tally(games=40, statuses={"FORMAT_FAILURE": 20, "AGREEMENT": 20}, known=40), "g") == []
