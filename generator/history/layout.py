"""Where a site keeps its releases (site/releases/<id>/, and site/current, the link to the live one), for
the modules that read them: the catalogue reconciles with the link, publish/ writes both."""
from __future__ import annotations

import os
from pathlib import Path

import orjson

from ..contract.release_ids import release_order
from ..contract.serving import TWINS

RELEASES = "releases"
CURRENT = "current"
UNFINISHED = ".tmp-"  # a release folder's name while it is written (then renamed to its id): never served
MANIFEST = "manifest.json"  # in each release folder: every file with its size and sha256, and what it is
NGINX_DIR = "nginx"
RELEASE_INFO = f"{NGINX_DIR}/release.json"  # what a release says of itself for whoever serves it
ROUTING = f"{NGINX_DIR}/routing.json"  # the release's routing as data: what `riskapi deploy` gives the edge
NOT_SERVED = (f"{NGINX_DIR}/", MANIFEST, "data.json", "changes.txt")  # in a release, never served


def served(relative: str) -> bool:
    """Return whether a file of a release folder (its path in it) is a file some route answers with."""
    return not relative.startswith(NOT_SERVED) and not relative.endswith(tuple(TWINS))


def releases(site: Path) -> list[str]:
    """Return release ids in the order they were built (oldest first)."""
    folder = site / RELEASES
    if not folder.is_dir():
        return []
    return sorted((p.name for p in folder.iterdir() if p.is_dir() and not p.name.startswith(".")), key=release_order)


def current_release(site: Path) -> str | None:
    link = site / CURRENT
    if not link.is_symlink():
        return None
    return Path(os.readlink(link)).name


def manifest(release_dir: Path) -> dict | None:
    """Return a release's manifest; None where it has none — or no longer has one: a prune may remove a release at
    any moment, and every reader of a release folder takes that as the release being gone."""
    try:
        return orjson.loads((release_dir / MANIFEST).read_bytes())
    except (FileNotFoundError, NotADirectoryError):
        return None


def read_routing(release_dir: Path) -> dict:
    """Return a release's routing as data (serve/nginx/maps.py writes it): its models, prefix, variant folders."""
    return orjson.loads((release_dir / ROUTING).read_bytes())


def read_release_info(release_dir: Path) -> tuple[tuple[str, ...], list[frozenset[str]] | None]:
    """Return a release's custom models and the audiences it has a variant for (None: a release from before
    audiences were listed, which had one for every set)."""
    info = orjson.loads((release_dir / RELEASE_INFO).read_bytes())
    return tuple(info["custom_models"]), [frozenset(a) for a in info["audiences"]] if "audiences" in info else None
