"""The report: one self-contained HTML file (inline CSS and SVG) that opens with no server.

Tables and plots first (one section per game family, each from the figures the family declares), then
transcripts as seed 001 shows them (turn, speaker, call id, message, action): up to ``SAMPLE`` per cell on the
page, every game in the dataset's ``raw/`` folder, which the page links to, so the page stays small at any
scale. Private briefs and private fields are shown apart and marked private; technical failures are marked.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import polars as pl

from bargain_ray.analysis import answer, provenance
from bargain_ray.analysis.build import Analysis
from bargain_ray.analysis.drift import drift_note, served_versions
from bargain_ray.analysis.export import file_keys
from bargain_ray.analysis.families import deal_line
from bargain_ray.analysis.history import design_history, history_note
from bargain_ray.analysis.intervals import note as intervals_note
from bargain_ray.analysis.page import CSS, escape, private_block, table
from bargain_ray.analysis.private import turn_parts
from bargain_ray.analysis.rehearsal import statement
from bargain_ray.analysis.rescore import Figures, read_figures
from bargain_ray.analysis.sample import SAMPLE, game_count, raw_scope, sampled
from bargain_ray.analysis.section import Section, sections
from bargain_ray.analysis.transcript import ShownTurn, shown_turns
from bargain_ray.core.provenance import describe
from bargain_ray.core.records import GameRecord
from bargain_ray.store import DATASET, JOURNAL
from bargain_ray.store.rows import DECIMAL_TEXT

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

PROVENANCE = "Provenance: rules, settings, metrics, texts"
DESIGNS = "Designs of this folder"


def partial_banner(note: str | None) -> str:
    """The warning at the top of a report whose sweep is running or unfinished (empty when complete)."""
    return f'<div class="technical">{escape(note)}</div>' if note else ""


def refigured_banner(figures: Figures) -> str:
    """The warning at the top of a report whose figures were computed by code other than the sweep's, naming both
    commits (empty otherwise)."""
    note = figures.note()
    return f'<div class="technical" id="refigured">{escape(note)}</div>' if note else ""


def summary(a: Analysis) -> pl.DataFrame:
    return a.scan_per_game.group_by("game", "family", maintain_order=True).agg(
        pl.len().alias("games"),
        pl.col("known").sum().alias("known"),
        *((pl.col("status") == s).sum().alias(s.lower()) for s in
          ("AGREEMENT", "NO_AGREEMENT", "FORMAT_FAILURE", "TECHNICAL_ERROR")),
        pl.col("agreement").mean().alias("deal_rate"),
        pl.col("rounds").mean().alias("mean_turns"),
        pl.col("cost_usd").sum().alias("cost_usd"),
    ).collect()


def _numbers(v: Any) -> Any:
    """Decimal strings of the record shown as the numbers the model wrote (as seed 001 shows them)."""
    if isinstance(v, dict):
        return {k: _numbers(x) for k, x in v.items()}
    if isinstance(v, str) and DECIMAL_TEXT.fullmatch(v):
        return int(v) if v.lstrip("-").isdigit() else float(v)
    return v


def transcript(rec: GameRecord, briefs: dict[str, tuple[str, bool]], row: dict[str, Any] | None = None,  # free-form: a polars row
               sources: dict[str, str] | None = None, raw: str | None = None, delivered: bool = True) -> str:
    """One game as seed 001 shows it, briefs and private fields apart and marked private; its header shows
    what the game agreed and each role's figure (``row``: the game's typed columns), each brief where its
    wording comes from. Without a message channel (``delivered`` false) each message is marked as never read."""
    unit, out = rec.unit, rec.outcome
    status = out.status.value
    speaker = f"{unit.first_speaker} opens; " if unit.first_speaker else ""
    by_role = unit.models_by_role
    models = ", ".join(f"{r}: {m}" for r, m in by_role.items())
    data = (f'data-cell="{escape(unit.cell)}" data-status="{escape(status)}" '
            f'data-model="{escape(" ".join(sorted(set(by_role.values()))))}"')
    deal = f' · <span class="deal">{escape(deal_line(row, unit.family, list(briefs)))}</span>' if row else ""
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
        parts.append(private_block(f"{role} brief: {how.format(role=role)}", brief, folded=True, source=source))
    parts += [_turn(t, unit.family, delivered) for t in shown_turns(rec)]
    scored = out.model_dump(mode="json", exclude={"invalid_attempts"})
    parts.append(f"<details><summary>Recorded outcome</summary><pre>{escape(json.dumps(scored, indent=2))}</pre></details>")
    return "".join(parts) + "</details>"


def _turn(shown: ShownTurn, family: str | None, delivered: bool = True) -> str:
    t = shown.turn
    fields = turn_parts(family, t.fields)
    message, private = fields.message, fields.private
    action = {k: _numbers(v) for k, v in fields.public.items() if v is not False}
    parts = [f'<div class="turn"><h4>Turn {t.turn} · {escape(t.role)}</h4>']
    for c in shown.calls:
        parts.append(f'<div class="cid">{escape(c.call_id)}</div>')
        if c.status != "ok":
            parts.append(f'<div class="technical">TECHNICAL FAILURE on this call: {escape(str(c.error))}</div>')
        elif c.valid is False:
            parts.append(f'<div class="invalid"><b>invalid reply</b> (rule <code>{escape(str(c.rule))}</code>): '
                         f'{escape(str(c.error))}<pre>{escape(str(c.response_text))}</pre></div>')
    for k, v in private.items():
        parts.append(private_block(f"{t.role} {k}: never shown to the other side",
                                   v if isinstance(v, str) else json.dumps(v, indent=2)))
    if message is not None:
        parts.append(f"<p>{escape(str(message))}</p>" if delivered else
                     f'<p class="undelivered">(said, never delivered: this game has no message channel) '
                     f"{escape(str(message))}</p>")
    if action:
        parts.append(f"<pre>{escape(json.dumps(action, indent=2))}</pre>")
    return "".join(parts) + "</div>"


def _options(name: str, label: str, values: list[str]) -> str:
    opts = "".join(f'<option value="{escape(v)}">{escape(v)}</option>' for v in values)
    return f'<label>{label} <select id="filter-{name}"><option value="">all</option>{opts}</select></label>'


def filters(a: Analysis) -> str:
    """Selects for cell, status and model (every value the sweep has); the inline script does the rest."""
    games = a.scan_per_game
    names = games.collect_schema().names()
    models = [f"{r}_model" for r in a.sweep.roles() if f"{r}_model" in names]
    values = games.select(pl.col("cell").unique().sort().implode(), pl.col("status").unique().sort().implode(),
                          pl.concat_list(models).explode().unique().drop_nulls().sort().implode().alias("model")
                          if models else pl.lit([], pl.List(pl.String)).alias("model")).collect().row(0)
    cells, statuses, models_ = ([str(v) for v in col if v is not None] for col in values)
    return (f'<div class="filters">{_options("cell", "Cell", cells)}{_options("status", "Status", statuses)}'
            f'{_options("model", "Model", models_)}<span class=meta><span id="shown"></span> shown</span></div>')


def delivered(a: Analysis, game: str, condition: str) -> bool:
    """Whether a game config's messages reach the other side (false under the no-talk condition)."""
    loaded = a.sweep.game_for(game, condition)
    return loaded is None or bool(loaded.config.model_dump().get("messages", True))


