"""The limiter's state in-process (no Ray): announced pauses hold every call, slow start, OpenAI's token total,
the provider's bucket read from its reports, overloads that back off the request and not the key.

Each runs in virtual time (``in_virtual_time``): the limiter's clock is its event loop's, and that loop's clock moves
only when every task waits, straight to the next timer. A pace, a wait or a window is then exact, whatever the
machine's load, and takes no real time."""

from __future__ import annotations

import asyncio
import selectors
import time
from collections.abc import Coroutine
from datetime import UTC, datetime
from typing import Any, TypeVar

import pytest

from bargain_ray.clients.bucket import HOLD_S
from bargain_ray.clients.limiter import OVERLOAD_STREAK, Feedback, KeyState, Release
from bargain_ray.config import Limits

T = TypeVar("T")


class _Jumps(selectors.DefaultSelector):
    """The loop's selector, whose waits take no time: with nothing ready, the clock jumps by the wait the loop asked
    for (to its next timer). Each turn of the loop also moves it by a nanosecond, as a real clock never stands still
    (a wait too small to move a float clock would otherwise come round for ever)."""

    def __init__(self) -> None:
        super().__init__()
        self.now = 1000.0  # as if the machine had been up a while: a limiter's zero times lie in the past

    def select(self, timeout: float | None = None) -> list[tuple[selectors.SelectorKey, int]]:
        if timeout is None:
            raise RuntimeError("every task waits on something no timer will bring: the test can never end")
        ready = super().select(0)
        self.now += 1e-9 if ready else max(timeout, 1e-9)
        return ready


class VirtualTimeLoop(asyncio.SelectorEventLoop):
    def __init__(self) -> None:
        self.jumps = _Jumps()
        super().__init__(self.jumps)

    def time(self) -> float:
        return self.jumps.now


def in_virtual_time(main: Coroutine[Any, Any, T]) -> T:
    with asyncio.Runner(loop_factory=VirtualTimeLoop) as runner:
        return runner.run(main)


def now() -> float:
    return asyncio.get_running_loop().time()


def key_state(limits: Limits) -> KeyState:
    """A key's limiter on the running loop's clock."""
    return KeyState(limits, clock=now)


async def handed_out(state: KeyState, ticket: int, tokens: int = 10, max_tokens: int = 0) -> float:
    await state.acquire(ticket, tokens, max_tokens)
    return now()


@pytest.mark.parametrize("feedback", [
    Feedback(status=429, headers={"retry-after": "0.3"}),
    Feedback(status=429, headers={"retry-after-ms": "300"}),
    Feedback(status=429, headers={"x-ratelimit-remaining-requests": "0", "x-ratelimit-reset-requests": "300ms"}),
    Feedback(status=200, headers={"retry-after": "0.3"}),
], ids=["retry-after", "retry-after-ms", "429-reset", "200-retry-after"])
def test_no_call_is_handed_out_inside_an_announced_wait(feedback: Feedback) -> None:
    """Calls queued for a slot, sleeping on the pace, or arriving later: none goes before the wait ends."""

    async def run() -> tuple[float, list[float]]:
        state = key_state(Limits(requests_per_minute=120, max_in_flight=1))
        await state.acquire(1, 10)
        queued = [asyncio.create_task(handed_out(state, t)) for t in (2, 3, 4)]
        await asyncio.sleep(0.05)
        state.release(1, feedback)
        end = state.paused_until
        late = asyncio.create_task(handed_out(state, 5))
        times = []
        for ticket, task in zip((2, 3, 4), queued, strict=True):
            times.append(await task)
            state.release(ticket, Feedback(status=200))
        times.append(await late)
        return end, times

    end, times = in_virtual_time(run())
    assert end > 0 and all(t >= end for t in times)
    assert times == sorted(times)  # in arrival order


def test_a_wait_announced_while_a_call_sleeps_on_the_pace_holds_it() -> None:
    async def run() -> tuple[float, float]:
        state = key_state(Limits(requests_per_minute=60, max_in_flight=4))  # one a second
        await state.acquire(1, 10)
        sleeping = asyncio.create_task(handed_out(state, 2))
        await asyncio.sleep(0.05)
        state.release(1, Feedback(status=429, headers={"retry-after": "1.5"}))
        return state.paused_until, await sleeping

    end, went = in_virtual_time(run())
    assert went >= end


