"""Which failures are worth another attempt, and how long to wait: the one place retries are decided.

SDK retries are off (``max_retries=0``); tenacity drives the attempts with
jittered exponential backoff, never shorter than the wait the provider announced
(``retry-after``, or a 429's resets: ``clients.headers``). What an SDK raises is read through its API's
``SDKErrors`` (``clients.registry``), so this module knows no SDK.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from tenacity import AsyncRetrying, RetryCallState, retry_if_exception, stop_after_attempt, wait_random_exponential

from bargain_ray.clients.headers import OWN_CRASH_HEADER, Announced, read_headers
from bargain_ray.config import Retry
from bargain_ray.core.errors import FailureKind
from bargain_ray.core.secrets import mask

TRANSIENT_STATUS = frozenset({408, 409, 429})
RATE_HEADERS = ("retry-after", "retry-after-ms", "anthropic-ratelimit-", "x-ratelimit-")


class MalformedReply(Exception):
    """The provider answered 200 with a body that is not the API's JSON (truncated, garbled)."""


class ImplausibleUsage(Exception):
    """The provider answered 200 with token counts no call can have (``clients.http.check_usage``). Never retried:
    the provider answered, and bills another attempt as it billed this one; never priced."""


class WaitTooLong(Exception):
    """A failed attempt's headers asked for a wait longer than the runner waits (``config.schema.MAX_WAIT_S``):
    the call fails now instead of waiting. ``status_code`` is the failed attempt's."""

    def __init__(self, message: str, status_code: int) -> None:
        super().__init__(message)
        self.status_code = status_code


@dataclass(frozen=True)
class SDKErrors:
    """What one SDK raises, as the runner reads it: an API's retry classification (``clients.registry``).

    ``status``: errors that carry an HTTP response (``status_code``, ``response``); ``connection``: no response
    came (``timeout`` among them, told apart as its own kind).
    """

    status: tuple[type[BaseException], ...]
    connection: tuple[type[BaseException], ...]
    timeout: tuple[type[BaseException], ...]

    def status_of(self, exc: BaseException) -> int:
        """The HTTP status of a failed attempt; 0 when no response came."""
        return int(getattr(exc, "status_code", 0)) if isinstance(exc, (*self.status, WaitTooLong)) else 0

    def transient(self, exc: BaseException) -> bool:
        """408/409/429/5xx (529 included), timeouts (the SDK's and the attempt's deadline), dropped connections,
        unreadable bodies; never a wait asked beyond the longest the runner waits."""
        if isinstance(exc, self.status):
            status = self.status_of(exc)
            return not self.own_crash(exc) and (status in TRANSIENT_STATUS or status >= 500)
        return isinstance(exc, (*self.connection, *self.timeout, TimeoutError, MalformedReply))

    def kind(self, exc: BaseException) -> FailureKind:
        """What a failed call's last error says about why, as the summary groups it."""
        status = self.status_of(exc)
        if self.own_crash(exc):
            return FailureKind.INTERNAL
        if status == 429:
            return FailureKind.RATE_LIMITED
        if status in (401, 403):
            return FailureKind.AUTH
        if status >= 500:
            return FailureKind.SERVER_ERROR
        if status >= 400:
            return FailureKind.BAD_REQUEST
        if isinstance(exc, (*self.timeout, TimeoutError)):
            return FailureKind.TIMEOUT
        if isinstance(exc, self.connection):
            return FailureKind.CONNECTION
        if isinstance(exc, (MalformedReply, ImplausibleUsage)):
            return FailureKind.MALFORMED_REPLY
        return FailureKind.OTHER

    def own_crash(self, exc: BaseException) -> bool:
        """Whether the error response came from a server of the project's own whose code crashed (``OWN_CRASH_HEADER``):
        a bug of ours, never the provider's error."""
        response = getattr(exc, "response", None) if isinstance(exc, self.status) else None
        return response is not None and OWN_CRASH_HEADER in response.headers

    def headers_of(self, exc: BaseException) -> dict[str, str]:
        """The rate-limit headers of a failed attempt's response (none without one)."""
        response = getattr(exc, "response", None) if isinstance(exc, self.status) else None
        return rate_headers(response.headers if response is not None else None)


def rate_headers(headers: Any) -> dict[str, str]:
    """Only the headers the limiter learns from (never an auth header)."""
    if headers is None:
        return {}
    return {k.lower(): v for k, v in headers.items() if k.lower().startswith(RATE_HEADERS)}


ERROR_CHARS = 300
"""An attempt's error message is cut to this many characters, after masking."""


def describe(exc: BaseException, secret: str | None, status: int = 0) -> str:
    """A short, key-free account of a failed attempt: masked (see ``mask``) before it is cut."""
    return f"{type(exc).__name__}" + (f" {status}" if status else "") + f": {mask(str(exc), secret)[:ERROR_CHARS]}"


def retrying(policy: Retry, errors: SDKErrors,
             read: Callable[[dict[str, str]], Announced] = read_headers) -> AsyncRetrying:
    """Bounded attempts of what ``errors`` call transient; waits jittered exponentially, at least the wait the
    provider announced (its headers as ``read``, the API's header reader, understands them)."""
    backoff = wait_random_exponential(multiplier=policy.initial_s, max=policy.max_s)

    def wait(state: RetryCallState) -> float:
        exc = state.outcome.exception() if state.outcome else None
        told = read(errors.headers_of(exc)).wait_s(errors.status_of(exc)) if exc else None
        return max(backoff(state), told or 0.0)

    return AsyncRetrying(
        stop=stop_after_attempt(policy.max_attempts),
        wait=wait,
        retry=retry_if_exception(errors.transient),
        reraise=True,
    )
