"""Reading what rate-limit headers announce: every reset format, retry-after as seconds, ms and HTTP date."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import pytest

from bargain_ray.clients.headers import announced_wait_s, duration_s, read_headers, retry_after_s, seconds_until

NOW = datetime(2026, 12, 1, 8, 0, 0, tzinfo=UTC).timestamp()


@pytest.mark.parametrize(("text", "seconds"), [
    ("1s", 1.0), ("250ms", 0.25), ("6m0s", 360.0), ("1m30.5s", 90.5), ("12ms", 0.012), ("0s", 0.0),
    ("1h2m3s", 3723.0), ("20.5us", 20.5e-6), ("0.5", 0.5), ("2", 2.0),
])
def test_openai_reset_durations(text: str, seconds: float) -> None:
    assert duration_s(text) == pytest.approx(seconds)


@pytest.mark.parametrize("text", ["", "soon", "1x", "s", "1s2"])
def test_unreadable_durations_are_none(text: str) -> None:
    assert duration_s(text) is None


def test_rfc3339_and_http_dates_are_seconds_from_now() -> None:
    assert seconds_until("2026-12-01T08:00:07Z", NOW) == pytest.approx(7.0)
    assert seconds_until("2026-12-01T08:00:01.500000+00:00", NOW) == pytest.approx(1.5)
    assert seconds_until("2026-12-01T07:59:00Z", NOW) == 0.0  # past: no wait
    http_date = format_datetime(datetime.fromtimestamp(NOW, UTC) + timedelta(seconds=30), usegmt=True)
    assert http_date.endswith("GMT") and seconds_until(http_date, NOW) == pytest.approx(30.0)
    assert seconds_until("not a date", NOW) is None


def test_retry_after_seconds_date_and_ms() -> None:
    assert retry_after_s({"retry-after": "2"}, NOW) == 2.0
    assert retry_after_s({"retry-after": "0.250"}, NOW) == 0.25
    assert retry_after_s({"retry-after": "Tue, 01 Dec 2026 08:00:05 GMT"}, NOW) == pytest.approx(5.0)
    assert retry_after_s({"retry-after-ms": "1500", "retry-after": "9"}, NOW) == 1.5  # ms is the finer one
    assert retry_after_s({"retry-after-ms": "junk", "retry-after": "9"}, NOW) == 9.0
    assert retry_after_s({}, NOW) is None


def test_anthropic_headers_read() -> None:
    headers = {
        "anthropic-ratelimit-requests-limit": "300", "anthropic-ratelimit-requests-remaining": "0",
        "anthropic-ratelimit-requests-reset": "2026-12-01T08:00:02Z",
        "anthropic-ratelimit-input-tokens-limit": "30000", "anthropic-ratelimit-input-tokens-remaining": "29000",
        "anthropic-ratelimit-input-tokens-reset": "2026-12-01T08:00:01Z",
        "anthropic-ratelimit-output-tokens-limit": "8000",
    }
    told = read_headers(headers, NOW)
    assert told.limits == {"requests_per_minute": 300, "input_tokens_per_minute": 30000,
                           "output_tokens_per_minute": 8000}
    assert told.resets_s == {"requests_per_minute": 2.0, "input_tokens_per_minute": 1.0}
    assert told.wait_s(200) is None  # a reset is full replenishment: none left is no wait (the bucket paces it)
    assert told.wait_s(429) == 2.0


def test_openai_token_limit_is_a_total_not_an_input_limit() -> None:
    headers = {"x-ratelimit-limit-requests": "300", "x-ratelimit-remaining-requests": "299",
               "x-ratelimit-reset-requests": "200ms", "x-ratelimit-limit-tokens": "150000",
               "x-ratelimit-remaining-tokens": "0", "x-ratelimit-reset-tokens": "6m0s"}
    told = read_headers(headers, NOW)
    assert told.limits == {"requests_per_minute": 300, "tokens_per_minute": 150000}
    assert told.remaining["tokens_per_minute"] == 0 and told.resets_s["tokens_per_minute"] == 360.0
    assert told.wait_s(200) is None


def test_which_wait_a_response_announces() -> None:
    spare = {"x-ratelimit-remaining-requests": "3", "x-ratelimit-reset-requests": "250ms",
             "x-ratelimit-remaining-tokens": "10", "x-ratelimit-reset-tokens": "1m30.5s"}
    assert announced_wait_s(200, spare, NOW) is None  # nothing spent: no wait
    assert announced_wait_s(429, spare, NOW) == 90.5  # a 429 without retry-after: until every reset
    assert announced_wait_s(429, {**spare, "retry-after": "1"}, NOW) == 1.0  # retry-after is the word
    assert announced_wait_s(500, {**spare, "x-ratelimit-remaining-requests": "0"}, NOW) is None  # a limit spent
    assert announced_wait_s(429, {}, NOW) is None


@pytest.mark.parametrize(("headers", "header"), [
    ({"retry-after": "1e9"}, "retry-after"),
    ({"retry-after": "inf"}, "retry-after"),
    ({"retry-after-ms": "1e12", "retry-after": "1"}, "retry-after-ms"),
    ({"retry-after": "Tue, 01 Jan 2999 00:00:00 GMT"}, "retry-after"),
    ({"anthropic-ratelimit-requests-reset": "2999-01-01T00:00:00Z"}, "anthropic-ratelimit-requests-reset"),
    ({"x-ratelimit-reset-tokens": "999h"}, "x-ratelimit-reset-tokens"),
    ({"anthropic-ratelimit-requests-limit": "1e-300"}, "anthropic-ratelimit-requests-limit"),
    ({"x-ratelimit-limit-tokens": "0"}, "x-ratelimit-limit-tokens"),
])
def test_a_wait_beyond_the_longest_is_left_out_and_named(headers: dict[str, str], header: str) -> None:
    """Never waited for, never paced by: kept aside, and a failed response that asked for it names it."""
    told = read_headers(headers, NOW)
    assert told.wait_s(429) is None and told.limits == {} and told.resets_s == {}
    assert told.beyond == {header: headers[header]}
    assert told.refusal(429).startswith(f"{header}={headers[header]} asks for a wait of more than 600 s")


def test_only_a_wait_the_response_asks_for_is_refused() -> None:
    """A reset is the time a bucket is full again: a wait only on a 429 that sent no ``retry-after``."""
    far = {"x-ratelimit-reset-requests": "2h"}
    assert read_headers(far, NOW).refusal(500) is None and read_headers(far, NOW).refusal(429) is not None
    assert read_headers({**far, "retry-after": "3"}, NOW).refusal(429) is None
    assert read_headers({**far, "retry-after": "3"}, NOW).wait_s(429) == 3.0
    within = read_headers({"retry-after": "600", "x-ratelimit-limit-requests": "0.1"}, NOW)
    assert within.beyond == {} and within.wait_s(500) == 600.0 and within.limits == {"requests_per_minute": 0.1}


def test_numbers_that_are_none_are_unreadable() -> None:
    headers = {"retry-after": "nan", "x-ratelimit-limit-requests": "inf", "x-ratelimit-remaining-requests": "-4",
               "x-ratelimit-limit-tokens": "-1", "x-ratelimit-remaining-tokens": "nan"}
    told = read_headers(headers, NOW)
    assert told.retry_after_s is None and told.limits == {} and told.remaining == {} and told.beyond == {}
