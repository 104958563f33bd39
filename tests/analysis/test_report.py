"""The HTML report: self-contained, every transcript with private parts marked, and a real
headless Chromium screenshot that shows the tables and the plots."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest
from grids import dom, play_grid
from helpers import CONF
from PIL import Image
from test_analysis import make_sweep

from bargain_ray.analysis.per_game import EMPTY
from bargain_ray.analysis.report import build_report
from bargain_ray.analysis.sample import SAMPLE
from bargain_ray.analysis.sweep import read_sweep
from bargain_ray.core.status import ExitCode
from bargain_ray.design import load_config
from bargain_ray.execution.plan import describe
from bargain_ray.games.kit.leakage import ERROR, VALIDATION
from bargain_ray.report import main
from bargain_ray.store import open_manifest, read_records, write_tables
from bargain_ray.store.rows import shared_columns


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    sweep = make_sweep(tmp_path_factory.mktemp("sweep"))
    return build_report(sweep)  # no check reads an interval's bounds, only their format


class Demos:
    """The demo grids, each played whole (in-process, strategy agents) once a module, its report built once and
    rendered by headless Chromium once, for every test below that reads them (none changes them)."""

    def __init__(self, factory: pytest.TempPathFactory) -> None:
        self.factory = factory
        self.reports: dict[str, Path] = {}
        self.pages: dict[str, str] = {}

    def folder(self, grid: str) -> Path:
        """The sweep folder of ``grid`` played whole, with its report."""
        if grid not in self.reports:
            folder = self.factory.mktemp(grid) / "sweep"
            play_grid(grid, folder)
            self.reports[grid] = build_report(folder)
        return self.reports[grid].parent

    def page(self, grid: str) -> str:
        """The DOM of ``grid``'s report once its scripts ran."""
        if grid not in self.pages:
            folder = self.folder(grid)
            self.pages[grid] = dom(self.reports[grid].as_uri(), folder.parent / "profile")
        return self.pages[grid]


@pytest.fixture(scope="module")
def demos(tmp_path_factory: pytest.TempPathFactory) -> Demos:
    return Demos(tmp_path_factory)


def test_every_raw_link_points_at_a_file_of_the_dataset(report):
    links = re.findall(r'href="(dataset/raw/[^"]+\.jsonl)"', report.read_text())
    assert links and all((report.parent / link).is_file() for link in links), links[:3]


def test_report_is_one_self_contained_file(report):
    html = report.read_text()
    assert report.name == "report.html" and html.startswith("<!doctype html>")
    assert not re.search(r'<(script|link|img)[^>]+(src|href)="(https?:)?//', html)  # nothing fetched
    assert html.count("<svg") >= 4  # deal rate, efficiency, joint gain, frontier, turns to agreement
    for anchor, heading in (("summary", "Summary"), ("legend", "Legend"),
                            ("family-multi_issue", "Two-party multi-issue alternating offers (seeds 000, 001)"),
                            ("operational", "Operational, per model"),
                            ("provenance", "Provenance: rules, settings, metrics, texts"),
                            ("transcripts", "Transcripts (12)")):
        assert f'<h2 id="{anchor}">{heading}</h2>' in html and f'<a href="#{anchor}">' in html  # in the contents
    for part, heading in (("by-model", "Results by model and role"), ("by-cell", "By cell"), ("plots", "Plots"),
                          ("paired", "Paired differences")):
        anchor = f"family-multi_issue-{part}"
        assert f'<h3 id="{anchor}">{heading}</h3>' in html and f'<a href="#{anchor}">' in html


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
    default = build_report(sweep)
    before = (default.read_bytes(), (sweep / "dataset" / "metrics" / "metrics_by_cell.parquet").read_bytes())
    done = subprocess.run([sys.executable, "-m", "bargain_ray.report", str(sweep), "--by", "pairing,first_speaker",
                           "--level", "0.9"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    beside = sweep / "report-by-pairing-first_speaker.html"
    assert f"report: {beside}" in done.stdout and beside.exists()
    page = beside.read_text()
    assert "cells by pairing x first_speaker" in page
    assert "[90% t interval over seeds]" in page and "level 1 − 0.1/m" in page  # the head-to-head says its level
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
         f"--screenshot={shot}", "--window-size=1400,3200", report.as_uri()],  # the head-to-head section first
        capture_output=True, timeout=120, check=True,
    )
    image = Image.open(shot).convert("RGB")
    assert image.size == (1400, 3200)
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


