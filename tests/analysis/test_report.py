"""The HTML report: self-contained, every transcript with private parts marked, and a real
headless Chromium screenshot that shows the tables and the plots."""

from __future__ import annotations

import asyncio
import json
import re
import shutil
import subprocess
import sys
from itertools import islice

import polars as pl
import pytest
from helpers import CONF
from PIL import Image
from test_analysis import make_sweep

from bargain_ray.analysis.per_game import EMPTY
from bargain_ray.analysis.report import build_report
from bargain_ray.core.status import ExitCode
from bargain_ray.design import load_config, units
from bargain_ray.execution.plan import describe
from bargain_ray.execution.worker import GameRunner
from bargain_ray.games import family
from bargain_ray.report import main
from bargain_ray.store import GameJournal, open_manifest, read_records, write_tables
from bargain_ray.store.rows import shared_columns


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    sweep = make_sweep(tmp_path_factory.mktemp("sweep"))
    return build_report(sweep, resamples=200)


def test_every_raw_link_points_at_a_file_of_the_dataset(report):
    links = re.findall(r'href="(dataset/raw/[^"]+\.jsonl)"', report.read_text())
    assert links and all((report.parent / link).is_file() for link in links), links[:3]


def test_report_is_one_self_contained_file(report):
    html = report.read_text()
    assert report.name == "report.html" and html.startswith("<!doctype html>")
    assert not re.search(r'<(script|link|img)[^>]+(src|href)="(https?:)?//', html)  # nothing fetched
    assert html.count("<svg") >= 4  # efficiency x2, deal rate, frontier, rounds
    for anchor, heading in (("summary", "Summary"), ("legend", "Legend"), ("by-model", "Results by model and role"),
                            ("by-cell", "By cell"), ("plots", "Plots"), ("operational", "Operational, per model"),
                            ("texts", "Texts a model reads"), ("transcripts", "Transcripts (12)")):
        assert f'<h2 id="{anchor}">{heading}</h2>' in html and f'<a href="#{anchor}">' in html  # in the contents


def test_every_transcript_is_rendered_with_private_parts_marked(report):
    html = report.read_text()
    assert html.count('<details class="game" ') == 12
    assert html.count("PRIVATE · buyer brief") == 12
    assert html.count("PRIVATE · seller brief: only the seller saw this") == 11
    # the buyer opened the format failure, so the seller was never asked: its brief is rebuilt from the config
    assert html.count("PRIVATE · seller brief: rebuilt from the game config") == 1
    assert "You negotiate for Marquee Ticket Agency" in html
    assert "Turn 9 · seller" in html and "negotiation-test-20261129-b01-p02-xy-a1-fseller-k09" in html
    assert "TECHNICAL FAILURE: unknown, unscored" in html and "HTTP 529 overloaded" in html
    assert "invalid reply</b> (rule <code>not_one_json_object</code>)" in html


