"""riskapi deploy cloudfront: the CloudFront Functions, the origin-request Lambda@Edge and the
KeyValueStore entries of a site's releases.

CloudFront cannot check a key or map a query to a folder by itself, and sends no Authorization header
to S3. Two parts do what nginx.conf does:
- the viewer-request function is a fixed key gate (generator/serve/edge/keycheck.js and cloudfront_request.js,
  at most GATE_BYTES): it checks the key against the KeyValueStore — one entry per active key (its user
  and grant set), one per release and grant set not served the public variant, each release's state,
  and `release`, the live release (one write switches every edge) — and hands on the release, the grant
  set and the audience as headers, which CloudFront's cache key includes;
- the Lambda@Edge of the origin request and response (origin-lambda/: the whole edge core, the route
  table, the releases' states in release.json) routes what the cache does not hold, reading each
  release's manifest from the bucket: the S3 object of the file, or the JSON error, the 204 or the
  TimeGate's 302 itself; on the origin response it adds what one object serving many paths cannot carry
  (a download name, an original's Link).
A viewer-response function adds nginx's headers to every answer. The releases themselves are uploaded by
`riskapi deploy s3` as manifests over content-addressed objects: nothing here grows with their files.

CloudFront's limits (2026): 10 KB of code per function, a KeyValueStore of 5 MB with keys of at most 512
bytes and values of at most 1 KB; a Lambda@Edge on the origin request may be 50 MB zipped."""
from __future__ import annotations

import shutil
from dataclasses import dataclass, field
from pathlib import Path

import orjson

from ...contract.routes import edge_table
from ...contract.serving import STORE, edge_contract, immutable
from ...errors import CatalogueError
from ...history.leases import Holder
from ...switch.timeline import edge_states
from ...system.files import folder_replacing, write_atomic
from ..edge import BUNDLES, EDGE_SOURCE, MANIFESTS_JS, MODULES
from ..keys import ApiKey
from .edge_release import (
    deploying,
    deployment_secret,
    edge_description,
    edge_timeline,
    key_entries,
    revocations_only,
    site_url_of,
    timeline_files,
)
from .objects import document_objects

MAX_CODE_BYTES = 10 * 1024
GATE_BYTES = 6 * 1024  # the key gate, the secret in it: what is left of 10 KB stays free
MAX_STORE_BYTES = 5 * 1024 * 1024
MAX_KEY_BYTES, MAX_VALUE_BYTES = 512, 1024
MAX_LAMBDA_BYTES = 50 * 1024 * 1024  # an origin-request Lambda@Edge's package, zipped
# The CloudFront Functions (serve/edge BUNDLES: each bundled and minified by scripts/edge_bundles.py) and the
# parts of the serving contract each uses, declared into it as DEPLOYED's `contract` (its code stays small)
KEY_GATE, VIEWER_RESPONSE = "viewer-request.js", "viewer-response.js"
FUNCTION_CONTRACTS = {KEY_GATE: ("STORE", "LINKS", "PUBLIC_AUDIENCE", "AUTHORIZATION", "KEY_FORMAT", "HANDOFF"),
                      VIEWER_RESPONSE: ("HEADERS", "NAMES", "PAGE_TYPES", "HANDOFF")}
ORIGIN_LAMBDA, ORIGIN_SOURCE = "origin-lambda", EDGE_SOURCE / "cloudfront_origin.js"
MAX_BATCH = 50  # keys an UpdateKeys call takes
UPDATES, UPDATE_SCRIPT = "kvs-update", "update-kvs.sh"
UPDATE_SCRIPT_SOURCE = Path(__file__).with_name(UPDATE_SCRIPT)  # what deploy writes beside kvs.json


@dataclass
class CloudFrontProject:
    folder: Path
    code_bytes: dict[str, int] = field(default_factory=dict)
    entries: int = 0
    store_bytes: int = 0
    warnings: list[str] = field(default_factory=list)
    update_batches: int = 0  # the UpdateKeys calls of update-kvs.sh
    lambda_bytes: int = 0  # origin-lambda/ as written (before zipping)
    lambda_changed: bool = True  # its release.json differs from the previous deploy's: publish it again


