"""Where a site keeps its releases (site/releases/<id>/, and site/current, the link to the live one), for
the modules that read them: the catalogue reconciles with the link, publish/ writes both."""
from __future__ import annotations

import os
from pathlib import Path

from .release_ids import release_order

RELEASES = "releases"
CURRENT = "current"


def releases(site: Path) -> list[str]:
    """Release ids in the order they were built (oldest first)."""
    folder = site / RELEASES
    if not folder.is_dir():
        return []
    return sorted((p.name for p in folder.iterdir() if p.is_dir() and not p.name.startswith(".")), key=release_order)


def current_release(site: Path) -> str | None:
    link = site / CURRENT
    if not link.is_symlink():
        return None
    return Path(os.readlink(link)).name
