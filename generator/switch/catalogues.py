"""The catalogues a server answers from the releases it keeps, written with its configuration at each switch
(timeline.py): the current Data Package — the live release's own (building/render/data_package.py) with the
point-in-time panel as served now — and the DCAT-AP 3 catalogue of every kept release, in JSON-LD with its
@context inline (a harvester that fetches nothing else reads it). A release's distributions come from its
manifest.json, so a release built before there were catalogues is in the catalogue too."""
from __future__ import annotations

from pathlib import Path
from typing import Mapping, Sequence

import orjson

from ..building.render import parquet
from ..building.render.data_package import (
    DESCRIPTION,
    FORMATS,
    TITLE,
    operator_name,
    resource,
    table_schema,
    table_type,
)
from ..building.render.exports import COLUMNS
from ..contract import locations, routes, serving
from ..history.catalogue import built_at
from ..history.catalogue.instants import rfc3339
from ..history.site import read_manifest
from ..system.files import file_entry
from .panel import schema as panel_schema

CONTEXT = {
    "dcat": "http://www.w3.org/ns/dcat#", "dct": "http://purl.org/dc/terms/", "foaf": "http://xmlns.com/foaf/0.1/",
    "spdx": "http://spdx.org/rdf/terms#", "xsd": "http://www.w3.org/2001/XMLSchema#",
    "rdfs": "http://www.w3.org/2000/01/rdf-schema#",
}
MEDIA_TYPES = "http://www.iana.org/assignments/media-types/"  # DCAT-AP: dcat:mediaType is an IANA IRI


def current_package(release_dir: Path, site_url: str, panel: Path | None) -> bytes | None:
    """Return the Data Package of what is served now: the live release's own, named as the current one, with the
    point-in-time panel (`panel`: its file; None while it has none). None for a release built before
    there were Data Packages."""
    own = release_dir / locations.release_datapackage().file
    if not own.is_file():
        return None
    package = orjson.loads(own.read_bytes())
    resources = package["resources"]
    if panel is not None:
        # the panel's own columns after the export's, typed and described as its schema has them
        extra = [(field.name, table_type(field.type), field.metadata[b"description"].decode())
                 for field in panel_schema(parquet.rows_of(None)) if field.name not in dict(COLUMNS)]
        resources = [*resources, resource(
            "history-parquet", site_url + routes.url_for("history"), "parquet", file_entry(panel),
            table_schema("parquet", extra), "Every value the public models published, with when it was published "
            "and its vintage (the point-in-time panel); its bytes change at every switch")]
    return orjson.dumps({**package, "id": site_url + routes.url_for("datapackage"), "resources": resources},
                        option=orjson.OPT_INDENT_2)


def _text(value: str) -> dict:
    return {"@value": value, "@language": "en"}


def _typed(value: object, kind: str) -> dict:
    return {"@value": str(value), "@type": f"xsd:{kind}"}


def _distributions(release: str, files: Mapping[str, Mapping], site_url: str) -> list[dict]:
    """Return a release's exports as DCAT distributions: where to get them (release-scoped, immutable), what they
    are, their size and SHA-256."""
    out = []
    for format in FORMATS:
        entry = files.get(locations.export(format).file)
        if entry is not None:
            out.append(_distribution(site_url + routes.in_release(locations.export(format).url, release),
                                     f"{TITLE}, release {release} ({format})", format, entry))
    return out


def _distribution(url: str, title: str, format: str, entry: Mapping) -> dict:
    """Return one file as a DCAT distribution: where to get it, what it is, its size and SHA-256 (`entry`)."""
    return {"@id": url, "@type": "dcat:Distribution", "dct:title": _text(title),
            "dcat:accessURL": {"@id": url}, "dcat:downloadURL": {"@id": url},
            "dcat:mediaType": {"@id": MEDIA_TYPES + serving.MEDIA_TYPES[format], "@type": "dct:MediaType"},
            "dcat:byteSize": _typed(entry["size"], "nonNegativeInteger"),
            "spdx:checksum": {"@type": "spdx:Checksum", "spdx:algorithm": {"@id": "spdx:checksumAlgorithm_sha256",
                                                                           "@type": "spdx:ChecksumAlgorithm"},
                              "spdx:checksumValue": _typed(entry["sha256"], "hexBinary")}}


def catalogue(folder: Path, kept: Sequence[str], live_from: Mapping[str, str], site_url: str,
              current: str | None = None, panel: Path | None = None) -> bytes:
    """Return DCAT-AP 3 in JSON-LD: the catalogue, the API as a dataset series, and each kept release (`kept`, in
    `folder`) as a dataset in it with its distributions; `live_from`: when each first went live (RFC 3339).
    The current release's dataset has the point-in-time panel it serves too (`panel`: its file), at the
    address that changes at every switch."""
    catalog_id, series_id = site_url + routes.url_for("catalog"), site_url + routes.API + "/"
    publisher = {"@id": site_url + "/", "@type": "foaf:Agent", "foaf:name": operator_name(site_url)}
    datasets: list[dict] = []
    for release in kept:
        built = built_at(release)
        distributions = _distributions(release, read_manifest(folder / release), site_url)
        if release == current and panel is not None:
            distributions.append(_distribution(
                site_url + routes.url_for("history"), f"{TITLE}: every value published, as of each instant (the "
                "point-in-time panel)", "parquet", file_entry(panel)))
        datasets.append({
            "@id": site_url + routes.in_release(routes.url_for("release"), release), "@type": "dcat:Dataset",
            "dct:title": _text(f"{TITLE}, release {release}"), "dct:description": _text(DESCRIPTION),
            "dcat:version": release, "dcat:inSeries": {"@id": series_id}, "dct:publisher": {"@id": publisher["@id"]},
            "dct:issued": _typed(live_from.get(release, built), "dateTime"),
            "dct:modified": _typed(built, "dateTime"),
            "dcat:distribution": distributions})
    newest = max((d["dct:modified"]["@value"] for d in datasets), default=rfc3339(0))
    # a series is a dataset (DCAT 3), said outright for a reader that infers nothing (DCAT-AP's shapes)
    series = {"@id": series_id, "@type": ["dcat:DatasetSeries", "dcat:Dataset"], "dct:title": _text(TITLE),
              "dct:description": _text("Every kept release of the country risk API's scores, each a dataset: "
                                       + DESCRIPTION), "dct:publisher": {"@id": publisher["@id"]},
              "dct:modified": _typed(newest, "dateTime"), "foaf:page": {"@id": site_url + "/"}}
    catalog = {"@id": catalog_id, "@type": "dcat:Catalog", "dct:title": _text(f"{TITLE}: catalogue"),
               "dct:description": _text("The releases of the country risk API and their bulk files."),
               "dct:publisher": {"@id": publisher["@id"]},
               "foaf:homepage": {"@id": site_url + "/", "@type": "foaf:Document"},
               "dct:modified": _typed(newest, "dateTime"),
               "dcat:dataset": [{"@id": series_id}, *({"@id": d["@id"]} for d in datasets)]}
    return orjson.dumps({"@context": CONTEXT, "@graph": [catalog, publisher, series, *datasets]},
                        option=orjson.OPT_INDENT_2)
