"""Turn logic every family would otherwise write for itself: who opens, who moves, how a failed turn ends."""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction
from typing import Any, TypeVar

from bargain_ray.core.status import Ended, Status
from bargain_ray.games.base import GameState

S = TypeVar("S", bound=GameState)

MAX_TURNS = 1000
"""Turns one game may last (ours): the fingerprint renders a text per turn and the dry run plays a typical game to
its end (its prompts grow with the record), so a longer game could not be planned."""


def opening_role(roles: Sequence[str], given: str | None, default: str, game: str, what: str = "role") -> str:
    """Who speaks first: the unit's first speaker, else the game's default; never an unknown role."""
    speaker = given or default
    if speaker not in roles:
        raise ValueError(f"first speaker {speaker!r} is not a {what} of {game}: {', '.join(roles)}")
    return speaker


def other(pair: Sequence[str], role: str) -> str:
    """The other side of a two-party game."""
    return pair[1] if role == pair[0] else pair[0]


def alternating(pair: Sequence[str], first: str, played: int) -> str:
    """Who moves after ``played`` moves of strict alternation that ``first`` opened."""
    return first if played % 2 == 0 else other(pair, first)


def format_failure(state: S, role: str, **update: Any) -> S:
    """The state after ``role`` used up its repairs: the protocol ended the game (seed 002's ``format_failure``)."""
    ended = Ended(status=Status.FORMAT_FAILURE, reason="format_failure")
    return state.model_copy(update={"ended": ended, "failed_role": role, **update})


def exact(x: float | str) -> Fraction:
    """A config or reply number as an exact fraction of its decimal text (0.95 is 19/20, 121.188 stays 121.188)."""
    return Fraction(str(x))


def in_play(role: str | None) -> str:
    """The role to move in a state still in play (a sample state a family renders its texts from)."""
    if role is None:
        raise ValueError("no role is to move: the game has ended")
    return role
