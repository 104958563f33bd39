"""What a provider's rate-limit headers announce: its limits, and how long no request may be sent.

Anthropic sends ``anthropic-ratelimit-{requests,input-tokens,output-tokens,tokens}-{limit,remaining,reset}``
(reset as an RFC 3339 time) and ``retry-after`` on 429; OpenAI sends
``x-ratelimit-{limit,remaining,reset}-{requests,tokens}`` (reset as a duration: ``250ms``, ``1s``,
``6m0s``, ``1m30.5s``) and, not always, ``retry-after`` / ``retry-after-ms``. ``retry-after`` is
seconds or an HTTP date (RFC 9110).

Both providers document a reset as the time until the limit is *fully* replenished (its bucket refills
continuously), so a reply reporting ``remaining: 0`` announces no wait: the next request may go once one
request's refill has come (``clients.bucket.Pace`` models that). Which wait a response announces is our
reading: ``retry-after`` when sent; else, on a 429, until every announced reset (the response does not say
which limit refused, and the provider has just said no).

Every number is bounded on this one way in (ours): a wait longer than ``MAX_WAIT_S`` (a ``retry-after``, a reset,
infinity among them) or a limit so low that one request's refill takes longer (below ``MIN_PER_MINUTE``) is left
out, as an unreadable value is, and kept in ``Announced.beyond``; a failed attempt that asked for such a wait fails
its call there (``Announced.refusal``), a success's reply is kept. NaN, a negative count and an infinite limit are
unreadable.
"""

from __future__ import annotations

import math
import re
import time
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime

from pydantic import BaseModel

from bargain_ray.config.schema import MAX_WAIT_S, MIN_PER_MINUTE

LIMIT_NAMES = {
    "anthropic-ratelimit-requests": "requests_per_minute",
    "anthropic-ratelimit-input-tokens": "input_tokens_per_minute",
    "anthropic-ratelimit-output-tokens": "output_tokens_per_minute",
    "x-ratelimit-requests": "requests_per_minute",
    "x-ratelimit-tokens": "tokens_per_minute",
}
"""Header stem -> our pace name. OpenAI's token limit is a total (input + max_tokens as it counts them),
so it is its own pace, never an input-token limit. Anthropic's combined ``-tokens-`` (the most
restrictive of its token limits) adds nothing to pace by."""

CALL_ID_HEADER = "x-bargain-ray-call-id"
"""The one header the clients add, and only to the simulated provider: the call's id, which seeds its
stochastic replies (``providers.sim``). A real provider never receives it."""
OWN_CRASH_HEADER = "x-bargain-ray-internal-error"
"""Set on an error response by a server of the project's own (the simulated provider) whose code crashed answering:
the failure is ours, not the provider's, and a retry would crash again."""

GO_DURATION = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(h|ms|us|µs|ns|m|s)")
UNIT_S = {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 1e-3, "us": 1e-6, "µs": 1e-6, "ns": 1e-9}


class Announced(BaseModel):
    """One response's rate-limit headers, read: per-minute limits, what is left, seconds to each reset."""

    limits: dict[str, float] = {}
    remaining: dict[str, float] = {}
    resets_s: dict[str, float] = {}
    resets_from_now: bool = True
    """Anthropic's resets are times, so seconds from now; OpenAI's are durations from when the reply was made."""
    retry_after_s: float | None = None
    beyond: dict[str, str] = {}
    """Header -> value of each wait announced beyond ``MAX_WAIT_S`` (a ``retry-after``, a reset, a limit below
    ``MIN_PER_MINUTE``), left out of the fields above: never waited for, never paced by."""

    def wait_s(self, status: int) -> float | None:
        """Seconds during which the provider said no request may come (None: it announced no wait)."""
        if self.retry_after_s is not None:
            return self.retry_after_s
        if status == 429:
            return max(self.resets_s.values(), default=None)
        return None

    def refusal(self, status: int) -> str | None:
        """One line naming the header with which a failed response (``status``) asked for a wait beyond
        ``MAX_WAIT_S``, None if it asked for none: its ``retry-after``, a limit (which paces every later call),
        or, with no ``retry-after`` to read, a 429's reset. Any other reset is the time a bucket is full again."""
        for header, value in self.beyond.items():
            if "-reset" not in header or (status == 429 and self.retry_after_s is None):
                return (f"{header}={value[:40]} asks for a wait of more than {MAX_WAIT_S:.0f} s, the longest the "
                        "runner waits (ours): the call fails now and is asked again on resume")
        return None


