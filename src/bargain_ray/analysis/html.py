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
from bargain_ray.analysis.per_game import game_class
from bargain_ray.analysis.sample import SAMPLE, game_count, raw_scope, sampled
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
"""


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


def _private(title: str, body: str, folded: bool = False) -> str:
    tag = f'<span class="tag">PRIVATE · {escape(title)}</span>'
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


def transcript(rec: dict[str, Any], briefs: dict[str, tuple[str, bool]]) -> str:
    """One game as seed 001 shows it, briefs and scratchpads apart and marked private."""
    unit, out = rec["unit"], rec["outcome"]
    calls = {c["call_id"]: c for c in rec["calls"]}
    status = out["status"]
    speaker = f"{unit.get('first_speaker')} opens; " if unit.get("first_speaker") else ""
    models = ", ".join(f"{r}: {m}" for r, m in (unit.get("models_by_role") or {}).items())
    parts = [f'<details class="game"><summary><b>{escape(unit["unit_id"])}</b> · {escape(str(unit.get("cell")))} · '
             f'{escape(models)} · <span class="status-{escape(status)}">{escape(status)}</span> · '
             f'<a href="{DATASET}/raw/{escape(unit["unit_id"])}.jsonl">raw</a></summary>',
             f'<p>{escape(str(unit.get("pairing")))}; {escape(speaker)}{escape(status)}</p>']
    if not out["known"]:
        parts.append(f'<div class="technical">TECHNICAL FAILURE: unknown, unscored, re-run on resume. '
                     f'{escape(str(out["reason"]))}</div>')
    for role, (brief, sent) in briefs.items():
        how = "only the {role} saw this" if sent else "rebuilt from the game config (no request to this role was recorded)"
        parts.append(_private(f"{role} brief: {how.format(role=role)}", brief, folded=True))
    cls = game_class(unit.get("family"))
    hidden = set(cls.private_fields if cls else ())
    placed = set()
    for t in rec["turns"]:
        placed.update(t["call_ids"])
        parts.append(_turn(t, [calls[i] for i in t["call_ids"] if i in calls], hidden))
    for c in rec["calls"]:
        if c["call_id"] not in placed:
            parts.append(_turn({"turn": c["turn"], "role": c["role"], "call_ids": [c["call_id"]], "fields": {}}, [c], hidden))
    scored = {k: v for k, v in out.items() if k not in ("invalid_attempts",)}
    parts.append(f"<details><summary>Recorded outcome</summary><pre>{escape(json.dumps(scored, indent=2))}</pre></details>")
    return "".join(parts) + "</details>"


def _turn(t: dict[str, Any], calls: list[dict[str, Any]], hidden: set[str]) -> str:
    fields = dict(t.get("fields") or {})
    message = fields.pop("message", None)
    private = {k: fields.pop(k) for k in list(fields) if k in hidden or any(p in k.lower() for p in PRIVATE_KEYS)}
    action = {k: _numbers(v) for k, v in fields.items() if v is not False}
    parts = [f'<div class="turn"><h4>Turn {t["turn"]} · {escape(t["role"])}</h4>']
    for c in calls:
        parts.append(f'<div class="cid">{escape(c["call_id"])}</div>')
        if c.get("status", "ok") != "ok":
            parts.append(f'<div class="technical">TECHNICAL FAILURE on this call: {escape(str(c.get("error")))}</div>')
        elif c.get("valid") is False:
            parts.append(f'<div class="invalid"><b>invalid reply</b> (rule <code>{escape(str(c.get("rule")))}</code>): '
                         f'{escape(str(c.get("error")))}<pre>{escape(str(c.get("response_text")))}</pre></div>')
    for k, v in private.items():
        parts.append(_private(f"{t['role']} {k}: never shown to the other side", v if isinstance(v, str) else json.dumps(v, indent=2)))
    if message is not None:
        parts.append(f"<p>{escape(str(message))}</p>")
    if action:
        parts.append(f"<pre>{escape(json.dumps(action, indent=2))}</pre>")
    return "".join(parts) + "</div>"


def transcripts(a: Analysis) -> str:
    """The sampled transcripts, streamed from the journal, and where the rest are."""
    shown, total, scope = sampled(a), game_count(a), raw_scope(a)
    s = a.sweep
    parts = [f"<h2>Transcripts ({total})</h2>"]
    if len(shown) < total:
        where = (f'every game has its file in <a href="{DATASET}/raw/">{DATASET}/raw/</a>' if scope is None else
                 f'the games shown have their files in <a href="{DATASET}/raw/">{DATASET}/raw/</a> and every game '
                 f'is in <a href="{JOURNAL}">{JOURNAL}</a> (one JSON record per line)')
        parts.append(f'<p class="meta">Showing the first {SAMPLE} games of each cell ({len(shown)} of {total}); '
                     f"{where}.</p>")
    parts += [transcript(r, s.briefs(r)) for r in s.records(only=shown)]
    return "".join(parts)


def render(a: Analysis) -> str:
    s = a.sweep
    statuses = dict(a.scan_per_game.group_by("status").len().collect().iter_rows())
    plots = [*interval_plots(a), *frontier_plots(a), rounds_plot(a)]
    headline_pairs = a.paired.filter(pl.col("metric").is_in(("agreement", "efficiency")))
    sections = [
        f"<h1>Sweep report: {escape(s.name)}</h1>",
        f'<p class="meta">{escape(str(s.path))} · created {escape(str(s.manifest.get("created")))} · '
        f"{sum(statuses.values())} games ({escape(', '.join(f'{k} {v}' for k, v in sorted(statuses.items())))}) · "
        f"cells by {escape(' x '.join(a.by))} · {a.resamples} bootstrap resamples of seeds, {a.level:.0%} intervals · "
        f"built {datetime.now(UTC).strftime('%Y-%m-%d %H:%M UTC')}</p>",
        "<h2>Summary</h2>", table(summary(a), left=2),
        "<h2>By cell</h2>",
        '<p class="meta">Mean of per-seed means over known games, [percentile bootstrap CI]; technical failures are '
        "unknown and left out.</p>",
        table(cells_wide(a), left=len(a.by)),
        "<h2>Plots</h2>", '<div class="plots">' + "".join(f"<figure>{p}</figure>" for p in plots if p) + "</div>",
        "<h2>Paired differences (deal rate, efficiency)</h2>",
        '<p class="meta">a − b on common seeds, cells differing in one factor; the full table is in the export.</p>',
        table(headline_pairs, left=len(a.by) + 4),
        "<h2>Operational, per model</h2>", table(a.operational, left=2),
        transcripts(a),
    ]
    return (f'<!doctype html><html lang="en"><head><meta charset="utf-8"><title>{escape(s.name)} report</title>'
            f"<style>{CSS}</style></head><body>" + "".join(sections) + "</body></html>")
