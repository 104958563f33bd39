"""``python -m bargain_ray.view [outputs/NAME]``: a live view of the sweeps under ``outputs/`` in the browser.

Serves on 127.0.0.1 (``--host`` to change) at a free port unless ``--port`` is given, and prints the
address. The page refreshes itself while a sweep runs; the view reads the folders and never writes them.
"""

from __future__ import annotations

import argparse
import socket
import sys
from pathlib import Path

from aiohttp import web

from bargain_ray.analysis.view import make_app
from bargain_ray.core.status import ExitCode
from bargain_ray.store import MANIFEST


def free_port(host: str) -> int:
    with socket.socket() as s:
        s.bind((host, 0))
        return s.getsockname()[1]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bargain_ray.view", description=__doc__.splitlines()[0])
    parser.add_argument("sweep", type=Path, nargs="?", default=None,
                        help="a sweep folder to open (its parent is listed); default: list outputs/")
    parser.add_argument("--root", type=Path, default=Path("outputs"), help="folder whose sweeps are listed")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="port (default: a free one)")
    args = parser.parse_args(argv)
    root, name = args.root, None
    if args.sweep is not None:
        if not (args.sweep / MANIFEST).exists():
            print(f"error: {args.sweep} is not a sweep folder (no {MANIFEST}); give a folder under outputs/",
                  file=sys.stderr)
            return ExitCode.USER_ERROR
        root, name = args.sweep.resolve().parent, args.sweep.resolve().name
    port = args.port or free_port(args.host)
    url = f"http://{args.host}:{port}/" + (f"?sweep={name}" if name else "")
    print(f"live view: {url}", flush=True)
    web.run_app(make_app(root, name), host=args.host, port=port, print=None)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
