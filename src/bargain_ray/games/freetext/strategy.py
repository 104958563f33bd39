"""Offline agents of the free-text family: a scripted talker and a rule-based observer.

Both read only the text a model would read: the talker its own brief and the
conversation, the observer its instructions and the transcript. The talker's
parameters are ``Params``; the observer reads its ``misread`` and ``draw`` (ours: a
stochastic observer, as the simulated provider's ``misread`` setting passes them).
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from bargain_ray.games.freetext.engine import ALLOCATION_TYPES
from bargain_ray.games.freetext.prompts import OPENING, REPAIR_HEAD, TRANSCRIPT_HEAD
from bargain_ray.games.kit.concession import Kind
from bargain_ray.games.kit.reading import find_match

_TALKER = re.compile(r"^You are negotiating with another party over a single (.+?)\. There is exactly one")
_NEED = re.compile(r"Getting as (?:much|many) of the (.+?) as possible")
_OBSERVER = re.compile(r"^You silently observe a negotiation between two parties over a single (.+?)\. ")
_THEIR_NEED = re.compile(
    r"(?:What I need is|\bI (?:only |really |just )?need(?: all of)?) the ([\w' -]+?)(?:,| for| to|[.!?])"
)

Style = Literal["integrative", "distributive", "hardline"]
THRESHOLD: dict[Style, float] = {"integrative": 0.75, "distributive": 0.5, "hardline": 1.0}
"""The least share of its own part a style accepts (the whole object counts 1)."""
KIND_STYLE: dict[Kind, Style] = {"boulware": "hardline", "linear": "distributive", "conceder": "integrative"}


class Params(BaseModel):
    """A free-text talker's parameters (``models.<letter>.strategy``)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    style: Style | None = None
    """integrative: tells its need, asks the other's and offers the split by parts; distributive: offers to cut the
    object in half; hardline: claims the whole object. None: the one ``kind`` picks."""
    kind: Kind | None = None
    """Without ``style``, a concession kind (as the simulated provider passes it) picks one: boulware is hardline,
    linear distributive, conceder integrative; neither: integrative."""
    greedy: bool = False
    """An integrative split that keeps a little of the other's part."""
    concede_after: int | None = Field(None, ge=0)
    """After that many own messages it accepts whatever the other side last proposed; None: never."""
    misread: float = Field(0.0, ge=0, le=1)
    """The observer's chance of a verdict drawn among the other allocation types instead of read (ours: a stochastic
    observer, so re-reading a transcript can disagree); 0: it reads exactly."""
    draw: int = 0
    """The seed of that draw (the simulated provider's: one per request)."""

    def talker_style(self) -> Style:
        return self.style or (KIND_STYLE[self.kind] if self.kind else "integrative")


def recognizes(system: str) -> bool:
    return bool(_TALKER.match(system) or _OBSERVER.match(system))


def respond(system: str, messages: list[dict[str, str]], params: Mapping[str, Any]) -> str:  # free-form: the strategy block as written, read as Params
    """A talker's message or the observer's verdict JSON, whichever the prompt asks for."""
    if watched := _OBSERVER.match(system):
        verdict = observe(watched[1], _transcript(messages[0]["content"]))
        return json.dumps(misread(verdict, Params.model_validate(params)))
    return talk(system, messages, params)


@dataclass(frozen=True)
class Talker:
    obj: str
    need: str
    style: Style
    greedy: bool
    concede_after: int | None

    @classmethod
    def read(cls, system: str, params: Params) -> Talker:
        obj = find_match(_TALKER, system)[1]
        need = _NEED.search(system)  # a situation worded otherwise: the talker needs the object itself
        return cls(obj, need[1] if need else obj, params.talker_style(), params.greedy, params.concede_after)

    def value(self, text: str) -> float | None:
        """What the other side's proposal in ``text`` leaves me, or None without a proposal."""
        t, obj, need = text.lower(), re.escape(self.obj.lower()), re.escape(self.need.lower())
        you, me = r"\byou (?:take|get|keep|have|can have)", r"\bi(?:'ll| will)? (?:take|get|keep|have)"
        if re.search(rf"{you} the (?:whole|entire) {obj}\b", t):
            return 1.0
        if re.search(rf"{me} the (?:whole|entire) {obj}\b", t):
            return 0.0
        if re.search(r"\bin half\b|\beach take half\b", t):
            return 0.5
        if re.search(rf"{you} all of the {need}\b", t):
            return 1.0
        if re.search(rf"{you} most of the {need}\b", t):
            return 0.75
        return None

    def their_need(self, theirs: list[str]) -> str | None:
        for text in reversed(theirs):
            for found in _THEIR_NEED.findall(text):
                if found.lower() not in (self.obj.lower(), self.need.lower()):
                    return found
        return None

    def message(self, mine: list[str], theirs: list[str], last: str | None) -> str:
        offered = self.value(last) if last else None
        conceding = self.concede_after is not None and len(mine) >= self.concede_after
        if offered is not None and (offered >= THRESHOLD[self.style] or conceding):
            return "Agreed, I accept your proposal. Thank you, that settles it."
        tell = f"What I need is the {self.need}, for something I promised a friend tonight."
        if self.style == "hardline":
            return f"This {self.obj} is mine and I need all of it. Here is my proposal: I take the whole {self.obj}."
        if self.style == "distributive":
            head = tell if last and "?" in last else f"I need this {self.obj} as much as you do."
            return f"{head} Here is my proposal: we cut the {self.obj} in half and each take half. Do we agree?"
        theirs_is = self.their_need(theirs)
        if theirs_is is None:
            return f"{tell} What do you need the {self.obj} for?"
        if self.greedy:
            split = (f"you take most of the {theirs_is} and I take all of the {self.need} "
                     f"plus a little of the {theirs_is}")
        else:
            split = f"you take all of the {theirs_is} and I take all of the {self.need}"
        return f"Then we can both get what we need. Here is my proposal: {split}. Do we agree?"


