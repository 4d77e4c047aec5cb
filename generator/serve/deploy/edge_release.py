"""What every edge deploy shares: the edge core's route description and hashed keys of a release.

The description is the release's own routing (nginx/routing.json, the data nginx's maps are rendered
from), in the form the edge core (generator/serve/edge/core.js) looks things up by. Keys are known by
their digests, as the keys file holds them (contract/key_format.py: key_digest, under the site's secret,
which the deploy hands the edge): no deploy bundle, upload or log holds a key, and the store alone gives
none back."""
from __future__ import annotations

import contextlib
import dataclasses
from pathlib import Path
from typing import Callable, Iterator

import orjson

from ...building.render.release_info import release_site_url
from ...contract.encodings import ascii_folded
from ...contract.locations import audience_name
from ...contract.routes import DEFAULT_SITE_URL, edge_table
from ...contract.serving import COMPRESSED_OVER, edge_contract, immutable
from ...errors import CatalogueError
from ...history.catalogue import read_history
from ...history.catalogue.fence import fence
from ...history.layout import read_release_info, read_routing, served
from ...history.leases import Holder
from ...history.site import live_release, live_within, release_order
from ...switch.timeline import (
    RECORD,
    Timeline,
    edge_states,
    gate_table,
    last_change,
    site_timeline,
)
from ...switch.timeline import documents as timeline_documents
from ...system.files import write_atomic
from ..edge import EDGE_SOURCE, MANIFEST_FORMAT
from ..keys import ApiKey, grant_set_audiences, previewers

WORKER = EDGE_SOURCE / "worker.js"
KEYS_SCRIPT = EDGE_SOURCE / "update_keys.mjs"  # applies a Workers project's keys to Workers KV
SECRET_FILE = ".keys-secret"  # in a deploy folder: the site's key secret its edge works digests out with


def release_settings(release_dir: Path, release_id: str) -> dict:
    """Return what the edge core takes from the live release: its id, its API prefix (routing.json's) and the
    size over which its files have encoded twins."""
    return {"id": release_id, "prefix": read_routing(release_dir)["prefix"], "compressed_over": COMPRESSED_OVER}


TIMELINE = "timeline"  # the list of releases and the TimeMap, as the core looks them up


def edge_description(edge: Timeline, cache_control: str, timeline: dict[str, list],
                     audiences: dict[str, dict[str, str]] | None = None) -> dict:
    """Return release.json of the edge core (a Worker's, the CloudFront origin Lambda's): the live release's
    settings, the route table (routes.py), the TimeGate's live periods, every id's state, the grant sets'
    audiences of each release answered (where given), and the files of the list of releases and the
    TimeMap (`timeline`: path → [mtime, size, sha256]). Each release's own tables and files are its
    manifest in the bucket (objects.py), which the edge reads."""
    return {**release_settings(edge.folder / edge.current, edge.current), "cache_control": cache_control,
            "site_url": site_url_of(edge),
            "immutable": immutable(cache_control), "gate": gate_table(edge), "states": edge_states(edge),
            "routes": edge_table(),  # the URL grammar, which core.js interprets
            "contract": edge_contract(),  # the serving contract: media types, headers, errors, folders, Links
            "manifest_format": MANIFEST_FORMAT,  # the bucket's manifests this edge reads (manifests.js)
            "record": RECORD,  # the bucket's record of what was live, moved on by each deploy s3
            "tables": {**({release: {"audiences": held} for release, held in audiences.items()}
                          if audiences is not None else {}),
                       TIMELINE: {"files": timeline}}}


def site_url_of(edge: Timeline) -> str:
    """Return the public address the live release links to (`riskapi build --site-url`): every absolute Link."""
    return release_site_url(edge.folder / edge.current) or DEFAULT_SITE_URL


@contextlib.contextmanager
def deploying(site: Path, what: str) -> Iterator[Holder]:
    """Yield this deploy's lease on the releases it reads (edge_timeline takes it): none is pruned under it."""
    holder = Holder(site, what, "deploy")
    try:
        yield holder
    finally:
        holder.release()


