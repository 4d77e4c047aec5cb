"""The data catalogues: the current Data Package and each kept release's own, checked by
frictionless against the bytes served; the DCAT-AP 3 catalogue, read by rdflib; all without a key — on
nginx, the Worker and CloudFront's harness alike (tests/fixtures/tiny; alice holds acme_aml, bob nothing)."""
from __future__ import annotations

import datetime
import hashlib
import json
import re
import subprocess
import sys

import pytest
import rdflib
from rdflib.namespace import DCTERMS, FOAF, RDF

from generator.contract import routes
from generator.history.catalogue import read_history
from generator.publish.build_release import build

from ..conftest import ROOT, SERVERS, replace_in
from ..serve.test_repr_digest import sent_digest
from .test_panel import GDP_AUT_2024

API = routes.API
SITE = routes.DEFAULT_SITE_URL  # the tiny fixture's releases link to it
SPDX = rdflib.Namespace("http://spdx.org/rdf/terms#")
SCHEMA = rdflib.Namespace("https://schema.org/")
DCAT = rdflib.Namespace("http://www.w3.org/ns/dcat#")  # DCAT 3 (rdflib's own knows DCAT 2's terms only)
SERVED_BY = SERVERS  # every test taking `live` runs on nginx, the Worker and CloudFront (conftest.py)


def served(server, url: str, user: str | None = "bob") -> bytes:
    """Return what the server answers for one of its absolute URLs (the release's address → the server's)."""
    assert url.startswith(SITE), url
    answer = server.get(url.removeprefix(SITE), user=user)
    assert answer.status == 200, (url, answer.body)
    return answer.body


def frictionless_errors(package: dict, server, folder) -> list[dict]:
    """Return `frictionless validate` on `package` with each resource's bytes fetched with a key (paths rewritten
    to the files fetched); every error it reports."""
    local = json.loads(json.dumps(package))
    for number, resource in enumerate(local["resources"]):
        name = f"{number}-{resource['path'].rsplit('/', 1)[1]}"
        (folder / name).write_bytes(served(server, resource["path"]))
        resource["path"] = name
    (folder / "datapackage.json").write_text(json.dumps(local))
    run = subprocess.run([sys.executable, "-m", "frictionless", "validate", "--json", "datapackage.json"],
                         cwd=folder, capture_output=True, text=True, timeout=300)
    report = json.loads(run.stdout)
    return [{**error, "resource": task["name"]} for task in report["tasks"] for error in task["errors"]] + \
        report["errors"]


def assert_valid_against_the_bytes_served(package: dict, server, folder) -> None:
    """Assert frictionless finds nothing wrong, but the size of a Parquet resource, which frictionless 5 cannot
    count (it reads Parquet through pandas); every hash and size holds against the bytes served."""
    errors = frictionless_errors(package, server, folder)
    parquet = {r["name"] for r in package["resources"] if r["format"] == "parquet"}
    assert all(e["type"] == "byte-count" and e["resource"] in parquet for e in errors), errors
    for resource in package["resources"]:
        body = served(server, resource["path"])
        assert (len(body), f"sha256:{hashlib.sha256(body).hexdigest()}") == (resource["bytes"], resource["hash"])


def test_the_current_data_package_describes_every_bulk_file_served_now(live, tmp_path):
    answer = live.get(f"{API}/datapackage.json", user=None)  # no key needed
    assert answer.status == 200 and answer.header("Content-Type") == "application/json; charset=utf-8"
    package = json.loads(answer.body)
    release = answer.header("X-Release")
    assert (package["version"], package["id"]) == (release, f"{SITE}{API}/datapackage.json")
    # the release's exports at their immutable URLs, then the panel as served now
    assert [r["path"] for r in package["resources"]] == [
        *(f"{SITE}{API}/releases/{release}/exports/scores.{f}" for f in ("csv", "jsonl", "parquet")),
        f"{SITE}{API}/exports/history.parquet"]
    panel = package["resources"][-1]["schema"]["fields"]
    assert [f["name"] for f in panel[-4:]] == ["known_from", "known_until", "first_release", "revision"]
    assert all(f["type"] and f["description"] for r in package["resources"] for f in r["schema"]["fields"])
    assert_valid_against_the_bytes_served(package, live, tmp_path)


