"""What a release says of itself for whoever serves it (`nginx/release.json`, written by the build:
nginx_maps.render_release_maps): its custom models, the audiences it has variants for, and the public
address its links start with."""
from __future__ import annotations

from pathlib import Path

import orjson

from ...history.layout import RELEASE_INFO, read_release_info
from ...history.site import RELEASES, live_release


def release_site_url(release_dir: Path) -> str | None:
    """Return the public address a release's links start with (`riskapi build --site-url`)."""
    return orjson.loads((release_dir / RELEASE_INFO).read_bytes()).get("site_url")


def release_variants(site: Path) -> tuple[str, tuple[str, ...], list[frozenset[str]] | None]:
    """Return the current release of a site, its custom models and its audiences (see read_release_info)."""
    release = live_release(site)
    return (release, *read_release_info(site / RELEASES / release))