def number(text: str) -> float | None:
    """A header's number (``inf`` included), None if it is none or NaN."""
    try:
        value = float(text)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(value) else value


def duration_s(text: str) -> float | None:
    """An OpenAI reset (a Go duration such as ``6m0s``, ``1m30.5s``, ``250ms``; a bare number is seconds)."""
    text = text.strip()
    if (value := number(text)) is not None:
        return max(value, 0.0)
    parts = GO_DURATION.findall(text)
    if not parts or "".join(n + u for n, u in parts) != text:
        return None
    return sum(float(n) * UNIT_S[u] for n, u in parts)


def seconds_until(text: str, now: float) -> float | None:
    """An RFC 3339 time (Anthropic's reset) or an HTTP date, as seconds after ``now`` (wall clock); 0 if past."""
    try:
        when = datetime.fromisoformat(text.strip())
    except ValueError:
        try:
            when = parsedate_to_datetime(text)
        except (TypeError, ValueError, IndexError):
            return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(when.timestamp() - now, 0.0)


def retry_after(headers: dict[str, str], now: float | None = None) -> tuple[str, float] | None:
    """(the header read, seconds from ``now``): ``retry-after-ms``, else ``retry-after`` as seconds or an HTTP date."""
    now = time.time() if now is None else now
    if (ms := number(headers.get("retry-after-ms", ""))) is not None:
        return "retry-after-ms", max(ms / 1e3, 0.0)
    if "retry-after" in headers:
        value = headers["retry-after"]
        seconds = number(value)
        seconds = seconds_until(value, now) if seconds is None else max(seconds, 0.0)
        return None if seconds is None else ("retry-after", seconds)
    return None


def retry_after_s(headers: dict[str, str], now: float | None = None) -> float | None:
    """``retry-after-ms``, else ``retry-after`` as seconds or an HTTP date, as seconds from ``now``."""
    read = retry_after(headers, now)
    return None if read is None else read[1]


def read_headers(headers: dict[str, str], now: float | None = None) -> Announced:
    """Everything the (lower-cased) rate-limit headers announce within bounds; unreadable values are left out, and
    so are those beyond the bounds (kept in ``beyond``)."""
    now = time.time() if now is None else now
    out = Announced()

    def bounded(header: str, seconds: float | None) -> float | None:
        if seconds is not None and seconds > MAX_WAIT_S:
            out.beyond[header] = headers[header]
            return None
        return seconds

    if (read := retry_after(headers, now)) is not None:
        out.retry_after_s = bounded(*read)
    for stem, name in LIMIT_NAMES.items():
        anthropic = stem.startswith("anthropic")
        kind = stem.removeprefix("anthropic-ratelimit-").removeprefix("x-ratelimit-")
        keys = (f"{stem}-limit", f"{stem}-remaining", f"{stem}-reset") if anthropic else (
            f"x-ratelimit-limit-{kind}", f"x-ratelimit-remaining-{kind}", f"x-ratelimit-reset-{kind}")
        limit, remaining = (number(headers.get(k, "")) for k in keys[:2])
        if limit is not None and 0 <= limit < MIN_PER_MINUTE:
            out.beyond[keys[0]] = headers[keys[0]]
        elif limit is not None and 0 < limit < math.inf:
            out.limits[name] = limit
        if remaining is not None and 0 <= remaining < math.inf:
            out.remaining[name] = remaining
        if (reset := headers.get(keys[2])) is not None:
            seconds = bounded(keys[2], seconds_until(reset, now) if anthropic else duration_s(reset))
            if seconds is not None:
                out.resets_s[name] = seconds
                out.resets_from_now = anthropic
    return out


def announced_wait_s(status: int, headers: dict[str, str], now: float | None = None) -> float | None:
    """Seconds from ``now`` (the response's wall time) during which no request may be sent, if announced."""
    return read_headers(headers, now).wait_s(status)
