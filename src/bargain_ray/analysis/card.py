"""The dataset card (README.md), generated from the sweep so it cannot drift from the data."""

from __future__ import annotations

import hashlib
from typing import Any

import polars as pl
import yaml
from pydantic import BaseModel, ConfigDict

from bargain_ray.analysis import provenance
from bargain_ray.analysis.build import Analysis
from bargain_ray.analysis.drift import drift_note, served_versions
from bargain_ray.analysis.families import derived_fields, families
from bargain_ray.analysis.history import design_history, history_note
from bargain_ray.analysis.intervals import MIN_SEEDS
from bargain_ray.analysis.intervals import note as intervals_note
from bargain_ray.analysis.per_game import fields as game_fields_of
from bargain_ray.analysis.private import private_columns
from bargain_ray.analysis.rehearsal import statement
from bargain_ray.analysis.rescore import read_figures
from bargain_ray.analysis.sample import SAMPLE
from bargain_ray.core.provenance import describe, read_code_version
from bargain_ray.design.fingerprint import game_part
from bargain_ray.games import load_game
from bargain_ray.games.kit import leakage
from bargain_ray.store.paid import read_spend
from bargain_ray.store.rows import meanings

KS_DEFINITIONS = (
    "Kalai–Smorodinsky comes in two definitions: `ks_rational` takes each role's ideal over the deals both prefer to "
    "no agreement (the textbook bargaining set) and is the one the headline uses; `ks_outcomes` takes it over all "
    "outcomes, as negmas computes it. They coincide when each side's best deal leaves the other at or above its "
    "no-agreement point (tickets at (20, 20): both (65, 65))."
)
"""Said where the sweep's games have both Kalai–Smorodinsky figures (``dist_ks_rational``, ``dist_ks_outcomes``)."""
LOG_VERSION = 2
"""The raw logs' schema version (seed 002 writes 2: header, turns, result)."""

UNITS = {
    "games": "one game",
    "turns": "one message within a game (an accepted move, or the move that used up its repairs)",
    "calls": "one model call, repairs included: the request as sent and the reply",
    "metrics_per_game": "derived metrics, one row per game",
    "metrics_per_turn": "derived metrics, one row per turn (families that define them)",
    "metrics_by_cell": "cell x metric estimates with seed-clustered intervals",
    "paired_differences": "differences between cells on common seeds, with seed-clustered intervals",
    "head_to_head": "model A - model B in matched cells, and the outcome model's first-mover and seat effects",
    "operational": "instruction-following and cost figures per model",
}