def test_slow_start_until_a_limit_is_known() -> None:
    async def run() -> tuple[list[float], list[int], KeyState]:
        state = key_state(Limits(max_in_flight=64))  # no limits: unknown until a response says
        windows, handed = [state.window], []
        for ticket in range(1, 5):
            await state.acquire(ticket, 10)
            state.release(ticket, Feedback(status=200))
            windows.append(state.window)
        tasks = [asyncio.create_task(state.acquire(t, 10)) for t in range(10, 30)]
        await asyncio.sleep(0.05)
        handed.append(len(state.in_flight))  # the window caps what is handed out
        state.release(10, Feedback(status=429))  # first limit signal: halve, then grow by one per window
        windows.append(state.window)
        for t in range(11, 30):
            state.release(t, Feedback(status=200))
            await asyncio.sleep(0)
        await asyncio.gather(*tasks)
        return windows, handed, state

    windows, handed, state = in_virtual_time(run())
    assert windows == [1, 2, 4, 8, 16, 8]
    assert handed == [16]
    assert not state.slow_start and 8 < state.window < 16


def test_limits_learned_from_the_first_reply_end_slow_start() -> None:
    async def run() -> KeyState:
        state = key_state(Limits(max_in_flight=32))
        assert state.slow_start and state.window == 1
        await state.acquire(1, 10)
        state.release(1, Feedback(status=200, headers={"anthropic-ratelimit-requests-limit": "300"}))
        return state

    state = in_virtual_time(run())
    assert not state.slow_start and state.window == 32
    assert state.paces["requests_per_minute"].per_minute == 300


def test_configured_looser_than_announced_paces_by_the_announced() -> None:
    async def run() -> KeyState:
        state = key_state(Limits(requests_per_minute=6000))
        await state.acquire(1, 10)
        state.release(1, Feedback(status=200, headers={"x-ratelimit-limit-requests": "600"}))
        return state

    assert in_virtual_time(run()).paces["requests_per_minute"].per_minute == 600


def test_openai_token_limit_is_paced_as_input_plus_max_tokens() -> None:
    """OpenAI counts each request's input and max_tokens against its token total: that is what is debited,
    and only the input estimate is corrected afterwards (the output is not what it counted)."""
    openai = {"x-ratelimit-limit-requests": "6000", "x-ratelimit-limit-tokens": "6000"}

    async def run() -> tuple[KeyState, float, float, float]:
        state = key_state(Limits(max_in_flight=8))
        await state.acquire(1, 10)
        state.release(1, Feedback(status=200, headers=openai, input_tokens=10, output_tokens=5))
        pace = state.paces["tokens_per_minute"]
        await asyncio.sleep(0.3)  # longer than the bucket's 0.25 s of rate: full (25 tokens)
        pace.wait_s(0, now())  # its level brought up to now
        full = pace.level
        await state.acquire(2, 50, 150)
        debited = full - pace.level
        state.release(2, Feedback(status=200, headers=openai, input_tokens=60, output_tokens=400))
        corrected = full - pace.level - debited
        return state, debited, corrected, pace.wait_s(200, pace.stamp)

    state, debited, corrected, wait = in_virtual_time(run())
    assert "input_tokens_per_minute" not in state.paces and "output_tokens_per_minute" not in state.paces
    assert debited == pytest.approx(200)  # 50 in + 150 max_tokens
    assert corrected == pytest.approx(10)  # 60 - 50 input; the 400 output tokens are not counted
    assert wait == pytest.approx((25 + 210 - 25) / 100)  # the debt at 100 tokens/s


def anthropic_report(limit: int, remaining: int, reset_in_s: float) -> dict[str, str]:
    reset = datetime.fromtimestamp(time.time() + reset_in_s, UTC).isoformat()
    return {"anthropic-ratelimit-requests-limit": str(limit), "anthropic-ratelimit-requests-remaining": str(remaining),
            "anthropic-ratelimit-requests-reset": reset}


async def went_within(state: KeyState, ticket: int, seconds: float) -> bool:
    try:
        await asyncio.wait_for(state.acquire(ticket, 10), seconds)
    except TimeoutError:
        return False
    return True


