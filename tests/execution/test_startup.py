"""The start-up line counts from the command's own start: run as ``pip install … && python -m bargain_ray …``, bash
runs the command in place of itself, in a process that has lived through the install by then."""

from __future__ import annotations

import re
import subprocess
import sys
import time

from helpers import ROOT

INSTALL_S = 2.0
"""How long the process lives before it becomes the command (an install's part): far more than the few
milliseconds this test may take to read a line the command printed."""


def test_a_process_that_waited_before_it_became_the_command_does_not_count_its_wait(sweep_env, tmp_path) -> None:
    command = f'read go && exec "{sys.executable}" -m bargain_ray +grid=demo run.dir={tmp_path / "demo"} ' \
              "run.progress=false run.report=false"
    shell = subprocess.Popen(["bash", "-c", command], cwd=ROOT, env=sweep_env, stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    time.sleep(INSTALL_S)  # not a wait for anything: the time an install takes, which the line must leave out
    released = time.monotonic()  # the command starts after this: it waits for the line below
    shell.stdin.write("go\n")
    shell.stdin.close()
    out, planned = [], None
    for line in shell.stdout:
        out.append(line)
        if planned is None and "; ray: " in line:  # the plan line, the start-up's first mark
            planned = time.monotonic()
    assert shell.wait(timeout=60) == 0, "".join(out)
    marks = re.search(r"^start-up: plan ([\d.]+) s", "".join(out), re.M)
    assert planned is not None and marks is not None, "".join(out)
    # the command started after ``released`` and printed its plan line before ``planned``; the line rounds to 0.1 s
    assert float(marks[1]) <= planned - released + 0.05, (marks[0], planned - released)
