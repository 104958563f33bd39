"""Every actor of a sweep can die: each one is killed at a random moment of a real sweep on the simulated provider.

The sweep is a CLI process on the session's Ray; the test finds the actor through Ray's state (the GCS actor
table) and kills it, with SIGKILL of its process (Ray restarts what may restart) or with ``ray.kill`` and no
restart (gone for good). Either the sweep carries on and ends with every game known, or it stops within
seconds with exit 2 and a line naming what was lost, and a resume finishes it. Never a loop; and the
simulated provider's request log, held against the journals, shows no call paid and not journaled (a lost
runner: no more paid twice than it had games in flight).
"""

from __future__ import annotations

import json
import os
import random
import re
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable
from itertools import islice
from pathlib import Path

import polars as pl
import pytest
import ray
from helpers import ROOT, complete_lines, read_journal

from bargain_ray.__main__ import main
from bargain_ray.config.pricing import cost_usd
from bargain_ray.core.errors import FailureKind
from bargain_ray.core.records import Usage
from bargain_ray.core.status import ExitCode
from bargain_ray.design import load_config, units
from bargain_ray.execution import pool as pools
from bargain_ray.execution.worker import Job
from bargain_ray.providers.sim import LogEntry, SimServer, SimSettings

NAMESPACE = "bargain_ray"
IN_FLIGHT = 8
GAMES = 16
"""The C3 rehearsal's one block, ``IN_FLIGHT`` games at a time: every kill moment below comes before its end (its
games last 3 to 7 turns on the sim, about 76 calls; the latest kill is at the 40th journal line)."""
CAP = 5.0
"""A cap the sweep never reaches: the budget actor runs (so it can be killed) and its figure can be checked."""
BUDGET = (f"run.max_cost_usd={CAP}",)
"""Given only to the sweeps whose budget is killed or whose budget line is checked: a Budget actor is a process."""
EXIT_S = 240
"""A sweep that loops never exits: this long means it did not stop."""


def sweep_args(url: str, folder: Path, *more: str) -> list[str]:
    return ["+grid=c3_smoke", "provider=sim", f"provider.settings.base_url={url}", f"run.dir={folder}",
            f"run.max_in_flight={IN_FLIGHT}", "run.games_per_task=1", "run.progress=false", "run.report=false",
            *more]


BATCH = ("run.batch_api=true", "run.batch.max_wait_s=0.3", "run.batch.poll_s=0.2", "games.tickets.max_turns=4",
         f"run.max_in_flight={GAMES}")
"""Every game in flight at once: the sweep waits ``batch.delay_s`` once a turn (3), not once a turn of each wave."""


def alive(class_name: str) -> list[dict]:
    """The live actors of that class, of the sweep's job (not this test's), or detached (the cluster's limiter)."""
    from ray._private import state

    own = ray.get_runtime_context().get_job_id()
    return [a for a in state.actors().values() if a["ActorClassName"] == class_name and a["State"] == "ALIVE"
            and (a["JobID"] != own or a["IsDetached"])]


def kill(class_name: str, how: str) -> None:
    """SIGKILL the actor's process, or ``ray.kill`` it with no restart (a named actor)."""
    deadline = time.monotonic() + 60
    while not (actors := alive(class_name)):
        assert time.monotonic() < deadline, f"no live {class_name}"
        time.sleep(0.05)
    actor = actors[0]
    if how == "sigkill":
        os.kill(actor["Pid"], signal.SIGKILL)
    else:
        ray.kill(ray.get_actor(actor["Name"], namespace=NAMESPACE), no_restart=True)


def served(server: SimServer) -> list[LogEntry]:
    """Replies the sim served and billed: online 200s, and every request of a batch it created."""
    return [e for e in server.log if e.batch_id or e.status == 200]


def paid_lines(folder: Path) -> list[dict]:
    return [e for e in read_journal(folder / "calls.journal.jsonl") if "reply" in e]


