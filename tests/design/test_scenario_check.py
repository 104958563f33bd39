"""A scenario checked before any call: ``python -m bargain_ray.check +grid=NAME`` prints, per game and condition,
the zone of agreement, the frontier and the fallbacks, for every packaged grid; a game no deal can win for every
side is refused (by the check, and by every run, dry or not, before Ray) unless ``run.allow_no_zone=true``; its
frontier's SVG renders in Chromium. Before, a no-agreement value above any possible deal was accepted silently."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
from helpers import ROOT

from bargain_ray import check
from bargain_ray.__main__ import main

GRIDS = sorted(p.stem for p in (ROOT / "conf" / "grid").glob("*.yaml"))
HOPELESS = "games.tickets.roles.buyer.no_agreement=250"
"""The buyer's fallback above anything a deal can give it (its best deal is worth 100)."""


@pytest.mark.parametrize("grid", GRIDS)
def test_every_grid_is_checked_cell_by_cell(grid: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert check.main([f"+grid={grid}"]) == 0
    out = capsys.readouterr().out
    cells = re.split(r"^check: ", out, flags=re.M)[1:]
    assert cells
    for cell in cells:
        if "freetext: no scored outcome space" in cell:
            continue
        assert "\n  fallbacks" in cell and "\n  zone of agreement: " in cell and "\n  Pareto frontier: " in cell


def test_a_scenario_with_no_zone_of_agreement_is_refused_unless_allowed(tmp_path: Path,
                                                                        capsys: pytest.CaptureFixture[str]) -> None:
    assert check.main(["+grid=c3_smoke", HOPELESS]) == 1
    out, err = capsys.readouterr()
    assert "zone of agreement: none: no deal beats both fallbacks" in out
    assert err == ("error: game tickets under condition C3: none: no deal beats both fallbacks, so every game can only "
                   "end without a deal; change the fallbacks or the weights (python -m bargain_ray.check +grid=NAME "
                   "shows the space), or run it anyway with run.allow_no_zone=true\n")
    folder = tmp_path / "s"
    with pytest.raises(SystemExit) as stopped:  # the command prints it as its one line, exit 1
        main(["+grid=c3_smoke", HOPELESS, "provider=sim", f"run.dir={folder}", "run.dry_run=true"])
    assert f"{stopped.value}\n" == err and not folder.exists()
    assert check.main(["+grid=c3_smoke", HOPELESS, "run.allow_no_zone=true"]) == 0
    assert main(["+grid=c3_smoke", HOPELESS, "provider=sim", f"run.dir={folder}", "run.dry_run=true",
                 "run.allow_no_zone=true"]) == 0
    assert "zone of agreement: none: no deal beats both fallbacks" in capsys.readouterr().out  # the dry run says it


def test_the_frontier_svg_renders_in_chromium(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert check.main(["+grid=c3_smoke", "--svg", str(tmp_path / "svg")]) == 0
    drawn = Path(capsys.readouterr().out.split("frontier of game tickets under condition C3: ")[1].strip())
    chromium = shutil.which("chromium")
    assert chromium, "Debian's chromium is required: apt-get install -y chromium"
    dom = subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                          f"--user-data-dir={tmp_path / 'profile'}", "--dump-dom", drawn.as_uri()],
                         capture_output=True, text=True, timeout=120, check=True).stdout
    assert "<polyline" in dom and "<title>Pareto frontier</title>" in dom
    assert "Nash bargaining solution (65, 65)" in dom and "<title>no agreement</title>" in dom
