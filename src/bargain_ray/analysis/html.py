"""The report: one self-contained HTML file (inline CSS and SVG) that opens with no server.

Tables and plots first, then transcripts as seed 001 shows them (turn, speaker,
call id, message, action): up to ``SAMPLE`` per cell on the page, every game in
the dataset's ``raw/`` folder, which the page links to, so the page stays small
at any scale. Private briefs and scratchpads are shown apart and marked private;
technical failures are marked as such.
"""

from __future__ import annotations

import html
import json
import re
from datetime import UTC, datetime
from typing import Any

import polars as pl

from bargain_ray.analysis import svg
from bargain_ray.analysis.build import Analysis
from bargain_ray.analysis.export import file_keys
from bargain_ray.analysis.per_game import game_class
from bargain_ray.analysis.sample import SAMPLE, game_count, raw_scope, sampled
from bargain_ray.core.records import CallRecord, GameRecord, TurnRecord
from bargain_ray.games.base import DEFAULT_HEADLINE
from bargain_ray.store import DATASET, JOURNAL

PRIVATE_KEYS = ("private", "scratchpad", "reasoning")
"""Turn fields whose name contains one of these are private to the speaker, as are the fields a
family's Game names in ``private_fields`` (e.g. a true valuation)."""
DEALS_PLOTTED = 2000
"""Deals drawn per frontier plot at most (the first journaled)."""

CSS = """
body{font-family:system-ui,sans-serif;margin:24px;color:#1f2937;max-width:1320px}
h1{font-size:22px;margin:0 0 4px} h2{font-size:17px;margin:28px 0 8px;border-bottom:1px solid #e5e7eb}
.meta{color:#6b7280;font-size:13px}
.wrap{overflow-x:auto;max-width:100%}
table{border-collapse:collapse;font-size:12px;margin:6px 0}
th,td{border:1px solid #e5e7eb;padding:3px 7px;text-align:right;white-space:nowrap}
th{background:#f3f4f6} td.l,th.l{text-align:left}
.plots{display:flex;flex-wrap:wrap;gap:18px;align-items:flex-start}
.plots figure{margin:0;border:1px solid #e5e7eb;padding:8px;background:#fff}
details.game{border:1px solid #e5e7eb;margin:6px 0;padding:4px 10px}
details.game>summary{cursor:pointer;font-size:13px}
.turn{border-left:3px solid #93c5fd;margin:10px 0;padding:2px 10px}
.turn h4{margin:2px 0;font-size:13px} .cid{color:#6b7280;font-size:11px;font-family:monospace}
pre{background:#f9fafb;padding:6px;font-size:12px;white-space:pre-wrap;margin:4px 0}
.private{border:2px dashed #a855f7;background:#faf5ff;padding:4px 8px;margin:6px 0}
.private .tag{color:#7e22ce;font-weight:700;font-size:11px;letter-spacing:.04em}
.invalid{border-left:3px solid #f59e0b;background:#fffbeb;padding:2px 8px;margin:4px 0;font-size:12px}
.technical{border:2px solid #dc2626;background:#fef2f2;color:#991b1b;padding:4px 8px;margin:6px 0;font-weight:600}
.status-TECHNICAL_ERROR{color:#dc2626;font-weight:700} .status-AGREEMENT{color:#15803d}
.status-FORMAT_FAILURE{color:#b45309}
nav.toc{font-size:13px;columns:2;max-width:640px} nav.toc a{color:#2563eb}
.legend{font-size:13px} .legend dt{font-weight:600;display:inline} .legend dd{display:inline;margin:0 14px 0 4px}
.filters{font-size:13px;margin:8px 0} .filters select{margin-right:12px}
.ours{background:#fef3c7;color:#92400e;font-weight:700;font-size:11px;padding:0 4px;border-radius:3px}
.sim{color:#b45309;font-weight:600}
.deal{font-size:12px;color:#374151}
"""

