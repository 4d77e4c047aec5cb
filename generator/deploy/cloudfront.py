"""riskapi deploy cloudfront: the CloudFront Functions and KeyValueStore of the current release.

CloudFront cannot check a key or map a query to a folder by itself, and sends no Authorization header
to S3: the check runs in a viewer-request function built from the same edge core as the Cloudflare
Worker (generator/edge/core.js), which answers from a KeyValueStore: the release's tables (countries,
names, models, files, users) under the release's id, the keys as HMAC-SHA256 hashes (the secret is
in the function's code, not in the store), and `release`, the
live release's settings. A viewer-response function adds nginx's headers to the files S3 serves.
The files themselves are uploaded by `riskapi deploy s3`. The TimeGate (Accept-Datetime, ?as_of=), for
which the viewer-request function has no room, is answered by a Lambda@Edge on the origin request
(timegate-lambda/: the edge core's own timegate() over the releases' live periods).

CloudFront's limits (2026): 10 KB of code per function, a KeyValueStore of 5 MB with keys of at most
512 bytes and values of at most 1 KB. To fit two releases of 10× the demo's countries (the live one
and the next, while switching), a file's entry is short: its size alone (S3 sends Last-Modified)
and its path without a final index.json."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import orjson

from ..edge import CORE, EDGE_SOURCE, script
from ..files import folder_replacing, write_atomic
from ..keys import ApiKey
from ..publish import RELEASES, live_release
from ..render.timeline import edge_states, gate_table, immutable
from .edge import deployment_secret, edge_timeline, hashed_keys, route_description, served_files, timeline_files

MAX_CODE_BYTES = 10 * 1024
MAX_STORE_BYTES = 5 * 1024 * 1024
MAX_KEY_BYTES, MAX_VALUE_BYTES = 512, 1024
# Each function as deployed: its source (function_source) minified by terser (names shortened, no
# comments: the core and a handler, as written with their comments, are over twice the 10 KB a function
# may have), with the lines that must come first. scripts/cloudfront_functions.py writes them; a test
# checks they are current.
FUNCTIONS = {"viewer-request.js": (EDGE_SOURCE / "cloudfront_request.js", 'import cf from "cloudfront";\n'),
             "viewer-response.js": (EDGE_SOURCE / "cloudfront_response.js", "")}
MINIFIED = EDGE_SOURCE / "cloudfront"
SHORT = {"countries": "c", "country_names": "n", "models": "m", "files": "f"}  # as cloudfront_request.js's
INDEX = "index.json"
# The TimeGate, which the viewer-request function has no room for: a Lambda@Edge (origin-request) folder
TIMEGATE_LAMBDA, TIMEGATE_SOURCE = "timegate-lambda", EDGE_SOURCE / "timegate_lambda.mjs"
SECRET_PLACEHOLDER = "__KEYS_SECRET__"  # in cloudfront_request.js: the deploy writes the deployment's secret there
MAX_BATCH = 50  # keys an UpdateKeys call takes
UPDATES, UPDATE_SCRIPT = "kvs-update", "update-kvs.sh"
UPDATE_SCRIPT_TEXT = """#!/usr/bin/env bash
# Written by riskapi deploy cloudfront: bring a CloudFront KeyValueStore holding the previous deploy's
# kvs.json to this one's, with the AWS CLI (v2): the batches of kvs-update/ in order (new and changed
# entries, then `release`, the switch, then the deletions), each call given the store's ETag from the
# one before (If-Match). A first deploy imports kvs.json when the store is created instead.
#   KVS_ARN=arn:aws:cloudfront::ACCOUNT:key-value-store/ID ./update-kvs.sh
set -euo pipefail
cd "$(dirname "$0")"
: "${KVS_ARN:?set KVS_ARN to the ARN of the KeyValueStore (aws cloudfront describe-key-value-store --name NAME)}"
etag=$(aws cloudfront-keyvaluestore describe-key-value-store --kvs-arn "$KVS_ARN" --query ETag --output text)
for batch in kvs-update/*.json; do
  [ -e "$batch" ] || continue
  etag=$(aws cloudfront-keyvaluestore update-keys --kvs-arn "$KVS_ARN" --if-match "$etag" \\
         --cli-input-json "file://$batch" --query ETag --output text)
  echo "applied $batch"
done
"""
SETTINGS = ("id", "prefix", "cache_control", "no_match", "score_orderings", "country_orderings", "compressed_over")


@dataclass
class CloudFrontProject:
    folder: Path
    code_bytes: dict[str, int] = field(default_factory=dict)
    entries: int = 0
    store_bytes: int = 0
    warnings: list[str] = field(default_factory=list)
    update_batches: int = 0  # the UpdateKeys calls of update-kvs.sh
    gate_changed: bool = True  # the TimeGate's table differs from the previous deploy's: publish its Lambda again


def function_source(handler: Path) -> str:
    """One CloudFront Function as written: the edge core and a handler (edge.script). What is deployed
    is this minified (see FUNCTIONS)."""
    return script(handler, without=("timegate", "origin", "usage"))


def release_entries(release_dir: Path, release_id: str) -> list[tuple[str, str]]:
    """One release's tables under its id."""
    description = route_description(release_dir, release_id, "", served_files(release_dir))
    entries = []
    for table, short in SHORT.items():
        for key, value in description[table].items():
            if table == "files":  # as cloudfront_request.js looks it up: its size, no final index.json
                key, value = key.removesuffix(INDEX), str(value[1])
            entries.append((f"{release_id}:{short}:{key}", value))
    return entries


def _user_entries(release_id: str, users: dict) -> list[tuple[str, str]]:
    """The grants of each user in one release, under its id."""
    return [(f"{release_id}:u:{user}", orjson.dumps(grants).decode()) for user, grants in users.items()]


def entries_bytes(entries: list[tuple[str, str]]) -> int:
    return sum(len(k.encode()) + len(v.encode()) for k, v in entries)


def store_entries(release_dir: Path, release_id: str, keys: list[ApiKey], cache_control: str,
                  secret: str) -> list[tuple[str, str]]:
    """The KeyValueStore's entries of one release alone: its tables, the hashed keys, and `release`."""
    hashed = hashed_keys(keys, {release_id: release_dir}, secret)
    description = route_description(release_dir, release_id, cache_control, [])
    return (release_entries(release_dir, release_id) + _user_entries(release_id, hashed["users"][release_id])
            + [(f"k:{digest}", user) for digest, user in hashed["keys"].items()]
            + [("release", orjson.dumps({name: description[name] for name in SETTINGS}).decode())])


def site_entries(site: Path, keys: list[ApiKey], cache_control: str, secret: str, keep: int | None,
                 keep_days: float | None) -> tuple[list[tuple[str, str]], list[str], dict]:
    """The KeyValueStore's entries of what a site's edge answers (edge.edge_timeline: the releases `riskapi
    deploy s3` uploads with the same --keep and --keep-days), newest first while the store holds them
    with room for one more release (the next deploy writes it before this one's are removed): each
    release's tables, every id's state (r:), the list of releases and the TimeMap (timeline:f:), the
    hashed keys, and `release` last. Returns them, the ids left out (410 here), and the TimeGate's
    gate.json (the release live now and every live period: timegate_lambda.mjs)."""
    current = live_release(site)
    tables: dict[str, list[tuple[str, str]]] = {}  # each release's, made once: sized, then written

    def tables_of(release: str) -> list[tuple[str, str]]:
        if release not in tables:
            tables[release] = release_entries(site / RELEASES / release, release)
        return tables[release]
    held = [2 * entries_bytes(tables_of(current))]

    def fits(release: str) -> bool:
        size = entries_bytes(tables_of(release))
        if held[0] + size > MAX_STORE_BYTES:
            return False
        held[0] += size
        return True
    edge, left_out = edge_timeline(site, keep, fits, keep_days)
    hashed = hashed_keys(keys, {release: edge.folder / release for release in edge.answered}, secret)
    entries = []
    for release in edge.answered:
        entries += tables_of(release) + _user_entries(release, hashed["users"][release])
    entries += [(f"r:{release}", orjson.dumps(state).decode()) for release, state in edge_states(edge).items()]
    documents, _ = timeline_files(edge)
    entries += [(f"timeline:f:{path.removesuffix(INDEX)}", str(len(body))) for path, body in documents.items()]
    entries += [(f"k:{digest}", user) for digest, user in hashed["keys"].items()]
    settings = route_description(edge.folder / current, current, cache_control, [])
    # written last when entries are put one by one: the switch to this release
    entries.append(("release", orjson.dumps({**{name: settings[name] for name in SETTINGS},
                                             "immutable": immutable(cache_control)}).decode()))
    gate = {"live": current, "table": gate_table(edge), "prefix": settings["prefix"], "cache_control": cache_control}
    return entries, left_out, gate


def write_project(site: Path, keys: list[ApiKey], out: Path, cache_control: str, keep: int | None = None,
                  keep_days: float | None = None) -> CloudFrontProject:
    """Write viewer-request.js, viewer-response.js and kvs.json (the KeyValueStore's import format) into a
    new folder beside `out`, then swap it in (a killed deploy leaves the previous files whole). The
    viewer-request function carries the deployment's secret the store's keys are hashed with."""
    project = CloudFrontProject(out)
    with folder_replacing(out) as folder:
        _write_into(folder, project, site, keys, out, cache_control, keep, keep_days)
    return project


def _write_into(folder: Path, project: CloudFrontProject, site: Path, keys: list[ApiKey], out: Path,
                cache_control: str, keep: int | None, keep_days: float | None) -> None:
    secret, _ = deployment_secret(folder, earlier=out if out.is_dir() else None)
    code = {name: (MINIFIED / name).read_bytes().replace(SECRET_PLACEHOLDER.encode(), secret.encode())
            for name in FUNCTIONS}
    for name, text in code.items():
        project.code_bytes[name] = len(text)
        if project.code_bytes[name] > MAX_CODE_BYTES:  # the code is ours, not the data's: never deploy it
            raise ValueError(f"{name} is {project.code_bytes[name]:,} bytes, over CloudFront's {MAX_CODE_BYTES:,}")
    entries, left_out, gate = site_entries(site, keys, cache_control, secret, keep, keep_days)
    if left_out:
        project.warnings.append(f"{len(left_out)} older releases left out of the KeyValueStore "
                                f"({', '.join(sorted(left_out))}): they answer 410 at CloudFront")
    project.entries = len(entries)
    project.store_bytes = entries_bytes(entries)
    for key, value in entries:
        if len(key.encode()) > MAX_KEY_BYTES:
            project.warnings.append(f"KeyValueStore key over {MAX_KEY_BYTES} bytes: {key[:80]}…")
        if len(value.encode()) > MAX_VALUE_BYTES:
            project.warnings.append(f"KeyValueStore value of {key} is {len(value.encode())} bytes, "
                                    f"over {MAX_VALUE_BYTES}")
    if project.store_bytes + _current_bytes(entries) > MAX_STORE_BYTES:
        project.warnings.append(
            f"the KeyValueStore entries are {project.store_bytes / 1e6:.2f} MB: with the next release's (written "
            f"before these are removed) they do not fit in CloudFront's {MAX_STORE_BYTES / 2 ** 20:.0f} MiB")
    for name, text in code.items():
        write_atomic(folder / name, text, mode=0o600)  # viewer-request.js holds the secret
    write_atomic(folder / "kvs.json", orjson.dumps({"data": [{"key": k, "value": v} for k, v in entries]}))
    previous = out / "kvs.json"
    batches = update_batches(_read_store(previous) if previous.is_file() else {}, entries)
    (folder / UPDATES).mkdir()
    for number, batch in enumerate(batches, start=1):
        write_atomic(folder / UPDATES / f"{number:04d}.json", orjson.dumps(batch))
    write_atomic(folder / UPDATE_SCRIPT, UPDATE_SCRIPT_TEXT.encode(), mode=0o755)
    project.update_batches = len(batches)
    # the TimeGate's Lambda@Edge: its code, the full edge core, and the live periods it answers from
    lambda_folder = folder / TIMEGATE_LAMBDA
    lambda_folder.mkdir()
    write_atomic(lambda_folder / "index.mjs", TIMEGATE_SOURCE.read_bytes())
    write_atomic(lambda_folder / "core.mjs", CORE.read_bytes())
    gate_json = orjson.dumps(gate)
    write_atomic(lambda_folder / "gate.json", gate_json)
    earlier = out / TIMEGATE_LAMBDA / "gate.json"
    project.gate_changed = not earlier.is_file() or earlier.read_bytes() != gate_json


def _read_store(path: Path) -> dict[str, str]:
    return {item["key"]: item["value"] for item in orjson.loads(path.read_bytes())["data"]}


def update_batches(before: dict[str, str], entries: list[tuple[str, str]]) -> list[dict]:
    """The UpdateKeys calls that turn a store holding `before` (the previous deploy's kvs.json) into one
    holding `entries`, in order: the new and changed entries (at most MAX_BATCH keys a call), then
    `release` alone (the switch: every entry it points to is there already), then the deletion of the
    entries no longer written (the previous releases' and revoked keys'), which nothing reads any more."""
    after = dict(entries)
    puts = [{"Key": k, "Value": v} for k, v in entries if k != "release" and before.get(k) != v]
    batches = [{"Puts": puts[start:start + MAX_BATCH]} for start in range(0, len(puts), MAX_BATCH)]
    if before.get("release") != after["release"]:
        batches.append({"Puts": [{"Key": "release", "Value": after["release"]}]})
    deletes = [{"Key": k} for k in before if k not in after]
    batches += [{"Deletes": deletes[start:start + MAX_BATCH]} for start in range(0, len(deletes), MAX_BATCH)]
    return batches


def _current_bytes(entries: list[tuple[str, str]]) -> int:
    """The bytes of the live release's own entries (its tables and users): what the next release needs."""
    current = orjson.loads(dict(entries)["release"])["id"]
    return entries_bytes([(k, v) for k, v in entries if k.startswith(f"{current}:")])
