"""riskapi deploy cloudflare: a complete Workers project for a site's releases.

The releases themselves are in an R2 bucket, put there by `riskapi deploy s3` through R2's S3 API as
manifests over content-addressed objects (objects.py); the Worker reads them through its RELEASES
binding. The project is the Worker and what it bundles (release.json: the live release's settings, the
route table, the releases' states, the list of releases and the TimeMap): one Worker version is one
switch of the live release, made after the upload. Its size does not grow with the releases' files.
The project folder is written beside the old one and swapped in, so it is whole too. Keys are known by
their digests under the site's key secret, which the Worker reads from its `KEYS_SECRET` binding; they are not in the
script but in Workers KV (keys-kv.json, applied by update-keys.mjs with `wrangler kv bulk`): the
script's size and the Worker's start-up stay the same whatever the number of clients, and a key change
needs no new version."""
from __future__ import annotations

import gzip
import hashlib
import hmac
import shutil
from dataclasses import dataclass, field
from pathlib import Path

import orjson

from ...contract.serving import STORE
from ...errors import CatalogueError
from ...history.leases import Holder
from ...system.files import folder_replacing, write_atomic
from ..edge import MANIFESTS_JS, MODULES
from ..keys import ApiKey
from .edge_release import (
    KEYS_SCRIPT,
    WORKER,
    deploying,
    deployment_secret,
    edge_description,
    edge_timeline,
    key_entries,
    revocations_only,
    timeline_files,
)
from .objects import document_objects, stored_size

# The Worker's script (its modules and the description bundled in), compressed, per plan (2026).
SCRIPT_LIMITS = (("Free", 3 * 2 ** 20), ("Paid", 10 * 2 ** 20))
SCRIPT_FILES = (*(module.name for module in MODULES), "manifests.js", "worker.js", "release.json")
R2_BINDING, BUCKET = "RELEASES", "country-risk-releases"
# R2's storage included in every plan, a month: the Free plan's limit; on Paid, billed beyond it
R2_FREE_BYTES = 10 * 10 ** 9
R2_GB_MONTH = 0.015  # $ per GB-month beyond R2_FREE_BYTES (list price, 2026)
# wrangler dev serves its local R2 bucket through an S3 API at /cdn-cgi/local/r2/s3 with these
# credentials (wrangler.json's local_dev), so `riskapi deploy s3` fills it as it fills R2 itself
LOCAL_S3_PATH, LOCAL_ACCESS_KEY = "/cdn-cgi/local/r2/s3", "riskapi-local"
SECRET_BINDING, DEV_VARS = "KEYS_SECRET", ".dev.vars"
# The keys: in Workers KV (binding KEYS), applied by update-keys.mjs from keys-kv.json. KV's documented
# limits (2026): a key's name 512 bytes, a value 25 MiB; on the Free plan 1,000 writes and 1,000
# deletes a day (and 100,000 reads: the Worker keeps what it read for 30 s per isolate).
KV_BINDING, KV_ENTRIES, KV_APPLY = "KEYS", "keys-kv.json", "update-keys.mjs"
KV_FREE_WRITES = 1_000
KV_APPLIED = (".keys-kv-applied.json", ".keys-kv-applied-local.json")  # update-keys.mjs's records of what it wrote
KV_VALUE_BYTES = 25 * 2 ** 20
LOCAL_NAMESPACE = "local-keys"  # the namespace id without --kv-namespace: wrangler dev's own store only
COMPATIBILITY_DATE = "2026-08-01"  # pinned: the newest the workerd from npm accepts offline
# The wrangler the tests run the project with (tests/clients/package.json; a test keeps them equal) and
# the Node it needs: the project's package.json pins both, so `npm install && npx wrangler dev` never
# fetches a newer wrangler whose workerd refuses the compatibility date.
WRANGLER_VERSION = "4.164.0"
NODE_NEEDED = (22, 12)


@dataclass
class CloudflareProject:
    folder: Path
    releases: int = 0  # answered under /api/v1/releases/{id}/
    bucket_objects: int = 0  # what the answered releases take in R2 (deploy s3 puts them there)
    bucket_bytes: int = 0
    warnings: list[str] = field(default_factory=list)
    new_secret: bool = False  # the keys' secret was made by this deploy: `wrangler secret put` it
    script_bytes: int = 0  # the Worker's script as uploaded, gzip-compressed
    keys: int = 0  # active keys, each an entry of Workers KV
    notes: list[str] = field(default_factory=list)  # what the operator must do or know, no limit exceeded


