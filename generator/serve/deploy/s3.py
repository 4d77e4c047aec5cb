"""riskapi deploy s3: a site's releases into an S3-compatible bucket — AWS S3 behind CloudFront, or
Cloudflare R2 behind the Worker (its S3 API) — as manifests over content-addressed objects (objects.py).

    objects/…                 every distinct body once, its encodings, the manifests' shards
    manifests/<id>.json       each release an edge answers (the current one, each kept or staged one)
    current.json              {"release", "previous", "answered", "timeline", "before"}: the live
                              release, what this deploy answers, and what the deploy before answered
    log/…                     a copy of the log of releases as tlog-tiles lays it out (`checkpoint`,
                              `tile/entries/…`): what `riskapi releases --repair --log-from s3://…`
                              recovers the history from when the site's catalogue and its copy are lost

Steps, each safe to kill (the next deploy finishes what one left):
1. upload the objects the bucket lacks (a listing says which; a body is checked against its SHA-256
   before it goes);
2. write each release's manifest, after every object it names is there (checked by a second listing);
3. write current.json (the switch of anything that reads it), then the log's copy (full bundles once,
   the checkpoint last);
4. prune: delete the manifests neither this deploy nor the one before answers, then sweep (mark and
   sweep): delete the objects no manifest left in the bucket names, nor the timeline of this deploy or
   the one before (an edge still on the previous version reads those). An object a kept release names
   is never deleted.
One deploy at a time per bucket: a sweep running beside another deploy's upload could take objects whose
manifest is not written yet."""
from __future__ import annotations

import hashlib
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any, Callable

import orjson

from ...contract.serving import JSON, TWINS, media_type
from ...history.catalogue.log_copy import CHECKPOINT, LOG_COPY, Reader, copy_files, is_replaced
from ...history.leases import Holder, hold_for_edge
from ...history.site import built_against, release_order
from ...switch.timeline import RECORD, Timeline, record_of
from .edge_release import deploying, edge_timeline, served_files, timeline_files
from .objects import (
    MANIFESTS,
    OBJECTS,
    Body,
    ReleaseObjects,
    as_stored,
    document_objects,
    is_current,
    manifest_key,
    named_by,
    release_objects,
)

POINTER = "current.json"
KEEP = 5
UPLOADERS = 8


@dataclass
class S3Deploy:
    release: str
    uploaded: int = 0
    skipped: int = 0
    bytes: int = 0
    pruned: tuple[str, ...] = ()
    swept: int = 0  # objects no kept release names any more, deleted
    previous: str | None = None
    changed_bytes: int = 0  # the bytes of the files whose bodies were new (a revision's changed files)


def object_headers(key: str) -> dict:
    """Return the PutObject arguments of one object: its type from its extension (a twin's is its original's) and
    its encoding. Nothing that depends on the path a body is served at: one body serves many paths."""
    suffix = PurePosixPath(key).suffix
    encoding = TWINS.get(suffix)
    original = key[: -len(suffix)] if encoding else key
    headers: dict[str, object] = {"ContentType": media_type(PurePosixPath(original).suffix[1:])}
    if encoding:
        headers["ContentEncoding"] = encoding
    return headers


class Bucket:
    """An S3 bucket (or a prefix in it) as the deploy uses it."""

    def __init__(self, client: Any, name: str, prefix: str = "") -> None:
        self.client, self.name, self.prefix = client, name, prefix

    def keys(self, under: str) -> set[str]:
        found: set[str] = set()
        for page in self.client.get_paginator("list_objects_v2").paginate(Bucket=self.name,
                                                                           Prefix=self.prefix + under):
            found.update(item["Key"][len(self.prefix):] for item in page.get("Contents", []))
        return found

    def get(self, key: str) -> bytes | None:
        try:
            return self.client.get_object(Bucket=self.name, Key=self.prefix + key)["Body"].read()
        except self.client.exceptions.NoSuchKey:
            return None

    def put(self, key: str, body: bytes, **headers: object) -> None:
        self.client.put_object(Bucket=self.name, Key=self.prefix + key, Body=body, **headers)

    def delete(self, keys: list[str]) -> None:
        for start in range(0, len(keys), 1000):
            self.client.delete_objects(Bucket=self.name, Delete={
                "Objects": [{"Key": self.prefix + k} for k in keys[start:start + 1000]], "Quiet": True})


