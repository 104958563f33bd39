"""``python -m bargain_ray.replay FILE.json``: re-score a recorded transcript and print its outcome record.

The file is ``{"game": NAME, "first_speaker": ROLE, "replies": [...],
"overrides": [...]}`` (optionally ``"unit": {...}`` identity fields); the
replies are fed in call order, repairs included, and the outcome record is
printed as one JSON object.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from bargain_ray.play.rescore import ReplayFile, rescore


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: python -m bargain_ray.replay FILE.json", file=sys.stderr)
        return 2
    spec = ReplayFile.model_validate_json(Path(args[0]).read_text())
    print(json.dumps(rescore(spec).outcome))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
