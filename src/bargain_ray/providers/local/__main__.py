"""``python -m bargain_ray.providers.local [--port N]``: the bundled local model served on its own.

It answers on 127.0.0.1 as an OpenAI-compatible server (``/v1/chat/completions``, model ``smollm2-135m-instruct``),
until Ctrl-C. A sweep uses it with ``provider=local provider.settings.base_url=<the address printed>``.
"""

from __future__ import annotations

import argparse
import socket
import sys
import threading

from bargain_ray.providers.local import LocalModelUnavailable, LocalSettings, serve


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--port", type=int, default=0, help="the port on 127.0.0.1 (0: a free one)")
    args = ap.parse_args()
    if not 0 <= args.port <= 65535:
        sys.exit(f"--port {args.port}: give a port from 0 to 65535")
    if args.port and not _free(args.port):  # llama.cpp would log its own lines before failing
        sys.exit(f"--port {args.port}: the port is taken on 127.0.0.1; give another, or 0 for a free one")
    settings = LocalSettings(port=args.port)
    try:
        with serve(settings) as url:
            print(f"local model {settings.name} serving at {url} (Ctrl-C stops it)", flush=True)
            threading.Event().wait()
    except LocalModelUnavailable as exc:
        sys.exit(str(exc))
    except KeyboardInterrupt:
        pass


def _free(port: int) -> bool:
    with socket.socket() as probe:
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


if __name__ == "__main__":
    main()