def read_pointer(client: Any, bucket: str, prefix: str = "") -> dict | None:
    body = Bucket(client, bucket, prefix).get(POINTER)
    return None if body is None else orjson.loads(body)


def timeline_objects(documents: dict[str, bytes], stamp: int) -> dict[str, Body]:
    """Return the objects of the list of releases and the TimeMap (what the edges' description names)."""
    return document_objects(documents, stamp)[1]


Progress = Callable[[str, int, int], None]  # (step, done, total): each step starts at 0, uploads count objects


def deploy(client: Any, bucket: str, site: Path, prefix: str = "", keep: int = KEEP,
           keep_days: float | None = None, progress: Progress | None = None) -> S3Deploy:
    """Upload the site's releases an edge answers (edge.edge_timeline) as manifests over objects, and the
    objects of their list and TimeMap; then switch current.json; then prune. Objects carry no header of a
    path (Cache-Control, a download name): the edges add those. `progress` hears of each step and upload."""
    with deploying(site, f"deploy s3 {bucket}/{prefix}") as lease:
        return _deploy(client, bucket, site, prefix, keep, keep_days, progress or (lambda step, done, total: None),
                       lease)


def _deploy(client: Any, bucket: str, site: Path, prefix: str, keep: int, keep_days: float | None, tell: Progress,
            lease: Holder) -> S3Deploy:
    edge, _ = edge_timeline(site, keep, keep_days=keep_days, holder=lease)
    store = Bucket(client, bucket, prefix)
    report = S3Deploy(edge.current)
    releases = _releases(store, edge)
    documents, stamp = timeline_files(edge)
    timeline = timeline_objects(documents, stamp)
    wanted = {**timeline, **{key: body for r in releases.values() for key, body in r.objects.items()}}
    held = store.keys(OBJECTS)
    missing = sorted(key for key in wanted if key not in held)
    report.skipped = len(wanted) - len(missing)

    shards = {key for r in releases.values() for key in r.shards}

    def put(key: str) -> int:
        data = wanted[key].read()  # checked against its SHA-256: a damaged release is never uploaded
        store.put(key, data, **object_headers(key))
        return len(data)

    tell("upload", 0, len(missing))
    with ThreadPoolExecutor(UPLOADERS) as pool:
        for key, written in zip(missing, pool.map(put, missing)):  # an error stops before any manifest
            report.uploaded += 1
            report.bytes += written
            if key not in shards and not key.endswith(tuple(TWINS)):
                report.changed_bytes += written
            tell("upload", report.uploaded, len(missing))
    tell("manifests", 0, len(releases))
    _write_manifests(store, releases, wanted)
    tell("switch", 0, 1)
    pointer = read_pointer(client, bucket, prefix) or {}
    report.previous = pointer.get("release")
    before = {"answered": pointer.get("answered", []), "timeline": pointer.get("timeline", [])}
    switched = {"release": edge.current, "previous": report.previous if report.previous != edge.current
                else pointer.get("previous"), "answered": sorted(releases, key=release_order),
                "timeline": sorted(timeline), "before": before}
    store.put(POINTER, orjson.dumps(switched), ContentType=JSON, CacheControl="no-cache")
    # the site keeps what the bucket's edges may answer from: the releases of this pointer and the one before
    hold_for_edge(site, edge_name(bucket, prefix), f"the bucket s3://{bucket}/{prefix}",
                  [*releases, *before["answered"]])
    record = record_of(edge)  # after the pointer: the edges' record reaches this deploy's fence
    if record is not None:
        store.put(RECORD, orjson.dumps(record), ContentType=JSON, CacheControl="no-cache")
    tell("log", 0, 1)
    _write_log_copy(store, edge)
    tell("prune", 0, 1)
    report.pruned, report.swept = prune(store, set(releases) | set(before["answered"]),
                                        set(timeline) | set(before["timeline"]), releases)
    return report


