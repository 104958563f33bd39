"""The call journal's group commit (``GroupAppend``): one write for the appends that meet, none answered early."""

from __future__ import annotations

import asyncio

import ray

from bargain_ray.execution.calljournal import JournalActor, Ledger
from bargain_ray.store.calls import SpendEntry, calls_journal_path, read_call_lines


def test_a_runners_concurrent_calls_are_journaled_in_few_writes_and_each_returns_with_its_line_on_disk(
        tmp_path, ray_session):
    class CountedJournal(JournalActor):
        """The call journal's actor as the sweep runs it, counting the appends it is sent (defined here: Ray
        pickles it by value, as the workers cannot import a test module)."""

        def __init__(self, file: str) -> None:
            super().__init__(file)
            self.appends = 0

        def append(self, *entries: SpendEntry) -> None:
            self.appends += 1
            super().append(*entries)

        def count(self) -> int:
            return self.appends

    journal = ray.remote(num_cpus=0)(CountedJournal).remote(str(calls_journal_path(tmp_path)))
    ledger = Ledger(journal)
    entries = [SpendEntry(unit_id=f"u{i}", call_id=f"c{i}", cost_usd=0.01) for i in range(60)]

    async def record(entry: SpendEntry) -> set[str]:
        await ledger.record(entry)
        return {e.call_id for e in read_call_lines(tmp_path)}  # what is on disk the moment the call goes on

    async def every() -> list[set[str]]:
        return await asyncio.gather(*(record(e) for e in entries))

    try:
        on_disk = asyncio.run(every())
        writes = ray.get(journal.count.remote())
    finally:
        ray.kill(journal)
    assert all(e.call_id in seen for e, seen in zip(entries, on_disk, strict=True))
    assert [e.call_id for e in read_call_lines(tmp_path)] == [e.call_id for e in entries]  # each once, in order
    assert writes <= 3, f"{writes} writes for {len(entries)} calls that met"
