"""Releases in object storage as manifests over content-addressed objects: what a bucket holds for
the edges (S3 behind CloudFront, R2 behind the Worker), as Git, OCI registries and restic keep versions.

    objects/<sha256><ext>          one distinct body, named by the SHA-256 of its bytes; typed by its
                                   extension (what the media type is read from)
    objects/<sha256><ext>.gz|.br   its encodings (a body over 1 KB), named by the body they encode
    objects/<sha256>.json          a shard of a manifest layer: file path → [mtime, size, sha256] (or
                                   null: not in this release)
    manifests/<release>.json       a release: its routing tables and its layers of shards, written
                                   after every object it names

A revision uploads only the bodies no kept release holds yet; byte-identical documents of different
releases or audiences are one object. A release's files table is a stack of layers, newest first, as
container images are: a revision's manifest is one small layer of what changed against the release it
was built against (its base), over the base's layers — so a revision of a few thousand files among
238,000 writes a few hundred KB of manifest, not the whole table again. A file's entry is in the newest
layer that lists it. When the layers above the bottom one hold more than half as many entries as it, or
there are MAX_LAYERS, the release gets one full layer instead (compaction). Each layer is split in
shards by a hash of the path (fnv1a32, which the edges compute too): an edge reads the head and, per
request, the one shard of each layer the path falls in, never a whole table of 100,000s of files."""
from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Callable

import orjson

from ..publish import GZIP_MIN_BYTES, read_manifest, twins_of
from ..render.nginx_maps import ROUTING

OBJECTS, MANIFESTS = "objects/", "manifests/"
TWINS = {".gz": "gzip", ".br": "br"}
SHARD_FILES = 1024  # files per shard: a shard stays ~100 KB, read once per isolate or container
MAX_LAYERS = 16  # an edge reads a shard of each layer (at once) on a path it has not read yet
CHURN = 0.5  # layers above the bottom may hold half its entries before the release gets a full layer
FORMAT = 2


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
    shards: list[str] = field(default_factory=list)  # of its newest layer: what it wrote itself
    entries: dict[str, list] = field(default_factory=dict)  # its files table: path → [mtime, size, sha256]
    layers: list[list[str]] = field(default_factory=list)  # newest first: each layer's shard keys
    layer_files: list[int] = field(default_factory=list)  # the entries of each layer
    files: int = 0
    file_bytes: int = 0  # its files' bytes (no encodings): what a revision is measured against

    @property
    def key(self) -> str:
        return manifest_key(self.release)


def manifest_key(release: str) -> str:
    return f"{MANIFESTS}{release}.json"


def object_key(sha256: str, path: str, twin: str = "") -> str:
    """The key of a file's body (or of its encoding `twin`, ".gz" or ".br")."""
    return f"{OBJECTS}{sha256}{PurePosixPath(path).suffix}{twin}"


def fnv1a(text: str) -> int:
    """32-bit FNV-1a of the UTF-8 bytes: the shard of a path (manifests.js computes the same)."""
    value = 0x811C9DC5
    for byte in text.encode():
        value = ((value ^ byte) * 0x01000193) & 0xFFFFFFFF
    return value


def file_objects(path: str, entry: list, source: Path | bytes, twins: dict[str, Body | bytes]) -> dict[str, Body]:
    """The objects of one file: its body and, over 1 KB, its encodings (`twins`: suffix → stored twin or
    bytes; a missing one is made)."""
    sha256 = entry[2]
    objects = {object_key(sha256, path): Body(object_key(sha256, path), source, sha256)}
    if entry[1] > GZIP_MIN_BYTES:
        made: dict[str, bytes] = {}
        for twin in TWINS:
            found = twins.get(twin)
            if found is None:  # a file whose twins were not written (made the same way as the build's)
                made = made or twins_of(source if isinstance(source, bytes) else source.read_bytes())
                found = made[twin]
            body = found if isinstance(found, Body) else Body("", found, hashlib.sha256(found).hexdigest())
            objects[object_key(sha256, path, twin)] = Body(object_key(sha256, path, twin), body.source, body.sha256)
    return objects


