"""Sweeps against the simulated provider: real SDKs, real Ray, real parquet."""

from __future__ import annotations

import hashlib
import json
import urllib.request
from pathlib import Path

import polars as pl
import pytest

from bargain_ray.__main__ import main
from bargain_ray.config import SweepConfig, compose_dict
from bargain_ray.core.status import ExitCode
from bargain_ray.design import load_config, resolve
from bargain_ray.execution.sweep import run_sweep
from bargain_ray.providers.clients import NO_KEY
from bargain_ray.providers.services import provider_service
from bargain_ray.providers.sim import SimServer, SimSettings

SECRET = "sk-test-SECRET123"
SCORING = {
    "buyer": "points = 50 x (1 - p/4) + 30 x (1 - r/4) + 20 x (1 - t/4)",
    "seller": "points = 20 x (p/4) + 30 x (r/4) + 50 x (t/4)",
}
CONTRACT = ["call_id", "unit_id", "role", "provider", "model", "request", "response_text", "input_tokens",
            "output_tokens", "cache_read_tokens", "cache_write_tokens", "reasoning_tokens", "latency_s",
            "attempts", "attempt_errors", "request_id", "model_version", "cost_usd", "stop_reason", "status"]


def sim_sweep(run_dir: Path, base_url: str, max_attempts: int) -> SweepConfig:
    retry = {"max_attempts": max_attempts, "initial_s": 0.001, "max_s": 0.01, "timeout_s": 1.5}
    overrides = ["+grid=c3_smoke", "provider=sim", f"provider.settings.base_url={base_url}",
                 f"run.dir={run_dir}", "run.progress=false", "run.workers=1"]
    for letter in ("O", "H"):
        overrides += [f"models.{letter}.retry.{k}={v}" for k, v in retry.items()]
    return resolve(compose_dict("config", overrides))


def assert_briefs_private(calls: pl.DataFrame) -> None:
    """Seed 000: a role's brief is private; no request for one role carries the other's."""
    for call in calls.iter_rows(named=True):
        request = json.loads(call["request"])
        other = "seller" if call["role"] == "buyer" else "buyer"
        assert SCORING[call["role"]] in request["system"]
        assert SCORING[other] not in call["request"]
        assert "This brief is private" not in json.dumps(request["messages"])


def test_storm_sweep_statuses_and_every_call_once(ray_session: str, tmp_path: Path) -> None:
    # retried faults 0.32 of requests and 2 attempts a call: a call runs out with p = 0.10, so in ~90 calls some do
    # whatever order the requests arrive in (p of none ~ 1e-4), and each game (~6 calls) still finishes with p ~ 0.5
    faults = {"error_5xx": 0.16, "overloaded": 0.08, "timeout": 0.03, "drop": 0.05, "malformed": 0.08,
              "refusal": 0.03, "overlong": 0.05}
    # the server's limit is not in the sweep's settings: the limiter learns it from 429s and headers
    limits = {"requests_per_minute": 3000, "burst_s": 0.1}
    server = SimServer(SimSettings(seed=11, faults=faults, limits=limits, timeout_sleep_s=2.0))
    with server:  # the storm exhausts some calls: the sweep ends with unknown games, and says so in its exit code
        assert run_sweep(sim_sweep(tmp_path, server.base_url, max_attempts=2)) == ExitCode.UNKNOWN_GAMES
    games = pl.read_parquet(tmp_path / "games.parquet")
    calls = pl.read_parquet(tmp_path / "calls.parquet")
    assert games.height == 16 and set(CONTRACT) <= set(calls.columns)

    # every game ends with the right status: unknown exactly when one of its calls ran out of attempts
    failed = set(calls.filter(pl.col("status") == "error")["unit_id"])
    for game in games.iter_rows(named=True):
        technical = game["status"] == "TECHNICAL_ERROR"
        assert technical == (game["unit_id"] in failed) and game["known"] == (not technical)
    assert failed, "the storm should exhaust some calls"
    assert games.filter(pl.col("known")).height > 0

    # no call lost or counted twice: attempts recorded == requests served, replies == 200s served
    log = server.log
    assert calls["attempts"].sum() == len(log)
    served = sorted(e.request_id for e in log if e.status == 200 and e.fault != "malformed")
    assert sorted(calls.filter(pl.col("status") == "ok")["request_id"]) == served
    assert calls["call_id"].n_unique() == calls.height
    refusals = calls.filter(pl.col("stop_reason") == "refusal")
    assert refusals.height == sum(1 for e in log if e.fault == "refusal" and e.status == 200)
    assert (~refusals["valid"]).all()
    assert_briefs_private(calls)

    # technical failures are unknown and run again on resume; without faults they all finish
    with SimServer(SimSettings(seed=12)) as url:
        assert run_sweep(sim_sweep(tmp_path, url, max_attempts=3)) == 0
    games = pl.read_parquet(tmp_path / "games.parquet")
    assert games.height == 16 and games["known"].all()


def test_cli_sim_sweep_writes_contract_and_no_key(ray_session: str, tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch,
                                                  capfd: pytest.CaptureFixture[str]) -> None:
    """The CLI sweep on the sim: a key set in the environment reaches neither the sim nor a file. In-process (the
    CLI's ``main`` on the session's Ray, as a ``python -m bargain_ray`` joining it runs), the key in the driver's
    environment and the terminal read at the file descriptors, Ray's own lines included."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", SECRET)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    server = SimServer(SimSettings())
    with server as url:
        code = main(["+grid=c3_smoke", "provider=sim", f"run.dir={tmp_path}", f"provider.settings.base_url={url}",
                     "run.progress=false",
                     "games.tickets.max_turns=4"])  # where a key could leak is the same in every turn
    done = capfd.readouterr()
    assert code == 0, done.err[-3000:]
    assert "sim:claude-opus-5-5" in done.out and SECRET not in done.out + done.err
    assert {e.key_sha for e in server.log} == {hashlib.sha256(NO_KEY.encode()).hexdigest()[:12]}  # never SECRET
    calls = pl.read_parquet(tmp_path / "calls.parquet")
    assert set(CONTRACT) <= set(calls.columns) and calls.height == len(server.log)
    assert (calls["provider"] == "sim").all() and (calls["cost_usd"] > 0).all()
    assert calls["request_id"].null_count() == 0 and calls["model_version"].null_count() == 0
    assert_briefs_private(calls)
    for path in tmp_path.rglob("*"):
        if path.is_file():
            assert b"SECRET123" not in path.read_bytes(), path


def test_provider_service_starts_and_stops_the_sim() -> None:
    sweep = load_config("c3_smoke", ["provider=sim"])
    with provider_service(sweep) as served:
        settings = served.provider.settings
        assert settings.apis == {"claude-opus-5-5": "anthropic", "claude-haiku-5-5": "anthropic"}
        with urllib.request.urlopen(f"{settings.base_url}/sim/log", timeout=10) as resp:
            assert json.loads(resp.read()) == []
    with pytest.raises(OSError):
        urllib.request.urlopen(f"{settings.base_url}/sim/log", timeout=2)
