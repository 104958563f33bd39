"""Agreement statistics of a judging panel: each equals a published worked example, the seed-clustered interval
covers a known kappa at its nominal rate (by simulation), and the panel's figures (swap flips, self-consistency,
flags, agreement with humans) count what they say on reads built here."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
import pytest
from statsmodels.stats.inter_rater import cohens_kappa

from bargain_ray.analysis.agreement import Ratings, estimate
from bargain_ray.analysis.intervals import Bootstrap
from bargain_ray.analysis.judging import BadLabels, Judging, read_label_file
from bargain_ray.store.judging import READ_SCHEMA


def test_cohens_kappa_is_the_worked_example():
    """Cohen's kappa of two raters, 50 items, yes/yes 20, yes/no 5, no/yes 10, no/no 15: p_o 0.7, p_e 0.5, kappa 0.4."""
    rows = [["yes", "yes"]] * 20 + [["yes", "no"]] * 5 + [["no", "yes"]] * 10 + [["no", "no"]] * 15
    r = Ratings.of(rows, list(range(50)))
    assert estimate(r.cohen(0, 1), r.seeds, Bootstrap(200)).value == pytest.approx(0.4)


def test_fleiss_kappa_is_fleiss_worked_example():
    """Fleiss' kappa of 14 raters over 10 subjects in 5 categories (Fleiss 1971's layout, the textbook table): 0.210."""
    table = [[0, 0, 0, 0, 14], [0, 2, 6, 4, 2], [0, 0, 3, 5, 6], [0, 3, 9, 2, 0], [2, 2, 8, 1, 1], [7, 7, 0, 0, 0],
             [3, 2, 6, 3, 0], [2, 5, 3, 2, 2], [6, 5, 2, 1, 0], [0, 2, 2, 3, 7]]
    rows = [[str(c) for c, n in enumerate(counts) for _ in range(n)] for counts in table]
    r = Ratings.of(rows, list(range(10)))
    assert estimate(r.fleiss(), r.seeds, Bootstrap(200)).value == pytest.approx(0.2099, abs=1e-4)


def test_krippendorffs_alpha_is_krippendorffs_worked_example_with_missing_labels():
    """Krippendorff (2011), "Computing Krippendorff's alpha-reliability": 4 coders, 12 units, nominal, missing values;
    alpha 0.743."""
    coders = [[1, 2, 3, 3, 2, 1, 4, 1, 2, None, None, None], [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, None, 3],
              [None, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, None], [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, None]]
    rows = [[None if c[u] is None else str(c[u]) for c in coders] for u in range(12)]
    r = Ratings.of(rows, list(range(12)))
    alpha = estimate(r.alpha(), r.seeds, Bootstrap(200))
    assert alpha.value == pytest.approx(0.743, abs=5e-4) and alpha.games == 11  # unit 12 has one value: unpairable


def population_kappa(q: tuple[float, ...], k: int) -> float:
    """Kappa of two raters who each report a game's true category (uniform over ``k``) with a chance drawn per seed
    from ``q`` (equally likely), else a uniform category: both margins are uniform, so p_e = 1/k."""
    agree = np.mean([(p + (1 - p) / k) ** 2 + (k - 1) * ((1 - p) / k) ** 2 for p in q])
    return (agree - 1 / k) / (1 - 1 / k)


def test_the_seed_clustered_interval_covers_a_known_kappa_at_its_nominal_rate():
    """Games of one seed share the raters' reliability there (a seed effect), so resampling games would be too
    narrow; resampling seeds covers the population kappa at about the nominal 90%."""
    rng = np.random.default_rng(2026)
    k, q, seeds, per_seed = 3, (0.35, 0.95), 30, 3
    truth = population_kappa(q, k)
    boot = Bootstrap(resamples=200, level=0.9, seed=7)
    hits, sims = 0, 120
    for _ in range(sims):
        reliability = rng.choice(q, size=seeds).repeat(per_seed)
        true = rng.integers(0, k, size=seeds * per_seed)

        labels = np.stack([np.where(rng.random(true.size) < reliability, true, rng.integers(0, k, size=true.size))
                           for _ in range(2)], axis=1)
        r = Ratings(labels, np.arange(seeds).repeat(per_seed), [str(c) for c in range(k)])
        e = estimate(r.cohen(0, 1), r.seeds, boot)
        hits += e.ci_low <= truth <= e.ci_high
    assert 0.82 <= hits / sims <= 0.97, hits / sims  # nominal 0.90


def test_one_seed_gives_no_interval_and_one_category_no_kappa():
    r = Ratings.of([["a", "a"], ["b", "a"]], [1, 1])
    one_seed = estimate(r.cohen(0, 1), r.seeds, Bootstrap(100))
    assert one_seed.value is not None and one_seed.ci_low is None and one_seed.seeds == 1
    same = Ratings.of([["a", "a"], ["a", "a"]], [1, 2])
    assert estimate(same.cohen(0, 1), same.seeds, Bootstrap(100)).text() == "undefined"


