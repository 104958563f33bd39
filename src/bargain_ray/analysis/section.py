"""One family's section of the report, from the results it declares: its figures by model and role, by cell and
by the breakdowns it names, its plots (each on its own family's axis) and its paired differences.

A sweep of several families gets one section each; nothing here names a family.
"""

from __future__ import annotations

from functools import cached_property

import polars as pl

from bargain_ray.analysis import humans, svg
from bargain_ray.analysis.build import Analysis
from bargain_ray.analysis.families import families, results_of
from bargain_ray.analysis.intervals import MIN_SEEDS, Bootstrap
from bargain_ray.analysis.judging import agreement_part
from bargain_ray.analysis.page import cell_label, escape, table, varying
from bargain_ray.analysis.roles import figure_by_model
from bargain_ray.analysis.seeds import by_cell
from bargain_ray.games.kit.results import Results

DEALS_PLOTTED = 2000
"""Deals drawn per frontier plot at most (the first journaled)."""
TITLES = {"agreement": "Deal rate"}


def interval(frame: pl.DataFrame, mean: str = "mean") -> pl.Expr:
    """``mean [low, high]`` of an estimate, three decimals; below the minimum of seeds the mean and why it has no
    interval (``analysis.intervals``)."""
    return (pl.format("{} [{}, {}]", pl.col(mean).round(3), pl.col("ci_low").round(3), pl.col("ci_high").round(3))
            .fill_null(pl.format("{} (n={} seeds, fewer than {}: no CI)", pl.col(mean).round(3), pl.col("n_seeds"),
                                 pl.lit(MIN_SEEDS))))


def zero_width(frame: pl.DataFrame) -> int:
    """Estimates whose interval has zero width (every seed gave the same value)."""
    if "ci_low" not in frame.columns or frame.height == 0:
        return 0
    return frame.filter(pl.col("ci_low").is_not_null() & (pl.col("ci_low") == pl.col("ci_high"))).height


