"""nginx's Repr-Digest (RFC 9530) of every file it serves, as map entries (runtime/digests.conf): nginx
cannot hash a file per request, so the digest is data — each release's from its manifest.json (the same
SHA-256 as the document's leaf in the release's tree), the timeline's from its files as written for this
configuration. Keyed by the path try_files finds ($uri): /<release>/<path>, or /<path> in the timeline."""
from __future__ import annotations

from pathlib import Path

from ...build.render.templates import nginx_map_key
from ...build.switch.timeline import Timeline
from ...contract.serving import repr_digest
from ...history.layout import served
from ...history.site import read_manifest
from ...system.files import file_entry
from .contract_blocks import double_quoted


def digest_entries(timeline: Timeline, timeline_root: Path) -> list[tuple[str, str]]:
    """($uri of a served file, its Repr-Digest) for every release `timeline` answers and every file of
    `timeline_root` (the list of releases, feeds, the panel, the log, the catalogues)."""
    entries = [(f"/{release}/{path}", repr_digest(entry["sha256"]))
               for release in timeline.answered
               for path, entry in sorted(read_manifest(timeline.folder / release).items()) if served(path)]
    if timeline_root.is_dir():
        entries += [(f"/{path.relative_to(timeline_root).as_posix()}", repr_digest(file_entry(path)["sha256"]))
                    for path in sorted(timeline_root.rglob("*")) if path.is_file()]
    return entries


def render_digests(timeline: Timeline, timeline_root: Path) -> str:
    return "".join(f"{nginx_map_key(uri)} {double_quoted(digest)};\n"
                   for uri, digest in digest_entries(timeline, timeline_root))