def edge_timeline(site: Path, keep: int | None = None, fits: Callable[[str], bool] | None = None,
                  keep_days: float | None = None, holder: Holder | None = None) -> tuple[Timeline, list[str]]:
    """Return what an edge deploy answers: the site's current release at every route, and its other answered
    releases (kept, staged) under their id, newest first, at most `keep` in all (None: every one) and
    while `fits(release)` says the platform holds it — but always the one a rollback goes to, as the
    site keeps it, and every one live in the last `keep_days` days; those left out answer 410 there (a
    staged one 404).
    Returns the timeline and the ids left out; `holder` holds every release answered from here on (leases.py).
    """
    with holder.extending() if holder else contextlib.nullcontext(lambda releases: None) as hold:
        fenced, history = fence(site), read_history(site)  # the fence first: the record's horizon (fence.py)
        timeline = site_timeline(site, live_release(site), history=history, fenced=fenced)
        hold(timeline.answered)
    before = [r for r in history.stack[:-1] if r in timeline.answered][-1:]  # where a rollback goes: always kept
    if keep_days is not None:
        recent = live_within(site, keep_days, history) & set(timeline.answered)
        before += sorted(recent - {timeline.current, *before}, key=release_order, reverse=True)
    answered, left_out = [timeline.current], []
    others = sorted(set(timeline.answered) - {timeline.current, *before}, key=release_order, reverse=True)
    for release in before + others:
        over = keep is not None and len(answered) >= keep and release not in before
        if over or (fits is not None and not fits(release)):
            left_out.append(release)
        else:
            answered.append(release)
    edge = dataclasses.replace(timeline, kept=tuple(r for r in timeline.kept if r in answered),
                               staged=tuple(r for r in timeline.staged if r in answered),
                               gone=timeline.gone + tuple(r for r in left_out if r in timeline.kept))
    return edge, left_out


def timeline_files(edge: Timeline) -> tuple[dict[str, bytes], int]:
    """Return the list of releases (per audience of the current release) and the TimeMap an edge answers (the
    log's and the panel's files too), by path, and their mtime: when what they say last changed."""
    documents = timeline_documents(edge)
    return {path: body.read_bytes() if isinstance(body, Path) else body for path, body in documents.items()}, \
        last_change(edge)


def deployment_secret(folder: Path, secret: str, earlier: Path | None = None) -> bool:
    """Write the site's key secret into a deploy folder (SECRET_FILE, mode 0600), where the operator gives it
    to the edge; return whether it is new to the deployment (`earlier`: the folder being replaced), which
    must then be given again."""
    before = earlier / SECRET_FILE if earlier is not None else None
    known = before is not None and before.is_file() and before.read_text().strip() == secret
    write_atomic(folder / SECRET_FILE, (secret + "\n").encode(), mode=0o600)
    return not known


def revocations_only(out: Path, store: Path, keys: list[ApiKey], prefix: str, error: CatalogueError) -> CatalogueError:
    """Land every revocation when the catalogue cannot be read: the key store of the
    project already in `out` (`store`: its entries, as JSON `[{key, value}]` under `data` or alone) is
    written again without the entries (`prefix` + digest) of keys the keys file no longer has active.
    That needs nothing but the keys file; new keys and grant changes wait for the catalogue's repair (they
    would need its releases). Returns the error to raise, saying so."""
    if not store.is_file():
        return error
    active = {f"{prefix}{k.digest}" for k in keys if k.active}
    document = orjson.loads(store.read_bytes())
    rows = document["data"] if isinstance(document, dict) else document
    kept = [row for row in rows if not row["key"].startswith(prefix) or row["key"] in active]
    if isinstance(document, dict):
        document["data"] = kept
    write_atomic(store, orjson.dumps(document if isinstance(document, dict) else kept), mode=0o600)
    return CatalogueError(f"{error.format_message()} Only the keys were deployed: {len(rows) - len(kept)} revoked "
                          f"key(s) taken out of {store}; new keys and grant changes wait for the repair")


def key_entries(keys: list[ApiKey], releases: dict[str, Path]) -> tuple[dict[str, dict], dict[str, dict]]:
    """Return the keys as a key-value store holds them (Workers KV): each active key's digest → its user,
    the custom models its user may use, their grant set's name, `preview` where it may read staged
    releases and `expires` (ms) where it ends, which the edge compares with its clock; and, for each
    release answered, each grant set held → the audience variant it is served there (public where not
    listed). Per client one entry a key; per release one row a grant set."""
    grants, by_release = grant_set_audiences(keys, [(release, *read_release_info(folder))
                                                    for release, folder in releases.items()])
    may_preview = {ascii_folded(user) for user in previewers(keys)}
    entries = {}
    for k in keys:
        if k.active:
            user, models = ascii_folded(k.user), grants[k.user]
            entries[k.digest] = {
                "user": user, "models": sorted(models), "set": audience_name(models),
                **({"preview": True} if user in may_preview else {}),
                **({"expires": k.expires} if k.expires is not None else {})}
    return entries, by_release


def served_files(release_dir: Path) -> list[str]:
    """Return the files of a release the edge may serve: the API documents, exports and pages, no twin."""
    files = []
    for path in sorted(release_dir.rglob("*")):
        relative = path.relative_to(release_dir).as_posix()
        if path.is_file() and served(relative):
            files.append(relative)
    return files
