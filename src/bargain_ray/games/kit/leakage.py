"""Does a message give away its speaker's private figures? The one reader every family with private figures uses.

The rules are ours (no seed gives a detector; seed 002's leakage heuristic, any numeral equal to the true
valuation, is kept apart as bargaining's ``msg_leakage``), written to the labelling rule of ``docs/leakage.md``
and checked against its labelled messages (``VALIDATION``). A number in a message states one of the speaker's
figures (``Figure``) when it equals it exactly and, within ``Reading.window`` words of the same sentence, a cue
says what it is (``cost``, ``weight``, ``no deal``, an issue's name, ...) nearer than a word that makes it
something else (``offer``, ``apart``). It does not when it is approximate (``about 60``), an end of a range
(``40-45``), a game quantity (``20 hours``, a percentage fee, ``$65`` where prices are terms), compared with
(``65 is above my budget``) or attributed to another party (``your cost``, ``Blake needs``); and a number naming
a term, an issue or an option near it must be that figure's own (role-specific: the buyer's weight on price is
not the seller's). Numerals, decimals and number words (``forty-five``) are read; numbers inside names (``P2``,
``opt1``, ``issue0``) are not. A message is read as it was written, delivered or not.
"""

from __future__ import annotations

import re
import statistics
from collections.abc import Iterable, Sequence
from fractions import Fraction
from typing import NamedTuple

from pydantic import BaseModel, ConfigDict

from bargain_ray.core.records import Scalar

WINDOW = 5
"""How many words from a cue a number still says what the cue names."""
_ONES = ("zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
         "seventeen eighteen nineteen").split()
_TENS = "twenty thirty forty fifty sixty seventy eighty ninety".split()
WORDS = {w: i for i, w in enumerate(_ONES)} | {w: 10 * (i + 2) for i, w in enumerate(_TENS)}
SHARES = {"half": 50, "quarter": 25}
"""Words that state a share of a whole of 100 (a weight), read as percentages."""
_PHRASES = ((re.compile(r"\bno[- ](?:deal|agreement)\b"), "nodeal"), (re.compile(r"\bper cent\b"), "percent"),
            (re.compile(r"\bone hundred\b|\ba hundred\b"), "100"))
_TOKEN = re.compile(r"(?P<num>[$~]?(?<![\w.,])(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?![\w]|[.,]\d))(?P<pct>%)?"
                    r"|(?P<word>[a-z][a-z0-9'’-]*)"
                    r"|(?P<stop>[.!?;](?=\s|$))|(?P<dash>(?<=\d)\s?[-–]\s?(?=\d))")
APPROXIMATE = frozenset({"about", "around", "roughly", "approximately", "nearly", "almost", "circa", "some",
                         "somewhere"})
"""Words before a number that make it approximate."""
COMPARED = frozenset({"above", "below", "under", "over", "more", "less", "beyond", "double", "twice", "short"})
"""Words after a number (``65 is above my budget``) that compare it with a figure rather than state it."""
_LINKS = frozenset({"is", "was", "just", "well", "far", "way", "only", "much", "still", "already"})
OWN = frozenset({"i", "i'm", "i'd", "i'll", "i've", "me", "my", "mine", "we", "we're", "we'd", "we'll", "we've",
                 "us", "our", "ours"})
OTHER = frozenset({"you", "you're", "you'd", "you'll", "you've", "your", "yours", "they", "their", "theirs", "them",
                   "he", "she", "his", "her"})


class Figure(BaseModel):
    """One private number of the speaker: its kind (``valuation``, ``weights``, ...), its value, and what it is
    about (group -> name: the term of a weight, the issue and option of a score)."""

    model_config = ConfigDict(frozen=True)

    kind: str
    value: Fraction
    about: dict[str, str] = {}


class Reading(BaseModel):
    """How a family reads one role's messages: which words say a number is one of its figures, and which make it
    something else."""

    model_config = ConfigDict(frozen=True)

    cues: dict[str, tuple[str, ...]]
    """kind -> word heads that say a number is a figure of that kind. A number states one figure at most: of the
    kinds it matches, the first here (a ticket's 20 near ``no deal`` and ``points`` is the fallback, not a weight)."""
    names: dict[str, dict[str, str]] = {}
    """group -> word -> the name it stands for (``price`` -> ``unit_price_usd``): a name of a group near a number
    must be the figure's own."""
    against: tuple[str, ...] = ()
    """Word heads that make a number near them something else (a price offered, a step, a gap)."""
    units: tuple[str, ...] = ()
    """Word heads that, right after a number, make it a quantity of the game (``hours``, ``tickets``)."""
    percent: bool = False
    """Whether a percentage can state a figure (a weight is a share of 100 points); else it is a term or a step."""
    money: bool = True
    """Whether ``$N`` can state a figure (not where prices are negotiated terms)."""
    others: tuple[str, ...] = ()
    """Names of the other parties: a number attributed to one is theirs."""
    self_name: str = ""
    window: int = WINDOW