def test_a_kept_release_s_own_data_package_lists_its_immutable_exports_without_a_key(live, tmp_path):
    release = live.get(f"{API}/releases/current/", user="bob").header("X-Release")
    scoped = live.get(f"{API}/releases/{release}/datapackage.json", user=None)
    assert scoped.status == 200, scoped.body
    own = live.get(f"{API}/releases/current/datapackage.json", user=None)
    assert own.status == 200 and own.body == scoped.body
    assert scoped.header("Cache-Control").endswith("max-age=31536000, immutable")
    package = json.loads(scoped.body)
    assert [r["name"] for r in package["resources"]] == ["scores-csv", "scores-jsonl", "scores-parquet"]
    assert package["created"] == f"{release[:4]}-{release[4:6]}-{release[6:8]}T{release[9:11]}:{release[11:13]}:" \
                                 f"{release[13:15]}Z"
    assert_valid_against_the_bytes_served(package, live, tmp_path)
    # a key that is wrong is not asked about; an id never built is still no release
    assert live.get(f"{API}/releases/{release}/datapackage.json", user="carol").status == 200
    assert live.get(f"{API}/releases/20000101T000000Z/datapackage.json", user=None).status == 404
    assert live.get(f"{API}/releases/{release}/exports/scores.csv", user=None).status == 403  # the files need one


def test_the_catalogue_holds_every_kept_release_with_its_files_in_dcat_ap(live):
    answer = live.get(f"{API}/catalog.jsonld", user=None)
    assert answer.status == 200 and answer.header("Content-Type") == "application/ld+json; charset=utf-8"
    assert "@context" in json.loads(answer.body)  # inline: read without fetching anything
    graph = rdflib.Graph().parse(data=answer.body, format="json-ld")
    (catalog,) = graph.subjects(RDF.type, DCAT.Catalog)
    (series,) = graph.subjects(RDF.type, DCAT.DatasetSeries)
    for mandatory in (catalog, series):  # DCAT-AP 3: a title and a description; a catalogue, its publisher
        assert graph.value(mandatory, DCTERMS.title) and graph.value(mandatory, DCTERMS.description)
    publisher = graph.value(catalog, DCTERMS.publisher)
    assert graph.value(publisher, FOAF.name) and (publisher, RDF.type, FOAF.Agent) in graph
    kept = [r["id"] for r in json.loads(live.get(f"{API}/releases/", user="bob").body)["releases"]]
    datasets = {str(graph.value(d, DCAT.version)): d for d in graph.subjects(DCAT.inSeries, series)}
    assert sorted(datasets) == sorted(kept) and set(datasets.values()) <= set(graph.objects(catalog, DCAT.dataset))
    current = json.loads(live.get(f"{API}/releases/", user="bob").body)["current"]
    for release, dataset in datasets.items():
        assert (dataset, RDF.type, DCAT.Dataset) in graph and graph.value(dataset, DCTERMS.issued)
        distributions = list(graph.objects(dataset, DCAT.distribution))
        urls = sorted(str(graph.value(d, DCAT.downloadURL)) for d in distributions)
        # its three exports, immutable under its id; the current one's, the point-in-time panel it serves too
        assert urls == sorted([f"{SITE}{API}/releases/{release}/exports/scores.{f}" for f in ("csv", "jsonl", "parquet")]
                              + ([f"{SITE}{API}/exports/history.parquet"] if release == current else []))
        for distribution in distributions:
            url = str(graph.value(distribution, DCAT.downloadURL))
            assert graph.value(distribution, DCAT.accessURL) == rdflib.URIRef(url)
            body = served(live, url)
            checksum = graph.value(distribution, SPDX.checksum)
            assert graph.value(checksum, SPDX.algorithm) == SPDX.checksumAlgorithm_sha256
            assert str(graph.value(checksum, SPDX.checksumValue)) == hashlib.sha256(body).hexdigest()
            assert int(graph.value(distribution, DCAT.byteSize)) == len(body)
            assert str(graph.value(distribution, DCAT.mediaType)).startswith("http://www.iana.org/assignments/media-types/")