TABLE_FIELDS = {
    "games": {
        "file": "source transcript path (join key to `turns`)", "rep": "replay index within a cell and seed",
        "price": "agreed price, deals only", "round": "the round the deal closed (one message per round), deals only",
        "prompt_variant": "which system prompt was used (the condition where a family has no variants)",
        "prompt_hash": "12 hex digits of SHA-256 of the rendered system prompts of the variant",
        "git_commit": "harness commit that produced the sweep (recorded when it started)",
    },
    "turns": {
        "file": "source transcript path (join key to `games`)", "rep": "replay index within a cell and seed",
        "n_illegal": "invalid replies that proposed a move the protocol forbids (the family's `ILLEGAL_RULES`)",
        "round": "turn index (one message per round)", "offer": "price proposed on this turn",
        "stated_valuation": "what the agent **claimed** its valuation was, or null",
        "actual_valuation": "what it **actually** was", "standing_offer_before": "offer on the table when the turn began",
        "accepted_price": "price closed at, on accept turns", "reasoning_private": "private reasoning",
        "public_*": "the turn as the other side saw it", "terms_*": "the offer's value of each term, as a number",
    },
    "metrics_by_cell": {
        "cell": "cell name from the grid (else its label condition|pairing|a<assignment>)", "metric": "a `metrics_per_game` column (see Metrics)",
        "role": "the role a per-role metric is about (empty for whole-game metrics)",
        "n_games": "known games with a value",
        "n_seeds": "seeds (clusters) with a value", "mean": "mean of per-seed means",
        "ci_low": "lower bound of the t interval over seeds (empty with fewer seeds than an interval needs)",
        "ci_high": "upper bound",
    },
    "paired_differences": {
        "factor": "the one grouping column in which the two cells differ", "a": "its value in cell a",
        "b": "its value in cell b", "metric": "a `metrics_per_game` column", "role": "as in `metrics_by_cell`",
        "n_seeds": "seeds both cells played",
        "mean_diff": "mean over common seeds of (a - b)", "ci_low": "lower bound (t over seeds)", "ci_high": "upper bound",
    },
    "head_to_head": {
        "outcome": "the family's outcome column (`{role}` stands for the role)", "label": "what the outcome is",
        "kind": "`head_to_head` (model A - model B), `first_mover` or `seat` (effects of the outcome model)",
        "condition": "the condition of a contrast", "role": "the role compared (`any`: every role pooled)",
        "model_a": "model A", "model_b": "model B", "pairs": "the games an effect was fitted on: all, same-model "
        "(every party one model) or cross-model", "term": "what the row estimates",
        "n": "matched cells of a contrast; parties of an effect's fit", "n_seeds": "seeds (clusters)",
        "estimate": "mean over seeds of A - B in matched cells, or the effect's coefficient",
        "ci_low": "lower bound of the interval (t over seeds)", "ci_high": "upper bound",
        "p_value": "two-sided p-value of no difference (t over seeds)",
        "p_holm": "Holm's adjusted p-value over every row with a p-value",
        "ci_low_adjusted": "lower bound of Bonferroni's simultaneous interval over those rows",
        "ci_high_adjusted": "upper bound of Bonferroni's simultaneous interval", "note": "why a row has no figure",
    },
    "operational": {
        "games": "games the model played", "calls": "calls, repairs included", "repairs": "repair calls",
        "invalid_attempts": "replies that broke a rule", "invalid_rate": "invalid attempts / calls",
        "invalid_rule_*": "invalid attempts by the rule they broke",
        "format_failures": "games ended because this model used up its repairs",
        "technical_failures": "calls that failed technically after retries",
        "games_technical_error": "games ended unknown in which this model played", "retries": "HTTP retries",
        "latency_*": "latency of calls in seconds (mean, percentiles)", "*_tokens": "tokens over all calls",
        "cost_usd": "cost in US dollars", "reported_models": "model ids the provider reported",
    },
}
"""The columns the export adds to the sweep's tables (seed 002's, and the bargaining family's turn fields as seed 002
names them), and those of the derived tables; a column of the sweep's own tables means what its row model says
(``store.rows.meanings``)."""


class Written(BaseModel):
    """One config of the export: its data file, rows, columns and digest (the card documents what was written)."""

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    data_files: str
    rows: int
    schema_: pl.Schema
    digest: str
    """Of the data file: the card's ``dataset_info`` names it, so a ``datasets`` cache keyed by the card never
    serves one export's rows for another's."""


def prompt_hash(config: dict[str, Any]) -> str:  # free-form: a game config as written
    """12 hex digits of the rendered system prompt(s) of a game config: the ``brief:<role>`` texts of
    ``Game.texts()`` (rendered from the opening state), joined in name order (``brief:buyer``, ``brief:seller``). The same for every game of
    a prompt variant, different between variants (seed 002's ``prompt_hash``)."""
    texts = load_game(config).texts()
    briefs = [t.text for name, t in sorted(texts.items()) if name.startswith("brief:")]
    text = "\n\n".join(briefs or [t.text for _, t in sorted(texts.items())])
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def prompt_hashes(analysis: Analysis) -> pl.DataFrame:
    """(game, condition, prompt_hash) for every game config of the manifest."""
    manifest = analysis.sweep.manifest
    rows = []
    for game, condition in manifest.game_conditions():
        if (part := game_part(manifest.components, game, condition)) and part.get("config"):
            rows.append({"game": game, "condition": condition, "prompt_hash": prompt_hash(part["config"])})
    return pl.DataFrame(rows, schema={"game": pl.String, "condition": pl.String, "prompt_hash": pl.String})


