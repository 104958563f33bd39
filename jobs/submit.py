"""Submit a sweep to a running Ray cluster as a Ray job.

    python jobs/submit.py --address http://HEAD:8265 --dir /shared/sweeps/c3_full -- +grid=c3_full
    python jobs/submit.py ... --no-wait -- +grid=c3_full run.workers=8

It runs ``ray job submit --working-dir <checkout> -- python -m bargain_ray
+grid=... run.dir=DIR``. The checkout is uploaded (``.gitignore`` applies, and
``outputs/`` and ``.git/`` are excluded too) and put first on ``PYTHONPATH``
through ``src``, so the cluster runs the code you have here. The driver runs on
the head node and alone writes the sweep folder: ``--dir`` must be a path on
the head that outlives the job (a mounted volume), and submitting the same
command again resumes the sweep there.

Token auth (Ray >= 2.52 clusters): ``ray job submit`` sends the cluster's token
only when ``RAY_AUTH_MODE=token`` is set and the token is in ``RAY_AUTH_TOKEN``,
in the file ``RAY_AUTH_TOKEN_PATH`` or in ``~/.ray/auth_token``. This script sets
``RAY_AUTH_MODE=token`` when a token is available and the mode is not set.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EXCLUDES = [".git/", "outputs/", "**/__pycache__/", "*.egg-info/"]


def runtime_env() -> dict[str, object]:
    """Beside ``--working-dir``: what not to upload, and ``src`` ahead of any installed copy."""
    return {"excludes": EXCLUDES, "env_vars": {"PYTHONPATH": "src"}}


def has_token(env: dict[str, str]) -> bool:
    path = env.get("RAY_AUTH_TOKEN_PATH") or str(Path.home() / ".ray" / "auth_token")
    return bool(env.get("RAY_AUTH_TOKEN")) or Path(path).is_file()


def auth_env(env: dict[str, str]) -> dict[str, str]:
    """``env`` with token mode on when a token is at hand (the CLI does not look for one otherwise)."""
    if "RAY_AUTH_MODE" not in env and has_token(env):
        return env | {"RAY_AUTH_MODE": "token"}
    return env


def command(args: argparse.Namespace, overrides: list[str]) -> list[str]:
    entry = ["python", "-m", "bargain_ray", *overrides, f"run.dir={args.dir}"]
    if not any(o.startswith("run.progress=") for o in overrides):
        entry.append("run.progress=false")  # a progress bar is noise in job logs
    cmd = ["ray", "job", "submit", "--working-dir", ".", "--runtime-env-json", json.dumps(runtime_env())]
    if args.address:
        cmd += ["--address", args.address]
    if args.submission_id:
        cmd += ["--submission-id", args.submission_id]
    if args.no_wait:
        cmd.append("--no-wait")
    return [*cmd, "--", *entry]


def parse(argv: list[str]) -> tuple[argparse.Namespace, list[str]]:
    parser = argparse.ArgumentParser(
        description="Submit a bargain_ray sweep to a Ray cluster.",
        usage="%(prog)s [--address URL] --dir PATH [--no-wait] -- +grid=NAME [overrides ...]",
    )
    parser.add_argument("--address", default=None,
                        help="the cluster's dashboard, e.g. http://HEAD:8265 (default: $RAY_API_SERVER_ADDRESS "
                             "or $RAY_ADDRESS, as ray job submit reads them)")
    parser.add_argument("--dir", required=True,
                        help="the sweep folder as the head node sees it, on storage that outlives the job")
    parser.add_argument("--no-wait", action="store_true", help="return once submitted; follow with ray job logs -f")
    parser.add_argument("--submission-id", default=None, help="a job id of your own (must be new on each submit)")
    parser.add_argument("--print", action="store_true", help="print the ray job submit command and exit")
    args, rest = parser.parse_known_args(argv)
    overrides = [a for a in rest if a != "--"]
    if not any(o.startswith(("+grid=", "grid=")) for o in overrides):
        parser.error("name a grid after --, e.g. -- +grid=c3_full")
    if any(o.startswith("run.dir=") for o in overrides):
        parser.error("give the sweep folder with --dir, not run.dir=")
    if not args.dir.startswith("/"):
        parser.error("--dir must be absolute: a relative path lands in the job's temporary working dir")
    return args, overrides


def main(argv: list[str] | None = None) -> None:
    args, overrides = parse(sys.argv[1:] if argv is None else argv)
    cmd = command(args, overrides)
    print("+", shlex.join(cmd), flush=True)
    if args.print:
        return
    os.chdir(ROOT)  # the checkout is the working dir, wherever this is run from
    os.execvpe(cmd[0], cmd, auth_env(dict(os.environ)))


if __name__ == "__main__":
    main()
