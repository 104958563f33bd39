"""Which failures are worth another attempt, and how long to wait: the one place retries are decided.

SDK retries are off (``max_retries=0``); tenacity drives the attempts with
jittered exponential backoff, never shorter than the wait the provider announced
(``retry-after``, or a 429's resets: ``clients.headers``).
"""

from __future__ import annotations

import itertools
from typing import Any

import anthropic
import openai
from tenacity import AsyncRetrying, RetryCallState, retry_if_exception, stop_after_attempt, wait_random_exponential

from bargain_ray.clients.headers import announced_wait_s
from bargain_ray.config import Retry
from bargain_ray.core.errors import FailureKind

STATUS_ERRORS = (anthropic.APIStatusError, openai.APIStatusError)
CONNECTION_ERRORS = (anthropic.APIConnectionError, openai.APIConnectionError)
TRANSIENT_STATUS = frozenset({408, 409, 429})
RATE_HEADERS = ("retry-after", "retry-after-ms", "anthropic-ratelimit-", "x-ratelimit-")


class MalformedReply(Exception):
    """The provider answered 200 with a body that is not the API's JSON (truncated, garbled)."""


def status_of(exc: BaseException) -> int:
    """The HTTP status of a failed attempt; 0 when no response came."""
    return int(getattr(exc, "status_code", 0)) if isinstance(exc, STATUS_ERRORS) else 0


def transient(exc: BaseException) -> bool:
    """408/409/429/5xx (529 included), timeouts, dropped connections, unreadable bodies."""
    if isinstance(exc, STATUS_ERRORS):
        return exc.status_code in TRANSIENT_STATUS or exc.status_code >= 500
    return isinstance(exc, (*CONNECTION_ERRORS, MalformedReply))


def failure_kind(exc: BaseException) -> FailureKind:
    """What a failed call's last error says about why, as the summary groups it."""
    status = status_of(exc)
    if status == 429:
        return FailureKind.RATE_LIMITED
    if status in (401, 403):
        return FailureKind.AUTH
    if status >= 500:
        return FailureKind.SERVER_ERROR
    if status >= 400:
        return FailureKind.BAD_REQUEST
    if isinstance(exc, (anthropic.APITimeoutError, openai.APITimeoutError, TimeoutError)):
        return FailureKind.TIMEOUT
    if isinstance(exc, CONNECTION_ERRORS):
        return FailureKind.CONNECTION
    if isinstance(exc, MalformedReply):
        return FailureKind.MALFORMED_REPLY
    return FailureKind.OTHER


def rate_headers(headers: Any) -> dict[str, str]:
    """Only the headers the limiter learns from (never an auth header)."""
    if headers is None:
        return {}
    return {k.lower(): v for k, v in headers.items() if k.lower().startswith(RATE_HEADERS)}


def headers_of(exc: BaseException) -> dict[str, str]:
    response = getattr(exc, "response", None) if isinstance(exc, STATUS_ERRORS) else None
    return rate_headers(response.headers if response is not None else None)


FRAGMENT = 8
"""Characters of a key that are masked wherever they appear together: a server may echo a key in part."""

ERROR_CHARS = 300
"""An attempt's error message is cut to this many characters, after masking."""


def mask(text: str, secret: str | None) -> str:
    """``text`` with the key and every run of ``FRAGMENT`` or more of its consecutive characters as ``***``.

    Our rule: a fragment that short still narrows the key for anyone reading the record, and no error
    text needs one; a key shorter than ``FRAGMENT`` is masked only whole.
    """
    if not secret:
        return text
    text = text.replace(secret, "***")
    if len(secret) < FRAGMENT:
        return text
    windows = {secret[i:i + FRAGMENT] for i in range(len(secret) - FRAGMENT + 1)}
    hidden = [False] * len(text)
    for i in range(len(text) - FRAGMENT + 1):
        if text[i:i + FRAGMENT] in windows:
            hidden[i:i + FRAGMENT] = [True] * FRAGMENT
    runs = itertools.groupby(zip(text, hidden, strict=True), key=lambda pair: pair[1])
    return "".join("***" if masked else "".join(c for c, _ in run) for masked, run in runs)


def describe(exc: BaseException, secret: str | None) -> str:
    """A short, key-free account of a failed attempt: masked (see ``mask``) before it is cut."""
    status = status_of(exc)
    return f"{type(exc).__name__}" + (f" {status}" if status else "") + f": {mask(str(exc), secret)[:ERROR_CHARS]}"


def retrying(policy: Retry) -> AsyncRetrying:
    """Bounded attempts; waits jittered exponentially, at least the wait the provider announced."""
    backoff = wait_random_exponential(multiplier=policy.initial_s, max=policy.max_s)

    def wait(state: RetryCallState) -> float:
        exc = state.outcome.exception() if state.outcome else None
        told = announced_wait_s(status_of(exc), headers_of(exc)) if exc else None
        return max(backoff(state), told or 0.0)

    return AsyncRetrying(
        stop=stop_after_attempt(policy.max_attempts),
        wait=wait,
        retry=retry_if_exception(transient),
        reraise=True,
    )
