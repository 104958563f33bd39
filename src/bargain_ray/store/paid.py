"""What a sweep folder paid, read from its call journal: the one record of it, read one way by every reader.

A paid call is a line of ``calls.journal.jsonl`` the moment its reply returns (``store.calls``), whatever becomes
of its game (a stop, a lost runner, a game run again), so the journal is what was paid. The terminal's bar and
summary (the driver tails the journal), the live view, the budget's start and the dataset card all tally it here:
per model, named ``provider:model`` (``core.records.model_key``), its calls, input and output tokens, dollars, the
429s its calls met before they were answered, and its calls served as another version than its reference (drift).

What counts as paid (ours, stated once here): a model's reply (``CallEntry``) and the cost of one whose reply is not
journaled (``SpendEntry``, ``run.journal_calls=false``), so the figures are the same in both modes. A void line is
no call (the replies it takes out of replay stay paid, each counted as its own line); a strategy agent's reply is
journaled for replay and never paid. Calls that failed after their retries were never answered, so never paid: no
line holds them (the driver counts them from their games).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime
from pathlib import Path

from pydantic import BaseModel

from bargain_ray.config.schema import NO_API
from bargain_ray.core.records import Served
from bargain_ray.store.calls import CallEntry, Entry, SpendEntry, parse_call_line, read_call_lines
from bargain_ray.store.jsonl import CorruptJournal, complete_size, read_tail
from bargain_ray.store.paths import CALLS_JOURNAL


class PaidCall(BaseModel):
    """One paid call of the journal, whichever line holds it."""

    unit_id: str
    call_id: str
    model: str
    """``provider:model``."""
    input_tokens: int
    output_tokens: int
    cost_usd: float
    rate_limited: int
    """429s met by its failed attempts before it was answered."""
    served: Served
    latency_s: float = 0.0
    answered_at: datetime | None = None
    """When its answer came back (UTC): its request went ``latency_s`` before; None where none is recorded (a cost
    journaled alone)."""


def paid_call(entry: Entry) -> PaidCall | None:
    """A journal line as the call it paid for; None for a void line, a strategy agent's reply and a person's."""
    if isinstance(entry, SpendEntry):
        return PaidCall(unit_id=entry.unit_id, call_id=entry.call_id, model=entry.model,
                        input_tokens=entry.input_tokens, output_tokens=entry.output_tokens, cost_usd=entry.cost_usd,
                        rate_limited=entry.rate_limited, served=entry.served)
    if not isinstance(entry, CallEntry) or entry.reply.provider in NO_API:
        return None
    reply = entry.reply
    return PaidCall(unit_id=entry.unit_id, call_id=entry.call_id, model=reply.key,
                    input_tokens=reply.usage.input_tokens, output_tokens=reply.usage.output_tokens,
                    cost_usd=reply.cost_usd, rate_limited=reply.rate_limited,
                    served=reply.served(), latency_s=reply.latency_s, answered_at=reply.answered_at)


class ModelSpend(BaseModel):
    """One model's paid calls."""

    model: str
    """``provider:model``."""
    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    rate_limited: int = 0
    """429s met on the way by its paid calls."""
    drifted: int = 0
    """Its calls served as another version than its reference."""


class Drift(BaseModel):
    """A model's calls served as one version other than its reference: how many, and the first."""

    model: str
    reference: Served
    served: Served
    calls: int
    first_call: str
    first_at: datetime | None


class Spend(BaseModel):
    """Paid calls tallied per model, with the drifts among them.

    ``references``: each model's reference for drift (the manifest's ``served``); a model without one takes its
    first answer that reports what served it, as the drift guard does (``execution.drift``)."""

    models: dict[str, ModelSpend] = {}
    drifts: dict[str, Drift] = {}
    """By model and served version (``Drift.model`` and ``Served.shown``)."""
    references: dict[str, Served] = {}

    @property
    def calls(self) -> int:
        return sum(m.calls for m in self.models.values())

    @property
    def cost_usd(self) -> float:
        return sum(m.cost_usd for m in self.models.values())

    def refer(self, references: Mapping[str, Served]) -> None:
        """Take the references recorded since (the manifest's); a model keeps the one it has."""
        self.references = dict(references) | self.references

    def add(self, entry: Entry) -> PaidCall | None:
        """Tally one journal line; the call it paid for, if any."""
        call = paid_call(entry)
        if call is None:
            return None
        m = self.models.setdefault(call.model, ModelSpend(model=call.model))
        m.calls += 1
        m.input_tokens += call.input_tokens
        m.output_tokens += call.output_tokens
        m.cost_usd += call.cost_usd
        m.rate_limited += call.rate_limited
        if call.served.reported():
            reference = self.references.setdefault(call.model, call.served)
            if call.served.changed_from(reference):
                m.drifted += 1
                key = f"{call.model} {call.served.shown()}"
                drift = self.drifts.setdefault(key, Drift(model=call.model, reference=reference, served=call.served,
                                                          calls=0, first_call=call.call_id, first_at=call.answered_at))
                drift.calls += 1
        return call


def spend_of(entries: Iterable[Entry], references: Mapping[str, Served] | None = None) -> Spend:
    """The paid calls among ``entries``, tallied."""
    spend = Spend(references=dict(references or {}))
    for entry in entries:
        spend.add(entry)
    return spend


def read_spend(path: Path, references: Mapping[str, Served] | None = None) -> Spend:
    """What the sweep folder ``path`` has paid, from its whole call journal."""
    return spend_of(read_call_lines(path), references)


class SpendTail:
    """A folder's call journal followed from byte ``start`` as it grows: each complete line read once, typed, and
    its paid call tallied in ``spend``."""

    def __init__(self, path: Path, start: int = 0, references: Mapping[str, Served] | None = None) -> None:
        self.file = path / CALLS_JOURNAL
        self.offset = start
        self.spend = Spend(references=dict(references or {}))
        self.refused: list[CorruptJournal] = []
        """The lines read that were not entries (``store.jsonl.read_tail``), oldest first, until a reader takes them."""

    @classmethod
    def from_now(cls, path: Path) -> SpendTail:
        """Following the lines written from now on."""
        return cls(path, complete_size(path / CALLS_JOURNAL))

    def read(self) -> list[Entry]:
        """The entries written since the last read (a bounded step of them: call again until none), tallied; a line
        that is not an entry is left out, its refusal kept in ``refused`` for the reader to show."""
        entries, refused, self.offset = read_tail(self.file, self.offset, parse_call_line)
        self.refused.extend(refused)
        for entry in entries:
            self.spend.add(entry)
        return entries