FILTER_SCRIPT = """
(function(){
  var keys=["cell","status","model"], sel={}, games=document.querySelectorAll("details.game");
  function apply(){
    var shown=0;
    games.forEach(function(g){
      var ok=keys.every(function(k){var v=sel[k].value;
        return !v || (k==="model" ? (" "+g.dataset.model+" ").indexOf(" "+v+" ")>=0 : g.dataset[k]===v);});
      g.hidden=!ok; if(ok) shown++;
    });
    document.getElementById("shown").textContent=shown;
  }
  function store(){
    var q=new URLSearchParams();
    keys.forEach(function(k){if(sel[k].value) q.set(k, sel[k].value);});
    history.replaceState(null, "", (q.toString() ? "?"+q : location.pathname) + location.hash);
  }
  var q=new URLSearchParams(location.search);
  keys.forEach(function(k){
    sel[k]=document.getElementById("filter-"+k);
    if(q.get(k)) sel[k].value=q.get(k);
    sel[k].addEventListener("change", function(){store(); apply();});
  });
  apply();
})();
"""
"""The transcript filter: by cell, status and model, from each transcript's data attributes; the
choice is kept in the page's query string (``report.html?status=AGREEMENT``) so a link reopens it."""


_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def _visible(m: re.Match[str]) -> str:
    code = ord(m.group())
    return chr(0x2400 + code) if code < 0x20 else "\u2421" if code == 0x7F else "\ufffd"


def escape(text: str) -> str:
    """HTML-escaped text with control characters made visible (our choice): C0 controls but tab and
    newline as their Unicode control pictures (NUL as U+2400, ESC as U+241B), DEL as U+2421, C1 as U+FFFD,
    so no raw control byte from a model's reply reaches the page."""
    return _CONTROLS.sub(_visible, html.escape(text))


def partial_banner(note: str | None) -> str:
    """The warning at the top of a report whose sweep is running or unfinished (empty when complete)."""
    return f'<div class="technical">{escape(note)}</div>' if note else ""


def _num(v: Any) -> str:
    if v is None:
        return ""
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, float):
        return f"{v:.4g}"
    return escape(str(v))


def table(frame: pl.DataFrame, left: int = 0) -> str:
    """A frame as an HTML table; the first ``left`` columns are left-aligned labels."""
    if frame.height == 0:
        return "<p class=meta>(none)</p>"
    head = "".join(f'<th class="{"l" if i < left else ""}">{escape(c)}</th>' for i, c in enumerate(frame.columns))
    body = "".join(
        "<tr>" + "".join(f'<td class="{"l" if i < left else ""}">{_num(v)}</td>' for i, v in enumerate(row)) + "</tr>"
        for row in frame.iter_rows()
    )
    return f'<div class="wrap"><table><tr>{head}</tr>{body}</table></div>'


def cell_label(row: dict[str, Any], by: list[str]) -> str:
    return " · ".join(("a" if c == "assignment" else "") + str(row[c]) for c in by if row.get(c) is not None)


def varying(frame: pl.DataFrame, by: list[str]) -> list[str]:
    """The grouping columns that take more than one value (labels need only these)."""
    return [c for c in by if frame[c].n_unique() > 1] or by


def summary(a: Analysis) -> pl.DataFrame:
    return a.scan_per_game.group_by("game", "family").agg(
        pl.len().alias("games"),
        pl.col("known").sum().alias("known"),
        *((pl.col("status") == s).sum().alias(s.lower()) for s in
          ("AGREEMENT", "NO_AGREEMENT", "FORMAT_FAILURE", "TECHNICAL_ERROR")),
        pl.col("agreement").mean().alias("deal_rate"),
        pl.col("rounds").mean().alias("mean_rounds"),
        pl.col("cost_usd").sum().alias("cost_usd"),
    ).sort("game").collect()


def headline(a: Analysis) -> list[str]:
    """Deal rate, each family's headline metrics, format failures: those the sweep has."""
    names = ["agreement"]
    families = a.scan_per_game.select(pl.col("family").unique(maintain_order=True).drop_nulls()).collect()
    for name in families["family"].to_list():
        cls = game_class(name)
        names += [m for m in (cls.headline if cls else DEFAULT_HEADLINE) if m not in names]
    present = set(a.by_cell["metric"].to_list())
    return [m for m in [*names, "format_failure"] if m in present]


def cells_wide(a: Analysis) -> pl.DataFrame:
    """Headline metrics by cell, ``mean [low, high]`` per metric."""
    order = headline(a)
    c = a.by_cell.filter(pl.col("metric").is_in(order))
    if c.height == 0:
        return c
    c = c.with_columns(
        pl.format("{} [{}, {}]", pl.col("mean").round(3), pl.col("ci_low").round(3), pl.col("ci_high").round(3))
        .fill_null(pl.col("mean").round(3).cast(pl.String)).alias("value")
    )
    games = c.group_by(a.by, maintain_order=True).agg(pl.col("n_games").max().alias("games"), pl.col("n_seeds").max().alias("seeds"))
    wide = c.pivot(on="metric", index=a.by, values="value")
    return games.join(wide, on=a.by, nulls_equal=True).select(*a.by, "games", "seeds", *order)


