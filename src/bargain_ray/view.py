"""python -m bargain_ray.view [outputs/NAME]: a live view of the sweeps under outputs/ in the browser.

Serves on 127.0.0.1 (--host to change) at a free port unless --port is given, and prints the address. The
page refreshes itself while a sweep runs; the view reads the folders and never writes them.
"""

from __future__ import annotations

import asyncio
import socket
import sys
from pathlib import Path
from urllib.parse import quote

from aiohttp import web

from bargain_ray.analysis.commands import Parser, hint
from bargain_ray.analysis.view import make_app
from bargain_ray.core.status import ExitCode
from bargain_ray.store import MANIFEST


def free_port(host: str) -> int:
    with socket.socket() as s:
        s.bind((host, 0))
        return s.getsockname()[1]


def main(argv: list[str] | None = None) -> int:
    parser = Parser(prog="python -m bargain_ray.view", description=__doc__.split("\n\n")[0],
                    epilog="Exit codes: 1 a usage error, not a sweep folder or an address it cannot serve on; "
                           "130 stopped by Ctrl-C (it serves until stopped).")
    parser.add_argument("sweep", type=Path, nargs="?", default=None,
                        help="a sweep folder to open (its parent is listed); default: list outputs/")
    parser.add_argument("--root", type=Path, default=Path("outputs"), help="folder whose sweeps are listed")
    parser.add_argument("--host", default="127.0.0.1", help="address to serve on (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=0, help="port (default: a free one)")
    args = parser.parse_args(argv)
    root, name = args.root, None
    if args.sweep is not None:
        if not (args.sweep / MANIFEST).exists():
            print(f"error: {args.sweep} is not a sweep folder (no {MANIFEST}){hint(parser.prog, args.root)}",
                  file=sys.stderr)
            return ExitCode.USER_ERROR
        root, name = args.sweep.resolve().parent, args.sweep.resolve().name
    try:
        asyncio.run(serve(make_app(root, name), args.host, args.port or free_port(args.host), name))
    except OSError as exc:  # the port taken, an address this host does not have
        print(f"error: cannot serve on {args.host}:{args.port or 'a free port'}: {exc.strerror or exc}; "
              f"see `{parser.prog} --help`", file=sys.stderr)
        return ExitCode.USER_ERROR
    except KeyboardInterrupt:
        return ExitCode.SIGINT
    return 0


async def serve(app: web.Application, host: str, port: int, name: str | None) -> None:
    """Serve until stopped; the address is printed once the port is bound, so a printed address always answers."""
    runner = web.AppRunner(app)
    await runner.setup()
    try:
        await web.TCPSite(runner, host, port).start()
        print(f"live view: http://{host}:{port}/" + (f"?sweep={quote(name)}" if name else ""), flush=True)
        await asyncio.Event().wait()
    finally:
        await runner.cleanup()


if __name__ == "__main__":
    raise SystemExit(main())
