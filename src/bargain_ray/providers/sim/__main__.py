"""``python -m bargain_ray.providers.sim [--host H] [--port P] [--settings FILE.yaml]``: the simulated provider on its own.

For sweeps whose workers run on other machines: serve it where they can reach
it and point the sweep at it with ``provider=sim provider.settings.base_url=http://H:P``.
``--settings`` takes a YAML mapping of sim settings (e.g. ``conf/provider/sim.yaml``'s ``settings``).
"""

from __future__ import annotations

import argparse
import threading
from pathlib import Path

import yaml

from bargain_ray.providers.sim import SimServer, SimSettings


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=8765)
    ap.add_argument("--settings", type=Path, help="YAML file: a settings mapping, or a provider file with one")
    args = ap.parse_args()
    data = yaml.safe_load(args.settings.read_text()) if args.settings else {}
    data = data.get("settings", data) or {}
    settings = SimSettings.model_validate({**data, "host": args.host, "port": args.port, "base_url": None})
    with SimServer(settings) as url:
        print(f"simulated provider serving at {url} (Ctrl-C stops it)", flush=True)
        try:
            threading.Event().wait()
        except KeyboardInterrupt:
            pass


if __name__ == "__main__":
    main()