def interval_plots(a: Analysis) -> list[str]:
    """Deal rate and the first two headline metrics by cell, each with its interval."""
    out = []
    for metric in headline(a)[:3]:
        rows = a.by_cell.filter(pl.col("metric") == metric)
        label = varying(rows, a.by)
        points = [(cell_label(r, label), r["mean"], r["ci_low"], r["ci_high"]) for r in rows.iter_rows(named=True)]
        values = [v for p in points for v in p[1:] if v is not None]
        domain = (0.0, 1.0) if all(0 <= v <= 1 for v in values) else None
        title = "Deal rate" if metric == "agreement" else metric.replace("_", " ").capitalize()
        out.append(svg.intervals(points, f"{title} by cell, {a.level:.0%} CI", domain))
    return out


def frontier_plots(a: Analysis) -> list[str]:
    """Deals against the agreement space, for each game config whose family has one."""
    s = a.sweep
    games = a.scan_per_game
    out = []
    pairs = games.select("game", "condition").unique(maintain_order=True).collect()
    for game_name, condition in pairs.iter_rows():
        game = s.game_for(game_name, condition)
        space = game.utility_space() if game else None
        if space is None:
            continue
        x, y = (f"utility_{r}" for r in space.roles)
        if not {x, y} <= set(games.collect_schema().names()):
            continue
        deals = (games.filter((pl.col("game") == game_name) & (pl.col("condition") == condition) & pl.col("agreement"))
                 .select(x, y, "unit_id").drop_nulls().head(DEALS_PLOTTED).collect())
        out.append(svg.frontier(
            space.frontier, list(deals.iter_rows()), space.disagreement, space.nash, space.max_welfare,
            space.ranges, space.roles, f"Deals against the Pareto frontier: {game_name} under {condition}",
        ))
    return out


def rounds_plot(a: Analysis) -> str:
    counts = (a.scan_per_game.drop_nulls("rounds_to_agreement").group_by("rounds_to_agreement").len()
              .sort("rounds_to_agreement").collect())
    return svg.bars([(int(k), int(n)) for k, n in counts.iter_rows()], "Rounds to agreement", "turns played (deals)")


def source_tag(source: str | None) -> str:
    """Where a text's wording comes from; ours (no seed gives it) is marked so a reader sees it."""
    if source is None:
        return ""
    return ' <span class="ours">OURS, not a seed\'s</span>' if source == "ours" else f" <span class=meta>({escape(source)})</span>"


def _private(title: str, body: str, folded: bool = False, source: str | None = None) -> str:
    tag = f'<span class="tag">PRIVATE · {escape(title)}</span>{source_tag(source)}'
    if folded:
        return f'<details class="private"><summary>{tag}</summary><pre>{escape(body)}</pre></details>'
    return f'<div class="private">{tag}<pre>{escape(body)}</pre></div>'


def _numbers(v: Any) -> Any:
    """Decimal strings of the record shown as the numbers the model wrote (as seed 001 shows them)."""
    if isinstance(v, dict):
        return {k: _numbers(x) for k, x in v.items()}
    if isinstance(v, str) and _NUMBER.fullmatch(v):
        return int(v) if v.lstrip("-").isdigit() else float(v)
    return v


_NUMBER = re.compile(r"-?\d+(\.\d+)?")


def deal_line(row: dict[str, Any]) -> str:
    """The deal's terms and each role's gain, from the game's typed columns (empty without a deal)."""
    terms = [f"{k.removeprefix('deal_')} {_num(v)}" for k, v in row.items() if k.startswith("deal_") and v is not None]
    gains = [f"{k.removeprefix('gain_')} {_num(v)}" for k, v in row.items() if k.startswith("gain_") and v is not None]
    parts = ([f"deal: {', '.join(terms)}"] if terms else ["no deal"]) + ([f"gains: {', '.join(gains)}"] if gains else [])
    return " · ".join(parts)


