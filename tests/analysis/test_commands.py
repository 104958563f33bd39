"""Every command's usage error exits 1 (the README's table: a user error; argparse's own 2 means "unknown games") in
one line naming ``--help``, and every ``--help`` is plain text that gives the exit codes."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys

import pytest

from bargain_ray.core.status import ExitCode

MISTAKES = {
    "bargain_ray.report": [[], ["outputs/x", "--level", "2"]],
    "bargain_ray.view": [["--port", "x"]],
    "bargain_ray.plan": [[], ["outputs/x", "--contrast", "a-b", "--effect", "1"],
                         ["outputs/x", "--metric", "m", "--contrast", "a-b", "--effect", "1", "--target-halfwidth", "1"]],
    "bargain_ray.rescore": [[], ["outputs/x", "outputs/y"], ["--colour", "outputs/x"]],
    "bargain_ray.replay": [[], ["a.json", "b.json"], ["--colour", "a.json"]],
}


def command(*args: str, cwd=None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", *args], capture_output=True, text=True, timeout=120, cwd=cwd)


@pytest.mark.parametrize(("module", "args"), [(m, a) for m, cases in MISTAKES.items() for a in cases])
def test_a_usage_error_exits_1_in_one_line_naming_help(module, args, tmp_path):
    done = command(module, *args, cwd=tmp_path)
    assert done.returncode == ExitCode.USER_ERROR, (done.returncode, done.stderr)
    assert done.stdout == "" and done.stderr.startswith("error: ") and done.stderr.count("\n") == 1, done.stderr
    assert [shlex.split(c) for c in re.findall(r"`([^`]+)`", done.stderr)] == [["python", "-m", module, "--help"]]
    assert not any(tmp_path.iterdir())  # nothing written


@pytest.mark.parametrize("module", list(MISTAKES))
def test_help_reads_as_plain_text_with_the_exit_codes(module):
    done = command(module, "--help")
    assert done.returncode == 0 and done.stderr == ""
    assert "`" not in done.stdout and f"usage: python -m {module}" in done.stdout
    text = " ".join(done.stdout.split())
    assert re.search(r"[Ee]xit codes: (0 [^,]+, )?1 a usage error", text), text[-300:]
