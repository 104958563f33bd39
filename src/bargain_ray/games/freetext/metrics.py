"""The outcome of a free-text game is the observer's final verdict.

``outcome`` scores a game as it ends; ``per_game`` and ``per_turn`` read a
journaled record (``unit``, ``outcome``, ``turns``, ``calls``) for the analysis,
so figures are recomputed without replaying.
"""

from __future__ import annotations

from typing import Any

from bargain_ray.core.status import Status
from bargain_ray.games.freetext.config import FreeTextConfig
from bargain_ray.games.freetext.engine import ALLOCATION_TYPES, State
from bargain_ray.games.kit.results import Breakdown, Length, Results, RoleFigure

INTEGRATIVE = ("integrative_full", "integrative_partial")


def outcome(config: FreeTextConfig, state: State) -> dict[str, Any]:
    """The scored part of the outcome record (``Outcome.scored``; the loop adds status and calls).

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
    """The family's columns of one game: the final verdict, its type as 0/1 shares, turns, questions."""
    out = record["outcome"]
    kind = out.get("allocation_type")
    observer = out.get("observer_role")
    row: dict[str, Any] = {
        "agreement": out["agreement"] if out["known"] else None,
        "allocation_type": kind,
        "integrative": kind in INTEGRATIVE if kind is not None else None,
        **{f"is_{t}": float(kind == t) if kind is not None else None for t in ALLOCATION_TYPES},
        "turns": out.get("party_turns"),
        "turns_to_agreement": out.get("turns_to_agreement"),
        "observer_confidence": out.get("observer_confidence"),
        "observer_invalid": sum(1 for c in record["calls"] if c.get("valid") is False and c["role"] == observer),
    }
    parties = dict.fromkeys(t["role"] for t in record["turns"] if t["role"] != observer)
    for role in parties:
        row[f"{role}_questions"] = sum(t["question"] for t in _messages(record) if t["role"] == role)
    return row


def per_turn(record: dict[str, Any]) -> list[dict[str, Any]]:
    """One row per party message, with the observer's verdict on the transcript it completed."""
    return _messages(record)


def _messages(record: dict[str, Any]) -> list[dict[str, Any]]:
    verdicts = {t["fields"]["party_turn"]: t["fields"] for t in record["turns"]
                if t["valid"] and t["fields"].get("action") == "VERDICT"}
    rows = []
    for t in record["turns"]:
        f = t["fields"]
        if not t["valid"] or f.get("action") != "MESSAGE":
            continue
        v = verdicts.get(f["party_turn"], {})
        rows.append({
            "unit_id": record["unit"].get("unit_id"), "turn": t["turn"], "party_turn": f["party_turn"], "role": t["role"],
            "sentences": f["sentences"], "words": len(f["message"].split()), "question": "?" in f["message"],
            "agreement_reached": v.get("agreement_reached"), "allocation_type": v.get("allocation_type"),
            "observer_confidence": v.get("confidence"),
        })
    return rows


FIELDS = {
    "allocation_type": "the observer's final verdict: integrative_full, integrative_partial, distributive, "
                       "lopsided or none (null after a format or technical failure)",
    "integrative": "the final verdict divides along the part axis (integrative_full or integrative_partial)",
    "is_*": "1 if the final verdict is that allocation type, else 0 (mean: share of games of that type)",
    "turns": "party messages sent (the observer's verdicts not counted)",
    "turns_to_agreement": "party messages sent when the observer judged agreement, agreements only",
    "observer_confidence": "the observer's confidence in its final verdict, 0 to 1",
    "observer_invalid": "observer replies that broke the verdict format and were asked again",
    "*_questions": "the party's messages containing a question mark (a proxy for asking what the other needs)",
}
"""What each ``per_game`` column means, for the dataset card (``*`` stands for a role or type)."""

RESULTS = Results(
    title="Free text judged by an observer model (seed 004)",
    headline=("agreement", "integrative", "observer_confidence", "turns"),
    by_cell=("agreement", "integrative", *(f"is_{t}" for t in ALLOCATION_TYPES), "turns", "turns_to_agreement",
             "observer_confidence", "observer_invalid"),
    by_role=(RoleFigure(column="words", label="words per message", per="turn"),
             RoleFigure(column="sentences", label="sentences per message", per="turn"),
             RoleFigure(column="{role}_questions", label="messages with a question mark")),
    breakdowns=(Breakdown(by="pairing", figures=tuple(f"is_{t}" for t in ALLOCATION_TYPES),
                          title="The observer's final verdicts by pairing (share of games of each type)"),),
    length=Length(column="turns_to_agreement", label="party messages to agreement"),
    deal=("allocation_type",),
)
"""The report's section: the observer's verdicts by pairing, each party's message lengths by model, agreement and
integrative outcomes by cell."""
