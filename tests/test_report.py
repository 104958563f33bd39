"""The HTML report: self-contained, every transcript with private parts marked, and a real
headless Chromium screenshot that shows the tables and the plots."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys

import pytest
from PIL import Image
from test_analysis import make_sweep

from bargain_ray.report import build_report


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    sweep = make_sweep(tmp_path_factory.mktemp("sweep"))
    return build_report(sweep, resamples=200)


def test_report_is_one_self_contained_file(report):
    html = report.read_text()
    assert report.name == "report.html" and html.startswith("<!doctype html>")
    assert not re.search(r'<(script|link|img)[^>]+(src|href)="(https?:)?//', html)  # nothing fetched
    assert html.count("<svg") >= 4  # efficiency x2, deal rate, frontier, rounds
    for heading in ("Summary", "By cell", "Plots", "Operational, per model", "Transcripts (12)"):
        assert f"<h2>{heading}</h2>" in html


def test_every_transcript_is_rendered_with_private_parts_marked(report):
    html = report.read_text()
    assert html.count('<details class="game">') == 12
    assert html.count("PRIVATE · buyer brief") == 12
    assert html.count("PRIVATE · seller brief") == 11  # the buyer opened the format failure; the seller was never asked
    assert "You negotiate for Marquee Ticket Agency" in html
    assert "Turn 9 · seller" in html and "negotiation-test-20261129-b01-p02-xy-a1-fseller-k09" in html
    assert "TECHNICAL FAILURE: unknown, unscored" in html and "HTTP 529 overloaded" in html
    assert "invalid reply</b> (rule <code>not_one_json_object</code>)" in html


def test_cli_groups_cells_as_asked(tmp_path):
    sweep = make_sweep(tmp_path / "sweep")
    done = subprocess.run([sys.executable, "-m", "bargain_ray.report", str(sweep), "--by", "pairing",
                           "--resamples", "100"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "report: " in done.stdout and (sweep / "report.html").exists()
    bad = subprocess.run([sys.executable, "-m", "bargain_ray.report", str(sweep), "--by", "colour"],
                         capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2 and "cannot group by ['colour']" in bad.stderr


def test_headless_chromium_screenshot_shows_tables_and_plots(report, tmp_path):
    chromium = shutil.which("chromium")
    assert chromium, "Debian's chromium is required: apt-get install -y chromium"
    shot = tmp_path / "report.png"
    subprocess.run(
        [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run", f"--user-data-dir={tmp_path / 'profile'}",
         f"--screenshot={shot}", "--window-size=1400,2000", report.as_uri()],
        capture_output=True, timeout=120, check=True,
    )
    image = Image.open(shot).convert("RGB")
    assert image.size == (1400, 2000)
    colours = image.getcolors(maxcolors=1 << 20)
    assert len(colours) > 50  # not blank: text, tables and plots
    counts = {rgb: n for n, rgb in colours}
    table_header = (0xF3, 0xF4, 0xF6)  # th background
    plot_bar = (0x25, 0x63, 0xEB)  # CI bars and histogram bars
    frontier_box = (0xF9, 0xFA, 0xFB)  # the frontier plot's background
    assert counts.get(table_header, 0) > 2000
    assert counts.get(plot_bar, 0) > 500
    assert counts.get(frontier_box, 0) > 20000
