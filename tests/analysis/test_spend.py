"""What was paid, shown alike by every reader: the terminal's summary, the live view (its snapshot and its page) and
the dataset card show the call journal's figures per ``provider:model`` (``store.paid``), and the same figures
whether the journal holds each reply or only its cost (``run.journal_calls=false``)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from grids import dom
from test_view import serving

from bargain_ray.__main__ import main
from bargain_ray.analysis.report import build_report
from bargain_ray.analysis.view import Follower
from bargain_ray.providers.sim import SimServer, SimSettings
from bargain_ray.providers.sim.config import VersionChange
from bargain_ray.store import read_spend

MODEL = "claude-haiku-5-5"
CHANGE = VersionChange(at_call=12, version=f"{MODEL}-v2", model=MODEL)
SWEEP = ["+grid=c3_smoke", "provider=sim", "run.progress=false", "run.report=false", "run.workers=1"]
MODEL_LINE = re.compile(r"^  (\S+): (\d+) calls paid, \d+ replayed free(?:, \d+ failed after their retries)?; "
                        r"paid (\d+) input / (\d+) output tokens, \$([\d.]+)$", re.M)


def swept(folder: Path, journal_calls: str) -> None:
    """c3_smoke against a simulated provider that serves ``MODEL`` as another version from its 12th reply."""
    with SimServer(SimSettings(served_version_change=CHANGE)) as url:
        assert main([*SWEEP, f"provider.settings.base_url={url}", f"run.dir={folder}",
                     f"run.journal_calls={journal_calls}"]) == 0


def test_the_summary_the_view_and_the_card_show_what_was_paid_in_both_journal_modes(ray_session, tmp_path, capsys):
    shown = {}
    for journal_calls in ("true", "false"):
        folder = tmp_path / f"journal_calls_{journal_calls}"
        swept(folder, journal_calls)
        said = {m: (int(n), int(i), int(o), float(usd)) for m, n, i, o, usd in MODEL_LINE.findall(capsys.readouterr().out)}
        rows = Follower(folder).snapshot().spend
        assert said == {r.model: (r.calls, r.input_tokens, r.output_tokens, round(r.cost_usd, 4)) for r in rows}, \
            "the summary's per-model lines are the view's rows"
        assert rows == sorted(read_spend(folder).models.values(), key=lambda m: m.model)
        shown[journal_calls] = rows
    replies, costs = shown["true"], shown["false"]
    assert [r.model for r in costs] == [f"sim:{m}" for m in ("claude-haiku-5-5", "claude-opus-5-5")]
    for a, b in zip(replies, costs, strict=True):  # the simulated provider answers a request alike every time
        assert a.model_dump(exclude={"cost_usd"}) == b.model_dump(exclude={"cost_usd"})
        assert a.cost_usd == pytest.approx(b.cost_usd) and a.calls > 0 and a.cost_usd > 0
    haiku = costs[0]
    assert haiku.drifted == haiku.calls - (CHANGE.at_call - 1) > 0, "drift is read from a cost-only line too"

    folder = tmp_path / "journal_calls_false"
    with serving(folder.parent) as url:
        page = dom(f"{url}?sweep={folder.name}", tmp_path / "profile", budget_ms=4000)
    for r in costs:
        assert (f"<tr><td>{r.model}</td><td>{r.calls}</td><td>{r.input_tokens}</td><td>{r.output_tokens}</td>"
                f"<td>{r.cost_usd:.4f}</td><td>{r.rate_limited}</td></tr>") in page, page
    build_report(folder)
    card = (folder / "dataset" / "README.md").read_text()
    for r in costs:
        assert (f"| `{r.model}` | {r.calls} | {r.input_tokens} | {r.output_tokens} | {r.cost_usd:.4f} | "
                f"{r.rate_limited} | {r.drifted} |") in card, card
    assert f"{sum(r.calls for r in costs)} model calls paid" in card and "(simulated: provider=sim" in card
