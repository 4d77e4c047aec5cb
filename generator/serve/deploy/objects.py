"""Releases in object storage as manifests over content-addressed objects: what a bucket holds for
the edges (S3 behind CloudFront, R2 behind the Worker), as Git, OCI registries and restic keep versions.

    objects/<sha256><ext>          one distinct body, named by the SHA-256 of its bytes; typed by its
                                   extension (what the media type is read from)
    objects/<sha256><ext>.gz|.br   its encodings (a body over 1 KB), named by the body they encode
    objects/<sha256>.json          a shard of a manifest: the files of one range of paths, path →
                                   [mtime, size, sha256] and, for a file with encodings, their
                                   SHA-256s by coding ({"gzip": …, "br": …}: each one's Repr-Digest)
    manifests/<release>.json       a release: its routing tables, and its shards with the first path of
                                   each range (`bounds`), written after every object it names

A revision uploads only the bodies no kept release holds yet; byte-identical documents of different
releases or audiences are one object. A release's files table is split in shards of consecutive paths
(in sorted order, ~SHARD_FILES each), as a B-tree's leaves are: a revision keeps the ranges of the
release it was built against (its base), so a shard none of whose files changed has the same bytes, the
same key, and is not uploaded again — a revision of a few thousand files among 238,000 writes the
handful of shards its paths fall in and a new head, never the whole table. A range that grew past twice
SHARD_FILES is split; an emptied one goes. An edge reads the head once and, per request, the one shard
whose range holds the path (a binary search over `bounds`, which start with "": every path has one)."""
from __future__ import annotations

import bisect
import hashlib
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Callable, Mapping, TypeGuard

import orjson

from ...building.output.twins import twins_of
from ...contract.filters import lookup_tables
from ...contract.serving import COMPRESSED_OVER, TWINS, has_twins
from ...history.layout import read_routing, served
from ...history.site import read_manifest
from ..edge import MANIFEST_FORMAT as FORMAT

OBJECTS, MANIFESTS = "objects/", "manifests/"
SHARD_FILES = 1024  # files per shard: a shard stays ~100 KB, read once per isolate or container


class ReleaseDamaged(ValueError):
    """A release folder's file is not what its manifest.json says: never published."""


@dataclass(frozen=True)
class Body:
    """One object to store: its key, where its bytes are (a file, or bytes made here) and their SHA-256."""
    key: str
    source: Path | bytes
    sha256: str

    def read(self) -> bytes:
        data = self.source if isinstance(self.source, bytes) else self.source.read_bytes()
        if hashlib.sha256(data).hexdigest() != self.sha256:
            where = self.source if isinstance(self.source, Path) else self.key
            raise ReleaseDamaged(f"{where}: its bytes changed since the release was built (SHA-256 differs from "
                                 "its manifest.json); rebuild it, nothing was switched")
        return data


@dataclass
class ReleaseObjects:
    """A release as the bucket holds it: its manifest's head, and every object the head names."""
    release: str
    head: bytes
    objects: dict[str, Body] = field(default_factory=dict)
    entries: dict[str, list] = field(default_factory=dict)  # its files table: path → [mtime, size, sha256, codings]
    shards: list[str] = field(default_factory=list)  # its head's shard keys, one per range of paths
    bounds: list[str] = field(default_factory=list)  # the first path of each shard's range ("" first)
    files: int = 0
    file_bytes: int = 0  # its files' bytes (no encodings): what a revision is measured against

    @property
    def key(self) -> str:
        return manifest_key(self.release)


def manifest_key(release: str) -> str:
    return f"{MANIFESTS}{release}.json"


def object_key(sha256: str, path: str, twin: str = "") -> str:
    """Return the key of a file's body (or of its encoding `twin`, ".gz" or ".br")."""
    return f"{OBJECTS}{sha256}{PurePosixPath(path).suffix}{twin}"


def path_order(path: str) -> bytes:
    """Return paths in the order JavaScript's `<` puts them (by UTF-16 code unit), which the edges' binary
    search over a head's bounds relies on."""
    return path.encode("utf-16-be")