@pytest.mark.parametrize("grid", DEMOS)
def test_every_family_plugs_in_unchanged(grid, demos, tmp_path):
    """Each demo grid as its figures test below plays it, whole; a grid with a cell of more games than the page
    shows (``SAMPLE`` a cell) is played in its first 6 units instead, so that every game has its transcript."""
    folder = demos.folder(grid)
    if pl.read_parquet(folder / "games.parquet")["cell"].value_counts()["count"].max() > SAMPLE:
        folder = tmp_path
        play_grid(grid, folder, limit=6)
        build_report(folder)
    report = (folder / "report.html").read_text()
    per_game = pl.read_parquet(folder / "dataset" / "metrics" / "metrics_per_game.parquet")
    games = pl.read_parquet(folder / "games.parquet")
    assert per_game.height == games.height > 0 and report.count('<details class="game" ') == games.height
    sweep = read_sweep(folder)
    records = list(sweep.records())
    for name in {r.unit.family for r in records}:
        record = next(r for r in records if r.unit.family == name)
        game = sweep.game_for(record.unit.game, record.unit.condition)
        assert set(game.game_metrics(record)) <= set(per_game.columns)  # the family's own columns
        if game.turn_metrics(record):
            assert (folder / "dataset" / "metrics" / "metrics_per_turn.parquet").exists()
    assert "PRIVATE · " in report and "<svg" in report


def test_a_sweep_without_games_still_reports(tmp_path):
    """build_report runs at the end of every sweep, also one interrupted before its first game."""
    open_manifest(tmp_path, describe(load_config("demo"), "20261201"))
    html = build_report(tmp_path).read_text()
    assert '<h2 id="transcripts">Transcripts (0)</h2>' in html
    assert pl.read_parquet(tmp_path / "dataset" / "metrics" / "metrics_per_game.parquet").height == 0
    record = next(read_records(make_sweep(tmp_path / "full")))
    assert set(EMPTY) == set(shared_columns(record))  # same columns either way


def test_gains_by_model_and_role_with_seed_clustered_intervals(report):
    """What model-x gains as buyer against model-y: the mean of per-seed means as the page shows it; its 3 seeds are
    fewer than an interval is shown for, and the cell says so instead of printing one."""
    html = report.read_text()
    section = html[html.index('<h3 id="family-multi_issue-by-model">'):html.index('<h3 id="family-multi_issue-by-cell">')]
    games = pl.read_parquet(report.parent / "games.parquet").filter(pl.col("known"))
    for role, other in (("buyer", "seller"), ("seller", "buyer")):
        for model, opponent in (("model-x", "model-y"), ("model-y", "model-x")):
            rows = games.filter((pl.col(f"{role}_model") == model) & (pl.col(f"{other}_model") == opponent)
                                & pl.col(f"gain_{role}").is_not_null())
            mean = rows.group_by("seed").agg(pl.col(f"gain_{role}").mean())[f"gain_{role}"].mean()
            cells = (f'<td class="l">tickets</td><td class="l">{role}</td><td class="l">{model}</td>'
                     f'<td class="l">{opponent}</td><td class="">{rows.height}</td><td class="">{rows["seed"].n_unique()}</td>'
                     f'<td class="">{round(mean, 3)} (n={rows["seed"].n_unique()} seeds, fewer than 10: no CI)')
            assert cells in section, (role, model)
    gains = section.split("<code>gain_{role}</code>")[1].split("<h4>")[0]
    assert gains.count("<tr>") == 1 + 4 + 2  # header, four (role, model, opponent), two pooled ("any")
    legend = html[html.index('<h2 id="legend">'):html.index('<h2 id="family-multi_issue">')]
    assert "<dt>X</dt><dd>model-x (anthropic)</dd>" in legend and "buyer: agent A, seller: agent B" in legend


