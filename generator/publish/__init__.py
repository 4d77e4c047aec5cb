"""Publish: a release written into a hidden folder and made current in one atomic step (writer.py), its
compressed twins (twins.py), and what a site holds over time — its releases, the current one, the
catalogue's view of them, rollback (site.py).

Layout of the site folder:
    site/releases/<id>/            one immutable release (api/v1/…, manifest.json)
    site/releases/.tmp-<id>/       a release being written; never served
    site/current -> releases/<id>  the live release (a symlink swapped with os.replace)
    site/catalogue.db              the release catalogue: what was live when, staged, pruned (catalogue.py)
"""
from __future__ import annotations

from .site import (
                   CHANGES,
                   CURRENT,
                   MANIFEST,
                   RELEASES,
                   Release,
                   SiteLock,
                   built_against,
                   current_release,
                   gone_releases,
                   kept_releases,
                   live_periods,
                   live_release,
                   live_within,
                   missing_files,
                   no_release,
                   read_manifest,
                   release_order,
                   releases,
                   repair_catalogue,
                   rollback,
                   staged_releases,
                   switch_to,
                   unknown_releases,
                   was_live,
)
from .twins import COMPRESSED_FORMS, TWIN_SUFFIXES, twins_of
from .writer import KEEP_RELEASES, ReleaseWriter

__all__ = ["CHANGES", "CURRENT", "MANIFEST", "RELEASES", "Release", "SiteLock", "built_against", "current_release",
           "gone_releases", "kept_releases", "live_periods", "live_release", "live_within", "no_release",
           "missing_files",
           "read_manifest", "release_order", "releases", "repair_catalogue", "rollback", "staged_releases",
           "switch_to", "unknown_releases", "was_live", "COMPRESSED_FORMS", "TWIN_SUFFIXES",
           "twins_of", "KEEP_RELEASES", "ReleaseWriter"]
