"""What a multi-issue game records: each turn's fields and its scored outcome, seed 001's outcome record.

Terms are written as the decimals of the record (``"64.50"``), figures as ``core.figures`` pairs.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, SerializerFunctionWrapHandler, model_serializer, model_validator

from bargain_ray.core.figures import Figure
from bargain_ray.core.records import FamilyFields, FamilyOutcome

Kind = Literal["OFFER", "ACCEPT", "NONE", "END"]
SHARE = "_share_of_joint_gain"
"""The suffix of the outcome's share figure, named by the config's ``share_role`` (seed 001's
``buyer_share_of_joint_gain``)."""


class MultiIssueTurn(FamilyFields):
    """The turn record's family columns: the action, its offer id, its terms as written, the message."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    action: Kind
    offer_id: str | None
    terms: dict[str, str] | None
    message: str
    final_reply: bool


class Deal(BaseModel):
    """The accepted offer: its terms as written, its id, who made and who accepted it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    terms: dict[str, str]
    offer_id: str
    proposer: str
    acceptor: str | None


class MultiIssueOutcome(FamilyOutcome):
    """Seed 001's scored outcome: the deal, each role's utility and gain, the joint figures, the share of the joint
    gain of ``share_role`` (written ``<share_role>_share_of_joint_gain``, as seed 001 names it), the roles left below
    their no-agreement points. A game without a result to score (a format failure) has every figure null."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    no_deal: bool
    deal: Deal | None
    utilities: dict[str, Figure] | None
    gains: dict[str, Figure] | None
    joint: Figure | None
    joint_gain: Figure | None
    efficiency: Figure | None
    efficiency_all_assigned: Figure | None
    share_role: str
    share_of_joint_gain: Figure | None
    below_fallback: list[str]

    @model_validator(mode="before")
    @classmethod
    def _read_share(cls, data: Any) -> Any:
        """``<role>_share_of_joint_gain`` as written back into ``share_role`` and ``share_of_joint_gain``."""
        if isinstance(data, dict) and "share_role" not in data:
            key = next((k for k in data if k.endswith(SHARE)), None)
            if key is not None:
                data = {k: v for k, v in data.items() if k != key} | {
                    "share_role": key.removesuffix(SHARE), "share_of_joint_gain": data[key]}
        return data

    @model_serializer(mode="wrap")
    def _write_share(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:  # free-form: a serializer's JSON output
        """The share figure under its seed 001 name, in its place (after ``efficiency_all_assigned``)."""
        data = handler(self)
        role, share = data.pop("share_role"), data.pop("share_of_joint_gain")
        below = data.pop("below_fallback")
        return data | {f"{role}{SHARE}": share, "below_fallback": below}
