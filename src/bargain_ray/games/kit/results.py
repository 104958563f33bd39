"""What a family's results are, as the family declares them: which of its figures a report leads with, which
are figures of each role, and how long its games ran. The report reads these and names no family.

A family's ``metrics`` module holds one ``Results`` (``RESULTS``); every name in it is a column the family's
``per_game`` (or ``per_turn``) writes, a shared column of the games table (``agreement``, ``format_failure``,
``rounds_to_agreement``), or a ``Derived`` figure it declares here.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict


class Declared(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class RoleFigure(Declared):
    """A figure each role of a game has, shown by model and role against the other roles' models.

    Per game, ``column`` names it with ``{role}`` standing for the role (``{role}_payoff``, ``gain_{role}``);
    per turn, ``column`` is a per-turn figure (``words``) whose rows name their role, averaged over the
    role's turns of a game first (so a game weighs the same however many turns it had)."""

    column: str
    label: str
    per: Literal["game", "turn"] = "game"
    note: str = ""
    """A sentence shown under the figure's table: what a reader must know of how it is measured (its error)."""


class Derived(Declared):
    """A per-game figure computed from the family's own columns when a sweep is analysed, as one SQL
    expression over the games table (polars' SQL), e.g. a rate of games that closed a feasible deal."""

    name: str
    sql: str
    meaning: str


class Breakdown(Declared):
    """Figures shown by one column of the design rather than by cell (the observer's verdicts by pairing)."""

    by: str
    figures: tuple[str, ...]
    title: str


class Length(Declared):
    """The figure whose histogram shows how long the family's deals took, in the family's own unit."""

    column: str
    label: str


class Results(Declared):
    """A family's section of the report: its headline figures by cell (plotted with their intervals), the
    by-cell table, the figures of each role, breakdowns, and how long its deals took."""

    title: str
    headline: tuple[str, ...]
    """Plotted by cell with seed-clustered intervals, the first ones first (the deal rate among them)."""
    by_cell: tuple[str, ...] = ()
    """The by-cell table's figures in order (empty: the headline)."""
    by_role: tuple[RoleFigure, ...] = ()
    outcomes: tuple[RoleFigure, ...] = ()
    """The family's own outcome, which a head-to-head compares models on (the first one leads; per game and role, or
    per game when ``column`` names no ``{role}``: then every party of the game has it)."""
    opener: str = "first_speaker"
    """The per-game column naming the role that moved first (a family whose units name none says where it is)."""
    derived: tuple[Derived, ...] = ()
    breakdowns: tuple[Breakdown, ...] = ()
    length: Length | None = None
    deal: tuple[str, ...] = ()
    """The columns that say what a game agreed, shown in each transcript's header (``*`` stands for a term or an
    issue: ``deal_*``)."""

    @property
    def cell_figures(self) -> tuple[str, ...]:
        return self.by_cell or self.headline
