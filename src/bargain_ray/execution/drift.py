"""The drift guard: every answer of a model compared, as it comes, with the sweep's first answer of that model.

Providers change what answers behind one model name. Each reply records what its provider reported as served
(``core.records.Served``: the model string, OpenAI's ``system_fingerprint``, a router's upstream provider). The
first answer of each ``provider:model`` in the sweep is its reference, recorded in the manifest
(``Manifest.served``; a folder from before references were kept takes its first journaled answer). A later answer
that reports another value of a field both report is drift: said once per new version on the terminal, counted
in the summary, marked in ``calls.parquet``'s ``drift`` column, shown by the live view and the report.
``run.on_drift=stop`` then stops the run as a budget stop does: no call starts, exit 1.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from tqdm import tqdm

from bargain_ray.core.errors import Failure, FailureKind
from bargain_ray.core.records import CallMeta, Served
from bargain_ray.store import read_manifest
from bargain_ray.store.calls import CallEntry, Entry
from bargain_ray.store.manifest import ServedReference, write_manifest


@dataclass(eq=False)
class Drift:
    """One model served as one version other than its reference: the first such call, and how many."""

    model: str
    reference: ServedReference
    served: Served
    call_id: str
    at: datetime | None
    calls: int = 1

    def line(self) -> str:
        """``drift: sim:m was served as m-v2 from call X (at T), not as the sweep's reference m (its first
        answer, call Y)``."""
        at = f" at {self.at:%Y-%m-%d %H:%M:%S} UTC" if self.at else ""
        return (f"drift: {self.model} was served as {self.served.shown()} from call {self.call_id}{at}, not as the "
                f"sweep's reference {self.reference.shown()} (its first answer, call {self.reference.call_id})")


class DriftWatch:
    """The references of the sweep's models and the drifts seen; the driver hands it every answer once."""

    def __init__(self, path: Path, on_drift: str) -> None:
        self.path = path
        self.stops = on_drift == "stop"
        self.references: dict[str, ServedReference] = dict(read_manifest(path).served)
        self.drifts: dict[tuple[str, Served], Drift] = {}
        """Every drift of the sweep, earlier invocations' too, with its calls."""
        self.now: list[Drift] = []
        """The drifts this invocation met (each said once): only these stop it."""

    def seed(self, entries: Iterable[Entry]) -> None:
        """Take the first journaled answer of each model without a recorded reference (a folder from before
        references were kept), then compare every later one: drift earlier invocations met is drift too."""
        for entry in entries:
            if isinstance(entry, CallEntry):
                self.see(entry.reply, entry.call_id, quiet=True)

    def see(self, call: CallMeta, call_id: str, quiet: bool = False) -> Drift | None:
        """Compare one answer with its model's reference (setting it, and recording it in the manifest, when it is
        the model's first); a new drift is said on the terminal unless ``quiet`` and returned."""
        served = call.served()
        if call.provider == "strategy" or not served.reported():
            return None
        key = call.key
        reference = self.references.get(key)
        if reference is None:
            self.references[key] = ServedReference(**served.model_dump(), call_id=call_id, answered_at=call.answered_at)
            write_manifest(self.path, read_manifest(self.path).model_copy(update={"served": self.references}))
            return None
        if not served.changed_from(reference):
            return None
        drift = self.drifts.get((key, served))
        if drift is None:
            drift = self.drifts[(key, served)] = Drift(key, reference, served, call_id, call.answered_at, calls=0)
        drift.calls += 1
        if quiet or drift in self.now:
            return None
        self.now.append(drift)
        tqdm.write(drift.line() + ("; run.on_drift=stop: the run stops, no call starts" if self.stops else
                                   "; run.on_drift=warn: the sweep goes on, calls.parquet's drift column marks such "
                                   "calls"))
        return drift

    @property
    def failure(self) -> Failure | None:
        """What stops the run under ``run.on_drift=stop`` once a model drifted (the first drift named)."""
        if not self.stops or not self.now:
            return None
        return Failure(kind=FailureKind.DRIFT, detail=self.now[0].line())

    def lines(self) -> list[str]:
        """The summary's lines: each drift with its count of calls."""
        return [f"{d.line()}: {d.calls} calls" for d in self.drifts.values()]