def test_transcript_headers_show_the_deal_gains_and_where_briefs_come_from(report):
    html = report.read_text()
    seed001 = html[html.index('id="negotiation-test-20261129-b01-p02-xy-a1-fseller"'):]
    summary = seed001[:seed001.index("</summary>")]
    assert "deal: unit_price_usd 64.5, cancellation_fee_pct 37, name_change_notice_hours 96" in summary
    assert "gain_buyer" in summary and "gain_seller" in summary
    assert "PRIVATE · buyer brief: only the buyer saw this</span> <span class=meta>(seed 000)</span>" in html
    rows = page_rows(html)
    assert row(rows, "tickets / C3", "text", "brief:buyer") == (False, "seed 000")
    assert row(rows, "tickets / C3", "text", "repair") == (True, "ours")  # our own texts are marked as ours


def test_simulated_costs_are_labelled(tmp_path):
    sweep = make_sweep(tmp_path / "sweep")
    assert "(simulated)" not in build_report(sweep).read_text()
    manifest = json.loads((sweep / "manifest.json").read_text())
    manifest["config"]["provider"] = "sim"
    (sweep / "manifest.json").write_text(json.dumps(manifest))
    html = build_report(sweep).read_text()
    assert "its costs are simulated: no money was spent" in html and "<th>cost_usd (simulated)</th>" in html.replace(' class=""', "")


def test_a_rehearsal_says_what_its_intervals_mean(tmp_path):
    """Issue 18: rehearsal CIs were all zero width (``45.0 [45.0, 45.0]``) and nothing said why. The report and the
    card say the sweep ran on the simulated provider with deterministic replies, and under a table with zero-width
    intervals, why they have none (this sweep's 3 seeds show none: the note is checked on the section's own rule)."""
    from bargain_ray.analysis.build import analyse
    from bargain_ray.analysis.rehearsal import Rehearsal, statement
    from bargain_ray.analysis.section import Section

    sweep = make_sweep(tmp_path / "sweep")
    real = build_report(sweep).read_text()
    assert 'id="rehearsal"' not in real and "zero width" not in real  # language models (as scripted) played it
    manifest = json.loads((sweep / "manifest.json").read_text())
    manifest["config"]["provider"] = "sim"
    (sweep / "manifest.json").write_text(json.dumps(manifest))
    html = build_report(sweep).read_text()
    note = re.search(r'<p class="sim" id="rehearsal">(.*?)</p>', html).group(1)
    assert "simulated provider (provider=sim)" in note and "deterministic" in note and "zero width" in note
    by_cell = html[html.index('id="family-multi_issue-by-cell"'):html.index('id="family-multi_issue-plots"')]
    assert "(n=3 seeds, fewer than 10: no CI)" in by_cell and "zero width" not in by_cell
    section = Section(analyse(read_sweep(sweep)), "multi_issue")
    widths = pl.DataFrame({"ci_low": [45.0, 1.0, None], "ci_high": [45.0, 2.0, None]})
    assert re.search(r"1 of these intervals have zero width: the replies are deterministic", section.note_zero(widths))
    card = (sweep / "dataset" / "README.md").read_text()
    limits = card.split("## Limitations")[1].split("\n## ")[0]
    assert "simulated provider (provider=sim)" in limits and "replies are deterministic (provider.settings.reply_no" \
        "ise=0" in limits
    stochastic = statement(Rehearsal(simulated=True, replies="stochastic", reply_noise=[0.3]))
    assert "reply_noise=0.3, each reply was drawn around" in stochastic and "zero width" not in stochastic


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


def family_sections(page: str) -> dict[str, str]:
    """family -> its section of the rendered DOM (from its heading to the next section's)."""
    starts = [(m.group(1), m.start()) for m in re.finditer(r'<h2 id="family-([^"]+)">', page)]
    ends = [m.start() for m in re.finditer(r"<h2 ", page)]
    return {name: page[at:min([e for e in ends if e > at] or [len(page)])] for name, at in starts}


