"""``manifest.json``: the sweep's creation date and everything that determines its games."""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bargain_ray.core.hashing import digest
from bargain_ray.store.paths import MANIFEST


class ChangedConfig(RuntimeError):
    """The sweep folder holds games made under another config."""


def read_manifest(path: Path) -> dict[str, Any]:
    return json.loads((path / MANIFEST).read_text())


def open_manifest(path: Path, grid: str, components: dict[str, Any],
                  provenance: dict[str, Any] | None = None) -> dict[str, Any]:
    """Create the folder and its manifest, or check that the manifest matches; returns the manifest."""
    path.mkdir(parents=True, exist_ok=True)
    target = path / MANIFEST
    if target.exists():
        manifest = read_manifest(path)
        changed = [k for k in sorted(set(manifest["components"]) | set(components))
                   if digest(manifest["components"].get(k)) != digest(components.get(k))]
        if changed:
            raise ChangedConfig(
                f"{path} holds games of a different config: changed {', '.join(changed)}. "
                "Results are never mixed: restore the config to resume, or start a new sweep "
                f"folder with run.dir=<new path>."
            )
        return manifest
    manifest = {
        "grid": grid,
        "created": datetime.now(UTC).strftime("%Y%m%d"),
        "components": components,
    } | (provenance or {})
    tmp = target.with_suffix(".tmp")
    tmp.write_text(json.dumps(manifest, indent=1, default=str))
    os.replace(tmp, target)
    return manifest