class Section:
    """The figures of one family's games, and the page parts built from them."""

    def __init__(self, a: Analysis, family: str) -> None:
        self.a, self.family = a, family
        self.results: Results = results_of(family)
        self.slug = "".join(ch if ch.isalnum() or ch in "_-" else "-" for ch in family)
        self.games = a.scan_per_game.filter(pl.col("family") == family)
        self.names = [str(g) for g in self.games.select(pl.col("game").unique(maintain_order=True)).collect()["game"]]
        self.roles = a.sweep.roles(self.names)
        self.known = self.games.filter(pl.col("known"))
        self.cells = a.by_cell.filter(pl.col("game").is_in(self.names)) if "game" in a.by else a.by_cell
        self.deterministic = a.rehearsal.replies == "deterministic"

    def anchor(self, part: str = "") -> str:
        return f"family-{self.slug}" + (f"-{part}" if part else "")

    def figures(self, wanted: tuple[str, ...]) -> list[str]:
        """The figures of ``wanted`` this family's cells have an estimate of, in declared order."""
        present = set(self.cells["metric"].to_list())
        return [m for m in wanted if m in present]

    def note_zero(self, frame: pl.DataFrame) -> str:
        """A line under a table whose intervals include zero-width ones on a deterministic sweep, saying why."""
        n = zero_width(frame)
        if not n or not self.deterministic:
            return ""
        return (f'<p class="meta">{n} of these intervals have zero width: the replies are deterministic (see the note '
                "at the top), so every seed of those estimates gave the same value.</p>")

    # --- by model and role

    def by_model(self) -> str:
        parts = []
        turns = self.a.scan_per_turn
        if turns.collect_schema().names():
            turns = turns.join(self.known.select("unit_id"), on="unit_id", how="semi")
        for figure in self.results.by_role:
            rows = figure_by_model(self.known, turns, figure, self.roles, self.a.level)
            shown = rows.select("game", "role", "model", "opponent", pl.col("n_games").alias("games"),
                                pl.col("n_seeds").alias("seeds"), interval(rows).alias(f"mean {figure.label} [CI]"))
            parts.append(f"<h4>{escape(figure.label.capitalize())} (<code>{escape(figure.column)}</code>)</h4>"
                         + (f'<p class="meta measure">{escape(figure.note)}</p>' if figure.note else "")
                         + table(shown, left=4, empty="no game of this family has this figure")
                         + self.note_zero(rows))
        if not parts:
            return '<p class="meta">(this family declares no figure per role)</p>'
        return ('<p class="meta">Mean of a model\'s figure in a role, against the other roles\' models, over known '
                "games: mean of per-seed means [t interval over seeds, see Intervals at the top]; role <i>any</i> pools the "
                "roles.</p>" + "".join(parts))

    # --- by cell and breakdowns

    def wide(self, estimates: pl.DataFrame, by: list[str], order: list[str]) -> pl.DataFrame:
        """Estimates as one row per group and one ``mean [low, high]`` column per figure."""
        c = estimates.filter(pl.col("metric").is_in(order)).with_columns(interval(estimates).alias("value"))
        if c.height == 0:
            return c
        counts = c.group_by(by, maintain_order=True).agg(pl.col("n_games").max().alias("games"),
                                                         pl.col("n_seeds").max().alias("seeds"))
        wide = c.pivot(on="metric", index=by, values="value")
        return counts.join(wide, on=by, nulls_equal=True).select(*by, "games", "seeds", *order)

    def by_cell(self) -> str:
        order = self.figures(self.results.cell_figures)
        shown = self.wide(self.cells, self.a.by, order)
        return ('<p class="meta">Mean of per-seed means over known games, [t interval over seeds]; technical failures '
                "are unknown and left out.</p>" + table(shown, left=len(self.a.by), empty="no known game")
                + self.note_zero(self.cells.filter(pl.col("metric").is_in(order))))

    def breakdowns(self) -> str:
        parts = []
        for b in self.results.breakdowns:
            figures = [f for f in b.figures if f in self.known.collect_schema().names()]
            by = ["game", b.by]
            estimates = by_cell(self.known, by, figures, self.a.level)
            parts.append(f"<h4>{escape(b.title)}</h4>" + table(self.wide(estimates, by, figures), left=2,
                                                                empty="no known game") + self.note_zero(estimates))
        return "".join(parts)

    # --- plots

    def interval_plots(self) -> list[str]:
        """The first three headline figures by cell, each with its interval, on this family's own axis."""
        out = []
        for metric in self.figures(self.results.headline)[:3]:
            rows = self.cells.filter(pl.col("metric") == metric)
            label = varying(rows, self.a.by)
            points = [(cell_label(r, label), r["mean"], r["ci_low"], r["ci_high"]) for r in rows.iter_rows(named=True)]
            values = [v for p in points for v in p[1:] if v is not None]
            domain = (0.0, 1.0) if all(0 <= v <= 1 for v in values) else None
            title = TITLES.get(metric, metric.replace("_", " ").capitalize())
            out.append(svg.intervals(points, f"{title} by cell, {self.a.level:.0%} CI", domain))
        return out

    def frontier_plots(self) -> list[str]:
        """Deals against the agreement space, for each game config of the family that has one."""
        games = self.games
        names = games.collect_schema().names()
        out = []
        for game_name, condition in games.select("game", "condition").unique(maintain_order=True).collect().iter_rows():
            game = self.a.sweep.game_for(game_name, condition)
            space = game.utility_space() if game else None
            if space is None:
                continue
            x, y = (f"utility_{r}" for r in space.roles)
            if not {x, y} <= set(names):
                continue
            deals = (games.filter((pl.col("game") == game_name) & (pl.col("condition") == condition) & pl.col("agreement"))
                     .select(x, y, "unit_id").drop_nulls().head(DEALS_PLOTTED).collect())
            out.append(svg.frontier(
                space.frontier, list(deals.iter_rows()), space.disagreement, space.nash, space.max_welfare,
                space.ranges, space.roles, f"Deals against the Pareto frontier: {game_name} under {condition}",
            ))
        return out

    def length_plot(self) -> str:
        """How long this family's deals took, in its own unit."""
        length = self.results.length
        if length is None or length.column not in self.games.collect_schema().names():
            return ""
        counts = (self.known.filter(pl.col("agreement")).drop_nulls(length.column)
                  .group_by(pl.col(length.column).cast(pl.Int64)).len().sort(length.column).collect())
        return svg.bars([(int(k), int(n)) for k, n in counts.iter_rows()],
                        f"{length.label.capitalize()} ({self.family})", f"{length.column} (deals)")

    def plots(self) -> str:
        plots = [p for p in (*self.interval_plots(), *self.frontier_plots(), self.length_plot()) if p]
        if not plots:
            return '<p class="meta">(no known game to plot)</p>'
        return '<div class="plots">' + "".join(f"<figure>{p}</figure>" for p in plots) + "</div>"

    # --- paired differences

    def paired(self) -> str:
        """a - b on common seeds for every two cells that differ in one factor, a table per factor: a row per pair,
        a column per by-cell figure (under ``condition``, e.g. talk - silence)."""
        pairs = self.a.paired
        if "game" in self.a.by:
            pairs = pairs.filter(pl.col("game").is_in(self.names))
        order = self.figures(self.results.cell_figures)
        pairs = pairs.filter(pl.col("metric").is_in(order))
        parts = []
        for factor in pairs["factor"].unique(maintain_order=True).to_list():
            rows = pairs.filter(pl.col("factor") == factor)
            index = [*(c for c in self.a.by if c != factor), "a", "b"]
            counts = rows.group_by(index, maintain_order=True).agg(pl.col("n_seeds").max().alias("seeds"))
            wide = rows.with_columns(interval(rows, "mean_diff").alias("value")).pivot(on="metric", index=index,
                                                                                      values="value")
            shown = counts.join(wide, on=index, nulls_equal=True).select(*index, "seeds",
                                                                         *(m for m in order if m in wide.columns))
            parts.append(f"<h4>Between two values of <code>{escape(factor)}</code>: a − b</h4>"
                         + table(shown, left=len(index)) + self.note_zero(rows))
        if not parts:
            return '<p class="meta">(no two cells of this family differ in one factor)</p>'
        return ('<p class="meta">a − b on the seeds both cells played (every cell of a block plays its seed), for cells '
                "that differ in one factor, of each figure of the by-cell table: mean [t interval over seeds, not adjusted "
                "for multiplicity: exploratory; the head-to-head section holds the adjusted family]; seeds: the most "
                "any figure had.</p>" + "".join(parts))

    # --- people in human seats

    def people(self) -> str:
        """Each role's figures where a person played it, beside the models in that role against the same
        opponents, and the person − model contrasts (``analysis.humans``)."""
        turns = self.a.scan_per_turn
        if turns.collect_schema().names():
            turns = turns.join(self.known.select("unit_id"), on="unit_id", how="semi")
        parts = []
        for figure in self.results.by_role:
            frame = humans.sides(self.known, turns, figure, self.roles)
            rows, diffs = humans.arms(frame, self.a.level), humans.contrasts(frame, self.a.level)
            if rows.is_empty():
                continue
            shown = rows.select(*humans.KEY, "arm", pl.col("n_games").alias("games"), pl.col("n_seeds").alias("seeds"),
                                interval(rows).alias(f"mean {figure.label} [CI]"))
            contrast = diffs.select(*humans.KEY, "arms", pl.col("n_seeds").alias("seeds"),
                                    interval(diffs, "mean_diff").alias("difference [CI]"))
            parts.append(f"<h4>{escape(figure.label.capitalize())} (<code>{escape(figure.column)}</code>)</h4>"
                         + table(shown, left=4) + table(contrast, left=4, empty="no model arm beside the person arm"))
        return ('<p class="meta">Roles a person played in a human seat (arm <i>person</i>), apart from the models that '
                "played the same role against the same opponents, over known games: mean of per-seed means [t interval "
                f"over seeds, none below {MIN_SEEDS} seeds]; then person − model on the seeds both arms played.</p>"
                + ("".join(parts) or '<p class="meta">(this family declares no figure per role)</p>'))

    @cached_property
    def parts(self) -> list[tuple[str, str, str]]:
        """(anchor, heading, body) of each part of the section, built once (the contents list names them too)."""
        out = [(self.anchor("by-model"), "Results by model and role", self.by_model()),
               (self.anchor("by-cell"), "By cell", self.by_cell())]
        if humans.has_people(self.known, self.roles):
            out.append((self.anchor("people"), "People in human seats", self.people()))
        if self.results.breakdowns:
            out.append((self.anchor("breakdowns"), "Breakdowns", self.breakdowns()))
        if (agreement := agreement_part(self.a.sweep.path, self.names, Bootstrap(level=self.a.level))) is not None:
            out.append((self.anchor("agreement"), "Observer agreement", agreement))
        out += [(self.anchor("plots"), "Plots", self.plots()),
                (self.anchor("paired"), "Paired differences", self.paired())]
        return out

    def html(self) -> str:
        games = self.games.select(pl.len()).collect().item()
        head = (f'<h2 id="{self.anchor()}">{escape(self.results.title)}</h2><p class="meta">family '
                f"<code>{escape(self.family)}</code> · games {escape(', '.join(self.names))} · {games} played</p>")
        return head + "".join(f'<h3 id="{a}">{escape(h)}</h3>{body}' for a, h, body in self.parts)


def sections(a: Analysis) -> list[Section]:
    """One section per family the sweep played, in the order its games first name them."""
    return [Section(a, f) for f in families(a.scan_per_game)]