def transcript(rec: GameRecord, briefs: dict[str, tuple[str, bool]], row: dict[str, Any] | None = None,
               sources: dict[str, str] | None = None, raw: str | None = None) -> str:
    """One game as seed 001 shows it, briefs and scratchpads apart and marked private; its header shows
    the deal and the gains (``row``: the game's typed columns), each brief where its wording comes from."""
    unit, out = rec.unit, rec.outcome
    calls = {c.call_id: c for c in rec.calls}
    status = out.status.value
    speaker = f"{unit.first_speaker} opens; " if unit.first_speaker else ""
    by_role = unit.models_by_role
    models = ", ".join(f"{r}: {m}" for r, m in by_role.items())
    data = (f'data-cell="{escape(unit.cell)}" data-status="{escape(status)}" '
            f'data-model="{escape(" ".join(sorted(set(by_role.values()))))}"')
    deal = f' · <span class="deal">{escape(deal_line(row))}</span>' if row else ""
    parts = [f'<details class="game" id="{escape(unit.unit_id)}" {data}><summary><b>{escape(unit.unit_id)}</b> · '
             f'{escape(unit.cell)} · {escape(models)} · <span class="status-{escape(status)}">{escape(status)}'
             f'</span>{deal}' + (f' · <a href="{DATASET}/{escape(raw)}">raw</a>' if raw else "") + '</summary>',
             f'<p>{escape(unit.pairing)}; {escape(speaker)}{escape(status)}</p>']
    if not out.known:
        parts.append(f'<div class="technical">TECHNICAL FAILURE: unknown, unscored, re-run on resume. '
                     f'{escape(out.reason)}</div>')
    for role, (brief, sent) in briefs.items():
        how = "only the {role} saw this" if sent else "rebuilt from the game config (no request to this role was recorded)"
        source = (sources or {}).get(f"brief:{role}")
        parts.append(_private(f"{role} brief: {how.format(role=role)}", brief, folded=True, source=source))
    cls = game_class(unit.family)
    hidden = set(cls.private_fields if cls else ())
    placed = set()
    for t in rec.turns:
        placed.update(t.call_ids)
        parts.append(_turn(t, [calls[i] for i in t.call_ids if i in calls], hidden))
    for c in rec.calls:  # a call that failed technically belongs to no finished turn
        if c.call_id not in placed:
            unfinished = TurnRecord(unit_id=c.unit_id, turn=c.turn, role=c.role, call_ids=[c.call_id], attempts=1,
                                    valid=False)
            parts.append(_turn(unfinished, [c], hidden))
    scored = out.model_dump(mode="json", exclude={"invalid_attempts"})
    parts.append(f"<details><summary>Recorded outcome</summary><pre>{escape(json.dumps(scored, indent=2))}</pre></details>")
    return "".join(parts) + "</details>"


def _turn(t: TurnRecord, calls: list[CallRecord], hidden: set[str]) -> str:
    fields = dict(t.fields)
    message = fields.pop("message", None)
    private = {k: fields.pop(k) for k in list(fields) if k in hidden or any(p in k.lower() for p in PRIVATE_KEYS)}
    action = {k: _numbers(v) for k, v in fields.items() if v is not False}
    parts = [f'<div class="turn"><h4>Turn {t.turn} · {escape(t.role)}</h4>']
    for c in calls:
        parts.append(f'<div class="cid">{escape(c.call_id)}</div>')
        if c.status != "ok":
            parts.append(f'<div class="technical">TECHNICAL FAILURE on this call: {escape(str(c.error))}</div>')
        elif c.valid is False:
            parts.append(f'<div class="invalid"><b>invalid reply</b> (rule <code>{escape(str(c.rule))}</code>): '
                         f'{escape(str(c.error))}<pre>{escape(str(c.response_text))}</pre></div>')
    for k, v in private.items():
        parts.append(_private(f"{t.role} {k}: never shown to the other side", v if isinstance(v, str) else json.dumps(v, indent=2)))
    if message is not None:
        parts.append(f"<p>{escape(str(message))}</p>")
    if action:
        parts.append(f"<pre>{escape(json.dumps(action, indent=2))}</pre>")
    return "".join(parts) + "</div>"


def _options(name: str, label: str, values: list[str]) -> str:
    opts = "".join(f'<option value="{escape(v)}">{escape(v)}</option>' for v in values)
    return f'<label>{label} <select id="filter-{name}"><option value="">all</option>{opts}</select></label>'


