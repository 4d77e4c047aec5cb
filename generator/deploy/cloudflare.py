"""riskapi deploy cloudflare: a complete Workers project for the current release.

One Worker version is one release (Static Assets and the Worker deploy together), so a deploy is
atomic; the project folder is written beside the old one and swapped in, so it is whole too. Keys
are hashed with a secret of the deployment that the Worker reads from its `KEYS_SECRET` binding. The
Worker runs first on every request (`run_worker_first`): without it, Static Assets would serve files
before the key check. A file over Static Assets' 25 MiB per file (the demo's exports)
is stored in parts, which the Worker sends one after the other as one answer. The keys are not in
the script but in Workers KV (keys-kv.json, applied by update-keys.mjs with `wrangler kv bulk`): the
script's size and the Worker's start-up stay the same whatever the number of clients, and a key
change needs no new version."""
from __future__ import annotations

import gzip
import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path

import orjson

from ..edge import CORE, KEYCHECK
from ..files import folder_replacing, write_atomic
from ..keys import ApiKey
from ..publish import RELEASES, live_release
from .edge import (
    KEYS_SCRIPT,
    TIMELINE,
    WORKER,
    deployment_secret,
    edge_description,
    edge_timeline,
    key_entries,
    route_description,
    served_files,
    timeline_files,
    timeline_table,
)

# Cloudflare's documented limits of a Worker version's Static Assets (2026): files per version on the
# Free and on the Paid plan, and bytes per file.
FREE_FILES, PAID_FILES = 20_000, 100_000
MAX_FILE_BYTES = 25 * 1024 * 1024
# The Worker's script (its modules and the route description bundled in), compressed, per plan.
SCRIPT_LIMITS = (("Free", 3 * 2 ** 20), ("Paid", 10 * 2 ** 20))
SCRIPT_FILES = ("keycheck.js", "core.js", "worker.js", "release.json")
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
PUBLIC = "public"


@dataclass
class CloudflareProject:
    folder: Path
    files: int = 0
    bytes: int = 0
    split: dict[str, int] = field(default_factory=dict)  # over the per-file limit: how many parts
    warnings: list[str] = field(default_factory=list)
    new_secret: bool = False  # the keys' secret was made by this deploy: `wrangler secret put` it
    script_bytes: int = 0  # the Worker's script as uploaded, gzip-compressed
    keys: int = 0  # active keys, each an entry of Workers KV
    notes: list[str] = field(default_factory=list)  # what the operator must do or know, no limit exceeded


def _place(source: Path, target: Path) -> None:
    """A hard link where the release and the project share a file system (no copy), else a copy."""
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.link(source, target)
    except OSError:
        shutil.copyfile(source, target)


def _split(source: Path, target: Path) -> int:
    """A file over Static Assets' size per file as `<name>.part0`, `.part1`, … of at most that size,
    which the Worker sends one after the other as one answer. Returns how many."""
    target.parent.mkdir(parents=True, exist_ok=True)
    count = 0
    with open(source, "rb") as whole:
        while chunk := whole.read(MAX_FILE_BYTES):
            write_atomic(target.with_name(f"{target.name}.part{count}"), chunk)
            count += 1
    return count


OPERATORS_OWN = ("node_modules", ".wrangler")  # in a project folder: the operator's, kept by every deploy


def write_project(site: Path, keys: list[ApiKey], out: Path, name: str, cache_control: str,
                  kv_namespace: str | None = None) -> CloudflareProject:
    """Write the Workers project of a site's releases into a new folder beside `out`, then swap it in
    (files.replace_folder): a deploy killed half-way leaves the previous project whole. The current
    release answers every route; each kept (and staged) release answers under /api/v1/releases/{id}/,
    newest first while they fit in a Worker version's files (the others answer 410 there). The keys'
    secret (edge.SECRET_FILE) is kept from the previous project, and so are what the operator put there
    (OPERATORS_OWN: the installed packages, wrangler's local state), so `npm install` is run once."""
    project = CloudflareProject(out)
    with folder_replacing(out, keep=OPERATORS_OWN) as folder:
        _write_into(folder, project, site, keys, out, name, cache_control, kv_namespace)
    return project


def _place_release(folder: Path, project: CloudflareProject, release_dir: Path, release: str) -> dict:
    """The files of one release under public/<id>/ (in parts where too large); its route description."""
    deployed = served_files(release_dir)
    parts = {}
    for relative in deployed:
        source = release_dir / relative
        size = source.stat().st_size
        if size > MAX_FILE_BYTES:
            parts[relative] = _split(source, folder / PUBLIC / release / relative)
            project.split[f"{release}/{relative}"] = parts[relative]
            project.files += parts[relative]
        else:
            _place(source, folder / PUBLIC / release / relative)
            project.files += 1
        project.bytes += size
    return route_description(release_dir, release, "", deployed, parts)


