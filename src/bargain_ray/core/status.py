"""How a game ended: the one vocabulary the engines, the loop, the store and analysis share."""

from __future__ import annotations

from enum import IntEnum, StrEnum

from pydantic import BaseModel, ConfigDict

from bargain_ray.core.errors import FailureKind


class Status(StrEnum):
    """How a game ended. Only the first three are known results."""

    AGREEMENT = "AGREEMENT"
    NO_AGREEMENT = "NO_AGREEMENT"
    FORMAT_FAILURE = "FORMAT_FAILURE"
    TECHNICAL_ERROR = "TECHNICAL_ERROR"
    INTERRUPTED = "INTERRUPTED"

    @property
    def known(self) -> bool:
        """A technical failure is not an economic result: unknown, unscored, re-run."""
        return self in (Status.AGREEMENT, Status.NO_AGREEMENT, Status.FORMAT_FAILURE)


class Ended(BaseModel):
    """Why a game stopped, as decided by its engine."""

    model_config = ConfigDict(frozen=True)

    status: Status
    reason: str
    failure: FailureKind | None = None
    """For an engine that ends a game unknown (an instrument it cannot read): why, typed."""


class ExitCode(IntEnum):
    """What a command's exit code says; one table for every command (the README lists it)."""

    OK = 0
    """Every game of the design has a known result (or a command did what it was asked)."""
    USER_ERROR = 1
    """A mistake in the command line, the config or the folder: a one-line message, nothing was run."""
    UNKNOWN_GAMES = 2
    """The run ended with unknown games (technical failures): running it again retries them."""
    BUDGET = 3
    """The budget (``run.max_cost_usd``) stopped the run: raise it and run again to go on."""
    CLUSTER_UNAVAILABLE = 69
    """Ray is unavailable (sysexits' EX_UNAVAILABLE): the cluster to join does not answer, a local instance could not
    start, or the cluster was lost mid-run; every journaled result is kept: do what the line says, run again."""
    DISK_FULL = 74
    """The sweep folder's disk is full (sysexits' EX_IOERR): every journaled call is kept; free space, run again."""
    SIGINT = 130
    """Stopped by SIGINT (Ctrl-C), tables written: the same command resumes."""
    SIGTERM = 143
    """Stopped by SIGTERM (``kill``, a scheduler, ``ray job stop``), tables written: the same command resumes."""