def talk(system: str, messages: list[dict[str, str]], params: Mapping[str, Any]) -> str:  # free-form: the strategy block as written, read as Params
    """The scripted talker's next message, from its own brief and the conversation."""
    said: list[dict[str, str]] = []
    for m in messages:
        if m["role"] == "user" and m["content"].startswith(REPAIR_HEAD):
            said.pop()  # a repair: the rejected reply was never said
        elif m["content"] != OPENING:
            said.append(m)
    mine = [m["content"] for m in said if m["role"] == "assistant"]
    theirs = [m["content"] for m in said if m["role"] == "user"]
    last = said[-1]["content"] if said and said[-1]["role"] == "user" else None
    return Talker.read(system, Params.model_validate(params)).message(mine, theirs, last)


_ENTRY = re.compile(r"(?:^|\n\n)Turn \d+, ([^:\n]+): ")


def _transcript(user: str) -> list[tuple[str, str]]:
    """(speaker, message) pairs of the observer's transcript."""
    body = user.split(f"{TRANSCRIPT_HEAD}\n\n", 1)[1].rsplit("\n\nReport what has happened", 1)[0]
    parts = _ENTRY.split(body)[1:]
    return list(zip(parts[::2], parts[1::2], strict=True))


_ASSENT = re.compile(r"\b(agreed|deal|i agree|i accept|that works|sounds good|perfect|yes)\b", re.I)
_REFUSAL = re.compile(r"\b(no|not|but|instead|however|rather)\b|n't\b", re.I)
_PROPOSAL = re.compile(
    r"propos|\byou (?:take|get|keep|have|can have|could take)\b|\bi(?:'ll| will)? take\b|\bin half\b|\bsplit\b",
    re.I,
)
_SENTENCE = re.compile(r"(?<=[.!?])\s+")


def _sentence(text: str, pattern: re.Pattern[str]) -> str | None:
    return next((s for s in _SENTENCE.split(text) if pattern.search(s)), None)


def _classify(obj: str, proposal: str) -> tuple[str, str, float]:
    """(allocation_type, rationale, confidence) of an agreed proposal, by simple keyword rules."""
    t = proposal.lower()
    if re.search(rf"\b(?:whole|entire) {re.escape(obj.lower())}\b|\ball of it\b", t):
        return "lopsided", f"One party ends up with the whole {obj}.", 0.9
    if re.search(r"\b(?:most|majority|some|a little|part) of\b", t):
        return "integrative_partial", "The split is by parts, but a party gets only some or most of its part.", 0.8
    if len(set(re.findall(r"\ball (?:of )?the ([\w' -]+?)\b(?: and|[.,;!?]|$)", t))) >= 2:
        return "integrative_full", "The split is by parts and each party gets all of its own part.", 0.9
    if re.search(r"\bhalf\b|\bhalves\b|\bsplit\b|\bshare", t):
        return "distributive", f"The {obj} is divided by quantity.", 0.9
    return "distributive", "An agreed division with no part named is read as a division by quantity.", 0.5


def observe(obj: str, transcript: list[tuple[str, str]]) -> dict[str, Any]:  # free-form: a JSON reply as sent (the strategy's reply text)
    """Agreement when the latest message assents to a proposal in the message before it."""
    none = {"agreement_reached": False, "allocation_type": "none", "allocation": "No division has been agreed yet."}
    if len(transcript) < 2:
        return none | {"rationale": "Only one party has spoken.", "confidence": 0.9}
    (proposer, before), (assenter, latest) = transcript[-2], transcript[-1]
    first = _SENTENCE.split(latest.strip())[0]
    proposal = _sentence(before, _PROPOSAL)
    if proposal is None or not _ASSENT.search(first) or _REFUSAL.search(first):
        why = "The most recent proposal has not been accepted." if proposal else "No concrete division is on the table."
        return none | {"rationale": why, "confidence": 0.8}
    kind, why, confidence = _classify(obj, proposal)
    return {
        "agreement_reached": True,
        "allocation_type": kind,
        "allocation": f'{proposer} proposed "{proposal}" and {assenter} agreed.',
        "rationale": why,
        "confidence": confidence,
    }


def misread(verdict: dict[str, Any], params: Params) -> dict[str, Any]:  # free-form: a JSON reply as sent
    """``verdict``, or with chance ``params.misread`` (drawn from the seed ``params.draw``) a verdict of another
    allocation type, drawn uniformly, consistent with it (ours: the simulated observer's noise)."""
    rng = random.Random(params.draw)
    if rng.random() >= params.misread:
        return verdict
    kind = rng.choice([t for t in ALLOCATION_TYPES if t != verdict["allocation_type"]])
    return {"agreement_reached": kind != "none", "allocation_type": kind,
            "allocation": "A misreading: this verdict was drawn, not read.",
            "rationale": "The simulated observer misread the transcript.", "confidence": 0.5}
