"""Failures outside the protocol: never an economic result.

A technical failure is typed (``Failure``): its ``kind`` is what the budget, the summary, the report and
the view group and act on; its ``detail`` is the text a person reads (masked before it gets here). No
reader parses the detail back: what a reader needs is a field.
"""

from __future__ import annotations

import traceback
from enum import StrEnum
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict

if TYPE_CHECKING:
    from bargain_ray.core.records import Reply


PACKAGE_DIR = "/bargain_ray/"
"""How a traceback's file names the package's own code (``crash_detail``)."""


class FailureKind(StrEnum):
    """Why a game ended unknown (or a call failed), as one word a reader can act on."""

    BUDGET = "budget"
    """The budget (``run.max_cost_usd``) refused a call."""
    TIMEOUT = "timeout"
    CONNECTION = "connection"
    """No response: the provider is unreachable, or the connection dropped."""
    RATE_LIMITED = "rate_limited"
    """429 after every retry."""
    MISSING_KEY = "missing_key"
    AUTH = "auth"
    """401/403: the provider refused the key."""
    BAD_REQUEST = "bad_request"
    """Another 4xx: the provider refused the request as sent."""
    SERVER_ERROR = "server_error"
    """5xx (529 included) after every retry."""
    MALFORMED_REPLY = "malformed_reply"
    """The provider answered 200 with a body that is not the API's JSON."""
    UNREADABLE_INSTRUMENT = "unreadable_instrument"
    """An instrument of the game (the free-text observer) used up its repairs: the game cannot be judged."""
    REPLAY_EXHAUSTED = "replay_exhausted"
    """A re-scored transcript ran out of recorded replies before the game ended."""
    UNFINISHED = "unfinished"
    """The loop stopped with no end and no failure (a bug if ever seen)."""
    LOST_JOURNAL = "lost_journal"
    """The sweep's call journal actor died for good: the run stops (no call is paid that cannot be journaled)."""
    LOST_BUDGET = "lost_budget"
    """The sweep's budget actor died: the run stops (no call goes out without its reservation)."""
    LOST_BATCHER = "lost_batcher"
    """The sweep's batcher died for good: the run stops (no batched call goes online at full price)."""
    LOST_WORKER = "lost_worker"
    """A game runner died every time it played the same games: the run stops rather than replace it forever."""
    DRIFT = "drift"
    """A model answered as another version than its first answer of the sweep, under ``run.on_drift=stop``."""
    ABSENT = "absent"
    """A person in a human seat left a turn unanswered past ``run.seats.turn_limit_s``."""
    INTERNAL = "internal"
    """bargain_ray's own code crashed answering a call (a strategy agent, the simulated provider): a bug of ours,
    never the provider's; not retried (it would crash again)."""
    OTHER = "other"


FAILURE_LABELS: dict[FailureKind, str] = {
    FailureKind.BUDGET: "refused by the budget",
    FailureKind.TIMEOUT: "timeouts",
    FailureKind.CONNECTION: "connection errors (provider unreachable?)",
    FailureKind.RATE_LIMITED: "rate limited (429) after every retry",
    FailureKind.MISSING_KEY: "missing API keys",
    FailureKind.AUTH: "refused keys (401/403)",
    FailureKind.BAD_REQUEST: "requests refused (4xx)",
    FailureKind.SERVER_ERROR: "server errors (5xx)",
    FailureKind.MALFORMED_REPLY: "unreadable replies",
    FailureKind.UNREADABLE_INSTRUMENT: "observers that could not be read",
    FailureKind.REPLAY_EXHAUSTED: "recorded replies ran out",
    FailureKind.UNFINISHED: "unfinished",
    FailureKind.LOST_JOURNAL: "stopped: the call journal's actor was lost",
    FailureKind.LOST_BUDGET: "stopped: the budget's actor was lost",
    FailureKind.LOST_BATCHER: "stopped: the batcher's actor was lost",
    FailureKind.LOST_WORKER: "stopped: a game runner was lost again and again with the same games",
    FailureKind.DRIFT: "stopped: a model was served as another version (run.on_drift=stop)",
    FailureKind.ABSENT: "turns a person left unanswered past run.seats.turn_limit_s",
    FailureKind.INTERNAL: "crashes of bargain_ray's own code (a bug of ours, not the provider's: the games' reason "
                          "names it; please report it)",
    FailureKind.OTHER: "other technical errors",
}
"""How the summary, the report and the view name each kind, in the plural (ours)."""

LOST_ACTOR = frozenset({FailureKind.LOST_JOURNAL, FailureKind.LOST_BUDGET, FailureKind.LOST_BATCHER,
                        FailureKind.LOST_WORKER})
"""The kinds that stop a whole run: one of the sweep's own actors is gone (``execution.driver``)."""


def crash_detail(exc: BaseException, doing: str) -> str:
    """One line naming a crash of bargain_ray's own code: what it was doing, the exception's first line, and the
    package's own line it was raised through (its path from the package down, never a machine's path)."""
    ours = [f for f in traceback.extract_tb(exc.__traceback__) if PACKAGE_DIR in f.filename]
    at = f" at {ours[-1].filename.rpartition(PACKAGE_DIR)[2]}:{ours[-1].lineno}" if ours else ""
    said = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return (f"{doing} crashed: {type(exc).__name__}: {said}{at} (a bug in bargain_ray, not the provider's: please "
            "report it)")


class Failure(BaseModel):
    """A technical failure as recorded: its kind, the text a person reads, and the facts a reader acts on."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: FailureKind
    detail: str = ""
    """Key-free (masked where it came from outside) and cut: for people, never parsed."""
    http_status: int | None = None
    cap_usd: float | None = None
    """The cap of a budget refusal: an invocation whose cap is no higher starts closed."""

    @property
    def label(self) -> str:
        return FAILURE_LABELS[self.kind]

    def __str__(self) -> str:
        return self.detail or self.kind.value


class TechnicalFailure(Exception):
    """A call failed for reasons outside the protocol (after retries).

    The game is unknown, not scored, and run again on resume.
    """

    def __init__(self, failure: Failure, reply: Reply | None = None) -> None:
        super().__init__(str(failure))
        self.failure = failure
        self.reply = reply
