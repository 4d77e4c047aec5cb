"""nginx's integrity fields of every file it serves, as map entries: nginx cannot hash a file per request,
so the digests are data — each release's from its manifest.json (which holds the SHA-256 of each file
and of each compressed twin), the timeline's from its files as written for this configuration.
- runtime/digests.conf: $uri (the path try_files finds: /<release>/<path>, or /<path> in the timeline) →
  its Unencoded-Digest, the bytes without content coding;
- runtime/coded-digests.conf: "<size in hex> <Unencoded-Digest>" → the Repr-Digest of the representation of
  that body whose size the ETag names (nginx's ETag is "mtime-size" of the file it opened: the file itself,
  or gzip_static's or brotli_static's twin). Keyed by the body, not the path: a body repeated across
  releases and audiences is one entry per coding."""
from __future__ import annotations

from pathlib import Path
from typing import Mapping

from ...building.render.templates import template_environment
from ...contract.serving import TWINS, digest_field
from ...history.layout import served
from ...history.site import read_manifest
from ...switch.timeline import Timeline
from ...system.files import file_entry


def _representations(listed: Mapping[str, Mapping], path: str) -> list[tuple[int, str]]:
    """Return (size, SHA-256) of a file and of each of its twins that `listed` (path → {size, sha256}) holds."""
    return [(listed[name]["size"], listed[name]["sha256"])
            for name in (path, *(path + suffix for suffix in TWINS)) if name in listed]


def _coded(representations: list[tuple[int, str]]) -> dict[str, str]:
    """Return a body's coded-digests entries. Two representations of one size cannot be told apart by the
    ETag: neither gets an entry (nginx sends no Repr-Digest then, never another representation's)."""
    sizes = [size for size, _ in representations]
    unencoded = digest_field(representations[0][1])
    return {f"{size:x} {unencoded}": digest_field(sha256) for size, sha256 in representations
            if sizes.count(size) == 1}


def digest_entries(timeline: Timeline, timeline_root: Path) -> tuple[dict[str, str], dict[str, str]]:
    """Return the two maps' entries: $uri of every served file → its Unencoded-Digest, and "<size> <Unencoded-Digest>"
    → Repr-Digest, for every release `timeline` answers and every file of `timeline_root` (the list of
    releases, feeds, the panel, the log, the catalogues)."""
    unencoded: dict[str, str] = {}
    coded: dict[str, str] = {}
    listings: list[tuple[str, Mapping[str, Mapping]]] = [
        (f"/{release}/", read_manifest(timeline.folder / release)) for release in timeline.answered]
    if timeline_root.is_dir():
        listings.append(("/", {path.relative_to(timeline_root).as_posix(): file_entry(path)
                               for path in sorted(timeline_root.rglob("*")) if path.is_file()}))
    for prefix, listed in listings:
        for path in sorted(listed):
            if not served(path):  # nor a twin: a representation of its file
                continue
            representations = _representations(listed, path)
            unencoded[prefix + path] = digest_field(representations[0][1])
            coded.update(_coded(representations))
    return unencoded, coded


def render_digests(timeline: Timeline, timeline_root: Path) -> dict[str, str]:
    """Return runtime/digests.conf and runtime/coded-digests.conf."""
    unencoded, coded = digest_entries(timeline, timeline_root)
    environment = template_environment()
    return {name: environment.get_template(f"{name}.j2").render(entries=entries)
            for name, entries in (("digests.conf", unencoded), ("coded-digests.conf", coded))}