def function_code(name: str, secret: str) -> bytes:
    """Return a CloudFront function as deployed: the parts of the serving contract it uses declared into it, and
    into the key gate the site's key secret and the route table's release-scoped paths."""
    contract = edge_contract()
    deployed: dict = {"contract": {part: contract[part] for part in FUNCTION_CONTRACTS[name]}}
    if name == KEY_GATE:
        deployed.update(secret=secret, scope=edge_table()["scope"])
    return BUNDLES[name].text(deployed).encode()


def entries_bytes(entries: list[tuple[str, str]]) -> int:
    return sum(len(k.encode()) + len(v.encode()) for k, v in entries)


def store_entries(keys: list[ApiKey], releases: dict[str, Path], states: dict[str, list], settings: dict
                  ) -> list[tuple[str, str]]:
    """Return the KeyValueStore's entries: each active key's digest → its user, grant set and preview; for each
    release answered (`releases`: id → folder) and grant set not served the public variant, its
    audience; each id's state and when it went live (`states`: edge_states); and `release` last (the
    switch, written after every entry it points to)."""
    keyed, audiences = key_entries(keys, releases)
    entries = [(STORE["key"] + digest, orjson.dumps({"user": e["user"], "set": e["set"],
                                              **({"preview": True} if e.get("preview") else {}),
                                              **({"expires": e["expires"]} if "expires" in e else {})}).decode())
               for digest, e in sorted(keyed.items())]
    entries += [(f"{STORE['audience']}{release}:{grant_set}", orjson.dumps(audience).decode())
                for release, held in sorted(audiences.items()) for grant_set, audience in sorted(held.items())]
    entries += [(STORE["state"] + release, orjson.dumps(state).decode()) for release, state in sorted(states.items())]
    entries.append((STORE["live"], orjson.dumps(settings).decode()))
    return entries


def write_project(site: Path, keys: list[ApiKey], secret: str, out: Path, cache_control: str, keep: int | None = None,
                  keep_days: float | None = None) -> CloudFrontProject:
    """Write viewer-request.js, viewer-response.js and kvs.json (the KeyValueStore's import format) into a
    new folder beside `out`, then swap it in (a killed deploy leaves the previous files whole). The
    viewer-request function carries `secret`, the keys file's, which the store's digests are made with."""
    project = CloudFrontProject(out)
    try:
        with folder_replacing(out) as folder, deploying(site, f"deploy cloudfront {out}") as lease:
            _write_into(folder, project, site, keys, secret, out, cache_control, keep, keep_days, lease)
    except CatalogueError as error:  # a revocation never waits on the history
        store = out / "kvs.json"
        before = _read_store(store) if store.is_file() else {}
        refused = revocations_only(out, store, keys, STORE["key"], error)
        if before:
            _write_batches(out, before, list(_read_store(store).items()))
        raise refused from None
    return project


