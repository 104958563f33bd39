"""Scoring a scorable negotiation: the deal, each party's surplus, and the deal space around it.

A party's payoff is its points for the deal if it is part of it, else its
threshold (the no-deal outcome the prompt promises a walker). Feasible deals
are packages every party scores at or above its threshold; welfare is the sum
of payoffs; ``welfare_ratio`` compares a deal's welfare with the best feasible
deal's, ``surplus_ratio`` the joint surplus over thresholds (0 without a deal).
Space figures come from enumerating every package, which stops with a clear
message past ``max_enumerated_deals``.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator
from fractions import Fraction
from functools import cache

from bargain_ray.core.figures import Figure, value_of
from bargain_ray.core.records import GameRecord, Scalar
from bargain_ray.core.status import Status
from bargain_ray.games.kit import leakage
from bargain_ray.games.kit.results import Derived, Length, Results, RoleFigure
from bargain_ray.games.kit.space import OutcomeSpace
from bargain_ray.games.provenance import Metric, metric, mixed, ours, seed
from bargain_ray.games.scorable.config import ScorableConfig, exact
from bargain_ray.games.scorable.engine import State
from bargain_ray.games.scorable.records import BestFeasible, Deal, Placement, ScorableOutcome, ScorableTurn


class SpaceTooLarge(ValueError):
    """The deal space is bigger than the config allows to enumerate."""


def size(config: ScorableConfig) -> int:
    return math.prod(len(i.options) for i in config.issues)


def deals(config: ScorableConfig) -> Iterator[dict[str, str]]:
    """Every complete package, in issue and option order."""
    limit = config.max_enumerated_deals
    if size(config) > limit:
        raise SpaceTooLarge(
            f"{size(config)} possible deals exceed max_enumerated_deals={limit}: "
            "feasibility, Pareto optimality and welfare ratios are not computed"
        )
    names = [i.name for i in config.issues]
    for combo in itertools.product(*(i.options for i in config.issues)):
        yield dict(zip(names, combo, strict=True))


def no_deal_welfare(config: ScorableConfig) -> Fraction:
    """Welfare without a deal: every party keeps its threshold."""
    return sum((config.threshold(p) for p in config.parties), Fraction(0))


def scores(config: ScorableConfig, deal: dict[str, str]) -> dict[str, Fraction]:
    return {p: config.points(p, deal) for p in config.parties}


def space(config: ScorableConfig) -> OutcomeSpace:
    """The enumerated deal space of a config (parties in config order), computed once per process."""
    return _space(config.model_dump_json())


@cache
def _space(key: str) -> OutcomeSpace:
    config = ScorableConfig.model_validate_json(key)
    packages = list(deals(config))
    parties = list(config.parties)
    numbers = [config.threshold(p) for p in parties] + [
        exact(v) for p in config.parties.values() for sheet in p.scores.values() for v in sheet.values()
    ]
    scale = math.lcm(*(x.denominator for x in numbers))
    rows = [
        [tuple(int(exact(config.parties[p].scores[i.name][o]) * scale) for p in parties) for o in i.options]
        for i in config.issues
    ]
    points = [tuple(map(sum, zip(*combo, strict=True))) for combo in itertools.product(*rows)]
    return OutcomeSpace(roles=tuple(parties), disagreement=tuple(config.threshold(p) for p in parties),
                        deals=tuple(packages), points=tuple(points), scale=scale)


def placement(config: ScorableConfig, chosen: dict[str, str] | None) -> tuple[Placement, Fraction | None]:
    """Figures of the whole deal space and where the chosen deal stands in it; plus the best
    feasible deal's welfare (the first in enumeration order on ties)."""
    s = space(config)
    top = max(s.feasible, key=lambda k: sum(s.points[k]), default=None)
    best = None if top is None else Fraction(sum(s.points[top]), s.scale)
    base = no_deal_welfare(config)
    mine = None if chosen is None else s.points[s.deals.index(chosen)]
    return Placement(
        deals_enumerated=len(s.deals),
        feasible_deals=len(s.feasible),
        best_feasible=None if top is None or best is None else BestFeasible(
            options=s.deals[top], welfare=Figure.of(best), joint_surplus=Figure.of(best - base)),
        pareto_optimal=None if mine is None else not s.dominated(mine),
    ), best