def run_killed(server: SimServer, url: str, folder: Path, env: dict, class_name: str, how: str, *more: str,
               at: str = "calls.journal.jsonl", after: int = 8, when: Callable[[], bool] | None = None,
               exit_s: float = EXIT_S) -> tuple[int, str, float]:
    """The sweep, with the actor killed once ``at`` has ``after`` lines (or once ``when()``); (exit code, output,
    seconds from kill to exit). A sweep still running ``exit_s`` after the kill fails the test."""
    out = folder.parent / f"{folder.name}.out"
    ready = when or (lambda: complete_lines(folder / at) >= after)
    with out.open("w") as sink:
        proc = subprocess.Popen([sys.executable, "-m", "bargain_ray", *sweep_args(url, folder, *more)], env=env,
                                cwd=ROOT, stdout=sink, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + EXIT_S
        while proc.poll() is None and not ready():
            assert time.monotonic() < deadline, "the sweep never got to the kill"
            time.sleep(0.01)
        assert proc.poll() is None, "the sweep ended before the kill"
        kill(class_name, how)
        killed = time.monotonic()
        try:
            code = proc.wait(exit_s)
        except subprocess.TimeoutExpired:
            proc.kill()
            pytest.fail(f"the sweep did not stop within {exit_s} s of the kill: a hang or a loop")
    return code, out.read_text(), time.monotonic() - killed


def finished_tables(folder: Path, games: int) -> pl.DataFrame:
    table = pl.read_parquet(folder / "games.parquet")
    assert table.height == games and table["unit_id"].n_unique() == games and table["known"].all()
    return table


def last_line(output: str) -> str:
    """The sweep's own last line (Ray may print an error of its own, prefixed, after it; never a retry notice)."""
    return [line for line in output.strip().splitlines() if not line.startswith("\x1b[")][-1]


def status_of(folder: Path) -> str:
    return json.loads((folder / "status.json").read_text())["state"]


def left_usd(output: str) -> float:
    return float(re.search(r"budget: run\.max_cost_usd=\$[\d.]+, \$([\d.]+) left", output).group(1))


@pytest.fixture
def sim(request):
    """The sim; a test marked ``create_delay_s`` gets create calls that answer that long after the batch exists."""
    create_delay_s = getattr(request, "param", 0.0)
    server = SimServer(SimSettings(latency={"median_s": 0.1}, batch={"delay_s": 0.5, "create_delay_s": create_delay_s}))  # 8 calls always in flight
    with server as url:
        yield server, url


CARRY_ON = [
    ("JournalActor", "sigkill", ()),
    ("Limiters", "sigkill", ()),
    ("Limiters", "ray.kill", ()),
]


@pytest.mark.parametrize(("actor", "how", "more"), CARRY_ON)
def test_a_restartable_actor_killed_mid_sweep_carries_on_and_every_paid_call_is_journaled(
        tmp_path, sweep_env, sim, actor, how, more):
    server, url = sim
    folder = tmp_path / "sweep"
    after = random.Random(f"{actor}{how}").randint(5, 40)
    code, output, _ = run_killed(server, url, folder, sweep_env, actor, how, *BUDGET, *more, after=after)
    assert code == ExitCode.OK, output
    assert "Traceback" not in output and last_line(output) == "every game has a known result"
    assert "retries remaining" not in output, "Ray's retry notices are not printed"
    finished_tables(folder, GAMES)
    paid = paid_lines(folder)
    assert len(served(server)) == len(paid), "every call served is journaled, once"
    assert len({e["call_id"] for e in paid}) == len(paid)
    assert left_usd(output) == pytest.approx(CAP - sum(e["reply"]["cost_usd"] for e in paid), abs=1e-4)


STOPS = [
    ("JournalActor", "ray.kill", "the call journal's actor was lost"),
    ("Budget", "sigkill", "the budget's actor was lost"),
]


@pytest.mark.parametrize(("actor", "how", "named"), STOPS)
def test_an_actor_lost_for_good_stops_the_sweep_with_exit_2_naming_it_and_the_folder_resumes(
        tmp_path, sweep_env, sim, actor, how, named, capsys):
    server, url = sim
    folder = tmp_path / "sweep"
    after = random.Random(f"{actor}{how}").randint(5, 40)
    code, output, seconds = run_killed(server, url, folder, sweep_env, actor, how, *BUDGET, after=after)
    print(f"{actor} {how}: exit {code} {seconds:.1f} s after the kill")
    assert code == ExitCode.UNKNOWN_GAMES, output
    assert "Traceback" not in output and f"stopped: {named}" in last_line(output)
    assert "retries remaining" not in output, "Ray's retry notices are not printed (after the summary)"
    assert output.strip().splitlines()[-1] == last_line(output), "the summary is the last line printed"
    assert status_of(folder) == "ended" and (folder / "games.parquet").exists()
    paid = paid_lines(folder)
    assert len(served(server)) == len(paid), "every call served is journaled, the ones in flight at the loss too"
    spent = sum(e["reply"]["cost_usd"] for e in paid)
    assert spent <= CAP
    if actor != "Budget":  # the cap saw every paid call, those whose journal write failed too
        assert left_usd(output) == pytest.approx(CAP - spent, abs=1e-4)

    assert main(sweep_args(url, folder)) == ExitCode.OK  # the resume, in-process on the session's Ray
    finished_tables(folder, GAMES)
    assert len(served(server)) == len(paid_lines(folder)), "the resume replayed what the stopped run paid"


@pytest.mark.parametrize("batched", [False, True])
def test_a_game_runner_killed_mid_sweep_costs_at_most_its_games_in_flight(tmp_path, sweep_env, sim, batched):
    """Online, the lost games replay what was journaled since they were sent; batched, their calls sent again wait
    for the batches they are in. The budget counts at least what the sim billed: online, the lost runner's calls in
    flight stay counted at their worst case (each may be billed, and is sent again); batched, a call sent again is
    the same request, counted once, so the figure is exact."""
    server, url = sim
    folder = tmp_path / "sweep"
    rng = random.Random(f"GameRunner{batched}")
    kill_at = {"at": "batches.journal.jsonl", "after": rng.randint(1, 3)} if batched else {"after": rng.randint(5, 40)}
    code, output, _ = run_killed(server, url, folder, sweep_env, "GameRunner", "sigkill", *(BATCH if batched else ()),
                                 *BUDGET, **kill_at)
    assert code == ExitCode.OK, output
    lost = sum(int(n) for n in re.findall(r"a worker was lost with (\d+) games in flight", output))
    assert lost >= 1, output
    table = finished_tables(folder, GAMES)
    paid_twice = len(served(server)) - pl.read_parquet(folder / "calls.parquet").height  # each call paid once
    counted = CAP - left_usd(output)
    spent = sum(e["reply"]["cost_usd"] for e in paid_lines(folder))
    print(f"runner lost with {lost} games in flight{' (batched)' if batched else ''}: paid_twice={paid_twice}, "
          f"journaled ${spent:.4f}, counted ${counted:.4f}")
    assert 0 <= paid_twice <= (0 if batched else lost)
    assert table["unit_id"].n_unique() == GAMES
    if batched:
        assert counted == pytest.approx(spent, abs=1e-4)
    else:
        assert counted >= billed_usd(server) - 1e-4, "a call the lost runner sent is billed: the budget counts it"


LOSS_GAMES = 64
LOSS = ("grid.blocks=4", f"run.max_in_flight={LOSS_GAMES}", "models.O.limits.max_in_flight=8",
        "models.H.limits.max_in_flight=8")
"""The C3 rehearsal with four blocks, every game in flight at once, more calls waiting than each model's window lets
go: one runner plays them all (``pool.runner_count``), so at any moment it holds every slot of both keys."""
FINISH_S = 150.0
"""A lost runner's games are played again at once: the sweep ends within this long of the kill (their time, on a
loaded machine). A deadline for a hang: the slots the lost runner held used to come back after a 15-minute lease."""
CAP_STOP_S = 60.0
"""Under a binding cap the sweep ends with exit 3 within this long of the kill (its reservations used to hold the
budget for good)."""


@pytest.fixture
def slow_sim():
    """The sim at 0.5 s a reply: every game's call is in flight or waiting when the runner dies."""
    server = SimServer(SimSettings(latency={"median_s": 0.5}))
    with server as url:
        yield server, url


def billed_usd(server: SimServer) -> float:
    """What the sim billed: every reply it produced, received or not (a client gone still pays), at its price."""
    prices = {m.name: m.price for m in load_config("c3_smoke", ["provider=sim"]).models.values() if m.is_llm}
    return sum(cost_usd(Usage(input_tokens=e.input_tokens, output_tokens=e.output_tokens), prices[e.model])
               for e in server.log if e.status in (200, "client_gone"))


def test_a_lost_runner_frees_its_limiter_slots_at_once_and_the_sweep_finishes(tmp_path, sweep_env, slow_sim):
    """The runner holds every slot of the opus key and calls wait behind them when it is SIGKILLed: its replacement
    gets the whole window as soon as the pool notices the loss, not once a lease runs out."""
    server, url = slow_sim
    folder = tmp_path / "sweep"
    after = random.Random("runner loss").randint(20, 60)
    code, output, seconds = run_killed(server, url, folder, sweep_env, "GameRunner", "sigkill", *LOSS, after=after,
                                       exit_s=FINISH_S)
    print(f"runner SIGKILLed after {after} journaled replies: exit {code} {seconds:.1f} s after the kill")
    assert code == ExitCode.OK, output
    assert re.search(r"a worker was lost with \d+ games in flight", output), output
    finished_tables(folder, LOSS_GAMES)


def test_a_lost_runner_under_a_binding_cap_ends_the_sweep_with_exit_3_and_the_cap_holds(tmp_path, sweep_env,
                                                                                         slow_sim):
    """Its calls waiting for room are cancelled and never take any; the calls it had in flight stay counted (the
    provider may bill them), so what the sim billed, those included, stays within the cap."""
    server, url = slow_sim
    folder = tmp_path / "sweep"
    cap = 0.2
    after = random.Random("runner loss capped").randint(5, 15)
    code, output, seconds = run_killed(server, url, folder, sweep_env, "GameRunner", "sigkill", *LOSS,
                                       f"run.max_cost_usd={cap}", after=after, exit_s=CAP_STOP_S)
    print(f"runner SIGKILLed after {after} journaled replies, cap ${cap}: exit {code} {seconds:.1f} s after the kill, "
          f"billed ${billed_usd(server):.4f}")
    assert code == ExitCode.BUDGET, output
    assert "Traceback" not in output and "refused by the budget" in output
    assert status_of(folder) == "ended" and (folder / "games.parquet").exists()
    assert billed_usd(server) <= cap


def created_unjournaled(server: SimServer, folder: Path) -> dict[str, set[str]]:
    """batch id -> custom ids, of the batches the sim created that the batch journal does not hold."""
    journaled = {b["batch_id"] for b in read_journal(folder / "batches.journal.jsonl") if "batch_id" in b}
    unjournaled: dict[str, set[str]] = {}
    for e in list(server.log):
        if e.batch_id and e.batch_id not in journaled:
            unjournaled.setdefault(e.batch_id, set()).add(e.custom_id)
    return unjournaled


@pytest.mark.parametrize(("how", "code", "sim"), [("sigkill", ExitCode.OK, 0.0), ("ray.kill", ExitCode.UNKNOWN_GAMES, 0.0),
                                                  ("sigkill", ExitCode.OK, 1.0)], indirect=["sim"])
def test_the_batcher_killed_mid_batch_never_pays_a_call_twice_nor_ends_in_a_traceback(
        tmp_path, sweep_env, sim, how, code):
    """At a random moment, or (the sim's create calls answering 1 s after the batch exists) while the provider has
    created a batch its creator has not heard of: the batch is found at the provider, never created again."""
    server, url = sim
    folder = tmp_path / "sweep"
    moment = "creating" if server.settings.batch.create_delay_s else "any"
    if moment == "creating":
        got, output, _ = run_killed(server, url, folder, sweep_env, "Batcher", how, *BATCH,
                                    when=lambda: bool(created_unjournaled(server, folder)))
    else:
        after = random.Random(f"Batcher{how}").randint(1, 3)
        got, output, _ = run_killed(server, url, folder, sweep_env, "Batcher", how, *BATCH,
                                    at="batches.journal.jsonl", after=after)
    assert got == code, output
    assert "Traceback" not in output and "ActorDiedError" not in output
    assert status_of(folder) == "ended" and (folder / "games.parquet").exists()
    if code == ExitCode.UNKNOWN_GAMES:
        assert "stopped: the batcher's actor was lost" in last_line(output)
        assert main(sweep_args(url, folder, *BATCH)) == ExitCode.OK
    finished_tables(folder, GAMES)
    assert not [e for e in server.log if not e.batch_id], "nothing went online at full price"
    received = Counter(e.custom_id for e in server.log if e.batch_id)
    assert set(received) == set(pl.read_parquet(folder / "calls.parquet")["call_id"])
    twice = {c for c, n in received.items() if n > 1}
    print(f"batcher {how} ({moment}): {len(received)} calls, {len(twice)} paid twice, {len(server.log)} requests")
    assert not twice, "a batch created as the batcher died is found at the provider, not created again"
    assert not created_unjournaled(server, folder), "every batch the sim created is journaled"


@ray.remote(num_cpus=0)
class DoomedRunner:
    """A runner whose process ends whenever it plays (a game that crashes its runner every time)."""

    def __init__(self, *args: object) -> None:
        pass

    async def play_many(self, jobs: list) -> list:
        os._exit(1)

    async def halt(self, failure: object) -> None:
        pass


def test_games_that_end_their_runner_every_time_stop_the_run_instead_of_looping(ray_session):
    sweep = load_config("demo", ["grid.blocks=1"])
    pool = pools.WorkerPool(sweep.model_dump(mode="json"), None, {}, 1, runner=DoomedRunner)
    pool.submit([Job(u, []) for u in islice(units(sweep, "20261027"), 2)])
    deadline = time.monotonic() + EXIT_S
    while pool.pending:
        assert time.monotonic() < deadline, "the lost batch is sent again forever"
        list(pool.finished(timeout=5))
    pool.close(clean=False)
    assert pool.halted is not None and pool.halted.kind is FailureKind.LOST_WORKER
    assert list(pool.losses.values()) == [pools.MAX_LOSSES]