def file_objects(path: str, entry: list, source: Path | bytes, twins: Mapping[str, Body | bytes]) -> dict[str, Body]:
    """Return the objects of one file: its body and, over 1 KB, its encodings (`twins`: suffix → stored twin or
    bytes; a missing one is made), whose SHA-256s by coding are added to its files table `entry`."""
    sha256 = entry[2]
    objects = {object_key(sha256, path): Body(object_key(sha256, path), source, sha256)}
    if has_twins(path, entry[1]):
        made: dict[str, bytes] = {}
        codings = {}
        for twin, coding in TWINS.items():
            found = twins.get(twin)
            if found is None:  # a file whose twins were not written (made the same way as the build's)
                made = made or twins_of(path, source if isinstance(source, bytes) else source.read_bytes())
                found = made[twin]
            body = found if isinstance(found, Body) else Body("", found, hashlib.sha256(found).hexdigest())
            objects[object_key(sha256, path, twin)] = Body(object_key(sha256, path, twin), body.source, body.sha256)
            codings[coding] = body.sha256
        entry[3:] = [codings]
    return objects


def document_objects(documents: Mapping[str, bytes], stamp: int) -> tuple[dict[str, list], dict[str, Body]]:
    """Return files held in memory (the timeline's: the list of releases, the TimeMap, …) as a files table, each
    written at `stamp`, and their objects, their encodings made here."""
    table: dict[str, list] = {}
    objects: dict[str, Body] = {}
    for relative, body in documents.items():
        table[relative] = [stamp, len(body), hashlib.sha256(body).hexdigest()]
        objects.update(file_objects(relative, table[relative], body, twins_of(relative, body)))
    return table, objects


def _read_files(release_dir: Path, release: str, files: list[str]) -> ReleaseObjects:
    """Return a release's files table and the objects of its bodies, no manifest yet."""
    listed = read_manifest(release_dir)
    result = ReleaseObjects(release, b"")
    for relative in files:
        path = release_dir / relative
        info = path.stat()
        known = listed.get(relative)
        if known is not None and known["size"] != info.st_size:
            raise ReleaseDamaged(f"{path}: {info.st_size} bytes, its release's manifest.json says {known['size']}; "
                                 "rebuild the release, nothing was switched")
        sha256 = known["sha256"] if known else hashlib.sha256(path.read_bytes()).hexdigest()
        result.entries[relative] = [int(info.st_mtime), info.st_size, sha256]
        twins: dict[str, Body | bytes] = {
            twin: Body("", release_dir / (relative + twin), listed[relative + twin]["sha256"])
            for twin in TWINS if relative + twin in listed}
        result.objects.update(file_objects(relative, result.entries[relative], path, twins))
        result.file_bytes += info.st_size
    result.files = len(result.entries)
    return result


def release_objects(release_dir: Path, release: str, files: list[str], base: ReleaseObjects | None = None
                    ) -> ReleaseObjects:
    """Return the manifest and objects of one release folder's `files` (those the edges serve), its shards
    over the ranges of `base` (the release it was built against, as the bucket holds it), or over
    fresh ranges when there is none. Hashes come from the release's own manifest.json (a file of
    another size there is refused: the release is damaged)."""
    result = _read_files(release_dir, release, files)
    result.bounds, bodies = shard(result.entries, base.bounds if base is not None else [])
    result.shards = [body.key for body in bodies]
    result.objects.update({body.key: body for body in bodies})
    routing = read_routing(release_dir)
    result.head = orjson.dumps({
        "format": FORMAT, "release": release, "files": result.files, "compressed_over": COMPRESSED_OVER,
        "tables": lookup_tables(routing), "bounds": result.bounds, "shards": result.shards})
    return result