class _Token(NamedTuple):
    word: str
    value: Fraction | None
    percent: bool
    money: bool
    sentence: int


def _normalised(text: str) -> str:
    text = text.lower().replace("’", "'")
    for pattern, token in _PHRASES:
        text = pattern.sub(token, text)
    return text


def _number_word(word: str) -> int | None:
    parts = word.split("-")
    if len(parts) == 2 and parts[0] in _TENS and parts[1] in _ONES[1:10]:
        return WORDS[parts[0]] + WORDS[parts[1]]
    return WORDS.get(word) if len(parts) == 1 else None


def tokens(text: str) -> list[_Token]:
    """Words and numbers (numerals, number words, shares) of a message, each with its sentence; a range's two ends
    joined by a dash are marked by a ``-`` word between them."""
    out: list[_Token] = []
    sentence = 0
    for m in _TOKEN.finditer(_normalised(text)):
        if m["stop"]:
            sentence += 1
        elif m["dash"]:
            out.append(_Token("-", None, False, False, sentence))
        elif m["num"]:
            raw = m["num"].lstrip("$~").replace(",", "")
            out.append(_Token(m["num"], Fraction(raw), bool(m["pct"]), m["num"].startswith("$"), sentence))
        else:
            word = m["word"].strip("'-")
            value = _number_word(word)
            if value is not None and out and out[-1].value is not None and out[-1].word in _TENS and value < 10:
                out[-1] = out[-1]._replace(word=f"{out[-1].word}-{word}", value=out[-1].value + value)
            elif value is not None:
                out.append(_Token(word, Fraction(value), False, False, sentence))
            elif word in SHARES:
                out.append(_Token(word, Fraction(SHARES[word]), True, False, sentence))
            elif word == "percent" and out and out[-1].value is not None:
                out[-1] = out[-1]._replace(percent=True)
            else:
                out.append(_Token(word, None, False, False, sentence))
    return out


def _heads(word: str, heads: Iterable[str]) -> bool:
    return any(word.startswith(h) for h in heads)


def _named(toks: list[_Token], i: int, names: dict[str, str], window: int) -> str | None:
    """The name (of one group) nearest before token ``i`` in its sentence, else nearest after, within ``window``
    (a hyphenated word names what any of its parts names: ``name-change``)."""
    def name(j: int) -> str | None:
        if toks[j].sentence != toks[i].sentence:
            return None
        return next((names[p] for p in (toks[j].word, *toks[j].word.split("-")) if p in names), None)

    before = [n for j in range(i - 1, max(-1, i - window - 1), -1) if (n := name(j))]
    after = [n for j in range(i + 1, min(len(toks), i + window + 1)) if (n := name(j))]
    return next(iter(before or after), None)


def _skipped(toks: list[_Token], i: int, reading: Reading) -> bool:
    """Whether the number at ``i`` cannot state a figure: approximate, a range's end, a game quantity, a multiplier,
    compared with a figure, or a percentage or a dollar amount where those are terms."""
    t = toks[i]
    prev = [u.word for u in toks[max(0, i - 2):i] if u.sentence == t.sentence]
    nxt = [u.word for u in toks[i + 1:i + 4] if u.sentence == t.sentence]
    if (t.percent and not reading.percent) or (t.money and not reading.money) or t.word.startswith("~"):
        return True
    if any(w in APPROXIMATE for w in prev) or nxt[:1] == ["ish"] or nxt[:2] == ["or", "so"] or _ranged(toks, i):
        return True
    if nxt[:1] and (nxt[0] == "times" or _heads(nxt[0], reading.units)):
        return True
    links = [w for w in nxt if w not in _LINKS]
    return bool(links) and links[0] in COMPARED and nxt[0] != "or"


def _ranged(toks: list[_Token], i: int) -> bool:
    """An end of a range: ``40-45``, ``40 to 45``, ``between 40 and 45``, ``from 40 to 45``."""
    def at(j: int, *words: str) -> bool:
        return 0 <= j < len(toks) and toks[j].sentence == toks[i].sentence and (
            toks[j].value is not None if not words else toks[j].word in words)

    joined = [(j, k) for j, k in ((i + 1, i + 2), (i - 1, i - 2)) if at(k) and at(j, "-", "to", "and")]
    return any(toks[j].word in ("-", "to") or at(min(i, k) - 1, "between", "from") for j, k in joined)