def test_a_reply_reporting_none_left_frees_the_next_call_after_one_calls_refill() -> None:
    """The reset is the time of full replenishment (30 s away here), not when the next call may go: at
    600 requests a minute that is one call's refill, 0.1 s, and the ``HOLD_S`` of refill each call waits for
    beyond its own need (not the reset)."""

    async def run() -> float:
        state = key_state(Limits(max_in_flight=4))
        await state.acquire(1, 10)
        state.release(1, Feedback(status=200, headers=anthropic_report(600, 0, 30.0)))
        released = now()
        assert await went_within(state, 2, 5.0), "held until the reset"
        return now() - released

    assert in_virtual_time(run()) == pytest.approx(0.1 + HOLD_S)


def test_the_reported_level_is_spent_at_once_then_paced() -> None:
    """A reply reporting 50 left of 60 a minute lets 50 calls go together (the provider's bucket holds them);
    the 51st waits for the refill (one a second)."""

    async def run() -> tuple[int, bool]:
        state = key_state(Limits(max_in_flight=100))
        await state.acquire(1, 10)
        state.release(1, Feedback(status=200, headers=anthropic_report(60, 50, 10.0)))
        burst = [asyncio.create_task(state.acquire(t, 10)) for t in range(2, 52)]
        done, _ = await asyncio.wait(burst, timeout=2.0)
        return len(done), await went_within(state, 99, 0.3)

    went, next_went = in_virtual_time(run())
    assert went == 50 and not next_went


def test_a_bucket_smaller_than_the_limit_is_learned_from_its_reset() -> None:
    """OpenAI-style report: 300 a minute, 2 left, full again in 600 ms: the bucket holds 2 + 1 + 5 a second x 0.6 s,
    not 300. After a pause that refills it, a handful of calls go at once (those its 6 holds with ``HOLD_S`` of
    refill to spare, 1.5 each), never the whole minute's limit; the next goes a refill later."""
    report = {"x-ratelimit-limit-requests": "300", "x-ratelimit-remaining-requests": "2",
              "x-ratelimit-reset-requests": "600ms"}

    async def run() -> tuple[float, int]:
        state = key_state(Limits(max_in_flight=100))
        await state.acquire(1, 10)
        state.release(1, Feedback(status=200, headers=report))
        await asyncio.sleep(1.5)  # far longer than the 600 ms to full
        burst = [asyncio.create_task(state.acquire(t, 10)) for t in range(2, 40)]
        done, pending = await asyncio.wait(burst, timeout=HOLD_S / 2)  # less than the next call's refill (0.1 s)
        for task in pending:
            task.cancel()
        return state.paces["requests_per_minute"].capacity, len(done)

    capacity, went = in_virtual_time(run())
    assert capacity == pytest.approx(6)
    assert went == 5


def test_overloads_back_off_the_request_not_the_key_unless_they_persist() -> None:
    """One 529 or 500 leaves the window (the key's pace) as it was; ``OVERLOAD_STREAK`` in a row halve it; a
    success between resets the count. A 429 halves it at once."""

    async def run() -> list[float]:
        state = key_state(Limits(requests_per_minute=60_000, max_in_flight=16))
        windows = [state.window]
        for ticket, status in enumerate((529, 500, 200, 529, 503), start=1):
            await state.acquire(ticket, 10)
            state.release(ticket, Feedback(status=status))
        windows.append(state.window)
        for ticket in range(10, 10 + OVERLOAD_STREAK - 2):  # the streak (529, 503, ...) reaches the threshold
            await state.acquire(ticket, 10)
            state.release(ticket, Feedback(status=529))
        windows.append(state.window)
        state.last_cut = 0.0
        await state.acquire(20, 10)
        state.release(20, Feedback(status=429))
        windows.append(state.window)
        return windows

    assert in_virtual_time(run()) == [16, 16, 8, 4]


def test_a_report_never_leaves_more_than_the_provider_can_have() -> None:
    """A reply answering a call handed out 0.5 s ago reports 20 left (another key spent the rest) after ten
    more calls went. Read as the call arrived, 20 + the refill - those ten is left now; read as it was answered,
    20. Either way no more than 20 is left, so the client's bucket (which believed 53) holds at most that."""
    report = {"x-ratelimit-limit-requests": "600", "x-ratelimit-reset-requests": "100ms"}

    async def run() -> float:
        state = key_state(Limits(max_in_flight=16))
        await state.acquire(1, 10)
        state.release(1, Feedback(status=200, headers={**report, "x-ratelimit-remaining-requests": "59"}))
        for ticket in range(2, 13):  # the call the report answers, then ten more
            await state.acquire(ticket, 10)
        await asyncio.sleep(0.5)
        state.release(2, Feedback(status=200, headers={**report, "x-ratelimit-remaining-requests": "20"}))
        pace = state.paces["requests_per_minute"]
        return pace.level

    assert in_virtual_time(run()) <= 20


