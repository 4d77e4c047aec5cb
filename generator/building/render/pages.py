"""The HTML pages people read (served without a key): API reference and one methodology page per public model."""
from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from ...contract import locations, routes
from ..diff import ReleaseDiff
from ..load.records import Dataset
from .api_documents import render_scoring
from .data_package import schema_org_dataset
from .templates import template_environment

CHANGES_PAGE = "docs/changes/index.html"  # names the release it belongs to
REFERENCE_PAGE = "docs/index.html"  # names it too, in its schema.org Dataset
EXPLORER_SCRIPT = Path(__file__).parent / "templates" / "docs" / "explorer.js"
VERIFY_SCRIPT = EXPLORER_SCRIPT.with_name("verify.js")  # the citation verifier the explorer imports
STYLESHEET = EXPLORER_SCRIPT.with_name("style.css")  # every page's styles (the pages' CSP allows no inline style)


@dataclass(frozen=True)
class ReleaseChanges:
    """What the release being built changes against the one that was current (for the changes page)."""
    previous: str | None
    release: str
    diff: ReleaseDiff

    @functools.cached_property
    def documents(self) -> dict[str, locations.VisibleFiles]:
        """The documents added, changed and removed, grouped for what each audience may know of."""
        return {kind: locations.VisibleFiles(getattr(self.diff, kind))
                for kind in ("added", "changed", "removed")}


def example_routes(dataset: Dataset) -> dict[str, locations.Route]:
    """Return the documents whose real (abridged) answers the reference shows, by endpoint."""
    public = [m.model.code for m in dataset.models if not m.model.custom]
    codes = [c.code for c in dataset.countries]
    code = "DEU" if "DEU" in codes else codes[0]
    model = "sovereign" if "sovereign" in public else public[0]
    return {"models": locations.model_list(), "countries": locations.country_list(),
            "scores": locations.model_scores(model),
            "country-model": locations.country_model_scores(model, code),
            "country": locations.country_scores(code), "export-csv": locations.export("csv"),
            "export-jsonl": locations.export("jsonl"), "export-model-csv": locations.export("csv", model),
            # not the root and release: they change with every build
            "export-model-jsonl": locations.export("jsonl", model)}


EXPORT_LINES = 4  # of an export, shown on the reference


def abridge(kind: str, document: Any) -> tuple[Any, bool]:
    """Keep enough of a real answer to show its shape (an export: its first lines, as text)."""
    if isinstance(document, bytes):
        lines = document.decode().splitlines(keepends=True)
        return "".join(lines[:EXPORT_LINES]), len(lines) > EXPORT_LINES
    if kind == "countries":
        return document[:3], len(document) > 3
    if kind == "scores":
        return {**document, "data": document["data"][:1]}, len(document["data"]) > 1
    if kind == "country-model":
        def last(items: list[dict]) -> list[dict]:
            return [{**i, "results": i["results"][-1:]} for i in items[:1]]
        return ({**document, "results": document["results"][-1:], "sections": last(document["sections"]),
                 "indicators": last(document["indicators"])}, True)
    return document, False


def render_pages(dataset: Dataset, examples: dict[str, tuple[locations.Route, object]],
                 commands: list[tuple[str, str]], site_url: str, changes: ReleaseChanges) -> dict[str, bytes]:
    """Return every page by path in the release: docs/index.html, docs/models/<code>/index.html, the
    explorer (docs/explorer/index.html and its script) and docs/changes/index.html.

    `examples` holds, by kind of `example_routes`, the route and the document the build rendered."""
    environment = template_environment()
    public = [m for m in dataset.models if not m.model.custom]  # custom models are never shown publicly
    summary = [dict(code=m.model.code, title=m.model.title, version=m.model.version, sections=len(m.sections),
                    indicators=len(m.indicators)) for m in public]
    shown = {}
    for kind, (route, document) in examples.items():
        document, abridged = abridge(kind, document)
        text = document if isinstance(document, str) else orjson.dumps(document, option=orjson.OPT_INDENT_2).decode()
        shown[kind] = (route.url, text, abridged)
    model_path = examples["scores"][0].url.removeprefix(routes.API)
    endpoints = []
    for e in routes.ENDPOINTS:
        url, response, abridged = shown.get(e.anchor, (e.template, None, False))
        endpoints.append(dict(anchor=e.anchor, title=e.heading, path=e.template,
                              alias=routes.API + e.alias if e.alias else None, text=e.text.format(example=model_path),
                              parameters=[dict(name=p.name, meaning=p.meaning, allowed=p.allowed)
                                          for p in e.query_parameters],
                              example=url, response=response, abridged=abridged, keyed=e.keyed))
    common = dict(models=summary, base=site_url, release_note="of the published data")
    # a data block, never run (the pages' CSP runs their own script alone); "</" kept out of it
    described = orjson.dumps(schema_org_dataset(site_url, changes.release, dataset.models)).decode()
    described = described.replace("</", "<\\/")
    pages = {REFERENCE_PAGE: environment.get_template("docs/index.html.j2").render(
        title="API reference", endpoints=endpoints, commands=[dict(name=n, help=h) for n, h in commands],
        dataset=described, **common)}
    for data in public:
        sections = [dict(reference=s.reference, name=s.name, default_weight=s.default_weight, sdg_number=s.sdg_number,
                         count=len(data.indicators_of(s.reference))) for s in data.sections]
        indicators = [dict(reference=i.reference, name=i.name, section=i.section, description=i.description,
                           unit=i.unit, frequency=i.frequency, max_lag=i.max_lag, source=i.source,
                           applicability=i.applicability.text if i.applicability else None,
                           scoring=render_scoring(i)) for i in data.indicators]
        pages[f"docs/models/{data.model.code}/index.html"] = environment.get_template("docs/model.html.j2").render(
            title=data.model.title, model=data.model, sections=sections, indicators=indicators,
            own_page=locations.model_page(site_url, data.model.code), **common)
    pages["docs/explorer/index.html"] = environment.get_template("docs/explorer.html.j2").render(
        title="Explorer", **common)
    public_codes = {m.model.code for m in public}
    changed_models = [m for m in changes.diff.models if m.model in public_codes]
    pages[CHANGES_PAGE] = environment.get_template("docs/changes.html.j2").render(
        title="Changes of this release", changes=changes, changed_models=changed_models,
        class_changes=sum(len(m.class_changes) for m in changed_models), **common)
    encoded = {path: text.encode() for path, text in pages.items()}
    encoded["docs/explorer.js"] = EXPLORER_SCRIPT.read_bytes()
    encoded["docs/verify.js"] = VERIFY_SCRIPT.read_bytes()
    encoded["docs/style.css"] = STYLESHEET.read_bytes()
    return encoded