def sweep_commit(analysis: Analysis) -> str:
    """The commit recorded when the sweep started, else the one this export runs from, else ``unknown``."""
    manifest = analysis.sweep.manifest
    if manifest.git_commit:
        return manifest.git_commit
    code = read_code_version(manifest.key_names())
    return code.commit if code else "unknown"


def _feature(dtype: pl.DataType) -> str:
    """A column's Hugging Face ``datasets`` dtype."""
    if dtype == pl.Boolean:
        return "bool"
    if dtype.is_integer():
        return "int64"
    if dtype.is_float():
        return "float64"
    return "string"


def features(schema: pl.Schema) -> list[dict[str, str]]:
    """Every column's type, for the card's ``dataset_info``: CSV carries no types, and ``datasets`` reads a CSV
    in chunks, so a column empty in the first chunk would otherwise be typed from it and fail on a later one."""
    return [{"name": name, "dtype": _feature(dtype)} for name, dtype in schema.items()]


def dataset_name(analysis: Analysis) -> str:
    """The dataset's name: the sweep folder's (``bargain_ray_c3_full-sim``)."""
    return f"bargain_ray_{analysis.sweep.name}"


def front_matter(analysis: Analysis, written: dict[str, Written]) -> str:
    configs = [
        {"config_name": name, "data_files": w.data_files} | ({"default": True} if name == "games" else {})
        for name, w in written.items()
    ]
    name = dataset_name(analysis)
    meta = {
        "pretty_name": f"bargain_ray sweep {analysis.sweep.name}",
        "language": ["en"],
        "tags": ["negotiation", "bargaining", "llm-evaluation", "multi-agent", "game-theory"],
        "annotations_creators": ["machine-generated"],
        "source_datasets": ["original"],
        "configs": configs,
        "dataset_info": [{"config_name": config, "dataset_name": name,
                          "description": f"{name}: {config}, {w.rows} rows, data sha256 {w.digest}",
                          "features": features(w.schema_)} for config, w in written.items()],
    }
    return "---\n" + yaml.safe_dump(meta, sort_keys=False) + "---\n"