def parts_of(section: str) -> dict[str, str]:
    """part anchor -> its body (from its heading to the next)."""
    name = re.match(r'<h2 id="family-([^"]+)">', section).group(1)
    heads = list(re.finditer(rf'<h3 id="family-{re.escape(name)}-([a-z-]+)">', section))
    return {m.group(1): section[m.end():(heads[i + 1].start() if i + 1 < len(heads) else len(section))]
            for i, m in enumerate(heads)}


def figures_in_every_section(grid: str, demos: Demos) -> dict[str, str]:
    """The demo grid played whole, its report rendered by headless Chromium: each family's section, whose every
    part holds figures (a table cell with a number, or a plot) and none says it has nothing to show."""
    from bargain_ray.analysis.families import results_of

    page = demos.page(grid)
    games = pl.read_parquet(demos.folder(grid) / "games.parquet")
    sections = family_sections(page)
    assert set(sections) == set(games["family"]), sections.keys()
    for name, section in sections.items():
        results = results_of(name)
        parts = parts_of(section)
        assert {"by-model", "by-cell", "plots", "paired"} <= set(parts), (name, parts.keys())
        for part, body in parts.items():
            assert "<svg" in body or re.search(r"<td[^>]*>-?\d", body), (name, part, body[:500])
            assert not re.search(r'class="meta">\((none|no )', body), (name, part)
            assert "in this sweep" not in body, (name, part)
        by_cell = parts["by-cell"]
        header = re.search(r"<tr>(.*?)</tr>", by_cell).group(1)
        cells = games.filter(pl.col("family") == name)
        declared = [f for f in results.cell_figures if f in cells.columns or f in {d.name for d in results.derived}]
        assert declared and all(f"<th>{f}</th>" in header.replace(' class=""', "") for f in declared), (name, declared)
        for figure in results.by_role:
            table = parts["by-model"].split(f"<code>{figure.column}</code>")[1].split("<h4>")[0]
            assert table.count("<tr>") >= 2, (name, figure.column)  # a header and at least one model
    assert "Rounds to agreement" not in page  # no histogram across families: each section has its own
    return sections


def test_the_multi_issue_report_has_figures_in_every_section(demos):
    sections = figures_in_every_section("demo", demos)
    part = parts_of(sections["multi_issue"])
    assert "Deals against the Pareto frontier" in part["plots"] and "Turns to agreement (multi_issue)" in part["plots"]


def test_the_bargaining_report_has_seed_002s_metrics_and_payoffs_by_model(demos):
    """Issue 18: ``+grid=bargaining_demo`` said "(no per-role gains in this sweep's games)" though games.parquet has
    each side's payoff, and showed none of seed 002's 20 metrics by cell."""
    from bargain_ray.games.bargaining.metrics import CELL_METRICS

    part = parts_of(figures_in_every_section("bargaining_demo", demos)["bargaining"])
    header = re.search(r"<tr>(.*?)</tr>", part["by-cell"]).group(1).replace(' class=""', "")
    assert all(f"<th>{m}</th>" in header for m in CELL_METRICS) and len(CELL_METRICS) == 20
    assert "mean discounted payoff [CI]" in part["by-model"] and ">seller<" in part["by-model"]
    assert "Round of the deal (bargaining)" in part["plots"]


def test_the_scorable_report_has_each_seats_score_welfare_and_feasible_deals(demos):
    part = parts_of(figures_in_every_section("scorable_demo", demos)["scorable"])
    for seat in ("Avery", "Blake", "Casey", "Devon", "Ember", "Flynn"):
        assert f'<td class="l">{seat}</td>' in part["by-model"]
    assert "<th>feasible_deal</th>" in part["by-cell"].replace(' class=""', "")
    assert "<th>welfare</th>" in part["by-cell"].replace(' class=""', "")


def test_the_freetext_report_has_the_observers_verdicts_by_pairing_and_message_lengths(demos):
    part = parts_of(figures_in_every_section("freetext_demo", demos)["freetext"])
    assert "The observer's final verdicts by pairing" in part["breakdowns"]
    breakdown = part["breakdowns"].replace(' class=""', "")
    assert '<td class="l">IIR</td>' in breakdown and "<th>is_integrative_full</th>" in breakdown
    assert "mean words per message [CI]" in part["by-model"] and "mean sentences per message [CI]" in part["by-model"]


