"""The figures of a judging run (``judging/reads.parquet``): how often the readers agree, with each other, with the
recorded verdict, with themselves and with humans, and which readers share a model with a party.

A rater's label of a game is its allocation type (the seed's five, ``none`` for no agreement). The raters are the
recorded verdict (the game's final one, its outcome), each reader's first read of the game as it was played (repeat
1, labels as played), and each human of a labels file. Pairwise agreement is Cohen's κ; overall agreement of the
recorded verdict and the readers is Fleiss' κ (over the games every one of them read) and Krippendorff's α (nominal,
every game with two labels or more). A reader's self-consistency is α over its repeats as played, and the share of
games where all of them agree; a swap flip is a repeat whose verdict with the labels exchanged differs from the same
repeat as played, shown beside how often two repeats as played differ (what a flip rate would be if the swap changed
nothing). Every interval is the seed-clustered bootstrap's (``analysis.agreement``).
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations
from pathlib import Path

import numpy as np
import polars as pl
from pydantic import BaseModel, ValidationError

from bargain_ray.analysis.agreement import Estimate, Ratings, clustered, estimate, share
from bargain_ray.analysis.intervals import Bootstrap
from bargain_ray.analysis.page import escape, table
from bargain_ray.games.freetext.engine import ALLOCATION_TYPES
from bargain_ray.store.judging import read_labels, read_reads

RECORDED = "recorded"
"""The rater that is the game's own final verdict."""
HUMAN_COLUMNS = ("unit_id", "allocation_type")
"""The columns a labels file must have (``rater`` is optional)."""


class HumanLabel(BaseModel):
    """One row of a human labels file: a game, its allocation type as a person read it, and who (default human)."""

    unit_id: str
    allocation_type: str
    rater: str = "human"


class BadLabels(ValueError):
    """A labels file that cannot be read: ``problems`` holds one line per mistake."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("\n".join(problems))
        self.problems = problems


SHOWN_PROBLEMS = 5
"""Mistakes of a labels file named at most (the rest counted)."""


def read_label_file(path: Path, games: set[str]) -> pl.DataFrame:
    """A human labels CSV (``docs/judging.md``) as rows (unit_id, allocation_type, rater), each checked against the
    judged ``games`` and the seed's five types; ``BadLabels`` names each mistake by its line."""
    try:
        frame = pl.read_csv(path, infer_schema=False)
    except (OSError, pl.exceptions.PolarsError) as exc:
        raise BadLabels([f"{path}: cannot be read as CSV ({type(exc).__name__}); it needs a header line with "
                         f"{', '.join(HUMAN_COLUMNS)} (and optionally rater)"]) from None
    if missing := [c for c in HUMAN_COLUMNS if c not in frame.columns]:
        raise BadLabels([f"{path}: no column {', '.join(missing)}; the header needs {', '.join(HUMAN_COLUMNS)} (and "
                         f"optionally rater), it has {', '.join(frame.columns) or 'nothing'}"])
    problems, rows, seen = [], [], set()
    for line, data in enumerate(frame.iter_rows(named=True), start=2):
        try:
            row = HumanLabel.model_validate({k: (v or "").strip() or None for k, v in data.items()
                                             if k in HumanLabel.model_fields and v is not None})
        except ValidationError as exc:
            problems.append(f"{path}:{line}: {exc.errors()[0]['loc'][0]} is empty")
            continue
        if row.allocation_type not in ALLOCATION_TYPES:
            problems.append(f"{path}:{line}: allocation_type {row.allocation_type!r} is not one of "
                            f"{', '.join(ALLOCATION_TYPES)}")
        elif row.unit_id not in games:
            problems.append(f"{path}:{line}: unit_id {row.unit_id!r} is not a game of this sweep folder")
        elif (row.unit_id, row.rater) in seen:
            problems.append(f"{path}:{line}: {row.rater} labelled {row.unit_id} twice; keep one label a rater a game")
        else:
            seen.add((row.unit_id, row.rater))
            rows.append(row.model_dump())
    if problems:
        more = [f"(and {len(problems) - SHOWN_PROBLEMS} more lines)"] if len(problems) > SHOWN_PROBLEMS else []
        raise BadLabels(problems[:SHOWN_PROBLEMS] + more)
    if not rows:
        raise BadLabels([f"{path}: no label; give one line per game: unit_id,allocation_type[,rater]"])
    return pl.DataFrame(rows, schema={"unit_id": pl.String, "allocation_type": pl.String, "rater": pl.String})


