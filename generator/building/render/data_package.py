"""The release's bulk files as a Frictionless Data Package (v2): what data portals, pandas, R and the
frictionless tools read to find, type and check them. A release's own package lists its immutable exports
(under /api/v1/releases/{id}/…); the current one (switch/catalogues.py, written at each switch) adds
the point-in-time panel, whose bytes change at every switch. Each resource has its absolute URL, media
type, size and the SHA-256 of the bytes served without content coding (the same as its Unencoded-Digest)."""
from __future__ import annotations

import re
import urllib.parse
from typing import Mapping, Sequence

import pyarrow as pa

from ...contract import locations, routes, serving
from ...history.catalogue.instants import built_at
from ..load.records import ModelDefinition
from . import parquet
from .exports import COLUMNS

PROFILE = "https://datapackage.org/profiles/2.0/datapackage.json"
NAME = "country-risk-scores"
TITLE = "Country risk scores"
DESCRIPTION = ("Country risk scores of every public model, with their sections and indicators, as the country "
               "risk API published them: one row per model, country, level (model, section, indicator), "
               "reference and date.")
FORMATS = ("csv", "jsonl", "parquet")

# Each export column's Table Schema type in each format, as frictionless reads the file served: the CSV as
# text, JSON Lines as JSON values (a raw value is a number or a text, the components an object), Parquet
# through pandas (an integer column holding nulls arrives as floats, a map as a list of pairs). Each column's
# type is the Parquet export's (parquet.TYPES); text where the CSV writes a category, a raw value or components.


def table_type(kind: pa.DataType) -> str:
    """Return the Table Schema type of a column of this Arrow type, as the CSV writes it (anything else: text)."""
    for test, name in ((pa.types.is_integer, "integer"), (pa.types.is_floating, "number"), (pa.types.is_date, "date"),
                       (pa.types.is_timestamp, "datetime")):
        if test(kind):
            return name
    return "string"


_TYPES = {name: table_type(kind) for name, kind in parquet.TYPES.items()}
_INTEGERS = tuple(name for name, kind in _TYPES.items() if kind == "integer")
_BY_FORMAT = {"jsonl": {"raw_value": "any", "raw_components": "object"},
              "parquet": {"raw_components": "array", **dict.fromkeys(_INTEGERS, "number")}}
_CONSTRAINTS: dict[str, dict[str, object]] = {
    "model": {"required": True, "pattern": routes.MODEL_CODE.pattern},
    "country_code": {"required": True, "pattern": routes.COUNTRY_CODE.pattern},
    "level": {"required": True, "enum": ["model", "section", "indicator"]},
    "date": {"required": True},
    "type": {"required": True, "enum": ["history", "current", "projection"]},
    "score": {"minimum": 0, "maximum": 100},
    "risk_class_numeric": {"minimum": 1, "maximum": 5},
    "country_rank": {"minimum": 1},
}


_BOUNDS = ("minimum", "maximum")


def table_schema(format: str, extra: Sequence[tuple[str, str, str]] = ()) -> dict:
    """Return the Table Schema of an export in `format`: every column typed and described, its constraints;
    `extra`: (name, type, description) of columns after the export's (the panel's). Parquet's numbers keep
    no bounds: pandas gives an empty cell of a number column as NaN, which no bound holds."""
    types = {**_TYPES, **_BY_FORMAT.get(format, {})}

    def constraints(name: str) -> dict:
        kept = {k: v for k, v in _CONSTRAINTS.get(name, {}).items() if format != "parquet" or k not in _BOUNDS}
        return {"constraints": kept} if kept else {}
    fields = [{"name": name, "type": types.get(name, "string"), "description": description, **constraints(name)}
              for name, description in COLUMNS]
    fields += [{"name": name, "type": kind, "description": description} for name, kind, description in extra]
    key = ["model", "country_code", "level", "reference", "date"]
    return {"fields": fields, "missingValues": [""], **({"primaryKey": key} if not extra else {})}


def resource(name: str, url: str, format: str, entry: Mapping, schema: dict, description: str) -> dict:
    """Return one bulk file as a tabular resource (`entry`: its size and SHA-256, as a manifest holds them)."""
    media_type = serving.MEDIA_TYPES[format]
    described = {"name": name, "type": "table", "path": url, "format": format, "mediatype": media_type,
                 "bytes": entry["size"], "hash": f"sha256:{entry['sha256']}", "description": description}
    if format != "parquet":
        described["encoding"] = "utf-8"
    if format == "jsonl":  # each line an object that leaves out its empty cells: keyed by every column
        keys = [field["name"] for field in schema["fields"]]
        # Table Dialect v2's keys, and frictionless 5's own control (it reads no v2 dialect yet)
        described["dialect"] = {"itemType": "object", "itemKeys": keys, "json": {"keys": keys, "keyed": True}}
    return {**described, "schema": schema}


