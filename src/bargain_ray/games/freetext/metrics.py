"""The outcome of a free-text game is the observer's final verdict.

``outcome`` scores a game as it ends; ``per_game`` reads a journaled record
(the analysis side), so figures can be recomputed without replaying.
"""

from __future__ import annotations

from typing import Any

from bargain_ray.games.base import Status
from bargain_ray.games.freetext.config import FreeTextConfig
from bargain_ray.games.freetext.engine import State

INTEGRATIVE = ("integrative_full", "integrative_partial")


def outcome(config: FreeTextConfig, state: State) -> dict[str, Any]:
    """The scored part of the outcome record (the loop adds identity, status and calls).

    Only a game the observer closed or the turn limit ended has a verdict to
    report; a format or technical failure has none.
    """
    status = state.ended.status if state.ended else None
    judged = status in (Status.AGREEMENT, Status.NO_AGREEMENT)
    final = state.verdicts[-1] if judged and state.verdicts else None
    return {
        "party_turns": len(state.transcript),
        "turns_to_agreement": len(state.transcript) if status == Status.AGREEMENT else None,
        "verdicts": len(state.verdicts),
        "agreement_reached": final.agreement_reached if final else None,
        "allocation_type": final.allocation_type if final else None,
        "allocation": final.allocation if final else None,
        "rationale": final.rationale if final else None,
        "observer_confidence": final.confidence if final else None,
        "failed_role": state.failed_role,
        "observer_role": config.observer.role,
    }


def per_game(record: dict[str, Any]) -> dict[str, Any]:
    """Figures of one journaled game (``unit``, ``outcome``, ``turns``, ``calls``)."""
    out = record["outcome"]
    kind = out.get("allocation_type")
    return {
        "unit_id": record["unit"]["unit_id"],
        "status": out["status"],
        "known": out["known"],
        "agreement": out["agreement"] if out["known"] else None,
        "allocation_type": kind,
        "integrative": kind in INTEGRATIVE if kind is not None else None,
        "turns": out.get("party_turns"),
        "turns_to_agreement": out.get("turns_to_agreement"),
        "observer_confidence": out.get("observer_confidence"),
        "observer_invalid": sum(
            1 for c in record["calls"] if c.get("valid") is False and c["role"] == out.get("observer_role")
        ),
    }