def test_the_snapshot_is_the_limiters_own_model_and_limiter_json_holds_its_rows(tmp_path) -> None:
    """Issue 17: the store parsed the actor's snapshot as dicts; now the limiter reports its model and the file
    keeps the rows made from it, read back equal."""
    from bargain_ray.clients.limiter import Limiters
    from bargain_ray.clients.snapshot import KeySnapshot, key_limits
    from bargain_ray.store.status import read_limiter, write_limiter

    key = "anthropic:0123456789ab:claude-x"

    async def run() -> tuple[dict[str, KeySnapshot], float, float]:
        limiters = Limiters()
        ticket = await limiters.acquire(key, Limits(requests_per_minute=60), 10)
        before = time.monotonic()
        limiters.settle(Release(key=key, ticket=ticket, feedback=Feedback(status=200, headers={
            "anthropic-ratelimit-requests-limit": "60", "anthropic-ratelimit-requests-remaining": "20",
            "retry-after": "5"})))
        return await limiters.snapshot(), before, time.monotonic()

    snap, before, after = asyncio.run(run())
    state = snap[key]
    assert before + 5 <= state.paused_until <= after + 5  # the announced 5 s, from when the reply was read
    assert isinstance(state, KeySnapshot) and state.in_flight == 0 and not state.slow_start
    assert state.paces == {"requests_per_minute": 60.0}
    assert state.buckets["requests_per_minute"].capacity == 60.0 and state.buckets["requests_per_minute"].level <= 20
    rows = key_limits(snap, {"claude-x", "other"}, after)
    assert [(r.key, r.in_flight) for r in rows] == [("anthropic:claude-x", 0)]
    assert rows[0].paused_for_s == pytest.approx(state.paused_until - after)
    write_limiter(tmp_path, rows)
    assert read_limiter(tmp_path).keys == rows


def test_releases_ride_on_a_grant_as_models_and_other_limits_reconfigure_the_key() -> None:
    """Issue 17: what a caller sends the actor are models (``Limits``, ``Release``), not dicts. Releases that ride
    on a grant free their slots before its calls queue; limits equal to the last ones leave the key as it is,
    tighter ones cut its window at once."""
    from bargain_ray.clients.limiter import Limiters

    key = "anthropic:0123456789ab:claude-y"
    two = Limits(max_in_flight=2, requests_per_minute=60_000)

    async def grant(limiters: Limiters, limits: Limits, needs: list, settled: list, want: int) -> list:
        granted: list = []
        while len(granted) < want:  # what is handed out after an answer comes with the next grant
            _, more = await asyncio.wait_for(limiters.grant(key, limits, None, "w", None, needs, settled), 10)
            granted += more
            needs, settled = [], []
        return [ticket for _, ticket in sorted(granted)]

    def done(ticket: int) -> Release:
        return Release(key=key, ticket=ticket, feedback=Feedback(status=200))

    async def run() -> tuple:
        limiters = Limiters()
        first = await grant(limiters, two, [(1, 10, 0), (2, 10, 0)], [], 2)
        same = Limits(max_in_flight=2, requests_per_minute=60_000)  # equal, another object (as unpickled)
        third = await grant(limiters, same, [(3, 10, 0)], [done(first[0])], 1)
        kept = (await limiters.snapshot())[key]
        one = Limits(max_in_flight=1, requests_per_minute=60_000)
        fourth = await grant(limiters, one, [(4, 10, 0)], [done(first[1]), done(third[0])], 1)
        return kept, (await limiters.snapshot())[key], limiters.keys[key].limits, fourth

    kept, cut, limits, fourth = asyncio.run(run())
    assert kept.in_flight == 2 and kept.window == 2.0
    assert cut.in_flight == 1 and cut.window == 1.0 and limits.max_in_flight == 1 and len(fourth) == 1
