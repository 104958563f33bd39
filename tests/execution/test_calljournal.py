"""The call journal's group commit (``GroupAppend``): one write for the appends that meet, none answered early."""

from __future__ import annotations

import asyncio

import ray

from bargain_ray.execution.calljournal import Ledger
from bargain_ray.execution.journal_actor import JournalActor
from bargain_ray.store.calls import SpendEntry, calls_journal_path, read_call_lines


def test_a_runners_concurrent_calls_are_journaled_in_few_writes_and_each_returns_with_its_line_on_disk(
        tmp_path, ray_session):
    class CountedJournal(JournalActor):
        """The call journal's actor as the sweep runs it, counting the appends it is sent (defined here: Ray
        pickles it by value, as the workers cannot import a test module)."""

        def __init__(self, file: str) -> None:
            super().__init__(file)
            self.appends = 0

        def append_lines(self, *lines: bytes) -> None:
            self.appends += 1
            super().append_lines(*lines)

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
    assert 1 <= writes <= 3, f"{writes} writes for {len(entries)} calls that met"


def test_a_caller_cancelled_while_its_write_is_in_flight_still_has_its_entry_written_once(tmp_path, ray_session):
    """A game stopped while its reply is being journaled (a halt, a lost runner's cancel): the entry was paid, so it
    is written all the same, once, and the cancelled caller's failure is nobody's unread exception."""

    @ray.remote(num_cpus=0)
    class SlowJournal(JournalActor):
        """The call journal's actor, answering an append only once the test lets it (an event, not a clock)."""

        def __init__(self, file: str) -> None:
            super().__init__(file)
            self.gate = asyncio.Event()

        async def append_lines(self, *lines: bytes) -> None:
            await self.gate.wait()
            super().append_lines(*lines)

        async def release(self) -> None:
            self.gate.set()

    journal = SlowJournal.remote(str(calls_journal_path(tmp_path)))
    ledger = Ledger(journal)
    first, second = (SpendEntry(unit_id=f"u{i}", call_id=f"c{i}", cost_usd=0.01) for i in range(2))
    unread: list[dict] = []

    async def run() -> None:
        asyncio.get_running_loop().set_exception_handler(lambda _, context: unread.append(context))
        held = asyncio.ensure_future(ledger.record(first))
        queued = asyncio.ensure_future(ledger.record(second))  # meets the first's write in flight: queued behind it
        await asyncio.sleep(0)
        queued.cancel()
        held.cancel()
        await journal.release.remote()
        await ledger.record(SpendEntry(unit_id="u2", call_id="c2", cost_usd=0.01))  # returns once the queue is out

    try:
        asyncio.run(run())
    finally:
        ray.kill(journal)
    assert [e.call_id for e in read_call_lines(tmp_path)] == ["c0", "c1", "c2"]
    assert unread == []