def outcome(config: ScorableConfig, state: State) -> ScorableOutcome:
    """The scored part of the outcome record (``Outcome.scored``; the loop adds status and calls)."""
    status = state.ended.status if state.ended else None
    closed = state.deal if status == Status.AGREEMENT else None
    deal = closed.deal if closed else None
    head = {
        "deal": None if closed is None else Deal(offer_id=closed.offer_id, proposer=closed.proposer,
                                                 supporters=list(closed.supporters)),
        "options": deal, "first_opener": config.roles[state.opener], "walked": list(state.walked),
        "offers_tabled": len(state.offers), "rounds_played": state.round,
    }
    try:
        figures, best = placement(config, deal)
        head |= dict(figures)
    except SpaceTooLarge as exc:
        head |= dict.fromkeys(Placement.model_fields)
        head["space_error"] = str(exc)
        best = None
    if status not in (Status.AGREEMENT, Status.NO_AGREEMENT):
        return ScorableOutcome(**head, **dict.fromkeys(("scores", "surplus", "welfare", "joint_surplus",
                                                        "welfare_ratio", "surplus_ratio")), below_threshold=[])
    points = scores(config, deal) if deal else None
    payoff = {p: points[p] if points and p not in state.walked else config.threshold(p) for p in config.parties}
    surplus = {p: payoff[p] - config.threshold(p) for p in config.parties}
    welfare = sum(payoff.values(), Fraction(0))
    joint = sum(surplus.values(), Fraction(0))
    best_joint = None if best is None else best - no_deal_welfare(config)
    return ScorableOutcome(
        **head,
        scores=None if points is None else {p: Figure.of(v) for p, v in points.items()},
        surplus={p: Figure.of(v) for p, v in surplus.items()},
        below_threshold=[p for p in config.parties if surplus[p] < 0],
        welfare=Figure.of(welfare),
        joint_surplus=Figure.of(joint),
        welfare_ratio=Figure.of(welfare / best) if deal and best else None,
        surplus_ratio=Figure.of(joint / best_joint) if best_joint else None,
    )


def per_game(config: ScorableConfig, record: GameRecord,
             turns: list[dict[str, Scalar]] | None = None) -> dict[str, Scalar]:
    """The family's columns for one game record; identity, status and call counts are the shared columns of
    ``analysis.per_game``."""
    out = ScorableOutcome.of(record.outcome.scored)
    row: dict[str, Scalar] = {
        "first_opener": out.first_opener,
        "feasible_deals": out.feasible_deals,
        "pareto_optimal": out.pareto_optimal,
        "walks": len(out.walked),
        "offers_tabled": out.offers_tabled,
        "rounds_used": out.rounds_played,
        "below_threshold": len(out.below_threshold),
    }
    for key, fig in (("welfare", out.welfare), ("joint_surplus", out.joint_surplus),
                     ("welfare_ratio", out.welfare_ratio), ("surplus_ratio", out.surplus_ratio)):
        row[key] = value_of(fig)
    for issue, option in (out.options or {}).items():
        row[f"option_{issue}"] = option
    for figures, column in ((out.scores, "score"), (out.surplus, "surplus")):
        for party, fig in (figures or {}).items():
            row[f"{column}_{party}"] = value_of(fig)
    agents = record.unit.agent_of_role
    focal = [role for role, agent in agents.items() if agent == "A"]
    if len(focal) == 1 and len(agents) > 2:
        seat = focal[0]
        row |= {"focal_seat": seat, "focal_score": row.get(f"score_{seat}"), "focal_surplus": row.get(f"surplus_{seat}")}
    return row | leakage.per_role(per_turn(config, record) if turns is None else turns, config.roles)


THRESHOLD_CUES = ("threshold", "bar", "need", "least", "minimum", "below", "under", "clear", "reach", "veto",
                  "accept", "cover", "require", "enough")
SCORE_CUES = ("point", "scor", "worth", "get", "giv", "sheet")
"""Words that say a number is the party's threshold, or one of its own scores (ours); an issue's or option's name
cues a score too."""
QUANTITIES = ("issue", "option", "package", "round", "part")


def reading(config: ScorableConfig, party: str) -> leakage.Reading:
    """How a party's messages are read: a score said of an issue or an option must be the party's score there."""
    issues = {i.name.lower(): i.name for i in config.issues}
    options = {o.lower(): o for i in config.issues for o in i.options}
    return leakage.Reading(cues={"threshold": THRESHOLD_CUES, "scores": (*SCORE_CUES, *issues, *options)},
                           names={"issue": issues, "option": options}, units=QUANTITIES,
                           others=tuple(p for p in config.parties if p != party), self_name=party)


def figures(config: ScorableConfig, party: str) -> list[leakage.Figure]:
    """A party's private numbers: its threshold and each of its nonzero scores."""
    sheet = config.parties[party].scores
    return [leakage.Figure(kind="threshold", value=config.threshold(party)),
            *(leakage.Figure(kind="scores", value=exact(v), about={"issue": issue, "option": option})
              for issue, options in sheet.items() for option, v in options.items() if v)]


def leaked(config: ScorableConfig, party: str, message: str) -> set[str]:
    """Which of the party's private numbers ``message`` states: ``threshold``, ``scores`` (the rule: docs/leakage.md)."""
    return leakage.leaked(message, figures(config, party), reading(config, party))


def per_turn(config: ScorableConfig, record: GameRecord) -> list[dict[str, Scalar]]:
    """One row per legal turn: does its message give away the speaker's threshold or one of its nonzero scores?"""
    if not record.outcome.known:
        return []
    rows: list[dict[str, Scalar]] = []
    for t in record.turns:
        if not t.valid:
            continue
        kinds = leaked(config, t.role, ScorableTurn.of(t.fields).message)
        rows.append({"unit_id": record.unit.unit_id, "turn": t.turn, "role": t.role,
                     "leaked_threshold": leakage.flag("threshold" in kinds),
                     "leaked_scores": leakage.flag("scores" in kinds), "leakage": leakage.flag(bool(kinds))})
    return rows