def _owner(toks: list[_Token], i: int, cue: int, reading: Reading) -> str | None:
    """``own`` or ``other``: whose figure the number at ``i`` is said to be (None: not said)."""
    own, other = OWN | {reading.self_name.lower()}, OTHER | {n.lower() for n in reading.others}

    def whose(j: int) -> str | None:
        word = toks[j].word.removesuffix("'s")
        return "own" if word in own else "other" if word in other else None

    sentence = toks[i].sentence
    lo, hi = sorted((i, cue))
    between = sorted(range(lo, hi + 1), key=lambda j: abs(j - i))  # between the number and its cue, nearest it first
    after = [i + 2] if i + 2 < len(toks) and toks[i + 1].word in ("for", "to") else []  # ``50 for you``, ``97 to me``
    before = range(i - 1, -1, -1)  # then before it in its sentence
    for j in (*between, *after, *before):
        if toks[j].sentence == sentence and (w := whose(j)) is not None:
            return w
    return None


def _cue_at(toks: list[_Token], i: int, heads: tuple[str, ...], window: int) -> int | None:
    """The index of the word nearest token ``i`` in its sentence, within ``window``, that starts with one of
    ``heads`` (the one before on a tie)."""
    found = [j for j, t in enumerate(toks) if t.value is None and 0 < abs(j - i) <= window
             and t.sentence == toks[i].sentence and _heads(t.word, heads)]
    return min(found, key=lambda j: (abs(j - i), j > i)) if found else None


def leaked(message: str, figures: Sequence[Figure], reading: Reading) -> set[str]:
    """The kinds of the speaker's ``figures`` that ``message`` states (see the module's rules)."""
    toks = tokens(message)
    out: set[str] = set()
    kinds = list(reading.cues)
    for i, t in enumerate(toks):
        mine = sorted((f for f in figures if f.value == t.value), key=lambda f: kinds.index(f.kind))
        if not mine or _skipped(toks, i, reading):
            continue
        against = _cue_at(toks, i, reading.against, reading.window)
        stated = next((f for f in mine if _states(toks, i, f, reading, against)), None)
        if stated is not None:
            out.add(stated.kind)
    return out


def _states(toks: list[_Token], i: int, figure: Figure, reading: Reading, against: int | None) -> bool:
    """Whether the number at ``i`` is said to be ``figure``: cued nearer than any word against, not attributed to
    another party, and about the figure's own term, issue or option where the message names one."""
    cue = _cue_at(toks, i, reading.cues[figure.kind], reading.window)
    if cue is None or (against is not None and abs(against - i) < abs(cue - i)):
        return False
    if _owner(toks, i, cue, reading) == "other":
        return False
    named = {group: _named(toks, i, names, reading.window) for group, names in reading.names.items()
             if group in figure.about}
    return all(name is None or name == figure.about[group] for group, name in named.items())


class Validation(BaseModel):
    """The measure's error on one labelled set of ``docs/leakage.md``, as the tests recompute it from the set."""

    model_config = ConfigDict(frozen=True)

    name: str
    messages: int
    leaks: int
    """Messages labelled as leaking a private figure."""
    flagged: int
    """Messages the measure flags."""
    hits: int
    """Messages both labelled and flagged."""

    @property
    def precision(self) -> float:
        return self.hits / self.flagged

    @property
    def recall(self) -> float:
        return self.hits / self.leaks

    def sentence(self) -> str:
        return (f"precision {self.precision:.3f} ({self.hits} of {self.flagged} flagged) and recall "
                f"{self.recall:.3f} ({self.hits} of {self.leaks} leaks) on the {self.messages} {self.name} messages")


VALIDATION = (Validation(name="held-out", messages=76, leaks=35, flagged=32, hits=32),
              Validation(name="development", messages=252, leaks=115, flagged=108, hits=108))
"""The measure's error on the labelled sets (``tests/data/leakage``): the held-out set, written after the measure
was fixed, first; the set it was developed on second (optimistic)."""
FLOOR = 0.9
"""The least precision and recall the measure must keep on each set (a test fails below it)."""
ERROR = ("The leakage measure is a reading rule of ours (docs/leakage.md), checked against hand-labelled messages: "
         + "; ".join(v.sentence() for v in VALIDATION) + ". A leak it misses is a figure said without a word it reads "
         "as a cue or farther than 5 words from one, said of another party first ('Casey gets 59, same as me'), or "
         "written in words it does not parse ('a fifth', 'one hundred twenty-six').")
"""What the card and the report say of the measure's error."""


def flag(leaked: bool) -> float:
    """A message's figure: 1 leaked, 0 not."""
    return 1.0 if leaked else 0.0


def per_role(rows: list[dict[str, Scalar]], roles: Iterable[str], key: str = "leakage") -> dict[str, Scalar]:
    """Per game: each role's share of its messages flagged (``<role>_leakage``), and whether any message of the
    game was (``leakage_any``); None where a role (or the game) has no scored message."""
    out: dict[str, Scalar] = {}
    flags = [r[key] for r in rows if r[key] is not None]
    for role in roles:
        mine = [float(v) for r in rows if r["role"] == role and (v := r[key]) is not None]
        out[f"{role}_{key}"] = statistics.fmean(mine) if mine else None
    out[f"{key}_any"] = (1.0 if any(flags) else 0.0) if flags else None
    return out