def test_cli_groups_cells_as_asked_beside_the_default_report(tmp_path):
    sweep = make_sweep(tmp_path / "sweep")
    default = build_report(sweep, resamples=50)
    before = (default.read_bytes(), (sweep / "dataset" / "metrics" / "metrics_by_cell.parquet").read_bytes())
    done = subprocess.run([sys.executable, "-m", "bargain_ray.report", str(sweep), "--by", "pairing,first_speaker",
                           "--resamples", "100"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    beside = sweep / "report-by-pairing-first_speaker.html"
    assert f"report: {beside}" in done.stdout and beside.exists()
    assert "cells by pairing x first_speaker" in beside.read_text()
    assert before == (default.read_bytes(), (sweep / "dataset" / "metrics" / "metrics_by_cell.parquet").read_bytes())


def test_cli_names_a_bad_grouping(tmp_path, capsys):
    assert main([str(make_sweep(tmp_path / "sweep")), "--by", "colour"]) == ExitCode.USER_ERROR
    assert "cannot group by ['colour']" in capsys.readouterr().err


def test_headless_chromium_screenshot_shows_tables_and_plots(report, tmp_path):
    chromium = shutil.which("chromium")
    assert chromium, "Debian's chromium is required: apt-get install -y chromium"
    shot = tmp_path / "report.png"
    subprocess.run(
        [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run", f"--user-data-dir={tmp_path / 'profile'}",
         f"--screenshot={shot}", "--window-size=1400,2000", report.as_uri()],
        capture_output=True, timeout=120, check=True,
    )
    image = Image.open(shot).convert("RGB")
    assert image.size == (1400, 2000)
    colours = image.getcolors(maxcolors=1 << 20)
    assert len(colours) > 50  # not blank: text, tables and plots
    counts = {rgb: n for n, rgb in colours}
    table_header = (0xF3, 0xF4, 0xF6)  # th background
    plot_bar = (0x25, 0x63, 0xEB)  # CI bars and histogram bars
    frontier_box = (0xF9, 0xFA, 0xFB)  # the frontier plot's background
    assert counts.get(table_header, 0) > 2000
    assert counts.get(plot_bar, 0) > 500
    assert counts.get(frontier_box, 0) > 20000


DEMOS = sorted(p.stem for p in (CONF / "grid").glob("*demo*.yaml"))


def play_grid(grid: str, path):
    """The first units of a demo grid played in-process (strategy agents, no Ray) into a real sweep folder."""
    sweep = load_config(grid)
    manifest = open_manifest(path, describe(sweep, "20261201"))
    runner = GameRunner(sweep.model_dump(mode="json"))
    journal = GameJournal(path)
    for u in islice(units(sweep, manifest.created), 6):
        journal.append_many([asyncio.run(runner.play(u))])
    journal.close()
    write_tables(path)
    return sweep


@pytest.mark.parametrize("grid", DEMOS)
def test_every_family_plugs_in_unchanged(grid, tmp_path):
    play_grid(grid, tmp_path)
    report = build_report(tmp_path, resamples=100).read_text()
    per_game = pl.read_parquet(tmp_path / "dataset" / "metrics" / "metrics_per_game.parquet")
    games = pl.read_parquet(tmp_path / "games.parquet")
    assert per_game.height == games.height > 0 and report.count('<details class="game" ') == games.height
    records = [json.loads(line) for line in (tmp_path / "journal.jsonl").read_text().splitlines()]
    for name in {r["unit"]["family"] for r in records}:
        module = family(name).metrics
        record = next(r for r in records if r["unit"]["family"] == name)
        assert set(module.per_game(record)) <= set(per_game.columns)  # the family's own columns
        if hasattr(module, "per_turn"):
            assert (tmp_path / "dataset" / "metrics" / "metrics_per_turn.parquet").exists()
    assert "PRIVATE · " in report and "<svg" in report


def test_a_sweep_without_games_still_reports(tmp_path):
    """build_report runs at the end of every sweep, also one interrupted before its first game."""
    open_manifest(tmp_path, describe(load_config("demo"), "20261201"))
    html = build_report(tmp_path, resamples=10).read_text()
    assert '<h2 id="transcripts">Transcripts (0)</h2>' in html
    assert pl.read_parquet(tmp_path / "dataset" / "metrics" / "metrics_per_game.parquet").height == 0
    record = next(read_records(make_sweep(tmp_path / "full")))
    assert set(EMPTY) == set(shared_columns(record))  # same columns either way


def test_gains_by_model_and_role_with_seed_clustered_intervals(report):
    """What model-x gains as buyer against model-y: the mean of per-seed means, with a CI, as the page shows it."""
    html = report.read_text()
    section = html[html.index('<h2 id="by-model">'):html.index('<h2 id="by-cell">')]
    games = pl.read_parquet(report.parent / "games.parquet").filter(pl.col("known"))
    for role, other in (("buyer", "seller"), ("seller", "buyer")):
        for model, opponent in (("model-x", "model-y"), ("model-y", "model-x")):
            rows = games.filter((pl.col(f"model_{role}") == model) & (pl.col(f"model_{other}") == opponent)
                                & pl.col(f"gain_{role}").is_not_null())
            mean = rows.group_by("seed").agg(pl.col(f"gain_{role}").mean())[f"gain_{role}"].mean()
            cells = (f'<td class="l">tickets</td><td class="l">{role}</td><td class="l">{model}</td>'
                     f'<td class="l">{opponent}</td><td class="">{rows.height}</td><td class="">{rows["seed"].n_unique()}</td>'
                     f'<td class="">{round(mean, 3)} [')
            assert cells in section, (role, model)
    assert section.count("<tr>") == 1 + 4 + 2  # header, four (role, model, opponent), two pooled ("any")
    legend = html[html.index('<h2 id="legend">'):html.index('<h2 id="by-model">')]
    assert "<dt>X</dt><dd>model-x (anthropic)</dd>" in legend and "buyer: agent A, seller: agent B" in legend


def test_transcript_headers_show_the_deal_gains_and_where_briefs_come_from(report):
    html = report.read_text()
    seed001 = html[html.index('id="negotiation-test-20261129-b01-p02-xy-a1-fseller"'):]
    summary = seed001[:seed001.index("</summary>")]
    assert "deal: unit_price_usd 64.5, cancellation_fee_pct 37, name_change_notice_hours 96" in summary
    assert "gains: buyer" in summary and "seller" in summary
    assert "PRIVATE · buyer brief: only the buyer saw this</span> <span class=meta>(seed 000)</span>" in html
    texts = html[html.index('<h2 id="texts">'):html.index('<h2 id="transcripts">')]
    assert "brief:buyer" in texts and "OURS, not a seed" in texts  # our own texts are marked as ours


def test_simulated_costs_are_labelled(tmp_path):
    sweep = make_sweep(tmp_path / "sweep")
    assert "(simulated)" not in build_report(sweep, resamples=20).read_text()
    manifest = json.loads((sweep / "manifest.json").read_text())
    manifest["config"]["provider"] = "sim"
    (sweep / "manifest.json").write_text(json.dumps(manifest))
    html = build_report(sweep, resamples=20).read_text()
    assert "Costs are simulated" in html and "<th>cost_usd (simulated)</th>" in html.replace(' class=""', "")


def visible_games(url: str, profile) -> int:
    """Transcripts left visible once the page's filter script ran on ``url`` (headless Chromium's DOM)."""
    dom = subprocess.run(
        [shutil.which("chromium"), "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
         f"--user-data-dir={profile}", "--dump-dom", url], capture_output=True, text=True, timeout=120, check=True,
    ).stdout
    tags = re.findall(r'<details class="game"[^>]*>', dom)
    assert tags, dom[-2000:]
    return sum(" hidden" not in t for t in tags)


def test_the_transcript_filter_works_in_headless_chromium(report, tmp_path):
    games = pl.read_parquet(report.parent / "games.parquet")
    cell = "C3|XY|a1|seller"
    assert visible_games(report.as_uri(), tmp_path / "p") == 12
    assert visible_games(report.as_uri() + "?status=AGREEMENT", tmp_path / "p") == games.filter(
        pl.col("status") == "AGREEMENT").height
    both = games.filter((pl.col("status") == "AGREEMENT") & (pl.col("cell") == cell)).height
    assert 0 < both < 12
    assert visible_games(report.as_uri() + f"?status=AGREEMENT&cell={cell.replace('|', '%7C')}", tmp_path / "p") == both
    assert visible_games(report.as_uri() + "?model=model-x&status=TECHNICAL_ERROR", tmp_path / "p") == 1
    assert visible_games(report.as_uri() + f"?status=TECHNICAL_ERROR&cell={cell.replace('|', '%7C')}", tmp_path / "p") == 0