def as_stored(release_dir: Path, release: str, files: list[str], head: bytes) -> ReleaseObjects:
    """Return a release whose manifest the bucket already holds (`head`, of this FORMAT): its files table from
    its folder, its shards as written then (never rewritten: an edge may hold that head)."""
    found = _read_files(release_dir, release, files)  # no shard made: the bucket's stay
    stored = orjson.loads(head)
    found.head, found.bounds, found.shards = head, stored["bounds"], stored["shards"]
    return found


def is_current(head: bytes | None) -> TypeGuard[bytes]:
    """Return whether a manifest in the bucket is of this FORMAT (an older one is written anew)."""
    return head is not None and orjson.loads(head).get("format") == FORMAT


def shard(entries: dict[str, list], bounds: list[str]) -> tuple[list[str], list[Body]]:
    """Return the files table split in ranges of consecutive paths, each a content-addressed JSON object, and
    the first path of each range (its bound). `bounds` (a base's) are kept where their ranges still hold
    files: a range of more than twice SHARD_FILES is split in pieces of SHARD_FILES, an empty one goes,
    the first bound is "". Without bounds, every SHARD_FILES paths start a range."""
    ordered = sorted((path_order(path), path) for path in entries)
    paths = [path for _, path in ordered]
    ranges: list[tuple[str, list[str]]] = []  # (bound, paths)
    if bounds:
        keys = [path_order(bound) for bound in bounds]
        kept: list[list[str]] = [[] for _ in bounds]
        for key, path in ordered:
            kept[bisect.bisect_right(keys, key) - 1].append(path)
        for bound, part in zip(bounds, kept):
            if len(part) > 2 * SHARD_FILES:
                pieces = _pieces(part)
                ranges += [(bound, pieces[0]), *((piece[0], piece) for piece in pieces[1:])]
            elif part:
                ranges.append((bound, part))
    else:
        ranges = [(piece[0], piece) for piece in _pieces(paths)]
    ranges = ranges or [("", [])]  # a release without files still has a shard: an edge's lookup finds nothing
    bodies = []
    for _, part in ranges:
        data = orjson.dumps({path: entries[path] for path in part})
        sha256 = hashlib.sha256(data).hexdigest()
        bodies.append(Body(f"{OBJECTS}{sha256}.json", data, sha256))
    return [""] + [bound for bound, _ in ranges[1:]], bodies


def _pieces(paths: list[str]) -> list[list[str]]:
    return [paths[at:at + SHARD_FILES] for at in range(0, len(paths), SHARD_FILES)]


def stored_size(release_dirs: list[Path]) -> tuple[int, int]:
    """Return the objects and bytes the releases' files take in a bucket, from their manifest.json alone (each
    distinct body and encoding once; the shards and the list of releases, a few hundred KB, not counted)."""
    sizes: dict[str, int] = {}
    for folder in release_dirs:
        listed = read_manifest(folder)
        for path, entry in listed.items():
            if not served(path):
                continue
            sizes[object_key(entry["sha256"], path)] = entry["size"]
            for twin in TWINS:
                if path + twin in listed:
                    sizes[object_key(entry["sha256"], path, twin)] = listed[path + twin]["size"]
    return len(sizes), sum(sizes.values())


def named_by(head: dict, shard_of: Callable[[str], dict]) -> set[str]:
    """Return every object a manifest names (mark): its shards, and the bodies (and encodings) of their
    entries. A head of FORMAT 2 (a stack of layers of shards, newest first, where a path's newest entry
    counts and null means "not in this release") is read too: the bucket may hold one until the deploy
    after the one that wrote this format's heads. `shard_of(key)` gives a shard's contents."""
    layers = head.get("layers", [head.get("shards", [])])
    names = {key for layer in layers for key in layer}
    seen: set[str] = set()
    for layer in layers:
        for key in layer:
            for path, entry in shard_of(key).items():
                if path in seen:
                    continue
                seen.add(path)
                if entry is None:
                    continue
                names.add(object_key(entry[2], path))
                if has_twins(path, entry[1]):
                    names.update(object_key(entry[2], path, twin) for twin in TWINS)
    return names