_OURS = "seed 003 defines no metric: this figure of the game is ours"
LEAK = mixed(seed("003", "never reveal these numbers verbatim"),
             ours("the leakage detector's rules are ours (kit.leakage): seed 003 asks for secrecy, measures none"))
METRICS: dict[str, Metric] = {
    "first_opener": metric("party that opened round 1 (the unit's first speaker, else seat seed mod parties)",
                           ours("seed 003 does not say who opens round 1: seat seed mod parties is ours")),
    "feasible_deals": metric("packages every party scores at or above its threshold (exhaustive enumeration)",
                             mixed(seed("003", "A deal scoring below this is worse for you than no deal at all."),
                                   ours("counting the packages that clear every threshold is our measure"))),
    "pareto_optimal": metric("no package is at least as good for every party and better for one (deals only)",
                             ours(_OURS)),
    "walks": metric("parties that walked away", ours(_OURS)),
    "offers_tabled": metric("offers P1, P2, ... tabled in the game", ours(_OURS)),
    "rounds_used": metric("rounds of the rotation reached", ours(_OURS)),
    "below_threshold": metric("parties left below their threshold by the deal", ours(_OURS)),
    "welfare": metric("sum of payoffs: deal points for parties in the deal, the threshold for walkers and for no "
                      "deal", ours(_OURS)),
    "joint_surplus": metric("sum of payoffs minus thresholds", ours(_OURS)),
    "welfare_ratio": metric("welfare / the best feasible deal's welfare (deals only)", ours(_OURS)),
    "surplus_ratio": metric("joint surplus / the best feasible deal's joint surplus (0 without a deal)", ours(_OURS)),
    "option_*": metric("option chosen on each issue",
                       seed("003", "Exactly one option must be chosen for every issue; the chosen options together "
                                   "form the deal.")),
    "score_*": metric("each party's points for the deal",
                      seed("003", "Your total for a deal is the sum of your points for the chosen options.")),
    "surplus_*": metric("each party's payoff minus its threshold", ours(_OURS)),
    "leaked_threshold": metric("per turn: 1 if the message states the speaker's threshold as its own, at most "
                               f"{leakage.WINDOW} words from a word starting with {', '.join(THRESHOLD_CUES)}, not "
                               "another party's (docs/leakage.md: the rule and the measured error); measured on what "
                               "was written, whether or not it was delivered", LEAK),
    "leaked_scores": metric("per turn: 1 if it states one of the speaker's nonzero scores as its own the same way, "
                            f"near a word starting with {', '.join(SCORE_CUES)} or an issue's or option's name, the "
                            "party's own score on the issue or option it names", LEAK),
    "leakage": metric("per turn: leaked_threshold or leaked_scores", LEAK),
    "*_leakage": metric("per game: share of the party's messages that leak its private numbers", LEAK),
    "leakage_any": metric("per game: 1 if any message leaked (null without one)", LEAK),
    "focal_seat": metric("seat swaps: the seat held by agent A (the focal model)",
                         mixed(seed("003", "Seat-swap comparison"),
                               ours("the focal model as agent A, the same model in every other seat, is ours"))),
    "focal_score": metric("seat swaps: the focal seat's points for the deal", ours(_OURS)),
    "focal_surplus": metric("seat swaps: the focal seat's surplus over its threshold", ours(_OURS)),
}
"""What each ``per_game`` column means and where its definition comes from (``*``: an issue or party)."""
FIELDS = {name: m.meaning for name, m in METRICS.items()}
"""What each metric column means, for the dataset card."""

RESULTS = Results(
    title="Multi-party scorable negotiation with seat swaps (seed 003)",
    headline=("agreement", "feasible_deal", "welfare", "welfare_ratio"),
    by_cell=("agreement", "feasible_deal", "welfare", "welfare_ratio", "joint_surplus", "walks", "offers_tabled",
             "format_failure"),
    outcomes=(RoleFigure(column="score_{role}", label="points for the deal"),),
    opener="first_opener",
    by_role=(RoleFigure(column="score_{role}", label="points for the deal"),
             RoleFigure(column="surplus_{role}", label="surplus over the threshold"),
             RoleFigure(column="{role}_leakage", label="share of its messages that leak its private numbers",
                        note=leakage.ERROR)),
    derived=(Derived(name="feasible_deal", sql="agreement AND below_threshold = 0",
                     meaning="the game closed a deal every party scores at or above its threshold (mean: the "
                             "feasible-deal rate)"),),
    length=Length(column="rounds_used", label="rounds of the rotation used"),
    deal=("option_*",),
)
"""The report's section: each seat's score and surplus by the model in it (seat swaps put the focal model in
every seat), welfare and the feasible-deal rate by cell."""