def _table(header: list[str], rows: list[list[Any]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "| " + " | ".join("---" for _ in header) + " |"]
    lines += ["| " + " | ".join(str(c).replace("|", "\\|") for c in row) + " |" for row in rows]
    return "\n".join(lines)


def _describe(column: str, fields: dict[str, str]) -> str:
    if column in fields:
        return fields[column]
    for pattern, text in fields.items():
        head, star, tail = pattern.partition("*")
        if star and column.startswith(head) and column.endswith(tail) and len(column) > len(head) + len(tail):
            return text
    return "family figure (see the family's metrics module)"


def fields_section(analysis: Analysis, written: dict[str, Written]) -> str:
    """A fields table per config, of the columns written; per-game fields from the shared columns and each
    family's ``FIELDS``."""
    names = families(analysis.sweep.scan("games"))
    game_fields = game_fields_of(names) | derived_fields(names)
    turns, calls = meanings("turns"), meanings("calls")
    fields = {
        "games": game_fields | TABLE_FIELDS["games"],
        "turns": game_fields | turns | TABLE_FIELDS["turns"],
        "calls": calls,
        "metrics_per_game": TABLE_FIELDS["games"] | game_fields,
        "metrics_per_turn": TABLE_FIELDS["turns"] | turns | game_fields,
        "metrics_by_cell": TABLE_FIELDS["metrics_by_cell"] | game_fields,
        "paired_differences": TABLE_FIELDS["paired_differences"] | game_fields,
        "head_to_head": TABLE_FIELDS["head_to_head"],
        "operational": {k: calls[k] for k in ("provider", "model")} | TABLE_FIELDS["operational"],
    }
    parts = []
    for name, w in written.items():
        private = set(private_columns(names, list(w.schema_))) if name in ("turns", "metrics_per_turn") else set()
        rows = [[f"`{c}`", str(t), ("**private to the speaker, never shown to the other side**: " if c in private
                                    else "") + _describe(c, fields[name])] for c, t in w.schema_.items()]
        parts.append(f"### `{name}` fields\n\n" + _table(["Field", "Type", "Meaning"], rows))
    return "\n\n".join(parts)


def metrics_section(analysis: Analysis, metrics: list[str]) -> str:
    """How each metric of ``metrics_by_cell`` is aggregated: per game, then per seed, then over seeds."""
    names = families(analysis.sweep.scan("games"))
    game_fields = game_fields_of(names) | derived_fields(names)
    rows = [[f"`{m}`", _describe(m, game_fields)] for m in metrics]
    return "\n\n".join([
        "## Metrics",
        "Every estimate in `metrics_by_cell` is built in three steps: (1) one value per game (and per role for "
        "the metrics named `<role>_...`, whose `role` column says which): a per-turn metric is aggregated over "
        "the role's turns in the game as the table below says (a mean over the turns where it is defined; a "
        "standard deviation says which one); (2) those values are averaged over the games of each seed in the "
        "cell; (3) the cell's "
        f"estimate is the mean of the seed means. {intervals_note()} A row with no estimate is an empty denominator (no game of "
        "the cell had the metric defined), not missing data. `paired_differences` uses the same seed means.",
        _table(["Metric", "Per game"], rows) if rows else "",
        KS_DEFINITIONS if {"dist_ks_rational", "dist_ks_outcomes"} <= set(analysis.scan_per_game.collect_schema())
        else "",
    ]).rstrip()


def _distinct(analysis: Analysis, column: str) -> list[Any]:
    return analysis.scan_per_game.select(pl.col(column).unique()).collect()[column].to_list()


def design_section(analysis: Analysis) -> str:
    if not _count(analysis):
        return "## Experimental design\n\nNo games were journaled."
    lines = ["## Experimental design", ""]
    for col in ("game", "cell", "condition", "pairing", "assignment", "first_speaker"):
        values = sorted({str(v) for v in _distinct(analysis, col) if v is not None})
        lines.append(f"- **{col}**: {', '.join(values) if values else '(not varied)'}")
    seeds = len(_distinct(analysis, "seed"))
    lines += [
        f"- **seeds (blocks)**: {seeds}; every cell of a block plays the block's seed (common random numbers),",
        "  so cells are compared on the same draws.",
        f"- **cells** group games by {' x '.join(analysis.by)}.",
        "",
        "Estimates in `metrics_by_cell` are means of per-seed means over known games, with t intervals over seeds",
        f"({analysis.level:.0%}; none below {MIN_SEEDS} seeds). `paired_differences` compares",
        "cells that differ in exactly one grouping column, seed by seed on the seeds both played.",
    ]
    return "\n".join(lines)


def _count(analysis: Analysis, where: pl.Expr | None = None) -> int:
    g = analysis.scan_per_game
    return (g if where is None else g.filter(where)).select(pl.len()).collect().item()


def limitations_section(analysis: Analysis) -> str:
    items = []
    seeds = len(_distinct(analysis, "seed")) if _count(analysis) else 0
    if seeds < MIN_SEEDS:
        items.append(f"{seeds} seed(s): no intervals (they are shown from {MIN_SEEDS} seeds, where their coverage "
                     "was measured).")
    elif seeds < 20:
        items.append(f"Only {seeds} seeds: intervals are wide (their coverage at such counts is measured: Metrics).")
    unknown = _count(analysis, ~pl.col("known"))
    if unknown:
        items.append(f"{unknown} game(s) ended in a technical failure: unknown, unscored, left out of every estimate; "
                     "resuming the sweep re-runs them.")
    rehearsed = statement(analysis.rehearsal)
    if rehearsed:
        items.insert(0, rehearsed)
    if "leakage_any" in analysis.scan_per_game.collect_schema().names():
        items.append(leakage.ERROR)
    items += [
        "Refusals are not instrumented: a refusal surfaces as invalid replies and, after the repairs, a format failure.",
        "Distances to the frontier are in raw utility points of the game config; compare them within one game only.",
        "Conditional metrics (efficiency, shares, rounds to agreement) count deals only; their denominators can be small.",
    ]
    return "## Limitations\n\n" + "\n".join(f"- {i}" for i in items)


def paid_section(analysis: Analysis) -> str:
    """What the sweep folder paid, per model, from its call journal (``store.paid``: the terminal and the live view
    read the same figures)."""
    s = analysis.sweep
    spend = read_spend(s.path, s.manifest.served)
    simulated = " (simulated: provider=sim, no money was spent)" if analysis.rehearsal.simulated else ""
    if not spend.models:
        return "## What was paid\n\nNo model call was paid: the folder's call journal holds no paid call."
    rows = [[f"`{m.model}`", m.calls, m.input_tokens, m.output_tokens, f"{m.cost_usd:.4f}", m.rate_limited, m.drifted]
            for _, m in sorted(spend.models.items())]
    return "\n\n".join([
        "## What was paid",
        f"{spend.calls} model calls paid, ${spend.cost_usd:.4f} at the configured prices{simulated}. From the sweep "
        "folder's call journal, the one record of what was paid: every paid call is there, those of a game's earlier "
        "attempts (a game run again after a stop or a technical failure) and of games the current design leaves "
        "out included, so it can exceed the sum of `cost_usd` over `calls`, which holds each game's final record.",
        _table(["Model", "Calls", "Input tokens", "Output tokens", "Cost (USD)", "429s before the answer", "Served as another "
                "version"], rows),
    ])


def settings_section(items: list[provenance.Item]) -> str:
    """The rules no seed states, each now a setting, with its value in this sweep (from the declarations)."""
    unstated = provenance.unstated_settings(items)
    if not unstated:
        return ""
    return ("## Settings no seed states\n\nEvery rule or number a seed does not state is a setting with a default "
            "and a label (ours, and why); this sweep played each with the value below (its default beside it when "
            "the sweep changed it).\n\n" + provenance.markdown(unstated, values=True))


def provenance_table(items: list[provenance.Item]) -> str:
    """Every rule, setting, metric and text that determined the sweep's games, and where each comes from."""
    return ("### Rules, settings, metrics and texts\n\nWhere each comes from: a seed, in the seed's own words, or "
            "**ours** (no seed gives it), with why; settings with the sweep's values. Generated from the declarations "
            "in the code, as the report's table is.\n\n" + provenance.markdown(items, values=True))


def provenance_section(analysis: Analysis, items: list[provenance.Item]) -> str:
    s = analysis.sweep
    code = read_code_version(s.manifest.key_names())
    lines = [
        "## Provenance",
        "",
        f"- Grid: `{s.manifest.grid}`, sweep created {s.manifest.created}; the full spec is `spec/manifest.json` "
        "(ours; seed 002's card names `spec/full.json`), copied from the sweep folder.",
        f"- Code at export: {code.describe() if code else 'unknown'}",
    ]
    if s.manifest.git_commit:
        lines.append(f"- Code when the sweep started: {describe(s.manifest.git_commit, s.manifest.git_diff)}")
    lines.append(f"- Log schema: `log_version` {LOG_VERSION}, uniform across every raw file of this export.")
    history = design_history(s.manifest)
    lines += ["", history_note(s.manifest) or "Designs of the sweep folder (one: it never grew):", "",
              _table(history.columns, [["" if v is None else v for v in row] for row in history.iter_rows()])]
    played = dict(((g, c), n) for g, c, n in analysis.scan_per_game.group_by("game", "condition").len().collect()
                  .iter_rows())
    for game, condition, digest12 in prompt_hashes(analysis).iter_rows():
        lines.append(f"- Prompt hash for game {game} under condition {condition}: `{digest12}` "
                     f"({played.get((game, condition), 0)} games)")
    served = served_versions(s.scan("calls"))
    rows = [[r["provider"], r["model"], r["model_version"] or "(not reported)", r["system_fingerprint"] or "",
             r["served_by"] or "", {True: "yes", False: "no"}.get(r["drift"], ""), r["calls"]]
            for r in served.iter_rows(named=True)]
    if note := drift_note(served):
        lines += ["", f"> **{note}**"]
    lines += ["", "Models as configured and as the providers reported them:", "",
              _table(["Provider", "Model", "Reported model", "Fingerprint", "Served by", "Drift", "Calls"], rows), "",
              provenance_table(items)]
    return "\n".join(lines)


def card(analysis: Analysis, written: dict[str, Written], metrics: list[str], raw_complete: bool = True) -> str:
    """The card: YAML header naming every config, structure, fields, metrics, design, limitations, provenance."""
    s = analysis.sweep
    items = provenance.sweep_items(s.manifest)
    refigured = read_figures(s.path, s.manifest).note()
    statuses = dict(analysis.scan_per_game.group_by("status").len().collect().iter_rows())
    structure = _table(["Config", "Rows", "Unit", "File"],
                       [[f"`{k}`", w.rows, UNITS[k], f"`{w.data_files}`"] for k, w in written.items()])
    return "\n\n".join([
        front_matter(analysis, written).rstrip(),
        f"# bargain_ray sweep `{s.name}`",
        *filter(None, [refigured and f"> **{refigured}**"]),
        f"{sum(statuses.values())} negotiation games played by bargain_ray ("
        + ", ".join(f"{k} {v}" for k, v in sorted(statuses.items())) + "). Every game keeps the private brief each "
        "side received, every request and reply, every invalid attempt and the rule it broke, and the exact outcome.",
        "## Structure\n\n" + structure,
        "Every config is a CSV file with the same table as parquet beside it (`data/games.parquet`, ...): the "
        "first five are seed 002's, `calls`, `paired_differences`, `head_to_head` and `metrics_per_turn` ours. A column has the "
        "name it has in the sweep folder's `games.parquet`, `turns.parquet` and `calls.parquet`; a list column "
        "(`attempt_errors`) is JSON in the CSV.",
        "```python\nfrom datasets import load_dataset\n\n"
        'games = load_dataset("path/to/dataset", "games", split="train")\n'
        'turns = load_dataset("path/to/dataset", "turns", split="train")\n```',
        f"The card's `dataset_info` names this dataset `{dataset_name(analysis)}` and each config's data digest, "
        "so `datasets`' cache never serves another export's rows for this one (the folder is always called "
        "`dataset`).",
        "Raw transcripts live in `raw/`, one JSONL file per game named `{cell}_s{seed}.jsonl` (the `file` column "
        "of `games` and `turns`). **They are deliberately not a loadable config**: each file mixes three record "
        "types with different schemas, each named by its `record` key: one `header` (`log_version` "
        f"{LOG_VERSION}, seed, true valuations, models, prompt variant and hash, harness commit, game config, "
        "the private brief of each role), one `turn` per turn with its calls (requests and replies, invalid "
        "attempts included), and one `result` (outcome, price, payoffs, tokens per side). "
        + ("" if raw_complete else f"This sweep is large: `raw/` holds the games the report shows (the first {SAMPLE} of "
           "each cell); every game's record is in the sweep folder's `journal.jsonl`, one JSON object per line. ")
        + "Everything in `data/` and `metrics/` is derived from them.",
        "```python\nimport json\nrecords = [json.loads(line) for line in open(path)]\n"
        "header, result, turns = records[0], records[-1], records[1:-1]\n```",
        fields_section(analysis, written),
        metrics_section(analysis, metrics),
        design_section(analysis),
        *filter(None, [settings_section(items)]),
        paid_section(analysis),
        limitations_section(analysis),
        provenance_section(analysis, items),
    ]) + "\n"
