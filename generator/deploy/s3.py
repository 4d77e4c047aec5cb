"""riskapi deploy s3: a site's releases into an S3 bucket, the current one switched live in one write.

Layout in the bucket (under an optional prefix):
    releases/<id>/<file>      every file of a release an edge may serve, and their .gz/.br twins
                              (Content-Type, Content-Encoding on twins, Cache-Control; sha256 and
                              the release id in metadata): the current release, and each kept or
                              staged one of the site (the newest `keep`, and the one live before)
    releases/<id>/edge/release.json   the edge core's route description of the release
    releases/timeline/<file>  the list of releases (per audience) and the TimeMap of those releases (the
                              edge core's `timeline`: its files as a release's)
    current.json              {"release": id, "previous": id}: the live release, written last

An object already in the bucket with the same bytes (its ETag is the MD5 of a single-part upload) is
not uploaded again, so a second deploy of the same release uploads nothing. The pointer is written only
after every object is there: a failed or killed deploy leaves the live release as it was. Older
releases are pruned like site/'s, keeping the newest and the one that was live before."""
from __future__ import annotations

import hashlib
import re
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from ..publish import twins_of
from ..routes import answers_a_timegate, download_of
from .edge import TWINS, edge_timeline, route_description, served_files, timeline_files

CONTENT_TYPES = {  # nginx.conf's `types`
    ".json": "application/json", ".html": "text/html", ".js": "text/javascript", ".csv": "text/csv",
    ".jsonl": "application/x-ndjson", ".link": "application/link-format", ".atom": "application/atom+xml"}
TIMELINE = "releases/timeline/"
RELEASE_ID = re.compile(r"[0-9]{8}T[0-9]{6}Z(-[0-9]+)?")
ENCODINGS = {".gz": "gzip", ".br": "br"}
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
    previous: str | None = None


def object_headers(relative: str, cache_control: str, digest: str, release_id: str) -> dict:
    """PutObject arguments of one file: its type (a twin's is its original's), encoding and cache policy,
    its release, and an export's download name (what nginx sends with it)."""
    encoding = ENCODINGS.get(Path(relative).suffix)
    original = relative[: -len(Path(relative).suffix)] if encoding else relative
    metadata = {"sha256": digest, "release": release_id}
    if answers_a_timegate(original):  # an original's answer names its TimeGate (the viewer-response function)
        metadata["memento"] = "1"
    headers: dict[str, object] = {"ContentType": CONTENT_TYPES[Path(original).suffix] + "; charset=utf-8",
                                  "CacheControl": cache_control, "Metadata": metadata}
    if encoding:
        headers["ContentEncoding"] = encoding
    download = download_of(original, release_id)
    if download:
        headers["ContentDisposition"] = f'attachment; filename="{download}"'
    return headers


def _existing(client: Any, bucket: str, prefix: str) -> dict[str, str]:
    """Every object under prefix with its ETag (quotes stripped)."""
    found = {}
    for page in client.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix):
        for item in page.get("Contents", []):
            found[item["Key"]] = item["ETag"].strip('"')
    return found


def _release_ids(client: Any, bucket: str, prefix: str) -> list[str]:
    ids: set[str] = set()
    for page in client.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=f"{prefix}releases/",
                                                                 Delimiter="/"):
        ids.update(p["Prefix"][len(f"{prefix}releases/"):].rstrip("/") for p in page.get("CommonPrefixes", []))
    return sorted(i for i in ids if RELEASE_ID.fullmatch(i))  # not timeline/


def read_pointer(client: Any, bucket: str, prefix: str = "") -> dict | None:
    try:
        body = client.get_object(Bucket=bucket, Key=f"{prefix}{POINTER}")["Body"].read()
    except client.exceptions.NoSuchKey:
        return None
    return orjson.loads(body)


def deploy(client: Any, bucket: str, site: Path, prefix: str = "", cache_control: str = "private, no-cache",
           keep: int = KEEP, keep_days: float | None = None) -> S3Deploy:
    """Upload the site's releases an edge answers (edge.edge_timeline) and their list and TimeMap, then
    switch current.json to the current release, then prune the rest."""
    edge, _ = edge_timeline(site, keep, keep_days=keep_days)
    report = S3Deploy(edge.current)
    existing = _existing(client, bucket, prefix)
    uploads: dict[str, tuple] = {}  # key → (body or file, relative, release)
    for release in edge.answered:
        release_dir = edge.folder / release
        base = f"{prefix}releases/{release}/"
        files = served_files(release_dir)
        for relative in files + [f + twin for f in files for twin in TWINS if (release_dir / (f + twin)).is_file()]:
            uploads[base + relative] = (release_dir / relative, relative, release)
        description = orjson.dumps(route_description(release_dir, release, cache_control, files))
        uploads[base + "edge/release.json"] = (description, "edge/release.json", release)
    documents, _ = timeline_files(edge)
    for relative, body in documents.items():  # with their twins, as a release's files have them
        for suffix, twin in {"": body, **twins_of(body)}.items():
            uploads[f"{prefix}{TIMELINE}{relative}{suffix}"] = (twin, relative + suffix, edge.current)

    def put(key: str) -> int:
        source, relative, release = uploads[key]
        body = source if isinstance(source, bytes) else source.read_bytes()
        if existing.get(key) == hashlib.md5(body).hexdigest():
            return 0
        args = object_headers(relative, cache_control, hashlib.sha256(body).hexdigest(), release)
        client.put_object(Bucket=bucket, Key=key, Body=body, **args)
        return len(body)

    with ThreadPoolExecutor(UPLOADERS) as pool:
        for written in pool.map(put, list(uploads)):  # an error here stops before the switch
            if written:
                report.uploaded += 1
                report.bytes += written
            else:
                report.skipped += 1
    pointer = read_pointer(client, bucket, prefix)
    report.previous = pointer["release"] if pointer else None
    if report.previous != edge.current:
        client.put_object(Bucket=bucket, Key=f"{prefix}{POINTER}", ContentType="application/json",
                          CacheControl="no-cache",
                          Body=orjson.dumps({"release": edge.current, "previous": report.previous}))
    report.pruned = prune(client, bucket, prefix, set(edge.answered))
    _delete(client, bucket, [key for key in existing if key.startswith(f"{prefix}{TIMELINE}") and key not in uploads])
    return report


def prune(client: Any, bucket: str, prefix: str, answered: set[str]) -> tuple[str, ...]:
    """Delete every release of the bucket but those `answered`; return their ids."""
    gone = tuple(i for i in _release_ids(client, bucket, prefix) if i not in answered)
    for release_id in gone:
        _delete(client, bucket, list(_existing(client, bucket, f"{prefix}releases/{release_id}/")))
    return gone


def _delete(client: Any, bucket: str, keys: list[str]) -> None:
    for start in range(0, len(keys), 1000):
        client.delete_objects(Bucket=bucket, Delete={"Objects": [{"Key": k} for k in keys[start:start + 1000]],
                                                     "Quiet": True})