def _write_into(folder: Path, project: CloudFrontProject, site: Path, keys: list[ApiKey], secret: str, out: Path,
                cache_control: str, keep: int | None, keep_days: float | None, lease: Holder) -> None:
    deployment_secret(folder, secret)
    code = {name: function_code(name, secret) for name in FUNCTION_CONTRACTS}
    for name, text in code.items():
        project.code_bytes[name] = len(text)
        limit = GATE_BYTES if name == KEY_GATE else MAX_CODE_BYTES
        if project.code_bytes[name] > limit:  # the code is ours, not the data's: never deploy it
            raise ValueError(f"{name} is {project.code_bytes[name]:,} bytes, over its {limit:,}")
    edge, left_out = edge_timeline(site, keep, keep_days=keep_days, holder=lease)
    if left_out:
        project.warnings.append(f"{len(left_out)} older releases left out ({', '.join(sorted(left_out))}): "
                                "they answer 410 at CloudFront")
    folders = {release: edge.folder / release for release in edge.answered}
    documents, stamp = timeline_files(edge)
    description = orjson.dumps(edge_description(edge, cache_control, document_objects(documents, stamp)[0]))
    settings = {"id": edge.current, "cache_control": cache_control, "immutable": immutable(cache_control),
                "site_url": site_url_of(edge)}
    entries = store_entries(keys, folders, edge_states(edge), settings)
    project.entries = len(entries)
    project.store_bytes = entries_bytes(entries)
    for key, value in entries:
        if len(key.encode()) > MAX_KEY_BYTES:
            project.warnings.append(f"KeyValueStore key over {MAX_KEY_BYTES} bytes: {key[:80]}…")
        if len(value.encode()) > MAX_VALUE_BYTES:
            project.warnings.append(f"KeyValueStore value of {key} is {len(value.encode())} bytes, "
                                    f"over {MAX_VALUE_BYTES}")
    if project.store_bytes > MAX_STORE_BYTES:
        project.warnings.append(f"the KeyValueStore entries are {project.store_bytes / 1e6:.2f} MB, over "
                                f"CloudFront's {MAX_STORE_BYTES / 2 ** 20:.0f} MiB")
    for name, text in code.items():
        write_atomic(folder / name, text, mode=0o600)  # the key gate holds the secret
    write_atomic(folder / "kvs.json", orjson.dumps({"data": [{"key": k, "value": v} for k, v in entries]}))
    previous = out / "kvs.json"
    project.update_batches = _write_batches(folder, _read_store(previous) if previous.is_file() else {}, entries)
    # the origin-request Lambda@Edge: its handler, the edge core, and what it routes by
    lambda_folder = folder / ORIGIN_LAMBDA
    lambda_folder.mkdir()
    lambda_files = {"index.js": ORIGIN_SOURCE.read_bytes(), **{module.name: module.read_bytes() for module in MODULES},
                    "manifests.js": MANIFESTS_JS.read_bytes(),
                    "release.json": description,
                    "package.json": b'{"type": "module", "private": true}\n'}
    for name, body in lambda_files.items():
        write_atomic(lambda_folder / name, body)
    project.lambda_bytes = sum(len(body) for body in lambda_files.values())
    if project.lambda_bytes > MAX_LAMBDA_BYTES:
        project.warnings.append(f"the origin Lambda@Edge is {project.lambda_bytes / 1e6:.1f} MB, over its "
                                f"{MAX_LAMBDA_BYTES / 2 ** 20:.0f} MiB (riskapi build --keep keeps fewer releases)")
    earlier = out / ORIGIN_LAMBDA / "release.json"
    project.lambda_changed = not earlier.is_file() or earlier.read_bytes() != description


def _write_batches(folder: Path, before: dict[str, str], entries: list[tuple[str, str]]) -> int:
    """Write kvs-update/ (in place of any there) and update-kvs.sh: the store from `before` to `entries`."""
    batches = update_batches(before, entries)
    shutil.rmtree(folder / UPDATES, ignore_errors=True)
    (folder / UPDATES).mkdir()
    for number, batch in enumerate(batches, start=1):
        write_atomic(folder / UPDATES / f"{number:04d}.json", orjson.dumps(batch))
    write_atomic(folder / UPDATE_SCRIPT, UPDATE_SCRIPT_SOURCE.read_bytes(), mode=0o755)
    return len(batches)


def _read_store(path: Path) -> dict[str, str]:
    return {item["key"]: item["value"] for item in orjson.loads(path.read_bytes())["data"]}


def update_batches(before: dict[str, str], entries: list[tuple[str, str]]) -> list[dict]:
    """Return the UpdateKeys calls that turn a store holding `before` (the previous deploy's kvs.json) into one
    holding `entries`, in order: the new and changed entries (at most MAX_BATCH keys a call), then
    `release` alone (the switch: every entry it points to is there already), then the deletion of the
    entries no longer written (the previous releases' and revoked keys'), which nothing reads any more."""
    after = dict(entries)
    puts = [{"Key": k, "Value": v} for k, v in entries if k != STORE["live"] and before.get(k) != v]
    batches = [{"Puts": puts[start:start + MAX_BATCH]} for start in range(0, len(puts), MAX_BATCH)]
    live = STORE["live"]
    if before.get(live) != after[live]:
        batches.append({"Puts": [{"Key": live, "Value": after[live]}]})
    deletes = [{"Key": k} for k in before if k not in after]
    batches += [{"Deletes": deletes[start:start + MAX_BATCH]} for start in range(0, len(deletes), MAX_BATCH)]
    return batches