def reads(rows: list[tuple]) -> pl.DataFrame:
    """A reads table from (game, seed, reader, swapped, repeat, verdict, recorded, same_model) tuples."""
    out = []
    for game, seed, reader, swapped, repeat, verdict, recorded, same in rows:
        out.append({"read_id": f"{game}-j{reader}{'s' if swapped else ''}{repeat}", "unit_id": game, "game": "orange",
                    "condition": "FT", "cell": "FT|OOO|a1" if same else "FT|HHO|a1", "pairing": "OOO", "seed": seed,
                    "block": seed, "reader": reader, "reader_model": {"O": "opus", "G": "gpt"}[reader],
                    "kind": "observer" if reader == "O" else "panel", "same_model": same, "swapped": swapped,
                    "names_shown": False, "repeat": repeat, "status": "AGREEMENT", "known": True,
                    "allocation_type": verdict, "confidence": 0.9, "recorded": recorded, "calls": 1, "cost_usd": 0.0})
    return pl.DataFrame(out, schema=READ_SCHEMA)


@pytest.fixture
def panel() -> Judging:
    """Four games (seeds 1-4); O reads each twice as played and twice swapped, G once each way. O flips game g2's
    repeat 1 under the swap and disagrees with itself on g3; O shares a model with the parties of g1 and g2."""
    full, none = "integrative_full", "none"
    rows = []
    for i, (game, recorded) in enumerate([("g1", full), ("g2", none), ("g3", full), ("g4", none)], start=1):
        o1 = o2 = recorded
        if game == "g3":
            o2 = "distributive"
        rows += [(game, i, "O", False, 1, o1, recorded, i <= 2), (game, i, "O", False, 2, o2, recorded, i <= 2),
                 (game, i, "O", True, 1, "lopsided" if game == "g2" else o1, recorded, i <= 2),
                 (game, i, "O", True, 2, o2, recorded, i <= 2),
                 (game, i, "G", False, 1, recorded, recorded, False), (game, i, "G", True, 1, recorded, recorded, False)]
    return Judging(reads(rows), Bootstrap(200))


def test_swap_flips_are_the_repeats_whose_verdict_changes_with_the_labels(panel):
    o = next(r for r in panel.readers if r.name == "O")
    rate, differ, games = panel.flips(o)
    assert (rate.value, rate.games, games) == (1 / 8, 8, ["g2"])
    assert differ.value == 1 / 4  # g3's two repeats as played differ
    g = next(r for r in panel.readers if r.name == "G")
    assert panel.flips(g)[0].value == 0 and panel.consistency(g) is None  # one repeat: no self-consistency


def test_self_consistency_and_same_model_flags(panel):
    o = next(r for r in panel.readers if r.name == "O")
    alpha, agree, repeats = panel.consistency(o)
    assert repeats == 2 and agree.value == 3 / 4
    flagged = panel.same_model().row(0)
    assert flagged[:3] == ("O", "opus", 2) and flagged[3] == ["orange FT|OOO|a1"]
    assert any("flagged: reader O (opus) is the model of a party in 2 games" in line for line in panel.lines())


def test_kappa_against_humans_is_cohens_on_the_games_they_labelled(tmp_path: Path, panel):
    csv = tmp_path / "labels.csv"
    csv.write_text("unit_id,allocation_type,rater\ng1,integrative_full,ana\ng2,none,ana\ng3,distributive,ana\n")
    humans = read_label_file(csv, {"g1", "g2", "g3", "g4"})
    judged = Judging(panel.reads, Bootstrap(200), humans)
    kappa = next(e for a, b, e in judged.pairs() if a.name == "recorded" and b.name == "ana")
    table = np.zeros((5, 5))
    types = judged.ratings.categories
    for recorded, human in [("integrative_full", "integrative_full"), ("none", "none"),
                            ("integrative_full", "distributive")]:
        table[types.index(recorded), types.index(human)] += 1
    assert kappa.games == 3 and kappa.value == pytest.approx(cohens_kappa(table, return_results=False))
    assert "Cohen's kappa recorded verdict vs ana (human)" in "\n".join(judged.lines())


def test_a_bad_labels_file_is_refused_one_line_a_mistake(tmp_path: Path):
    csv = tmp_path / "labels.csv"
    csv.write_text("unit_id,allocation_type\ng1,split\ng9,none\ng2,\ng1,none\ng1,none\n")
    with pytest.raises(BadLabels) as caught:
        read_label_file(csv, {"g1", "g2"})
    assert caught.value.problems == [
        f"{csv}:2: allocation_type 'split' is not one of integrative_full, integrative_partial, distributive, "
        "lopsided, none",
        f"{csv}:3: unit_id 'g9' is not a game of this sweep folder",
        f"{csv}:4: allocation_type is empty",
        f"{csv}:6: human labelled g1 twice; keep one label a rater a game",
    ]
    (tmp_path / "wrong.csv").write_text("game,label\ng1,none\n")
    with pytest.raises(BadLabels, match="no column unit_id, allocation_type"):
        read_label_file(tmp_path / "wrong.csv", {"g1"})
