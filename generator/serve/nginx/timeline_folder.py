"""The timeline's documents as nginx's workers read them: the list of releases, its feeds, the TimeMap,
the log's files and the panel, written into timeline/ of serve's prefix for one configuration — each
text file over 1 KB with its compressed twins, as a release's files are, for gzip_static and
brotli_static (and the digests of runtime/coded-digests.conf)."""
from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
from pathlib import Path

from ...building.output.twins import twins_of
from ...switch.timeline import Timeline
from ...switch.timeline import documents as timeline_documents
from ...system.files import file_identity, link_or_copy, write_atomic

KEPT_TIMELINES = 4  # timeline folders kept: the one in use and a few for requests on older configurations


def write_timeline(prefix: Path, timeline: Timeline) -> Path:
    """Return the documents of `timeline`, in a folder of the prefix's timeline/ named by their content (the same
    documents keep their folder, so their ETags stay); the few newest folders stay for requests in flight
    on an older configuration."""
    files = timeline_documents(timeline)
    digest = hashlib.sha256()  # a file given as its path (the panel's) by its identity: not read here
    for name, body in sorted(files.items()):
        digest.update(name.encode() + b"\0" + (file_identity(body) if isinstance(body, Path) else body) + b"\0")
    base = prefix / "timeline"
    folder = base / digest.hexdigest()[:20]
    if folder.is_dir():
        os.utime(folder)  # used now: kept by the clean-up below
    else:
        staging = Path(tempfile.mkdtemp(prefix=".tmp-", dir=readable_folder(base)))
        for name, body in files.items():
            readable_folder((staging / name).parent)
            if isinstance(body, Path):
                link_or_copy(body, staging / name)  # the panel's Parquet files: no twins
            else:
                for suffix, data in {"": body, **twins_of(name, body)}.items():
                    write_atomic(staging / (name + suffix), data, mode=0o644)
        os.chmod(staging, 0o755)
        os.rename(staging, folder)
    for old in sorted(base.iterdir(), key=lambda p: p.stat().st_mtime, reverse=True)[KEPT_TIMELINES:]:
        shutil.rmtree(old, ignore_errors=True)
    return folder


def readable_folder(folder: Path) -> Path:
    """Return a folder nginx's workers may read, made with its parents where missing."""
    folder.mkdir(mode=0o755, parents=True, exist_ok=True)
    return folder