OPERATORS_OWN = ("node_modules", ".wrangler")  # in a project folder: the operator's, kept by every deploy


def write_project(site: Path, keys: list[ApiKey], secret: str, out: Path, name: str, cache_control: str,
                  kv_namespace: str | None = None, bucket: str = BUCKET, prefix: str = "", keep: int | None = None,
                  keep_days: float | None = None, plan: str = "free") -> CloudflareProject:
    """Write the Workers project of a site's releases into a new folder beside `out`, then swap it in
    (files.replace_folder): a deploy killed half-way leaves the previous project whole. The current
    release answers every route; each kept (and staged) release answers under /api/v1/releases/{id}/ (as
    `keep` and `keep_days` say: give deploy s3 the same). `secret` is the keys file's (the Worker works
    digests out with it: edge_release.SECRET_FILE). What the operator put there (OPERATORS_OWN: the installed
    packages, wrangler's local state), so `npm install` is run once. `plan` ("free" or "paid") is whose
    limits the warnings hold it to: on Paid, R2's storage beyond the included 10 GB is a cost (a note),
    and the script's limit is 10 MiB."""
    project = CloudflareProject(out)
    try:
        with folder_replacing(out, keep=OPERATORS_OWN) as folder, deploying(site, f"deploy cloudflare {out}") as lease:
            _write_into(folder, project, site, keys, secret, out, name, cache_control, kv_namespace, bucket, prefix,
                        keep, keep_days, plan, lease)
    except CatalogueError as error:  # a revocation never waits on the history
        raise revocations_only(out, out / KV_ENTRIES, keys, STORE["key"], error) from None
    return project


def local_s3_secret(secret: str) -> str:
    """Return the secret of wrangler dev's local S3 API (LOCAL_ACCESS_KEY's), made from the deployment's."""
    return hmac.new(secret.encode(), b"wrangler dev local R2", hashlib.sha256).hexdigest()


