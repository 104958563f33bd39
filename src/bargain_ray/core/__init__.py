"""What every layer shares and nothing else: prompts, records, statuses, exact figures, hashing, safe text, and
the two facts about the running process that more than one layer needs (which variables are keys, the code's
commit)."""

from bargain_ray.core.errors import TechnicalFailure
from bargain_ray.core.figures import Figure
from bargain_ray.core.hashing import digest
from bargain_ray.core.prompt import Message, Prompt
from bargain_ray.core.records import (
    CallMeta,
    CallRecord,
    FamilyFields,
    FamilyOutcome,
    GameRecord,
    Reply,
    TurnRecord,
    Usage,
)
from bargain_ray.core.status import Ended, Status

__all__ = [
    "CallMeta", "CallRecord", "Ended", "FamilyFields", "FamilyOutcome", "Figure", "GameRecord", "Message", "Prompt",
    "Reply", "Status", "TechnicalFailure", "TurnRecord", "Usage", "digest",
]