def _read_files(release_dir: Path, release: str, files: list[str]) -> ReleaseObjects:
    """A release's files table and the objects of its bodies, no manifest yet."""
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
    """The manifest and objects of one release folder's `files` (those the edges serve): its layer of
    what changed against `base` (the release it was built against, as the bucket holds it) over base's
    layers, or one full layer (no base, or too many layers or entries above the bottom one). Hashes come
    from the release's own manifest.json (a file of another size there is refused: the release is
    damaged)."""
    result = _read_files(release_dir, release, files)
    layer: dict[str, list | None] = dict(result.entries)
    result.layers, result.layer_files = [], []
    if base is not None and base.layers:
        changed: dict[str, list | None] = {p: e for p, e in result.entries.items() if base.entries.get(p) != e}
        changed.update({p: None for p in base.entries if p not in result.entries})
        above = sum(base.layer_files[:-1]) + len(changed)
        if len(base.layers) < MAX_LAYERS and above <= CHURN * base.layer_files[-1]:
            layer, result.layers, result.layer_files = changed, list(base.layers), list(base.layer_files)
    shards = shard(layer)
    result.objects.update({body.key: body for body in shards})
    result.shards = [body.key for body in shards]
    result.layers.insert(0, result.shards)
    result.layer_files.insert(0, len(layer))
    routing = orjson.loads((release_dir / ROUTING).read_bytes())
    result.head = orjson.dumps({
        "format": FORMAT, "release": release, "files": result.files, "compressed_over": GZIP_MIN_BYTES,
        "tables": routing_tables(routing), "layers": result.layers, "layer_files": result.layer_files})
    return result


def as_stored(release_dir: Path, release: str, files: list[str], head: bytes) -> ReleaseObjects:
    """A release whose manifest the bucket already holds (`head`): its files table from its folder, its
    layers as written then (never rewritten: an edge may hold that head)."""
    found = _read_files(release_dir, release, files)  # no layer made: the bucket's stays
    stored = orjson.loads(head)
    found.head, found.layers, found.layer_files = head, stored["layers"], stored["layer_files"]
    return found


def shard(entries: dict[str, list | None]) -> list[Body]:
    """A layer split in shards by fnv1a(path), each a content-addressed JSON object."""
    count = max(1, -(-len(entries) // SHARD_FILES))
    parts: list[dict[str, list | None]] = [{} for _ in range(count)]
    for path in sorted(entries):
        parts[fnv1a(path) % count][path] = entries[path]
    bodies = []
    for part in parts:
        data = orjson.dumps(part)
        sha256 = hashlib.sha256(data).hexdigest()
        bodies.append(Body(f"{OBJECTS}{sha256}.json", data, sha256))
    return bodies


def routing_tables(routing: dict) -> dict:
    """A release's tables as the edge core looks them up (nginx matches codes in any ASCII case)."""
    from .edge import ascii_lower
    return {"countries": {ascii_lower(code): code for code in routing["countries"]},
            "country_names": {ascii_lower(encoded): code for encoded, code in routing["country_names"]},
            "models": {code: "custom" if custom else "public" for code, custom in routing["models"]}}


def stored_size(release_dirs: list[Path]) -> tuple[int, int]:
    """The objects and bytes the releases' files take in a bucket, from their manifest.json alone (each
    distinct body and encoding once; the shards and the list of releases, a few hundred KB, not counted)."""
    from .edge import NOT_SERVED
    sizes: dict[str, int] = {}
    for folder in release_dirs:
        listed = read_manifest(folder)
        for path, entry in listed.items():
            if path.startswith(NOT_SERVED) or path.endswith(tuple(TWINS)):
                continue
            sizes[object_key(entry["sha256"], path)] = entry["size"]
            for twin in TWINS:
                if path + twin in listed:
                    sizes[object_key(entry["sha256"], path, twin)] = listed[path + twin]["size"]
    return len(sizes), sum(sizes.values())


def named_by(head: dict, shard_of: Callable[[str], dict]) -> set[str]:
    """Every object a manifest names (mark): the shards of its layers, and the bodies (and encodings) of
    the entries visible through them — a path's newest entry; one a newer layer replaced names nothing.
    `shard_of(key)` gives a shard's contents."""
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
                if entry[1] > head["compressed_over"]:
                    names.update(object_key(entry[2], path, twin) for twin in TWINS)
    return names
