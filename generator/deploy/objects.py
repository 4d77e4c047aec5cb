"""Releases in object storage as manifests over content-addressed objects: what a bucket holds for
the edges (S3 behind CloudFront, R2 behind the Worker), as Git, OCI registries and restic keep versions.

    objects/<sha256><ext>          one distinct body, named by the SHA-256 of its bytes; typed by its
                                   extension (what the media type is read from)
    objects/<sha256><ext>.gz|.br   its encodings (a body over 1 KB), named by the body they encode
    objects/<sha256>.json          a shard of a manifest: file path → [mtime, size, sha256]
    manifests/<release>.json       a release: its routing tables and its shards, written after every
                                   object it names

A revision uploads only the bodies no kept release holds yet; byte-identical documents of different
releases or audiences are one object. Each release's files are split in shards by a hash of the path
(fnv1a32, which the edges compute too): an edge reads the head and the one shard a request needs, never
a whole manifest of 100,000s of files."""
from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

import orjson

from ..publish import GZIP_MIN_BYTES, read_manifest, twins_of
from ..render.nginx_maps import ROUTING

OBJECTS, MANIFESTS = "objects/", "manifests/"
TWINS = {".gz": "gzip", ".br": "br"}
SHARD_FILES = 1024  # files per shard: a shard stays ~100 KB, read once per isolate or container
FORMAT = 1


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
    shards: list[str] = field(default_factory=list)
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


def release_objects(release_dir: Path, release: str, files: list[str]) -> ReleaseObjects:
    """The manifest and objects of one release folder's `files` (those the edges serve). Hashes come from
    the release's own manifest.json (a file of another size there is refused: the release is damaged)."""
    listed = read_manifest(release_dir)
    entries: dict[str, list] = {}
    result = ReleaseObjects(release, b"")
    for relative in files:
        path = release_dir / relative
        info = path.stat()
        known = listed.get(relative)
        if known is not None and known["size"] != info.st_size:
            raise ReleaseDamaged(f"{path}: {info.st_size} bytes, its release's manifest.json says {known['size']}; "
                                 "rebuild the release, nothing was switched")
        sha256 = known["sha256"] if known else hashlib.sha256(path.read_bytes()).hexdigest()
        entries[relative] = [int(info.st_mtime), info.st_size, sha256]
        twins: dict[str, Body | bytes] = {
            twin: Body("", release_dir / (relative + twin), listed[relative + twin]["sha256"])
            for twin in TWINS if relative + twin in listed}
        result.objects.update(file_objects(relative, entries[relative], path, twins))
        result.file_bytes += info.st_size
    result.files = len(entries)
    shards = shard(entries)
    result.objects.update({body.key: body for body in shards})
    result.shards = [body.key for body in shards]
    routing = orjson.loads((release_dir / ROUTING).read_bytes())
    result.head = orjson.dumps({
        "format": FORMAT, "release": release, "files": len(entries), "compressed_over": GZIP_MIN_BYTES,
        "tables": routing_tables(routing), "shards": result.shards})
    return result


def shard(entries: dict[str, list]) -> list[Body]:
    """The files table split in shards by fnv1a(path), each a content-addressed JSON object."""
    count = max(1, -(-len(entries) // SHARD_FILES))
    parts: list[dict[str, list]] = [{} for _ in range(count)]
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


def named_by(head: dict, shards: list[dict]) -> set[str]:
    """Every object a manifest names: its shards, its files' bodies and their encodings (mark)."""
    names = set(head["shards"])
    for part in shards:
        for path, entry in part.items():
            names.add(object_key(entry[2], path))
            if entry[1] > head["compressed_over"]:
                names.update(object_key(entry[2], path, twin) for twin in TWINS)
    return names