def _files_of(release_dir: Path) -> int:
    """How many Static Assets files a release takes (a file over the size limit as its parts)."""
    return sum(max(1, -(-(release_dir / r).stat().st_size // MAX_FILE_BYTES)) for r in served_files(release_dir))


def _write_into(folder: Path, project: CloudflareProject, site: Path, keys: list[ApiKey],
                out: Path, name: str, cache_control: str, kv_namespace: str | None) -> None:
    counted = [0]

    def fits(release: str) -> bool:  # a Worker version holds at most the Paid plan's files
        files = _files_of(site / RELEASES / release)
        if counted[0] + files > PAID_FILES:
            return False
        counted[0] += files
        return True
    counted[0] = _files_of(site / RELEASES / live_release(site))
    edge, left_out = edge_timeline(site, fits=fits)
    descriptions = {release: _place_release(folder, project, edge.folder / release, release)
                    for release in (edge.current, *(r for r in edge.answered if r != edge.current))}
    if left_out:
        project.warnings.append(f"{len(left_out)} older releases left out ({', '.join(sorted(left_out))}): with them "
                                f"the version would hold over the Paid plan's {PAID_FILES:,} files; they answer 410")
    if project.files > FREE_FILES:
        project.warnings.append(f"{project.files} files: over the Free plan's {FREE_FILES:,} per Worker version "
                                f"(the Paid plan allows {PAID_FILES:,}; riskapi build --keep keeps fewer releases)")
    documents, stamp = timeline_files(edge)
    for relative, body in documents.items():
        (folder / PUBLIC / TIMELINE / relative).parent.mkdir(parents=True, exist_ok=True)
        write_atomic(folder / PUBLIC / TIMELINE / relative, body)
        os.utime(folder / PUBLIC / TIMELINE / relative, (stamp, stamp))
    secret, project.new_secret = deployment_secret(folder, earlier=out if out.is_dir() else None)
    folders = {release: edge.folder / release for release in descriptions}
    entries, audiences = key_entries(keys, folders, secret)
    values = {digest: orjson.dumps(entry).decode() for digest, entry in sorted(entries.items())}  # as KV stores them
    description = {**edge_description(edge, descriptions, cache_control, timeline_table(documents, stamp), audiences),
                   "part_bytes": MAX_FILE_BYTES}  # the size of each part of a file stored in parts (_split)
    config = {"name": name, "main": "worker.js", "compatibility_date": COMPATIBILITY_DATE,
              "assets": {"directory": f"./{PUBLIC}", "binding": "ASSETS", "run_worker_first": True},
              "kv_namespaces": [{"binding": KV_BINDING, "id": kv_namespace or LOCAL_NAMESPACE}]}
    files = {
        "wrangler.json": orjson.dumps(config, option=orjson.OPT_INDENT_2),
        "package.json": orjson.dumps({"name": name, "private": True,
                                      "scripts": {"dev": "wrangler dev", "deploy": "wrangler deploy",
                                                  "keys": f"node {KV_APPLY}", "keys:local": f"node {KV_APPLY} --local"},
                                      "devDependencies": {"wrangler": WRANGLER_VERSION},
                                      "engines": {"node": ">={}.{}".format(*NODE_NEEDED)}},
                                     option=orjson.OPT_INDENT_2),
        ".assetsignore": b"# Static Assets compresses by itself and never serves twins\n*.gz\n*.br\n",
        "keycheck.js": KEYCHECK.read_bytes(), "core.js": CORE.read_bytes(), "worker.js": WORKER.read_bytes(),
        "release.json": orjson.dumps(description),
        KV_ENTRIES: orjson.dumps([{"key": f"k:{digest}", "value": value} for digest, value in values.items()]),
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
    for plan, limit in SCRIPT_LIMITS:
        if project.script_bytes > limit:
            project.warnings.append(f"the Worker's script (core, Worker and route description) is "
                                    f"{project.script_bytes:,} bytes compressed, over the {plan} plan's {limit:,}")
    largest = max((len(value.encode()) for value in values.values()), default=0)
    if largest > KV_VALUE_BYTES:
        project.warnings.append(f"a key's entry is {largest:,} bytes, over Workers KV's {KV_VALUE_BYTES:,} per value")
    if len(entries) > KV_FREE_WRITES:
        project.notes.append(f"{len(entries):,} keys: a first `npm run keys` writes each one, over the Free plan's "
                             f"{KV_FREE_WRITES:,} Workers KV writes a day (later runs write only what changed)")
    if kv_namespace is None:
        project.notes.append(f"no --kv-namespace: the keys' namespace is wrangler dev's own ({LOCAL_NAMESPACE}); "
                             f"before `wrangler deploy`, create one (npx wrangler kv namespace create {KV_BINDING}) "
                             "and deploy again with --kv-namespace ID")


def node_problem() -> str | None:
    """Why the `node` on PATH cannot run the project's wrangler (None: it can)."""
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
