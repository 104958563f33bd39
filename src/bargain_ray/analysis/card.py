"""The dataset card (README.md), generated from the sweep so it cannot drift from the data."""

from __future__ import annotations

import subprocess
from collections import Counter
from pathlib import Path
from typing import Any

import polars as pl
import yaml

from bargain_ray.analysis.build import Analysis
from bargain_ray.analysis.per_game import FIELDS as SHARED_FIELDS
from bargain_ray.analysis.per_game import family_fields
from bargain_ray.analysis.sample import SAMPLE

UNITS = {
    "games": "one game (the store's flat games table)",
    "turns": "one accepted move, or the move that used up its repairs",
    "calls": "one model call, repairs included: the request as sent and the reply",
    "metrics_per_game": "derived metrics, one row per game",
    "metrics_per_turn": "derived metrics, one row per turn (families that define them)",
    "metrics_by_cell": "cell x metric estimates with seed-clustered bootstrap CIs",
    "paired_differences": "differences between cells on common seeds, with bootstrap CIs",
    "operational": "instruction-following and cost figures per model",
}


TABLE_FIELDS = {
    "games": {
        "calls_attempted": "model calls, repairs included", "repairs_used": "repair prompts",
        "technical_pass": "the game ended in agreement or no agreement (no format or technical failure)",
        "unit_hash": "hash of everything that determines the game", "phase": "design phase",
        "outcome": "the whole outcome record as JSON (for replay; every figure of it also has its own column)",
    },
    "turns": {
        "unit_id": "game (join key)", "turn": "turn number", "role": "who moved",
        "call_ids": "the calls of this turn, repairs included (`<unit_id>-k01`, ...)",
        "attempts": "replies asked for this turn", "valid": "false if the repairs ran out",
        "action": "the action taken. **Authoritative**", "message": "text shown to the other side(s)",
        "fields": "every family field of the turn as JSON (private ones included: see `raw/`)",
        "turn_scored": "the family scored this turn (its per-turn metrics are in this row)",
        "terms_*": "the offer's value of each term, as a number",
    },
    "calls": {
        "unit_id": "game (join key)", "call_id": "`<unit_id>-kNN`, in call order", "role": "role that was asked", "turn": "turn number",
        "repair": "0 for the first ask of a turn, 1.. for repairs", "provider": "provider as configured",
        "model": "model as configured", "request": "the request as sent, as JSON (no keys)",
        "response_text": "the reply text", "stop_reason": "as the provider reported it",
        "*_tokens": "token usage as the provider reported it", "latency_s": "seconds, retries included",
        "attempts": "HTTP attempts (retries + 1)", "attempt_errors": "errors of the failed attempts",
        "request_id": "provider request id", "model_version": "the model id the provider reported",
        "cost_usd": "cost from the configured prices", "status": "`ok`, or `error` for a technical failure",
        "valid": "whether the reply followed the protocol", "rule": "the rule an invalid reply broke",
        "error": "the error shown to the model, or the technical error", "resumed": "replayed from the call journal",
    },
    "metrics_by_cell": {
        "metric": "a `metrics_per_game` column", "n_games": "known games with a value",
        "n_seeds": "seeds (clusters) with a value", "mean": "mean of per-seed means",
        "ci_low": "percentile bootstrap lower bound (empty with fewer than two seeds)",
        "ci_high": "percentile bootstrap upper bound",
    },
    "paired_differences": {
        "factor": "the one grouping column in which the two cells differ", "a": "its value in cell a",
        "b": "its value in cell b", "metric": "a `metrics_per_game` column", "n_seeds": "seeds both cells played",
        "mean_diff": "mean over common seeds of (a - b)", "ci_low": "bootstrap lower bound", "ci_high": "upper bound",
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


def git_commit() -> tuple[str, bool]:
    """(commit of the code that built this export, whether its tree had local changes)."""
    here = Path(__file__).resolve().parent

    def git(*args: str) -> str:
        return subprocess.run(["git", *args], cwd=here, capture_output=True, text=True, check=True).stdout.strip()

    try:
        return git("rev-parse", "HEAD"), bool(git("status", "--porcelain", "--untracked-files=no"))
    except (OSError, subprocess.CalledProcessError):
        return "unknown", False


def front_matter(analysis: Analysis, written: dict[str, tuple[str, int]]) -> str:
    configs = [
        {"config_name": name, "data_files": rel} | ({"default": True} if name == "games" else {})
        for name, (rel, _) in written.items()
    ]
    meta = {
        "pretty_name": f"bargain_ray sweep {analysis.sweep.name}",
        "language": ["en"],
        "tags": ["negotiation", "bargaining", "llm-evaluation", "multi-agent", "game-theory"],
        "annotations_creators": ["machine-generated"],
        "source_datasets": ["original"],
        "configs": configs,
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


def fields_section(analysis: Analysis, written: dict[str, tuple[str, int]]) -> str:
    """A fields table per config; per-game fields from the shared columns and each family's ``FIELDS``."""
    s = analysis.sweep
    families = s.scan("games").select(pl.col("family").unique().drop_nulls()).collect()["family"].to_list()
    game_fields = SHARED_FIELDS | family_fields(families)
    schemas = {
        "games": (s.scan("games").collect_schema(), game_fields | TABLE_FIELDS["games"]),
        "turns": (s.scan("turns").collect_schema(), TABLE_FIELDS["turns"]),
        "calls": (s.scan("calls").collect_schema(), TABLE_FIELDS["calls"]),
        "metrics_per_game": (analysis.scan_per_game.collect_schema(), game_fields),
        "metrics_per_turn": (analysis.scan_per_turn.collect_schema(), game_fields | TABLE_FIELDS["turns"]),
        "metrics_by_cell": (analysis.by_cell.schema, game_fields | TABLE_FIELDS["metrics_by_cell"]),
        "paired_differences": (analysis.paired.schema, game_fields | TABLE_FIELDS["paired_differences"]),
        "operational": (analysis.operational.schema, TABLE_FIELDS["operational"] | TABLE_FIELDS["calls"]),
    }
    parts = []
    for name in written:
        if name in schemas:
            schema, fields = schemas[name]
            rows = [[f"`{c}`", str(t), _describe(c, fields)] for c, t in schema.items()]
            parts.append(f"### `{name}` fields\n\n" + _table(["Field", "Type", "Meaning"], rows))
    return "\n\n".join(parts)


def _distinct(analysis: Analysis, column: str) -> list[Any]:
    return analysis.scan_per_game.select(pl.col(column).unique()).collect()[column].to_list()


def design_section(analysis: Analysis) -> str:
    if not _count(analysis):
        return "## Experimental design\n\nNo games were journaled."
    lines = ["## Experimental design", ""]
    for col in ("game", "condition", "pairing", "assignment", "first_speaker"):
        values = sorted({str(v) for v in _distinct(analysis, col) if v is not None})
        lines.append(f"- **{col}**: {', '.join(values) if values else '(not varied)'}")
    seeds = len(_distinct(analysis, "seed"))
    lines += [
        f"- **seeds (blocks)**: {seeds}; every cell of a block plays the block's seed (common random numbers),",
        "  so cells are compared on the same draws.",
        f"- **cells** group games by {' x '.join(analysis.by)}.",
        "",
        f"Estimates in `metrics_by_cell` are means of per-seed means over known games, with {analysis.resamples}",
        f"percentile bootstrap resamples of seeds ({analysis.level:.0%} intervals). `paired_differences` compares",
        "cells that differ in exactly one grouping column, seed by seed on the seeds both played.",
    ]
    return "\n".join(lines)


def _count(analysis: Analysis, where: pl.Expr | None = None) -> int:
    g = analysis.scan_per_game
    return (g if where is None else g.filter(where)).select(pl.len()).collect().item()


def limitations_section(analysis: Analysis) -> str:
    items = []
    seeds = len(_distinct(analysis, "seed")) if _count(analysis) else 0
    if seeds < 2:
        items.append("Fewer than two seeds: bootstrap intervals are empty (a single seed gives no spread).")
    elif seeds < 20:
        items.append(f"Only {seeds} seeds: intervals rest on few clusters and are rough.")
    unknown = _count(analysis, ~pl.col("known"))
    if unknown:
        items.append(f"{unknown} game(s) ended in a technical failure: unknown, unscored, left out of every estimate; "
                     "resuming the sweep re-runs them.")
    providers = set(analysis.sweep.scan("calls").select(pl.col("provider").unique()).collect()["provider"].to_list())
    if providers & {"strategy", "replay", "sim"}:
        items.append(f"Some players are not language models (providers: {', '.join(sorted(providers))}); "
                     "strategy agents are deterministic, so within-cell spread comes only from seeds.")
    items += [
        "Refusals are not instrumented: a refusal surfaces as invalid replies and, after the repairs, a format failure.",
        "Distances to the frontier are in raw utility points of the game config; compare them within one game only.",
        "Conditional metrics (efficiency, shares, rounds to agreement) count deals only; their denominators can be small.",
    ]
    return "## Limitations\n\n" + "\n".join(f"- {i}" for i in items)


def provenance_section(analysis: Analysis) -> str:
    s = analysis.sweep
    commit, dirty = git_commit()
    comps = s.manifest.get("components", {})
    lines = [
        "## Provenance",
        "",
        f"- Grid: `{s.manifest.get('grid')}`, sweep created {s.manifest.get('created')}; the full spec is "
        "`spec/manifest.json`, copied from the sweep folder.",
        f"- Code commit at export: `{commit}`" + (" (with local changes)" if dirty else ""),
    ]
    if "git_commit" in s.manifest:
        lines.append(f"- Code commit when the sweep started: `{s.manifest['git_commit']}`")
    for key, part in comps.items():
        if key.startswith("game ") and isinstance(part, dict):
            lines.append(f"- Prompt hash for {key}: `{part.get('prompts')}`")
    reported = Counter()
    for row in s.scan("calls").group_by("provider", "model", "model_version").len().collect().iter_rows(named=True):
        reported[(row["provider"], row["model"], row["model_version"] or "(not reported)")] += row["len"]
    rows = [[p, m, v, n] for (p, m, v), n in sorted(reported.items())]
    lines += ["", "Models as configured and as the providers reported them:", "",
              _table(["Provider", "Model", "Reported model", "Calls"], rows)]
    return "\n".join(lines)


def card(analysis: Analysis, written: dict[str, tuple[str, int]], raw_complete: bool = True) -> str:
    s = analysis.sweep
    statuses = dict(analysis.scan_per_game.group_by("status").len().collect().iter_rows())
    structure = _table(["Config", "Rows", "Unit"], [[f"`{k}`", n, UNITS[k]] for k, (_, n) in written.items()])
    return "\n\n".join([
        front_matter(analysis, written).rstrip(),
        f"# bargain_ray sweep `{s.name}`",
        f"{sum(statuses.values())} negotiation games played by bargain_ray ("
        + ", ".join(f"{k} {v}" for k, v in sorted(statuses.items())) + "). Every game keeps the private brief each "
        "side received, every request and reply, every invalid attempt and the rule it broke, and the exact outcome.",
        "## Structure\n\n" + structure,
        "```python\nfrom datasets import load_dataset\n\n"
        'games = load_dataset("parquet", data_files="data/games.parquet", split="train")\n\n'
        'import polars as pl\ncells = pl.read_parquet("metrics/metrics_by_cell.parquet")\n```',
        "Loading this folder by config name (`load_dataset(\"path/to/dataset\", \"games\")`) also works, but "
        "`datasets` caches such loads under the folder's name (`dataset`) without telling two sweeps apart: "
        "with several sweeps, load the parquet files as above or pass a distinct `cache_dir`.",
        "Raw transcripts live in `raw/`, one JSONL file per game named `{unit_id}.jsonl`: a `header` record "
        "(unit, game config, prompt hash, the private brief of each role), one `turn` record per turn with its "
        "calls (requests and replies, invalid attempts included), and a `result` record (the outcome record). "
        + ("" if raw_complete else f"This sweep is large: `raw/` holds the games the report shows (the first {SAMPLE} of "
           "each cell); every game's record is in the sweep folder's `journal.jsonl`, one JSON object per line. ")
        + "They are not a loadable config: the three record types have different schemas. Everything in `data/` "
        "and `metrics/` is derived from them.",
        fields_section(analysis, written),
        design_section(analysis),
        limitations_section(analysis),
        provenance_section(analysis),
    ]) + "\n"
