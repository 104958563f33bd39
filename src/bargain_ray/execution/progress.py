"""Running totals of a sweep: the progress bar's figures and the end summary."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass
class Tally:
    """Running totals for the progress bar and the end summary."""

    games: int = 0
    statuses: dict[str, int] = field(default_factory=dict)
    cost_usd: float = 0.0
    per_model: dict[str, dict[str, float]] = field(default_factory=dict)
    batches: int = 0

    def add(self, record: dict[str, Any]) -> None:
        self.games += 1
        status = record["outcome"]["status"]
        self.statuses[status] = self.statuses.get(status, 0) + 1
        for call in record["calls"]:
            m = self.per_model.setdefault(
                f"{call['provider']}:{call['model']}",
                {"calls": 0, "input_tokens": 0, "output_tokens": 0, "cost_usd": 0.0},
            )
            m["calls"] += 1
            m["input_tokens"] += call["usage"]["input_tokens"]
            m["output_tokens"] += call["usage"]["output_tokens"]
            m["cost_usd"] += call["cost_usd"]
            self.cost_usd += call["cost_usd"]


def summary(tally: Tally, path: Path, finished_before: int, interrupted: bool, counts: dict[str, int]) -> str:
    lines = [
        f"sweep folder: {path}",
        f"games played now: {tally.games}  (finished before: {finished_before})",
        "statuses: " + ", ".join(f"{k} {v}" for k, v in sorted(tally.statuses.items())),
    ]
    for model, m in sorted(tally.per_model.items()):
        lines.append(
            f"  {model}: {int(m['calls'])} calls, {int(m['input_tokens'])} input / "
            f"{int(m['output_tokens'])} output tokens, ${m['cost_usd']:.4f}"
        )
    if tally.batches:
        lines.append(f"batches sent through batch APIs: {tally.batches}")
    lines.append(f"tables: {', '.join(f'{k}.parquet {v} rows' for k, v in counts.items())}")
    if interrupted:
        lines.append("interrupted: run the same command again to resume")
    return "\n".join(lines)