def sources_of(a: Analysis, game: str | None, condition: str | None) -> dict[str, str]:
    """name -> provenance of every text a model reads under one game config."""
    loaded = a.sweep.game_for(game, condition) if game is not None and condition is not None else None
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
    rows = {r["unit_id"]: r for r in a.scan_per_game.filter(pl.col("unit_id").is_in(list(shown))).collect()
            .iter_rows(named=True)}
    files = dict(file_keys(a).filter(pl.col("unit_id").is_in(list(shown))).select("unit_id", "file").iter_rows())
    sources: dict[tuple[str, str], tuple[dict[str, str], bool]] = {}
    for r in s.records(only=shown):
        key = (r.unit.game, r.unit.condition)
        if key not in sources:
            sources[key] = sources_of(a, *key), delivered(a, *key)
        texts, talk = sources[key]
        parts.append(transcript(r, s.briefs(r), rows.get(r.unit.unit_id), texts, files.get(r.unit.unit_id), talk))
    parts.append(f"<script>{FILTER_SCRIPT}</script>")
    return "".join(parts)


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
    table_ = table(pl.DataFrame(rows), left=4, empty="no assignments recorded")
    return (f'<dl class="legend"><b>Pairing letters</b> (a pairing XY puts model X in agent A and model Y in agent '
            f"B): {letters}</dl><p class=legend><b>Assignments</b>: which agent takes which role, and who opens."
            f"</p>{table_}")