def filters(a: Analysis) -> str:
    """Selects for cell, status and model (every value the sweep has); the inline script does the rest."""
    games = a.scan_per_game
    models = [c for c in games.collect_schema().names() if c.startswith("model_")]
    values = games.select(pl.col("cell").unique().sort().implode(), pl.col("status").unique().sort().implode(),
                          pl.concat_list(models).explode().unique().drop_nulls().sort().implode().alias("model")
                          if models else pl.lit([]).alias("model")).collect().row(0)
    cells, statuses, names = ([str(v) for v in col if v is not None] for col in values)
    return (f'<div class="filters">{_options("cell", "Cell", cells)}{_options("status", "Status", statuses)}'
            f'{_options("model", "Model", names)}<span class=meta><span id="shown"></span> shown</span></div>')


def sources_of(a: Analysis, game: str | None, condition: str | None) -> dict[str, str]:
    """name -> provenance of every text a model reads under one game config."""
    loaded = a.sweep.game_for(game, condition)
    return {k: t.source for k, t in loaded.texts().items()} if loaded else {}


def transcripts(a: Analysis) -> str:
    """The sampled transcripts, streamed from the journal, and where the rest are."""
    shown, total, scope = sampled(a), game_count(a), raw_scope(a)
    s = a.sweep
    parts = [f'<h2 id="transcripts">Transcripts ({total})</h2>']
    if len(shown) < total:
        where = (f'every game has its file in <a href="{DATASET}/raw/">{DATASET}/raw/</a>' if scope is None else
                 f'the games shown have their files in <a href="{DATASET}/raw/">{DATASET}/raw/</a> and every game '
                 f'is in <a href="{JOURNAL}">{JOURNAL}</a> (one JSON record per line)')
        parts.append(f'<p class="meta">Showing the first {SAMPLE} games of each cell ({len(shown)} of {total}); '
                     f"{where}.</p>")
    parts.append(filters(a))
    names = a.scan_per_game.collect_schema().names()
    header = [c for c in names if c.startswith(("deal_", "gain_"))]
    rows = {r["unit_id"]: r for r in a.scan_per_game.filter(pl.col("unit_id").is_in(list(shown)))
            .select("unit_id", *header).collect().iter_rows(named=True)}
    files = dict(file_keys(a).filter(pl.col("unit_id").is_in(list(shown))).select("unit_id", "file").iter_rows())
    sources: dict[tuple[str, str], dict[str, str]] = {}
    for r in s.records(only=shown):
        key = (r.unit.game, r.unit.condition)
        if key not in sources:
            sources[key] = sources_of(a, *key)
        parts.append(transcript(r, s.briefs(r), rows.get(r.unit.unit_id), sources[key], files.get(r.unit.unit_id)))
    parts.append(f"<script>{FILTER_SCRIPT}</script>")
    return "".join(parts)


def simulated(a: Analysis) -> bool:
    """Whether the sweep's models were served by the project's simulated provider (its costs are not paid)."""
    return a.sweep.manifest.config.provider == "sim"


def cost_label(frame: pl.DataFrame, sim: bool) -> pl.DataFrame:
    """Cost columns renamed ``… (simulated)`` when the provider was simulated."""
    return frame.rename({c: f"{c} (simulated)" for c in frame.columns if c.startswith("cost")}) if sim else frame


def legends(a: Analysis) -> str:
    """Which model each pairing letter is, and what each assignment puts where (from the manifest)."""
    config = a.sweep.manifest.config
    letters = "".join(f"<dt>{escape(k)}</dt><dd>{escape(m.name)} ({escape(m.provider)})</dd>"
                      for k, m in config.models.items())
    rows = []
    for d in config.grid.designs:
        for asg in d.assignments:
            roles = ", ".join(f"{role}: agent {agent}" for role, agent in asg.roles.items())
            opens = f"{asg.first_speaker} opens" if asg.first_speaker else "opener as the game decides"
            rows.append({"game": d.game, "assignment": f"a{asg.id}", "roles": roles, "opens": opens})
    table_ = table(pl.DataFrame(rows), left=4) if rows else "<p class=meta>(no assignments recorded)</p>"
    return (f'<h2 id="legend">Legend</h2><dl class="legend"><b>Pairing letters</b> (a pairing XY puts model X in '
            f"agent A and model Y in agent B): {letters}</dl><p class=legend><b>Assignments</b>: which agent takes "
            f"which role, and who opens.</p>{table_}")


