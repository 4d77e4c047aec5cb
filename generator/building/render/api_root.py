"""The documents that name their release: the API root and /releases/current/ (one per audience).

A bank that used a score in a decision can say which release it came from: every answer names the
release in X-Release, and these documents say what that release is."""
from __future__ import annotations

from ...contract import locations, routes
from ...history.catalogue import built_at
from ...history.catalogue.checkpoints import LogIdentity
from ..scoring.results import CurrentScores
from .api_documents import timestamp
from .pages import ReleaseChanges


def _release_link(site_url: str, release_id: str, url: str) -> dict:
    return {"id": release_id, "builtAt": built_at(release_id), "url": site_url + url}


def render_api_root(site_url: str, release_id: str, log: LogIdentity) -> dict:
    """Return each endpoint's URL template and summary, the links to openapi.json and the docs, the release, and
    the log of releases: its checkpoint, origin and verifier keys (the one in use, and those retired)."""
    endpoints = [{"operationId": e.operation, "url": site_url + e.template, "summary": e.summary,
                  "keyRequired": e.keyed} for e in routes.ENDPOINTS]
    # the root answers for the current release only: its link is the current release's document
    return {"title": "Country risk API",
            "release": _release_link(site_url, release_id, locations.current_release().url),
            "endpoints": endpoints,
            "links": {"openapi": site_url + routes.url_for("openapi"), "docs": site_url + routes.url_for("docs"),
                      "changes": site_url + routes.url_for("docs-page", page="changes")},
            "log": {"checkpoint": site_url + routes.url_for("log-checkpoint"),
                    "tiles": site_url + routes.url_for("log-tile", tile=""),
                    "releaseTiles": site_url + routes.url_for("tree-tile", "{release}", tile=""),
                    "origin": log.origin, "verifierKey": log.vkey,
                    **({"retiredVerifierKeys": list(log.retired)} if log.retired else {})}}


def render_current_release(site_url: str, changes: ReleaseChanges, visible: list[CurrentScores],
                           grants: frozenset[str], custom_models: set[str]) -> dict:
    """Return the release, the data vintage of each model the audience sees and what changed for them (documents
    counted only where the audience may know of them)."""
    by_model = {m.model: m for m in changes.diff.models}
    models = []
    for scores in visible:
        model = scores.model
        entry = {"code": model.code, "title": model.title, "version": model.version,
                 "countriesScored": len(scores.current)}
        if scores.current:
            entry["dataVintage"] = timestamp(max(result.year for result in scores.current.values()))
        moved = by_model.get(model.code)
        entry["classChanges"] = len(moved.class_changes) if moved else 0
        entry["ratingChanges"] = len(moved.rating_changes) if moved else 0
        entry["exports"] = export_links(site_url, changes.release, model.code)
        models.append(entry)
    counts = {kind: files.count(grants, custom_models) for kind, files in changes.documents.items()}
    # its own address, under its id: the same document while it is current and after
    own = routes.in_release(locations.current_release().url, changes.release)
    document = _release_link(site_url, changes.release, own)
    document.update(previous=changes.previous, models=models, documents=counts,
                    exports=export_links(site_url, changes.release))
    return document


def export_links(site_url: str, release: str, model: str | None = None) -> dict:
    """Return the URLs of both exports of this release (of the public models, or of one model): under its id, so
    that they still give this release's rows once another is current (the list of releases and a kept
    release's own document show them)."""
    return {fmt: site_url + routes.in_release(locations.export(fmt, model).url, release)
            for fmt in locations.EXPORT_FORMATS}