def test_the_mixed_report_has_one_section_per_family_each_on_its_own_axes(demos):
    """Issue 18: in ``mixed_demo`` one "Rounds to agreement" histogram mixed ticket turns, bargaining rounds and
    scorable rounds on one axis. Each family has its section and its own plots."""
    sections = figures_in_every_section("mixed_demo", demos)
    assert set(sections) == {"multi_issue", "bargaining", "scorable", "freetext"}
    for name, section in sections.items():
        plots = parts_of(section)["plots"]
        lengths = re.findall(r'font-weight="600">([^<]*\(\w+\))</text>', plots)  # the histogram of its deals' length
        assert lengths and all(title.endswith(f"({name})") for title in lengths), (name, lengths)


def command(*args: str, cwd=None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", *args], capture_output=True, text=True, timeout=120, cwd=cwd)


def hinted(stderr: str) -> list[list[str]]:
    """The commands an error line suggests (between backticks), split as a shell would."""
    import shlex

    return [shlex.split(c) for c in re.findall(r"`([^`]+)`", stderr)]


def test_the_report_command_without_a_sweep_is_a_usage_error(tmp_path):
    """Issue 18: no argument exited 2, which the README's table gives to "unknown games"; a usage error is 1."""
    done = command("bargain_ray.report", cwd=tmp_path)
    assert done.returncode == ExitCode.USER_ERROR and done.stdout == ""
    assert done.stderr.count("\n") == 1 and "the following arguments are required: sweep" in done.stderr
    [help_] = hinted(done.stderr)
    assert help_ == ["python", "-m", "bargain_ray.report", "--help"]
    assert command(*help_[2:], cwd=tmp_path).returncode == 0  # the hint works as printed
    assert command("bargain_ray.report", "--level", "2", cwd=tmp_path).returncode == ExitCode.USER_ERROR


def test_a_folder_that_is_not_a_sweep_gets_hints_that_work_as_printed(tmp_path):
    (tmp_path / "outputs").mkdir()
    empty = command("bargain_ray.report", "nowhere", cwd=tmp_path)
    assert empty.returncode == ExitCode.USER_ERROR
    assert hinted(empty.stderr) == [["python", "-m", "bargain_ray", "+grid=demo"]]  # none yet: how to make one
    make_sweep(tmp_path / "outputs" / "mine")
    done = command("bargain_ray.report", "nowhere", cwd=tmp_path)
    assert done.returncode == ExitCode.USER_ERROR and done.stderr.count("\n") == 1
    [suggested] = hinted(done.stderr)
    assert suggested == ["python", "-m", "bargain_ray.report", "outputs/mine"]
    again = command(*suggested[2:], "--level", "0.9", cwd=tmp_path)
    assert again.returncode == 0 and "report: outputs/mine/report.html" in again.stdout
    view = command("bargain_ray.view", "nowhere", cwd=tmp_path)
    assert view.returncode == ExitCode.USER_ERROR
    assert hinted(view.stderr) == [["python", "-m", "bargain_ray.view", "outputs/mine"]]


KS = ("Kalai–Smorodinsky comes in two definitions: `ks_rational` takes each role's ideal over the deals both prefer to "
      "no agreement (the textbook bargaining set) and is the one the headline uses; `ks_outcomes` takes it over all "
      "outcomes, as negmas computes it. They coincide when each side's best deal leaves the other at or above its "
      "no-agreement point (tickets at (20, 20): both (65, 65)).")
SPEC = ("the full spec is `spec/manifest.json` (ours; seed 002's card names `spec/full.json`), copied from the sweep "
        "folder.")


def page_rows(page: str) -> dict[tuple[str, ...], tuple[bool, str]]:
    """(where, kind, item, what) -> (marked ours, source) of every row of the page's provenance table."""
    import html as html_

    section = page[page.index('<h2 id="provenance">'):page.index('<h2 id="transcripts">')]
    body = section[section.index('<table class="provenance">'):section.index("</table>")]
    rows = re.findall(r"<tr( class=\"ours\")?>((?:<td>.*?</td>)+)</tr>", body)
    out = {}
    for ours, cells in rows:
        values = [html_.unescape(c) for c in re.findall(r"<td>(.*?)</td>", cells)]
        out[tuple(values[:4])] = (bool(ours), values[-2])
    assert len(out) == len(rows) > 0  # one row per item
    return out


def row(rows: dict[tuple[str, ...], tuple], where: str, kind: str, item: str) -> tuple:
    """The one row of ``rows`` about ``item``."""
    [found] = [v for k, v in rows.items() if k[:3] == (where, kind, item)]
    return found


def card_rows(card: str, heading: str) -> dict[tuple[str, ...], tuple[bool, str, str]]:
    """(where, kind, item, what) -> (source in bold, source, value) of the Markdown table under ``heading``."""
    part = card.split(heading, 1)[1].split("\n#", 1)[0]
    lines = [line for line in part.splitlines() if line.startswith("| ")][2:]  # the header and its rule aside
    out = {}
    for line in lines:
        cells = [c.strip().replace("\\|", "|") for c in re.split(r"(?<!\\)\|", line)[1:-1]]
        source = cells[-2]
        out[tuple(cells[:4])] = ("**ours**" in source, source.replace("**", ""), cells[4])
    assert len(out) == len(lines) > 0
    return out


def test_the_report_and_the_card_carry_one_provenance_table_with_ours_marked(report, tmp_path):
    """Issue 19: the card and the report show the provenance of every rule, setting (with the sweep's value), metric
    and text of the sweep's families, ours marked; both are generated from the same declarations, so they hold the
    same rows."""
    page = dom(report.as_uri(), tmp_path / "profile")
    shown = page_rows(page)
    assert all(ours == ("ours" in source) for ours, source in shown.values())  # the mark is exactly the ours rows
    assert row(shown, "every family", "rule", "rerun_unknown") == (True, "ours")
    assert row(shown, "every family", "rule", "technical_failure") == (False, "seed 000")
    assert row(shown, "every family", "rule", "spec") == (True, "seed 002 + ours")
    assert row(shown, "multi_issue", "metric", "dist_ks_rational")[1] == "ours"
    assert row(shown, "tickets / C3", "setting", "max_turns") == (False, "seed 000")
    assert "table.provenance tr.ours td{background:#fef3c7}" in page  # the rows are marked where a reader sees them
    setting = re.search(r"<td>max_repairs</td><td></td><td>(\d+)</td><td>ours</td>", page)
    assert setting and setting.group(1) == "2"  # the sweep's value
    card = (report.parent / "dataset" / "README.md").read_text()
    listed = card_rows(card, "### Rules, settings, metrics and texts")
    assert {k: v[:2] for k, v in listed.items()} == shown  # one table, never written twice
    assert row(listed, "tickets / C3", "setting", "max_repairs") == (True, "ours", "2")


def test_the_card_states_the_ks_point_the_headline_uses_the_spec_and_every_setting_no_seed_states(report, tmp_path):
    from bargain_ray.games.multi_issue.metrics import RESULTS

    card = (report.parent / "dataset" / "README.md").read_text()
    assert KS in card and "dist_ks_rational" in RESULTS.headline and "dist_ks_outcomes" not in RESULTS.headline
    assert SPEC in card
    assert {k[2]: v for k, v in card_rows(card, "## Settings no seed states").items()} == {
        "max_repairs": (True, "ours", "2"), "source": (True, "ours", '"seed 000" (default "ours")')}
    play_grid("bargaining_demo", tmp_path / "bargaining", limit=2, overrides=("games.bargaining.max_message_chars=null",))
    build_report(tmp_path / "bargaining")
    card = (tmp_path / "bargaining" / "dataset" / "README.md").read_text()
    assert KS not in card and SPEC in card  # no agreement space: no Kalai–Smorodinsky point
    unstated = card_rows(card, "## Settings no seed states")
    assert {(where, item) for where, _, item, _ in unstated} == {
        (f"bargaining / {c}", s) for c in ("default", "explicit_objective")
        for s in ("item", "price_min", "price_max", "decimals", "max_message_chars", "first_round_offer",
                  "reject_needs_offer")}
    assert row(unstated, "bargaining / default", "setting", "max_message_chars") == (True, "ours", "null (default 300)")
    assert row(unstated, "bargaining / default", "setting", "first_round_offer")[2] == "true"


def test_a_report_of_figures_rescored_by_other_code_says_so_first_naming_both_commits(tmp_path):
    """Issue 19: the report says when its figures were computed by code other than the sweep's (a real
    ``rescore``), in its first lines and in a banner, naming the sweep's commit and the rescoring one; the card too."""
    from bargain_ray.analysis.rescore import rescore_folder
    from bargain_ray.core.provenance import read_code_version

    sweep = make_sweep(tmp_path / "sweep")
    old = "0123456789abcdef0123456789abcdef01234567"  # the commit the sweep was played with
    manifest = json.loads((sweep / "manifest.json").read_text())
    (sweep / "manifest.json").write_text(json.dumps(manifest | {"git_commit": old}))
    before = build_report(sweep).read_text()
    assert 'id="refigured"' not in before and "recomputed" not in before
    rescore_folder(sweep)
    now = read_code_version()
    assert now is not None and now.commit != old
    page = dom(build_report(sweep).as_uri(), tmp_path / "profile")
    body = page[page.index("<body>"):]
    banner = re.search(r'<div class="technical" id="refigured">(.*?)</div>', body)
    assert banner and body.index(banner.group(0)) < body.index("<h1>")  # first, above the title
    assert f"commit {now.commit}" in banner.group(1) and f"commit {old}" in banner.group(1)
    assert "python -m bargain_ray.rescore" in banner.group(1)
    first = re.search(r'</h1><p class="meta">(.*?)</p>', body).group(1)
    assert f"figures by commit {now.commit}" in first and f"not the sweep's commit {old}" in first
    card = (sweep / "dataset" / "README.md").read_text()
    title = card.split("# bargain_ray sweep", 1)[1].split("\n\n", 2)[1]
    assert title.startswith("> **Figures recomputed by code other than the sweep's") and old in title and now.commit in title
    write_tables(sweep)  # a resumed driver tables the journal's own figures again
    assert 'id="refigured"' not in build_report(sweep).read_text()


def html_rows(part: str) -> list[list[str]]:
    """The rows of a part's tables, each a list of its cells' text (headers aside)."""
    return [re.findall(r"<td[^>]*>(.*?)</td>", r) for r in re.findall(r"<tr>(.*?)</tr>", part) if "<td" in r]


def seed_mean(games: pl.DataFrame, column: str) -> float:
    """Mean over seeds of the per-seed mean of ``column`` (the report's estimate), over the games that have it."""
    return games.drop_nulls(column).group_by("seed").agg(pl.col(column).mean())[column].mean()


def test_talk_vs_silence_shows_leakage_by_model_and_role_and_the_paired_differences_by_condition(demos):
    """Issue 19: leakage per model and role with CIs for the three families with private values, and talk - silence on
    common seeds in each family's paired differences, read from the page headless Chromium rendered."""
    sections = figures_in_every_section("talk_silence_demo", demos)
    games = pl.read_parquet(demos.folder("talk_silence_demo") / "games.parquet").filter(pl.col("known"))
    talking = {"multi_issue": "C3", "bargaining": "default", "scorable": "public"}
    for family, talk in talking.items():
        parts = parts_of(sections[family])
        leakage = parts["by-model"].split("<code>{role}_leakage</code>")[1].split("<h4>")[0]
        rows = html_rows(leakage)
        assert all(v.sentence() in leakage for v in VALIDATION)  # the measure's error on its labelled sets
        mine = games.filter(pl.col("family") == family)
        roles = {r for r in ("buyer", "seller", "Avery", "Blake", "Casey", "Devon", "Ember", "Flynn")
                 if f"{r}_leakage" in mine.columns and mine[f"{r}_leakage"].null_count() < mine.height}
        assert len(roles) == (6 if family == "scorable" else 2)
        assert {row[1] for row in rows} == roles | {"any"}, (family, rows)
        for _game, role, model, _opponent, n, _seeds, value in rows:
            assert re.fullmatch(r"-?[\d.]+ \(n=4 seeds, fewer than 10: no CI\)", value), (family, value)  # 4 blocks: no CI
            if role == "any":
                continue
            played = mine.filter(pl.col(f"{role}_model") == model)  # both arms: what was said is measured in both
            assert int(n) == played.height and value.startswith(f"{round(seed_mean(played, f'{role}_leakage'), 3)} (")
        key = ["pairing", "assignment", "block"]
        silent, talking = (mine.filter(arm).sort(key) for arm in (pl.col("condition") == "silent",
                                                                   pl.col("condition") == talk))
        for r in roles:  # what was said is measured in both arms: strategies that never read talk leak alike
            assert silent[f"{r}_leakage"].equals(talking[f"{r}_leakage"], null_equal=True), (family, r)
        paired = parts["paired"].split("Between two values of <code>condition</code>")[1].split("<h4>")[0]
        header = re.findall(r"<th[^>]*>(.*?)</th>", paired)
        diffs = [dict(zip(header, row, strict=True)) for row in html_rows(paired)]
        assert diffs and all((d["a"], d["b"]) == (talk, "silent") for d in diffs), (family, diffs)
        for d in diffs:
            assert all(re.match(r"-?[\d.]+", d[f]) for f in header[header.index("seeds") + 1:] if d[f]), d
    card = (demos.folder("talk_silence_demo") / "dataset" / "README.md").read_text()
    assert f"- {ERROR}" in card.split("## Limitations", 1)[1]
    bargaining = parts_of(sections["bargaining"])["paired"].split("<code>condition</code>")[1]
    header = re.findall(r"<th[^>]*>(.*?)</th>", bargaining.split("</table>")[0])
    for row in html_rows(bargaining.split("</table>")[0]):
        d = dict(zip(header, row, strict=True))
        pair = games.filter((pl.col("game") == "bargaining") & (pl.col("pairing") == d["pairing"]))
        by_seed = pair.group_by("seed", "condition").agg(pl.col("seller_disclosure").mean()).pivot(
            on="condition", index="seed", values="seller_disclosure")
        expected = (by_seed["default"] - by_seed["silent"]).mean()
        assert expected == 0 and d["seller_disclosure"].startswith(f"{round(expected, 3)} (")  # claims said alike


def test_the_freetext_section_shows_the_panels_agreement_beside_the_verdict_shares_in_chromium(judged_sweep, tmp_path):
    """A judged orange rehearsal's report, rendered by headless Chromium: the free-text section's agreement part holds
    the overall figures the judge computes from judging/reads.parquet, each rater's verdict shares beside its kappa
    with the recorded verdict, and the flag of the observer that played both parties."""
    from bargain_ray.analysis.intervals import Bootstrap
    from bargain_ray.analysis.judging import Judging
    from bargain_ray.store.judging import read_reads

    folder, _, _ = judged_sweep(tmp_path / "s")
    report = build_report(folder)
    part = parts_of(family_sections(dom(report.as_uri(), tmp_path / "profile"))["freetext"])
    assert list(part)[:4] == ["by-model", "by-cell", "breakdowns", "agreement"], list(part)
    shown = part["agreement"]
    figures = Judging(read_reads(folder), Bootstrap())
    fleiss, alpha = figures.overall()
    assert f'Fleiss\' kappa <b class="fig">{fleiss.text()}</b>' in shown.replace("&#x27;", "'")
    assert f'<b class="fig">{alpha.text()}</b>' in shown and fleiss.ci_low is not None
    header = re.search(r"<tr>(.*?)</tr>", shown.split("Verdict shares")[1]).group(1).replace(' class=""', "")
    assert "<th>integrative_full</th>" in header and "<th>kappa vs recorded [CI]</th>" in header
    kappa = next(e for a, b, e in figures.pairs() if a.name == "recorded" and b.name == "G")
    assert f"<td>{kappa.text()}</td>" in shown.replace(' class=""', "")
    assert 'class="flag" data-reader="O"' in shown and "(claude-opus-5-5) is the model of a party in 6 games" in shown