def texts_table(a: Analysis) -> str:
    """Every text a model reads, per game config, and where its wording comes from; ours are marked."""
    rows = []
    for game, condition in a.sweep.manifest.game_conditions():
        rows += [(game, condition, name, source) for name, source in sources_of(a, game, condition).items()]
    if not rows:
        return "<p class=meta>(none)</p>"
    body = "".join(f'<tr><td class="l">{escape(g)}</td><td class="l">{escape(c)}</td><td class="l">{escape(n)}</td>'
                   f'<td class="l">{escape(src)}{source_tag(src) if src == "ours" else ""}</td></tr>'
                   for g, c, n, src in rows)
    return ('<div class="wrap"><table><tr><th class="l">game</th><th class="l">condition</th><th class="l">text</th>'
            f'<th class="l">wording from</th></tr>{body}</table></div>')


SECTIONS = (("summary", "Summary"), ("legend", "Legend"), ("by-model", "Results by model and role"),
            ("by-cell", "By cell"), ("plots", "Plots"), ("paired", "Paired differences"),
            ("operational", "Operational, per model"), ("texts", "Texts a model reads"), ("transcripts", "Transcripts"))


def contents() -> str:
    return '<nav class="toc"><b>Contents</b><ol>' + "".join(
        f'<li><a href="#{anchor}">{escape(title)}</a></li>' for anchor, title in SECTIONS) + "</ol></nav>"


def gains_table(gains: pl.DataFrame) -> str:
    """Mean gain [CI] of each model in each role against each opponent; ``any`` pools the roles."""
    if gains.height == 0 or "mean" not in gains.columns:
        return "<p class=meta>(no per-role gains in this sweep's games)</p>"
    shown = gains.select(
        "game", "role", "model", "opponent", pl.col("n_games").alias("games"), pl.col("n_seeds").alias("seeds"),
        pl.format("{} [{}, {}]", pl.col("mean").round(3), pl.col("ci_low").round(3), pl.col("ci_high").round(3))
        .fill_null(pl.col("mean").round(3).cast(pl.String)).alias("mean gain [CI]"),
    )
    return table(shown, left=4)


def render(a: Analysis, gains: pl.DataFrame | None = None) -> str:
    s = a.sweep
    sim = simulated(a)
    statuses = dict(a.scan_per_game.group_by("status").len().collect().iter_rows())
    plots = [*interval_plots(a), *frontier_plots(a), rounds_plot(a)]
    headline_pairs = a.paired.filter(pl.col("metric").is_in(("agreement", "efficiency")))
    sim_note = ('<p class="sim">Costs are simulated: the models were served by the project\'s simulated provider '
                "(provider=sim); no money was spent.</p>") if sim else ""
    sections = [
        f"<h1>Sweep report: {escape(s.name)}</h1>",
        f'<p class="meta">{escape(str(s.path))} · created {escape(s.manifest.created)} · '
        f"{sum(statuses.values())} games ({escape(', '.join(f'{k} {v}' for k, v in sorted(statuses.items())))}) · "
        f"cells by {escape(' x '.join(a.by))} · {a.resamples} bootstrap resamples of seeds, {a.level:.0%} intervals · "
        f"built {datetime.now(UTC).strftime('%Y-%m-%d %H:%M UTC')}</p>", sim_note, contents(),
        '<h2 id="summary">Summary</h2>', table(cost_label(summary(a), sim), left=2),
        legends(a),
        '<h2 id="by-model">Results by model and role</h2>',
        '<p class="meta">Mean gain of a model in a role against the other role\'s model, over known games: mean of '
        "per-seed means, [percentile bootstrap CI, seeds resampled]; role <i>any</i> pools both roles.</p>",
        gains_table(gains if gains is not None else pl.DataFrame()),
        '<h2 id="by-cell">By cell</h2>',
        '<p class="meta">Mean of per-seed means over known games, [percentile bootstrap CI]; technical failures are '
        "unknown and left out.</p>",
        table(cells_wide(a), left=len(a.by)),
        '<h2 id="plots">Plots</h2>', '<div class="plots">' + "".join(f"<figure>{p}</figure>" for p in plots if p) + "</div>",
        '<h2 id="paired">Paired differences (deal rate, efficiency)</h2>',
        '<p class="meta">a − b on common seeds, cells differing in one factor; the full table is in the export.</p>',
        table(headline_pairs, left=len(a.by) + 4),
        '<h2 id="operational">Operational, per model</h2>', table(cost_label(a.operational, sim), left=2),
        '<h2 id="texts">Texts a model reads</h2>', texts_table(a),
        transcripts(a),
    ]
    return (f'<!doctype html><html lang="en"><head><meta charset="utf-8"><title>{escape(s.name)} report</title>'
            f"<style>{CSS}</style></head><body>" + "".join(sections) + "</body></html>")