def provenance_part(a: Analysis) -> str:
    """Every rule, setting (with the sweep's value), metric and text that determined the sweep's games, and where
    each comes from: generated from the declarations (``analysis.provenance``), as the card's table is; ours marked."""
    items = provenance.sweep_items(a.sweep.manifest)
    if not items:
        return "<p class=meta>(none)</p>"
    return ('<p class="meta">Where each rule, setting, metric and text comes from: a seed, in its own words, or '
            '<span class="ours">ours</span> (no seed gives it), with why. Settings show the value this sweep played '
            "(its default beside it where the sweep changed it); texts are as a model reads them under each game "
            f'config.</p><div class="wrap">{provenance.html(items, values=True)}</div>')


def designs_part(a: Analysis) -> str:
    """The designs the folder was run with, oldest first (``analysis.history``)."""
    note = history_note(a.sweep.manifest)
    return (f'<p class="meta">{escape(note)}</p>' if note else "") + table(design_history(a.sweep.manifest), left=3)


def contents(families: list[Section]) -> str:
    def item(anchor: str, title: str, inner: str = "") -> str:
        return f'<li><a href="#{escape(anchor)}">{escape(title)}</a>{inner}</li>'

    per_family = "".join(item(f.anchor(), f.results.title, "<ol>" + "".join(item(a, h) for a, h, _ in f.parts)
                                                               + "</ol>") for f in families)
    return ('<nav class="toc"><b>Contents</b><ol>' + item(answer.ANCHOR, answer.TITLE) + item("summary", "Summary")
            + item("legend", "Legend")
            + per_family + item("operational", "Operational, per model") + item("designs", DESIGNS)
            + item("provenance", PROVENANCE)
            + item("transcripts", "Transcripts") + "</ol></nav>")


def render(a: Analysis) -> str:
    s = a.sweep
    sim = a.rehearsal.simulated
    statuses = dict(a.scan_per_game.group_by("status").len().collect().iter_rows())
    note = statement(a.rehearsal)
    families = sections(a)
    grid = f" (grid {s.manifest.grid})" if s.manifest.grid != s.name else ""
    figures = read_figures(s.path, s.manifest)
    served = served_versions(s.scan("calls"))
    drifted = drift_note(served)
    body = [
        refigured_banner(figures),
        f"<h1>Sweep report: {escape(s.name)}{escape(grid)}</h1>",
        f'<p class="meta">{escape(str(s.path))} · created {escape(s.manifest.created)} · '
        f"{sum(statuses.values())} games ({escape(', '.join(f'{k} {v}' for k, v in sorted(statuses.items())))}) · "
        f'<span id="code">played with {escape(describe(s.manifest.git_commit, s.manifest.git_diff))}</span> · '
        + (escape("figures by {}, not the sweep's {} · ".format(*figures.commits())) if figures.by_other_code else "")
        + f"cells by {escape(' x '.join(a.by))} · {a.level:.0%} intervals, t over seeds · "
        f"built {datetime.now(UTC).strftime('%Y-%m-%d %H:%M UTC')}</p>",
        f'<p class="sim" id="rehearsal">{escape(note)}</p>' if note else "",
        f'<p class="meta" id="intervals">{escape(intervals_note())}</p>',
        f'<div class="technical" id="drift">{escape(drifted)}</div>' if drifted else "",
        contents(families),
        answer.section(a.head_to_head, a.level),
        '<h2 id="summary">Summary</h2>', table(cost_label(summary(a), sim), left=2, empty="no game journaled yet"),
        '<h2 id="legend">Legend</h2>', legends(a),
        *(f.html() for f in families),
        '<h2 id="operational">Operational, per model</h2>',
        table(cost_label(a.operational, sim), left=2, empty="no model call recorded"),
        '<h3 id="served">What served each model (drift: another version than the sweep\'s first answer)</h3>',
        table(served, left=5, empty="no model call answered"),
        f'<h2 id="designs">{DESIGNS}</h2>', designs_part(a),
        f'<h2 id="provenance">{PROVENANCE}</h2>', provenance_part(a),
        transcripts(a),
    ]
    return (f'<!doctype html><html lang="en"><head><meta charset="utf-8"><title>{escape(s.name)} report</title>'
            f"<style>{CSS}</style></head><body>" + "".join(body) + "</body></html>")