def test_the_catalogue_conforms_to_dcat_ap_3_s_shapes(live):
    """DCAT-AP 3.0.1's own SHACL shapes (tests/fixtures/dcat-ap/), by pyshacl, inferring nothing: every class
    a property's value must have is said outright."""
    import pyshacl
    data = rdflib.Graph().parse(data=live.get(f"{API}/catalog.jsonld", user=None).body, format="json-ld")
    shapes = rdflib.Graph().parse(ROOT / "tests/fixtures/dcat-ap/dcat-ap-3.0.1-SHACL.ttl")
    conforms, _, text = pyshacl.validate(data, shacl_graph=shapes, inference="none")
    assert conforms, text


def test_a_new_release_joins_the_catalogue_and_the_one_before_keeps_its_package(own_server, tmp_path):
    first = own_server.get(f"{API}/datapackage.json", user=None)
    replace_in(own_server.data / "observations" / "sovereign.csv", *GDP_AUT_2024)
    second = build(own_server.data, own_server.site).release
    own_server.runtime.refresh()
    now = json.loads(own_server.get(f"{API}/datapackage.json", user=None).body)
    assert now["version"] == second != json.loads(first.body)["version"]
    before = json.loads(first.body)["version"]
    kept = own_server.get(f"{API}/releases/{before}/datapackage.json", user=None)
    assert kept.status == 200
    assert_valid_against_the_bytes_served(json.loads(kept.body), own_server, tmp_path)
    graph = rdflib.Graph().parse(data=own_server.get(f"{API}/catalog.jsonld", user=None).body, format="json-ld")
    assert {str(v) for v in graph.objects(None, DCAT.version)} == {before, second}
    issued = {str(graph.value(d, DCAT.version)): graph.value(d, DCTERMS.issued).toPython()
              for d in set(graph.subjects(DCAT.inSeries, None))}
    starts = {p.release: datetime.datetime.fromisoformat(p.start_text.replace("Z", "+00:00"))
              for p in read_history(own_server.site).periods}
    assert issued == starts  # when each first went live


@pytest.mark.parametrize("path", ["/datapackage.json", "/catalog.jsonld"])
def test_the_catalogues_carry_their_digest_and_are_no_route_of_the_past_but_the_release_s_own(live, path):
    answer = live.get(API + path, user=None)
    assert answer.header("Repr-Digest") == sent_digest(answer.body)
    release = answer.header("X-Release")
    scoped = live.get(f"{API}/releases/{release}{path}", user="bob")
    assert scoped.status == (200 if path == "/datapackage.json" else 404)


def test_the_reference_page_describes_the_data_as_a_schema_org_dataset(live):
    page = live.get("/", user=None)
    assert page.status == 200
    (block,) = re.findall(rb'<script type="application/ld\+json">(.*?)</script>', page.body, re.S)
    graph = rdflib.Graph().parse(data=block, format="json-ld")  # its @context inline: nothing fetched
    (dataset,) = graph.subjects(RDF.type, SCHEMA.Dataset)
    release = page.header("X-Release")
    assert str(graph.value(dataset, SCHEMA.version)) == release
    assert graph.value(dataset, SCHEMA.name) and graph.value(dataset, SCHEMA.description)
    assert graph.value(dataset, SCHEMA.isAccessibleForFree).toPython() is False
    assert graph.value(dataset, SCHEMA.url) == rdflib.URIRef(f"{SITE}/")
    assert graph.value(graph.value(dataset, SCHEMA.creator), SCHEMA.name)
    downloads = {str(graph.value(d, SCHEMA.contentUrl)): str(graph.value(d, SCHEMA.encodingFormat))
                 for d in graph.objects(dataset, SCHEMA.distribution)}
    assert downloads == {
        **{f"{SITE}{API}/releases/{release}/exports/scores.{f}": t for f, t in (
            ("csv", "text/csv"), ("jsonl", "application/x-ndjson"), ("parquet", "application/vnd.apache.parquet"))},
        f"{SITE}{API}/exports/history.parquet": "application/vnd.apache.parquet"}
    for url in downloads:
        assert served(live, url)