SPDX = "https://spdx.org/licenses/{id}.html"
LOCAL_LICENCE = "LicenseRef-"  # an SPDX reference of our own (no SPDX page): named by its title


def origins(models: Sequence[ModelDefinition]) -> tuple[list[dict], list[dict]]:
    """Return the licences and sources of the public models' data, as a Data Package names them, from their
    indicators (indicators.csv: `source`, its first source's `url`, `licence`)."""
    public = [m for m in models if not m.model.custom]
    licences: dict[str, dict] = {}
    sources: dict[str, dict] = {}
    for indicator in (i for m in public for i in m.indicators):
        for spdx in filter(None, (indicator.licence or "").split("; ")):
            licences[spdx] = ({"name": spdx, "title": _words(spdx.removeprefix(LOCAL_LICENCE))}
                              if spdx.startswith(LOCAL_LICENCE) else {"name": spdx, "path": SPDX.format(id=spdx)})
        for place, title in enumerate(indicator.source.split("; ")):
            if place == 0 or title not in sources:
                sources[title] = {"title": title, **({"path": indicator.url} if place == 0 else {})}
    return sorted(licences.values(), key=lambda licence: licence["name"]), sorted(
        sources.values(), key=lambda source: source["title"])


def _words(name: str) -> str:
    """Return a LicenseRef's name as words: `PublicDomain` → `Public domain`."""
    return re.sub(r"(?<=[a-z])(?=[A-Z])", " ", name).capitalize()


def release_package(site_url: str, release: str, files: Mapping[str, Mapping], models: Sequence[ModelDefinition]
                    ) -> dict:
    """Return a release's own Data Package: its public exports at their release-scoped (immutable) URLs, from the
    release's manifest entries (`files`: path → size, sha256)."""
    licences, sources = origins(models)
    public = ", ".join(m.model.code for m in models if not m.model.custom)
    resources = [resource(f"scores-{format}", site_url + routes.in_release(locations.export(format).url, release),
                          format, files[locations.export(format).file], table_schema(format),
                          f"Every result of the public models ({public}) as {format.upper()}")
                 for format in FORMATS]
    own = site_url + routes.in_release(routes.url_for("datapackage"), release)
    return {"$schema": PROFILE, "name": NAME, "id": own, "title": TITLE, "description": DESCRIPTION,
            "version": release, "created": built_at(release),
            "homepage": site_url + "/", "keywords": ["country risk", "sovereign risk", "ESG", "AML"],
            "licenses": licences, "sources": sources, "resources": resources}


def operator_name(site_url: str) -> str:
    """Return who publishes the data, as the catalogues name them: the API at its host."""
    return f"The country risk API at {urllib.parse.urlsplit(site_url).netloc}"


# schema.org's vocabulary inline (JSON-LD read offline, as by a harvester that fetches nothing else), with
# its links typed as schema.org's own context types them
SCHEMA_ORG = {"@vocab": "https://schema.org/", **{name: {"@type": "@id"} for name in ("url", "contentUrl", "license")}}


def schema_org_dataset(site_url: str, release: str, models: Sequence[ModelDefinition]) -> dict:
    """Return the reference page's schema.org Dataset (JSON-LD, its @context inline), for search engines' dataset
    search: the release's exports at their immutable URLs and the point-in-time panel as downloads."""
    licences, _ = origins(models)
    downloads = [{"@type": "DataDownload", "contentUrl": site_url + routes.in_release(locations.export(f).url, release),
                  "encodingFormat": serving.MEDIA_TYPES[f]} for f in FORMATS]
    downloads.append({"@type": "DataDownload", "contentUrl": site_url + routes.url_for("history"),
                      "encodingFormat": serving.MEDIA_TYPES["parquet"]})
    return {"@context": SCHEMA_ORG, "@type": "Dataset", "name": TITLE, "description": DESCRIPTION,
            "url": site_url + "/", "version": release, "dateModified": built_at(release),
            "license": [licence.get("path", licence["name"]) for licence in licences],
            "creator": {"@type": "Organization", "name": operator_name(site_url), "url": site_url + "/"},
            "isAccessibleForFree": False, "distribution": downloads,
            "subjectOf": {"@type": "DataCatalog", "url": site_url + routes.url_for("catalog")}}