def _write_log_copy(store: Bucket, edge: Timeline) -> None:
    """Write the log of releases up to the deployed checkpoint under log/ (history/catalogue/log_copy.py's layout): a
    full bundle only where the bucket lacks it, the partial one and the checkpoint replaced."""
    if edge.checkpoint is None:
        return
    held = store.keys(f"{LOG_COPY}/")
    for path, data in copy_files(edge.log, edge.checkpoint.size, edge.checkpoint.note).items():
        key = f"{LOG_COPY}/{path}"
        if is_replaced(path) or key not in held:
            store.put(key, data, ContentType=media_type("txt" if path == CHECKPOINT else "bundle"),
                      **({"CacheControl": "no-cache"} if is_replaced(path) else {}))


def log_reader(client: Any, bucket: str, prefix: str = "") -> Reader:
    """Return the bucket's copy of the log, file by file (a Reader of history/catalogue/log_copy.py)."""
    store = Bucket(client, bucket, prefix)
    return lambda path: store.get(f"{LOG_COPY}/{path}")


def _releases(store: Bucket, edge: Timeline) -> dict[str, ReleaseObjects]:
    """Return each release answered as the bucket is to hold it, oldest first: one whose manifest is there
    already (of this format) as it was written (an edge may hold that head), else shards over the ranges
    of the release it was built against where that one is answered too (the shards its changes miss are
    the base's own objects), else over fresh ranges."""
    found: dict[str, ReleaseObjects] = {}
    for release in sorted(edge.answered, key=release_order):
        folder = edge.folder / release
        files = served_files(folder)
        head = store.get(manifest_key(release))
        if is_current(head):
            found[release] = as_stored(folder, release, files, head)
        else:
            found[release] = release_objects(folder, release, files, found.get(built_against(folder) or ""))
    return found


def _write_manifests(store: Bucket, releases: dict[str, ReleaseObjects], wanted: dict[str, Body]) -> None:
    """Write each release's manifest, once every object it names is in the bucket (listed again: what a failed
    upload did not store is never named)."""
    held = store.keys(OBJECTS)
    absent = sorted(key for key in wanted if key not in held)
    if absent:
        raise RuntimeError(f"{len(absent)} objects did not reach the bucket (first {absent[0]}); "
                           "no manifest written, nothing was switched")
    for release in releases.values():
        if store.get(release.key) != release.head:
            store.put(release.key, release.head, ContentType=JSON)


def prune(store: Bucket, answered: set[str], timeline: set[str], known: dict[str, ReleaseObjects] | None = None
          ) -> tuple[tuple[str, ...], int]:
    """Mark and sweep: delete the manifests of releases not `answered`, then every object no manifest
    left in the bucket names, nor `timeline`. Shards this deploy made (those of `known` it holds the
    bytes of) are not read back; the others are read once each, however many manifests name them.
    Returns the releases pruned and how many objects went."""
    manifests = {key[len(MANIFESTS):-len(".json")] for key in store.keys(MANIFESTS) if key.endswith(".json")}
    gone = tuple(sorted(manifests - answered, key=release_order))
    store.delete([f"{MANIFESTS}{release}.json" for release in gone])
    marked = set(timeline)
    shards_read: dict[str, dict] = {key: orjson.loads(release.objects[key].read())
                                    for release in (known or {}).values() for key in release.shards
                                    if key in release.objects}

    def shard_of(key: str) -> dict:
        if key not in shards_read:
            data = store.get(key)
            if data is None:  # a manifest naming a missing shard: keep everything, say it
                raise RuntimeError(f"a manifest names {key}, which the bucket lacks; nothing was swept")
            shards_read[key] = orjson.loads(data)
        return shards_read[key]

    for key in sorted(store.keys(MANIFESTS)):  # what is in the bucket now, whoever wrote it
        body = store.get(key)
        if body is not None:
            marked |= named_by(orjson.loads(body), shard_of)
    unnamed = sorted(store.keys(OBJECTS) - marked)
    store.delete(unnamed)
    return gone, len(unnamed)


def edge_name(bucket: str, prefix: str) -> str:
    """Return the name of a bucket's lease on the site's releases (leases.hold_for_edge): one per bucket and prefix."""
    return f"s3-{hashlib.sha256(f'{bucket}/{prefix}'.encode()).hexdigest()[:16]}"
