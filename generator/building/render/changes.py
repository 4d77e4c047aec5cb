"""The change document of a release (/api/v1/releases/current/changes/, one per audience): what it
changed against the release before it, as `riskapi diff` counts it — per model the countries added
and removed, every risk class and rating move with the section that moved most, the largest score
moves — and the API documents added, changed and removed (URLs with the SHA-256 of their bytes now),
so a client re-fetches only those: the `updatedAfter` of a static API."""
from __future__ import annotations

from pathlib import Path

import orjson

from ...contract import locations
from ..diff import CountryChange
from .pages import ReleaseChanges

Sections = dict[str, dict[str, float]]  # country code → section reference → current score


def current_sections(document: dict) -> dict[str, float]:
    """Return each section's score at the model's current date, from an endpoint 4 document."""
    current = next((r["timestamp"] for r in document["results"] if r["type"] == "current"), None)
    return {s["reference"]: r["score"] for s in document.get("sections", []) for r in s.get("results", [])
            if r["timestamp"] == current and r.get("score") is not None}


def previous_sections(release_dir: Path | None, model: str, code: str) -> dict[str, float]:
    """Return a country's current section scores in an earlier release, from its endpoint 4 file (none there: {})."""
    path = None if release_dir is None else release_dir / locations.country_model_scores(model, code).file
    return current_sections(orjson.loads(path.read_bytes())) if path and path.is_file() else {}


def _section_moved_most(before: dict[str, float], after: dict[str, float]) -> dict | None:
    both = sorted(set(before) & set(after), key=lambda ref: (-abs(after[ref] - before[ref]), ref))
    if not both:
        return None
    ref = both[0]
    return {"reference": ref, "scoreBefore": before[ref], "scoreAfter": after[ref]}


def _move(change: CountryChange, key: str | None, numeric: str | None) -> dict:
    """Return one country's move; `numeric` the field that orders it (class, rating: lower is less risk)."""
    old, new = change.old or {}, change.new or {}
    entry: dict[str, object] = {"countryCode": change.code}
    if key:
        entry["from"], entry["to"] = old.get(key), new.get(key)
    if change.old is None or change.new is None:
        entry["direction"] = "new" if change.old is None else "dropped"
    elif numeric:
        entry["direction"] = "upgrade" if new[numeric] < old[numeric] else "downgrade"
    entry["scoreBefore"], entry["scoreAfter"] = old.get("score"), new.get("score")
    if change.old is not None and change.new is not None:
        entry["move"] = change.score_move
    return entry


def model_changes(changes: ReleaseChanges, sections_now: dict[str, Sections], previous_dir: Path | None) -> dict:
    """Return each model's part of the change document, made once for every audience (the release before is
    read once per moved country): `sections_now` each model's current section scores by country,
    `previous_dir` the release before. A model without a diff entry (the first release, a new model)
    has nothing to compare."""
    parts = {}
    for moved in changes.diff.models:
        code = moved.model
        moves = [*moved.class_changes, *moved.rating_changes, *moved.largest_moves]
        section_moves = {c.code: _section_moved_most(previous_sections(previous_dir, code, c.code),
                                                     sections_now.get(code, {}).get(c.code, {}))
                         for c in (*moved.class_changes, *moved.rating_changes)}
        parts[code] = {
            "code": code,
            "countriesAdded": sorted({c.code for c in moves if c.old is None and c.new is not None}),
            "countriesRemoved": sorted({c.code for c in moves if c.new is None and c.old is not None}),
            "classChanges": [{**_move(c, "riskClassificationCategorical", "riskClassificationNumeric"),
                              "sectionMovedMost": section_moves[c.code]} for c in moved.class_changes],
            "ratingChanges": [{**_move(c, "ratingLetter", "ratingNumeric"), "sectionMovedMost": section_moves[c.code]}
                              for c in moved.rating_changes],
            "largestMoves": [_move(c, None, None) for c in moved.largest_moves],
            "rankChanges": len(moved.rank_changes)}
    return parts


def render_release_changes(site_url: str, changes: ReleaseChanges, files: dict[str, dict], parts: dict[str, dict],
                           visible: list[str], grants: frozenset[str], custom_models: set[str]) -> dict:
    """Return the change document an audience is served: the parts (model_changes) of the models it may see
    (`visible`, in order), the documents it may know of; `files` the new release's manifest (for the
    digests). The first release lists no documents: everything in it is new, and a client fetches what
    it needs."""
    nothing: dict[str, object] = {"countriesAdded": [], "countriesRemoved": [], "classChanges": [],
                                  "ratingChanges": [], "largestMoves": [], "rankChanges": 0}
    models = [parts.get(code, {"code": code, **nothing}) for code in visible]

    mine = locations.audience_name(grants)

    def received(path: str) -> bool:
        """Return whether this audience receives the file at its URL: not a public variant where the release has
        its own (each URL once, with the hash of the bytes it gets)."""
        own = locations.audience_variant(path, mine)
        return own is None or own not in files

    def listed(kind: str) -> list[dict]:
        if changes.previous is None:
            return []
        digest = kind != "removed"  # a removed document has no bytes now
        return [{"url": site_url + locations.url_of(path),
                 **({"sha256": files[path]["sha256"]} if digest else {})}
                for path in changes.documents[kind].of(grants, custom_models) if kind == "removed" or received(path)]
    return {"id": changes.release, "previous": changes.previous,
            "url": site_url + locations.release_changes().url,
            "models": models, "documents": {kind: listed(kind) for kind in ("added", "changed", "removed")}}