@dataclass(frozen=True)
class Rater:
    """A column of the ratings: its name as shown and what it is."""

    name: str
    model: str
    kind: str
    """recorded, observer (the game's own observer reading again), panel, or human."""


class Judging:
    """The figures of a folder's reads (and human labels, when given), computed on demand."""

    def __init__(self, reads: pl.DataFrame, boot: Bootstrap, humans: pl.DataFrame | None = None) -> None:
        self.reads, self.boot = reads, boot
        self.humans = humans if humans is not None and humans.height else None
        games = reads.select("unit_id", "seed", "recorded", "game", "cell").unique("unit_id", maintain_order=True)
        self.games = games
        self.seeds = games["seed"].to_numpy()
        readers = (reads.select("reader", "reader_model", "kind").unique(maintain_order=True)
                   .sort(pl.col("kind") != "observer", "reader"))
        self.readers = [Rater(r, m, k) for r, m, k in readers.iter_rows()]
        human_raters = [] if self.humans is None else self.humans["rater"].unique(maintain_order=True).to_list()
        self.raters = [Rater(RECORDED, "", RECORDED), *self.readers, *(Rater(h, "", "human") for h in human_raters)]
        self.ratings = Ratings.of([list(row) for row in self._labels().iter_rows()], self.seeds.tolist(),
                                  list(ALLOCATION_TYPES))

    def _first_reads(self, reader: str, swapped: bool = False, repeat: int = 1) -> pl.DataFrame:
        return self.reads.filter((pl.col("reader") == reader) & (pl.col("swapped") == swapped)
                                 & (pl.col("repeat") == repeat) & pl.col("known")).select("unit_id", "allocation_type")

    def _labels(self) -> pl.DataFrame:
        """One row per game, one column per rater (null where it gave no label)."""
        out = self.games.select("unit_id", pl.col("recorded").alias(RECORDED))
        for r in self.readers:
            out = out.join(self._first_reads(r.name).rename({"allocation_type": r.name}), on="unit_id", how="left")
        if self.humans is not None:
            for name in self.humans["rater"].unique(maintain_order=True):
                mine = self.humans.filter(pl.col("rater") == name).select("unit_id", pl.col("allocation_type")
                                                                          .alias(name))
                out = out.join(mine, on="unit_id", how="left")
        return out.drop("unit_id")

    def index(self, name: str) -> int:
        return next(i for i, r in enumerate(self.raters) if r.name == name)

    def label(self, rater: Rater) -> str:
        """How a rater is shown: ``recorded verdict``, ``O claude-opus-5-5 (the game's observer again)``."""
        if rater.kind == RECORDED:
            return "recorded verdict"
        if rater.kind == "human":
            return f"{rater.name} (human)"
        return f"{rater.name} {rater.model}" + (" (the game's observer again)" if rater.kind == "observer" else "")

    # --- the figures

    def overall(self) -> tuple[Estimate, Estimate]:
        """(Fleiss' κ, Krippendorff's α) of the recorded verdict and every reader's first read as played."""
        machines = [i for i, r in enumerate(self.raters) if r.kind != "human"]
        return (estimate(self.ratings.fleiss(machines), self.seeds, self.boot),
                estimate(self.ratings.alpha(machines), self.seeds, self.boot))

    def pairs(self) -> list[tuple[Rater, Rater, Estimate]]:
        """Cohen's κ of every two raters over the games both labelled."""
        return [(a, b, estimate(self.ratings.cohen(i, j), self.seeds, self.boot))
                for (i, a), (j, b) in combinations(enumerate(self.raters), 2)]

    def shares(self) -> pl.DataFrame:
        """Each rater's share of each allocation type over the games it labelled (first reads as played)."""
        labels = self._labels()
        rows = []
        for rater in self.raters:
            column = labels[rater.name].drop_nulls()
            n = column.len()
            rows.append({"rater": self.label(rater), "games": n,
                         **{t: round((column == t).sum() / n, 3) if n else None for t in ALLOCATION_TYPES}})
        return pl.DataFrame(rows, schema={"rater": pl.String, "games": pl.Int64,
                                          **dict.fromkeys(ALLOCATION_TYPES, pl.Float64)})

    def consistency(self, reader: Rater) -> tuple[Estimate, Estimate, int] | None:
        """(α over the reader's repeats as played, the share of games where they all agree, repeats), None with one
        repeat."""
        as_played = self.reads.filter((pl.col("reader") == reader.name) & ~pl.col("swapped"))
        repeats = sorted(as_played["repeat"].unique().to_list())
        if len(repeats) < 2:
            return None
        wide = self.games.select("unit_id")
        for r in repeats:
            wide = wide.join(self._first_reads(reader.name, repeat=r).rename({"allocation_type": f"r{r}"}),
                             on="unit_id", how="left")
        rows = [list(row) for row in wide.drop("unit_id").iter_rows()]
        ratings = Ratings.of(rows, self.seeds.tolist(), list(ALLOCATION_TYPES))
        complete = np.array([all(v is not None for v in row) for row in rows])
        same = np.array([len(set(row)) == 1 for row, whole in zip(rows, complete, strict=True) if whole])
        return (estimate(ratings.alpha(), self.seeds, self.boot),
                clustered(share(same), self.seeds[complete], self.boot), len(repeats))

    def flips(self, reader: Rater) -> tuple[Estimate, Estimate | None, list[str]] | None:
        """(the share of repeats whose verdict flips when the labels are exchanged, the share of games whose first
        two repeats as played differ, the games with a flip), None without swapped reads."""
        mine = self.reads.filter((pl.col("reader") == reader.name) & pl.col("known"))
        plain = mine.filter(~pl.col("swapped")).select("unit_id", "repeat", "seed", "allocation_type")
        swapped = mine.filter(pl.col("swapped")).select("unit_id", "repeat", pl.col("allocation_type").alias("s"))
        both = plain.join(swapped, on=["unit_id", "repeat"], how="inner")
        if both.height == 0:
            return None
        flipped = (both["allocation_type"] != both["s"]).to_numpy()
        rate = clustered(share(flipped), both["seed"].to_numpy(), self.boot)
        first, second = (self._first_reads(reader.name, repeat=r) for r in (1, 2))
        pair = first.join(second, on="unit_id", suffix="_2").join(self.games.select("unit_id", "seed"), on="unit_id")
        differ = (clustered(share((pair["allocation_type"] != pair["allocation_type_2"]).to_numpy()),
                            pair["seed"].to_numpy(), self.boot) if pair.height else None)
        games = both.filter(pl.col("allocation_type") != pl.col("s"))["unit_id"].unique(maintain_order=True)
        return rate, differ, games.to_list()

    def same_model(self) -> pl.DataFrame:
        """Per reader that shares a model with a party of the games it read: how many games, in which cells."""
        flagged = self.reads.filter(pl.col("same_model"))
        return (flagged.group_by("reader", "reader_model", maintain_order=True)
                .agg(pl.col("unit_id").n_unique().alias("games"),
                     pl.concat_str("game", pl.lit(" "), "cell").unique(maintain_order=True).sort().alias("cells")))

    # --- as shown

    def lines(self) -> list[str]:
        """The terminal's account of the figures."""
        fleiss, alpha = self.overall()
        level = f"{self.boot.level:.0%}"
        out = [f"agreement on the allocation type ({len(self.seeds)} games, {fleiss.seeds} seeds; {level} intervals: "
               f"bootstrap of seeds, {self.boot.resamples} resamples):",
               f"  overall, the recorded verdict and each reader's first read as played: Fleiss' kappa {fleiss.text()} "
               f"({fleiss.games} games), Krippendorff's alpha {alpha.text()} ({alpha.games} games)"]
        out += [f"  Cohen's kappa {self.label(a)} vs {self.label(b)}: {e.text()} ({e.games} games)"
                for a, b, e in self.pairs()]
        for reader in self.readers:
            if (c := self.consistency(reader)) is not None:
                a, agree, n = c
                out.append(f"  self-consistency of {self.label(reader)} over {n} repeats as played: alpha {a.text()}, "
                           f"all repeats agree in {agree.text()} of games")
            if (f := self.flips(reader)) is not None:
                rate, differ, games = f
                beside = f"; two repeats as played differ in {differ.text()} of games" if differ else ""
                shown = ", ".join(games[:3]) + (f" and {len(games) - 3} more" if len(games) > 3 else "")
                out.append(f"  swap flips of {self.label(reader)}: {rate.text()} of repeats change verdict with the "
                           f"labels exchanged{beside}" + (f"; flipped: {shown}" if games else ""))
        for reader, model, games, cells in self.same_model().iter_rows():
            out.append(f"  flagged: reader {reader} ({model}) is the model of a party in {games} games it read "
                       f"({', '.join(cells)})")
        return out

    def html(self) -> str:
        """The report's part: verdict shares beside each rater's agreement with the recorded verdict, the pairs, the
        overall figures, each reader's self-consistency and swap flips, and the flags."""
        fleiss, alpha = self.overall()
        versus = {b.name: e for a, b, e in self.pairs() if a.name == RECORDED}
        shares = self.shares().with_columns(
            pl.Series("kappa vs recorded [CI]", ["—"] + [versus[r.name].text() for r in self.raters[1:]]))
        pairs = pl.DataFrame([{"a": self.label(a), "b": self.label(b), "games": e.games, "Cohen's kappa [CI]": e.text()}
                              for a, b, e in self.pairs()])
        readers = []
        for reader in self.readers:
            c, f = self.consistency(reader), self.flips(reader)
            readers.append({
                "reader": self.label(reader),
                "self-consistency alpha [CI]": c[0].text() if c else "one repeat",
                "repeats all agree [CI]": c[1].text() if c else "one repeat",
                "swap flips [CI]": f[0].text() if f else "no swap",
                "repeats differ as played [CI]": f[1].text() if f and f[1] else "—",
                "games flipped": len(f[2]) if f else 0})
        flags = [f'<p class="flag" data-reader="{escape(r)}">flagged: reader {escape(r)} ({escape(m)}) is the model '
                 f"of a party in {n} games it read ({escape(', '.join(c))})</p>" for r, m, n, c in
                 self.same_model().iter_rows()]
        return (f'<p class="meta">The panel read each finished game again (judging/reads.parquet): {len(self.seeds)} '
                f"games, {self.reads.height} reads. Labels are allocation types; intervals are {self.boot.level:.0%} "
                f"percentile intervals of a bootstrap of seeds ({self.boot.resamples} resamples).</p>"
                f'<p id="judging-overall">Fleiss\' kappa <b class="fig">{escape(fleiss.text())}</b> · '
                f'Krippendorff\'s alpha <b class="fig">{escape(alpha.text())}</b> (the recorded verdict and each '
                "reader's first read as played)</p>"
                + "".join(flags)
                + "<h4>Verdict shares and agreement with the recorded verdict</h4>"
                + table(shares, left=1)
                + "<h4>Each reader: self-consistency and swap flips</h4>" + table(pl.DataFrame(readers), left=1)
                + "<h4>Every two raters</h4>" + table(pairs, left=2))


def agreement_part(path: Path, games: list[str], boot: Bootstrap) -> str | None:
    """The report's observer-agreement part for the games named ``games`` of the sweep folder ``path``: None when the
    folder was never judged (or none of these games was), else the figures, or one line saying why they cannot be
    read."""
    try:
        reads = read_reads(path)
        humans = read_labels(path)
    except OSError as exc:
        return f'<p class="technical">{escape(str(exc))}</p>'
    if reads is None:
        return None
    reads = reads.filter(pl.col("game").is_in(games) & pl.col("known"))
    if not reads.height:
        return None
    return Judging(reads, boot, humans).html()
