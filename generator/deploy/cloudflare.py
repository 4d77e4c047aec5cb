"""riskapi deploy cloudflare: a complete Workers project for the current release.

One Worker version is one release (Static Assets and the Worker deploy together), so a deploy is
atomic. The Worker runs first on every request (`run_worker_first`): without it, Static Assets would
serve files before the key check."""
from __future__ import annotations

import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path

import orjson

from ..files import write_atomic
from .edge import CORE, WORKER, hashed_keys, route_description, served_files

# Cloudflare's documented limits of a Worker version's Static Assets (2026): files per version on the
# Free and on the Paid plan, and bytes per file.
FREE_FILES, PAID_FILES = 20_000, 100_000
MAX_FILE_BYTES = 25 * 1024 * 1024
COMPATIBILITY_DATE = "2026-08-01"  # pinned: the newest the workerd from npm accepts offline
PUBLIC = "public"


@dataclass
class CloudflareProject:
    folder: Path
    files: int = 0
    bytes: int = 0
    left_out: list[str] = field(default_factory=list)  # over the per-file limit
    warnings: list[str] = field(default_factory=list)


def _place(source: Path, target: Path) -> None:
    """A hard link where the release and the project share a file system (no copy), else a copy."""
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.link(source, target)
    except OSError:
        shutil.copyfile(source, target)


def write_project(release_dir: Path, release_id: str, keys_file: Path, out: Path, name: str,
                  cache_control: str) -> CloudflareProject:
    """Write the Workers project of a release into `out` (its public/ is replaced)."""
    project = CloudflareProject(out)
    out.mkdir(parents=True, exist_ok=True)
    shutil.rmtree(out / PUBLIC, ignore_errors=True)
    deployed = []
    for relative in served_files(release_dir):
        source = release_dir / relative
        size = source.stat().st_size
        if size > MAX_FILE_BYTES:
            project.left_out.append(relative)
            continue
        _place(source, out / PUBLIC / relative)
        deployed.append(relative)
        project.files += 1
        project.bytes += size
    for relative in project.left_out:
        project.warnings.append(f"{relative} is {(release_dir / relative).stat().st_size / 2 ** 20:.1f} MiB, over "
                                f"Static Assets' 25 MiB per file: left out (the Worker answers 404 for it)")
    if project.files > FREE_FILES:
        project.warnings.append(f"{project.files} files: over the Free plan's {FREE_FILES:,} per Worker version "
                                f"(the Paid plan allows {PAID_FILES:,})")
    if project.files > PAID_FILES:
        project.warnings.append(f"{project.files} files: over the Paid plan's {PAID_FILES:,} per Worker version")
    # a file left out is not in the description: it answers 404, as a missing one
    description = route_description(release_dir, release_id, cache_control, deployed)
    config = {"name": name, "main": "worker.js", "compatibility_date": COMPATIBILITY_DATE,
              "assets": {"directory": f"./{PUBLIC}", "binding": "ASSETS", "run_worker_first": True}}
    files = {
        "wrangler.json": orjson.dumps(config, option=orjson.OPT_INDENT_2),
        ".assetsignore": b"# Static Assets compresses by itself and never serves twins\n*.gz\n*.br\n",
        "core.js": CORE.read_bytes(), "worker.js": WORKER.read_bytes(),
        "release.json": orjson.dumps(description),
        "keys.json": orjson.dumps(hashed_keys(keys_file, release_dir)),  # hashes only
    }
    for relative, body in files.items():
        write_atomic(out / relative, body)
    return project
