"""What a free-text game records: each turn's fields (a party's message, or the observer's verdict) and its
scored outcome (the observer's final verdict)."""

from __future__ import annotations

from typing import Annotated, Any, Literal, Self

from pydantic import ConfigDict, Field, TypeAdapter

from bargain_ray.core.records import FamilyFields, FamilyOutcome

AllocationType = Literal["integrative_full", "integrative_partial", "distributive", "lopsided", "none"]


class FreeTextTurn(FamilyFields):
    """A turn's fields: what it was (``MESSAGE`` or ``VERDICT``) and the party message it is about (party messages
    are counted apart from the observer's verdicts). Read as one of its two shapes, by ``action``."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    action: Literal["MESSAGE", "VERDICT"]
    party_turn: int

    @classmethod
    def read(cls, data: dict[str, Any]) -> Self:  # free-form: the turn's fields as written, validated here
        turn = _SHAPES.validate_python(data)
        if not isinstance(turn, cls):
            raise TypeError(f"a free-text turn is not a {cls.__name__}: {data.get('action')!r}")
        return turn


class MessageTurn(FreeTextTurn):
    """A party's message with its measured length (sentences and words: never enforced)."""

    action: Literal["MESSAGE"]
    message: str
    sentences: int
    words: int


class VerdictTurn(FreeTextTurn):
    """The observer's verdict on the transcript up to party message ``party_turn``."""

    action: Literal["VERDICT"]
    agreement_reached: bool
    allocation_type: AllocationType
    allocation: str
    rationale: str
    confidence: float


_SHAPES: TypeAdapter[MessageTurn | VerdictTurn] = TypeAdapter(
    Annotated[MessageTurn | VerdictTurn, Field(discriminator="action")])


class FreeTextOutcome(FamilyOutcome):
    """The observer's final verdict and the game's length; no verdict (null) after a format or technical failure."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    party_turns: int
    turns_to_agreement: int | None
    verdicts: int
    agreement_reached: bool | None
    allocation_type: AllocationType | None
    allocation: str | None
    rationale: str | None
    observer_confidence: float | None
    failed_role: str | None
    observer_role: str
