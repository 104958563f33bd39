"""The outcome of a free-text game is the observer's final verdict.

``outcome`` scores a game as it ends; ``per_game`` and ``per_turn`` read a
game's typed record (``unit``, ``outcome``, ``turns``, ``calls``) for the analysis,
so figures are recomputed without replaying.
"""

from __future__ import annotations

from bargain_ray.core.records import GameRecord, Scalar
from bargain_ray.core.status import Status
from bargain_ray.games.freetext.config import FreeTextConfig
from bargain_ray.games.freetext.engine import ALLOCATION_TYPES, State
from bargain_ray.games.freetext.records import FreeTextOutcome, FreeTextTurn, MessageTurn, VerdictTurn
from bargain_ray.games.kit.results import Breakdown, Length, Results, RoleFigure
from bargain_ray.games.provenance import Metric, metric, mixed, ours, seed

INTEGRATIVE = ("integrative_full", "integrative_partial")


def outcome(config: FreeTextConfig, state: State) -> FreeTextOutcome:
    """The scored part of the outcome record (``Outcome.scored``; the loop adds status and calls).

    Only a game the observer closed or the turn limit ended has a verdict to
    report; a format or technical failure has none.
    """
    status = state.ended.status if state.ended else None
    judged = status in (Status.AGREEMENT, Status.NO_AGREEMENT)
    final = state.verdicts[-1] if judged and state.verdicts else None
    return FreeTextOutcome(
        party_turns=len(state.transcript),
        turns_to_agreement=len(state.transcript) if status == Status.AGREEMENT else None,
        verdicts=len(state.verdicts),
        agreement_reached=final.agreement_reached if final else None,
        allocation_type=final.allocation_type if final else None,
        allocation=final.allocation if final else None,
        rationale=final.rationale if final else None,
        observer_confidence=final.confidence if final else None,
        failed_role=state.failed_role,
        observer_role=config.observer.role,
    )


def per_game(config: FreeTextConfig, record: GameRecord,
             turns: list[dict[str, Scalar]] | None = None) -> dict[str, Scalar]:
    """The family's columns of one game: the final verdict, its type as 0/1 shares, turns, questions."""
    out = record.outcome
    scored = None if out.scored.blank else FreeTextOutcome.of(out.scored)
    kind = scored.allocation_type if scored is not None else None
    observer = scored.observer_role if scored is not None else None
    messages = _messages(record) if turns is None else turns
    row: dict[str, Scalar] = {
        "agreement": out.agreement if out.known else None,
        "allocation_type": kind,
        "integrative": kind in INTEGRATIVE if kind is not None else None,
        **{f"is_{t}": float(kind == t) if kind is not None else None for t in ALLOCATION_TYPES},
        "turns": scored.party_turns if scored is not None else None,
        "turns_to_agreement": scored.turns_to_agreement if scored is not None else None,
        "observer_confidence": scored.observer_confidence if scored is not None else None,
        "observer_invalid": sum(1 for c in record.calls if c.valid is False and c.role == observer),
    }
    parties = dict.fromkeys(t.role for t in record.turns if t.role != observer)
    for role in parties:
        row[f"{role}_questions"] = sum(1 for t in messages if t["role"] == role and t["question"])
    return row


def per_turn(config: FreeTextConfig, record: GameRecord) -> list[dict[str, Scalar]]:
    """One row per party message, with the observer's verdict on the transcript it completed."""
    return _messages(record)


def _messages(record: GameRecord) -> list[dict[str, Scalar]]:
    read = [(t, FreeTextTurn.of(t.fields)) for t in record.turns if t.valid]
    verdicts = {f.party_turn: f for _, f in read if isinstance(f, VerdictTurn)}
    rows: list[dict[str, Scalar]] = []
    for t, f in read:
        if not isinstance(f, MessageTurn):
            continue
        v = verdicts.get(f.party_turn)
        rows.append({
            "unit_id": record.unit.unit_id, "turn": t.turn, "party_turn": f.party_turn, "role": t.role,
            "sentences": f.sentences, "words": len(f.message.split()), "question": "?" in f.message,
            "agreement_reached": v.agreement_reached if v else None, "allocation_type": v.allocation_type if v else None,
            "observer_confidence": v.confidence if v else None,
        })
    return rows


_OURS = "seed 004 reports the observer's classification only: this figure of the game is ours"
METRICS: dict[str, Metric] = {
    "agreement": metric("the observer judged agreement (null if unknown)",
                        seed("004", "A negotiation is closed when that observer judges the parties to have reached "
                                    "agreement.")),
    "allocation_type": metric("the observer's verdict: integrative_full, integrative_partial, distributive, lopsided "
                              "or none (per game: the final one, null after a format or technical failure; per turn: "
                              "the verdict on the transcript that message completed)",
                              seed("004", "Classify allocation_type:")),
    "integrative": metric("the final verdict divides along the part axis (integrative_full or integrative_partial)",
                          mixed(seed("004", "divided along the part axis"),
                                ours("either integrative type counted as one is ours"))),
    "is_*": metric("1 if the final verdict is that allocation type, else 0 (mean: share of games of that type)",
                   ours(_OURS)),
    "turns": metric("party messages sent (the observer's verdicts not counted)", ours(_OURS)),
    "turns_to_agreement": metric("party messages sent when the observer judged agreement, agreements only",
                                 ours(_OURS)),
    "observer_confidence": metric("the observer's confidence in its verdict, 0 to 1 (per game: the final one)",
                                  seed("004", "confidence: your confidence in this reading, between 0 and 1.")),
    "observer_invalid": metric("observer replies that broke the verdict format and were asked again", ours(_OURS)),
    "*_questions": metric("the party's messages containing a question mark (a proxy for asking what the other needs)",
                          mixed(seed("004", "Finding it requires asking the other side what they need"),
                                ours("a question mark as the proxy for asking is ours"))),
    "party_turn": metric("the party message's number (observer verdicts not counted)", ours(_OURS)),
    "sentences": metric("sentences in the message, as a reader counts them (ends at . ! ? … or a line break)",
                        mixed(seed("004", "2 to 4 sentences, plain conversational text"),
                              ours("how sentences are counted is ours"))),
    "words": metric("words in the message (whitespace-separated)", ours(_OURS)),
    "question": metric("the message contains a question mark",
                       mixed(seed("004", "Finding it requires asking the other side what they need"),
                             ours("a question mark as the proxy for asking is ours"))),
    "agreement_reached": metric("the observer's verdict on the transcript that message completed",
                                seed("004", "Set agreement_reached to true when the parties have evidently settled")),
}
"""What each metric column means and where its definition comes from (``*``: a role or type)."""
FIELDS = {name: m.meaning for name, m in METRICS.items()}
"""What each metric column means, for the dataset card."""

RESULTS = Results(
    title="Free text judged by an observer model (seed 004)",
    headline=("agreement", "integrative", "observer_confidence", "turns"),
    by_cell=("agreement", "integrative", *(f"is_{t}" for t in ALLOCATION_TYPES), "turns", "turns_to_agreement",
             "observer_confidence", "observer_invalid"),
    outcomes=tuple(RoleFigure(column=f"is_{t}", label=f"share of games judged {t}") for t in ALLOCATION_TYPES),
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
