"""riskapi deploy s3: the current release into an S3 bucket, switched live in one write.

Layout in the bucket (under an optional prefix):
    releases/<id>/<file>      every file of the release an edge may serve, and their .gz/.br twins
                              (Content-Type, Content-Encoding on twins, Cache-Control; sha256 and
                              the release id in metadata)
    releases/<id>/edge/release.json   the edge core's route description of the release
    current.json              {"release": id, "previous": id}: the live release, written last

An object already in the bucket with the same bytes (its ETag is the MD5 of a single-part upload) is
not uploaded again, so a second deploy of the same release uploads nothing. The pointer is written only
after every object is there: a failed or killed deploy leaves the live release as it was. Older
releases are pruned like site/'s, keeping the newest and the one that was live before."""
from __future__ import annotations

import hashlib
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import orjson

from .edge import TWINS, route_description, served_files

CONTENT_TYPES = {".json": "application/json", ".html": "text/html", ".js": "text/javascript", ".csv": "text/csv",
                 ".jsonl": "application/x-ndjson"}  # as nginx.conf's `types`, with charset=utf-8
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
    and its release (CloudFront's viewer-response function sends it as X-Release)."""
    encoding = ENCODINGS.get(Path(relative).suffix)
    original = relative[: -len(Path(relative).suffix)] if encoding else relative
    headers = {"ContentType": CONTENT_TYPES[Path(original).suffix] + "; charset=utf-8",
               "CacheControl": cache_control, "Metadata": {"sha256": digest, "release": release_id}}
    if encoding:
        headers["ContentEncoding"] = encoding
    return headers


def _existing(client, bucket: str, prefix: str) -> dict[str, str]:
    """Every object under prefix with its ETag (quotes stripped)."""
    found = {}
    for page in client.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix):
        for item in page.get("Contents", []):
            found[item["Key"]] = item["ETag"].strip('"')
    return found


def _release_ids(client, bucket: str, prefix: str) -> list[str]:
    ids = set()
    for page in client.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=f"{prefix}releases/",
                                                                 Delimiter="/"):
        ids.update(p["Prefix"][len(f"{prefix}releases/"):].rstrip("/") for p in page.get("CommonPrefixes", []))
    return sorted(ids)


def read_pointer(client, bucket: str, prefix: str = "") -> dict | None:
    try:
        body = client.get_object(Bucket=bucket, Key=f"{prefix}{POINTER}")["Body"].read()
    except client.exceptions.NoSuchKey:
        return None
    return orjson.loads(body)


def deploy(client, bucket: str, release_dir: Path, release_id: str, prefix: str = "",
           cache_control: str = "private, no-cache", keep: int = KEEP) -> S3Deploy:
    """Upload a release, then switch current.json to it, then prune."""
    report = S3Deploy(release_id)
    base = f"{prefix}releases/{release_id}/"
    existing = _existing(client, bucket, base)
    files = served_files(release_dir)
    uploads = files + [f + twin for f in files for twin in TWINS if (release_dir / (f + twin)).is_file()]
    bodies = {"edge/release.json": orjson.dumps(route_description(release_dir, release_id, cache_control, files))}

    def put(relative: str) -> int:
        body = bodies[relative] if relative in bodies else (release_dir / relative).read_bytes()
        if existing.get(base + relative) == hashlib.md5(body).hexdigest():
            return 0
        args = object_headers(relative, cache_control, hashlib.sha256(body).hexdigest(), release_id)
        client.put_object(Bucket=bucket, Key=base + relative, Body=body, **args)
        return len(body)

    with ThreadPoolExecutor(UPLOADERS) as pool:
        for written in pool.map(put, uploads + list(bodies)):  # an error here stops before the switch
            if written:
                report.uploaded += 1
                report.bytes += written
            else:
                report.skipped += 1
    pointer = read_pointer(client, bucket, prefix)
    report.previous = pointer["release"] if pointer else None
    if report.previous != release_id:
        client.put_object(Bucket=bucket, Key=f"{prefix}{POINTER}", ContentType="application/json",
                          CacheControl="no-cache",
                          Body=orjson.dumps({"release": release_id, "previous": report.previous}))
    report.pruned = prune(client, bucket, prefix, release_id, report.previous, keep)
    return report


def prune(client, bucket: str, prefix: str, live: str, previous: str | None, keep: int) -> tuple[str, ...]:
    """Delete all but the newest `keep` releases, never the live one or the one live before it."""
    ids = _release_ids(client, bucket, prefix)
    kept = set(ids[-keep:]) | {live} | ({previous} if previous else set())
    gone = tuple(i for i in ids if i not in kept)
    for release_id in gone:
        keys = list(_existing(client, bucket, f"{prefix}releases/{release_id}/"))
        for start in range(0, len(keys), 1000):
            client.delete_objects(Bucket=bucket, Delete={"Objects": [{"Key": k} for k in keys[start:start + 1000]],
                                                         "Quiet": True})
    return gone