def _write_into(folder: Path, project: CloudflareProject, site: Path, keys: list[ApiKey], secret: str, out: Path,
                name: str, cache_control: str, kv_namespace: str | None, bucket: str, prefix: str, keep: int | None,
                keep_days: float | None, plan: str, lease: Holder) -> None:
    edge, left_out = edge_timeline(site, keep, keep_days=keep_days, holder=lease)
    project.releases = len(edge.answered)
    if left_out:
        project.notes.append(f"{len(left_out)} older releases left out ({', '.join(sorted(left_out))}): they answer "
                             "410 (riskapi build --keep keeps more)")
    project.bucket_objects, project.bucket_bytes = stored_size([edge.folder / r for r in edge.answered])
    if project.bucket_bytes > R2_FREE_BYTES:
        beyond = (project.bucket_bytes - R2_FREE_BYTES) / 1e9
        said = (f"the {len(edge.answered)} releases answered take {project.bucket_bytes:,} bytes in R2, over the "
                f"Free plan's {R2_FREE_BYTES:,}")
        if plan == "paid":
            project.notes.append(f"{said}: the {beyond:,.1f} GB beyond it cost ${beyond * R2_GB_MONTH:,.2f} a month "
                                 f"(${R2_GB_MONTH} per GB-month)")
        else:
            project.warnings.append(f"{said} (beyond it ${R2_GB_MONTH} per GB-month: --plan paid; riskapi build "
                                    "--keep, or deploy --keep, keeps fewer)")
    documents, stamp = timeline_files(edge)
    project.new_secret = deployment_secret(folder, secret, earlier=out if out.is_dir() else None)
    folders = {release: edge.folder / release for release in edge.answered}
    entries, audiences = key_entries(keys, folders)
    values = {digest: orjson.dumps(entry).decode() for digest, entry in sorted(entries.items())}  # as KV stores them
    description = {**edge_description(edge, cache_control, document_objects(documents, stamp)[0], audiences),
                   "store_prefix": prefix}  # the releases' place in the bucket (deploy s3 --prefix)
    local = {"accessKeyId": LOCAL_ACCESS_KEY, "secretAccessKey": local_s3_secret(secret)}
    config = {"name": name, "main": "worker.js", "compatibility_date": COMPATIBILITY_DATE,
              "kv_namespaces": [{"binding": KV_BINDING, "id": kv_namespace or LOCAL_NAMESPACE}],
              "r2_buckets": [{"binding": R2_BINDING, "bucket_name": bucket,
                              "local_dev": {"experimental_s3_credentials": local}}]}
    files = {
        "wrangler.json": orjson.dumps(config, option=orjson.OPT_INDENT_2),
        "package.json": orjson.dumps({"name": name, "private": True,
                                      "scripts": {"dev": "wrangler dev", "deploy": "wrangler deploy",
                                                  "keys": f"node {KV_APPLY}", "keys:local": f"node {KV_APPLY} --local"},
                                      "devDependencies": {"wrangler": WRANGLER_VERSION},
                                      "engines": {"node": ">={}.{}".format(*NODE_NEEDED)}},
                                     option=orjson.OPT_INDENT_2),
        **{module.name: module.read_bytes() for module in MODULES}, "manifests.js": MANIFESTS_JS.read_bytes(),
        "worker.js": WORKER.read_bytes(),
        "release.json": orjson.dumps(description),
        KV_ENTRIES: orjson.dumps([{"key": STORE["key"] + digest, "value": value} for digest, value in values.items()]),
        KV_APPLY: KEYS_SCRIPT.read_bytes(),
    }
    for relative, body in files.items():
        write_atomic(folder / relative, body, **({"mode": 0o600} if relative == KV_ENTRIES else {}))
    # `wrangler dev` reads the secret from .dev.vars; a deployed Worker from `wrangler secret put`
    write_atomic(folder / DEV_VARS, f"{SECRET_BINDING}={secret}\n".encode(), mode=0o600)
    # what the last update-keys.mjs from the project replaced wrote (its next run writes only what
    # changed; it lists the namespace for what to delete and what is missing)
    for applied in KV_APPLIED:
        if (out / applied).is_file():
            shutil.copyfile(out / applied, folder / applied)
    project.keys = len(entries)
    project.script_bytes = len(gzip.compress(b"".join(files[f] for f in SCRIPT_FILES)))
    for held_to, limit in SCRIPT_LIMITS:
        if project.script_bytes > limit and (plan == "free" or held_to == "Paid"):
            project.warnings.append(f"the Worker's script (core, Worker and route description) is "
                                    f"{project.script_bytes:,} bytes compressed, over the {held_to} plan's {limit:,}")
    largest = max((len(value.encode()) for value in values.values()), default=0)
    if largest > KV_VALUE_BYTES:
        project.warnings.append(f"a key's entry is {largest:,} bytes, over Workers KV's {KV_VALUE_BYTES:,} per value")
    if len(entries) > KV_FREE_WRITES and plan == "free":
        project.notes.append(f"{len(entries):,} keys: a first `npm run keys` writes each one, over the Free plan's "
                             f"{KV_FREE_WRITES:,} Workers KV writes a day (later runs write only what changed)")
    if kv_namespace is None:
        project.notes.append(f"no --kv-namespace: the keys' namespace is wrangler dev's own ({LOCAL_NAMESPACE}); "
                             f"before `wrangler deploy`, create one (npx wrangler kv namespace create {KV_BINDING}) "
                             "and deploy again with --kv-namespace ID")


def node_problem() -> str | None:
    """Return why the `node` on PATH cannot run the project's wrangler (None: it can)."""
    import shutil
    import subprocess
    node = shutil.which("node")
    needed = "{}.{}".format(*NODE_NEEDED)
    how = (f"wrangler {WRANGLER_VERSION} needs Node {needed} or newer: install it beside the system's with a private "
           "prefix, `npm install -g --prefix ~/.local/node22 node@22` (the npm package `node` brings its own "
           "binary), then `export PATH=\"$HOME/.local/node22/bin:$PATH\"`; or NodeSource's nodejs 22 package")
    if node is None:
        return f"no `node` on PATH; {how}"
    try:
        version = subprocess.run([node, "--version"], capture_output=True, text=True, timeout=10).stdout.strip()
        found = tuple(int(part) for part in version.lstrip("v").split(".")[:2])
    except (OSError, ValueError, subprocess.TimeoutExpired):
        return f"`{node} --version` did not say its version; {how}"
    return None if found >= NODE_NEEDED else f"the `node` on PATH is {version}; {how}"
