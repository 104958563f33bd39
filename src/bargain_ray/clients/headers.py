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
"""

from __future__ import annotations

import re
import time
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime

from pydantic import BaseModel

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

    def wait_s(self, status: int) -> float | None:
        """Seconds during which the provider said no request may come (None: it announced no wait)."""
        if self.retry_after_s is not None:
            return self.retry_after_s
        if status == 429:
            return max(self.resets_s.values(), default=None)
        return None


def duration_s(text: str) -> float | None:
    """An OpenAI reset (a Go duration such as ``6m0s``, ``1m30.5s``, ``250ms``; a bare number is seconds)."""
    text = text.strip()
    try:
        return max(float(text), 0.0)
    except ValueError:
        pass
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


def retry_after_s(headers: dict[str, str], now: float | None = None) -> float | None:
    """``retry-after-ms``, else ``retry-after`` as seconds or an HTTP date, as seconds from ``now``."""
    now = time.time() if now is None else now
    if "retry-after-ms" in headers:
        try:
            return max(float(headers["retry-after-ms"]) / 1e3, 0.0)
        except ValueError:
            pass
    if "retry-after" in headers:
        value = headers["retry-after"]
        try:
            return max(float(value), 0.0)
        except ValueError:
            return seconds_until(value, now)
    return None


def read_headers(headers: dict[str, str], now: float | None = None) -> Announced:
    """Everything the (lower-cased) rate-limit headers announce; unreadable values are left out."""
    now = time.time() if now is None else now
    out = Announced(retry_after_s=retry_after_s(headers, now))
    for stem, name in LIMIT_NAMES.items():
        anthropic = stem.startswith("anthropic")
        kind = stem.removeprefix("anthropic-ratelimit-").removeprefix("x-ratelimit-")
        keys = (f"{stem}-limit", f"{stem}-remaining", f"{stem}-reset") if anthropic else (
            f"x-ratelimit-limit-{kind}", f"x-ratelimit-remaining-{kind}", f"x-ratelimit-reset-{kind}")
        limit, remaining, reset = (headers.get(k) for k in keys)
        for value, into in ((limit, out.limits), (remaining, out.remaining)):
            try:
                into[name] = float(value)
            except (TypeError, ValueError):
                continue
        if reset is not None:
            seconds = seconds_until(reset, now) if anthropic else duration_s(reset)
            if seconds is not None:
                out.resets_s[name] = seconds
                out.resets_from_now = anthropic
    return out


def announced_wait_s(status: int, headers: dict[str, str], now: float | None = None) -> float | None:
    """Seconds from ``now`` (the response's wall time) during which no request may be sent, if announced."""
    return read_headers(headers, now).wait_s(status)
