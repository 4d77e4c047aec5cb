"""One route table (generator/contract/routes.py) that every server's routing is generated from: nginx.conf's
locations and maps are fresh, the edge core names no route, usage reads the table; and an endpoint added
in one entry of the table, with nothing else touched, is answered alike by nginx, the Worker in workerd
and the CloudFront harness."""
from __future__ import annotations

import dataclasses
import json
import re
import shutil
import subprocess
import sys
import unittest.mock

import orjson
import pytest

from generator.building.render import RENDERERS, renders
from generator.building.validate import SCHEMA_DIR
from generator.contract import locations, routes
from generator.contract.resources import NGINX_CONF
from generator.contract.routes import Endpoint, Rule, Segment
from generator.history.catalogue import read_history
from generator.history.site import CURRENT, current_release
from generator.publish.build_release import build
from generator.serve.edge import CORE, KEYCHECK
from generator.serve.keys import add_key
from generator.serve.nginx import configuration
from generator.serve.nginx.directives import answer
from generator.serve.nginx.route_blocks import regex_argument, write_into
from generator.serve.runtime import NginxRuntime, ServeSettings
from generator.serve.usage import route_of

from ..conftest import ROOT, SERVERS, TINY
from ..live import NODE_22, LiveServer, free_port, start_cloudfront_server, start_edge_server, worker_readable_folder

# docs/develop.md's recipe, done here and nowhere else: one entry in the table (its path, who may ask, its
# file and the endpoint that documents it), its renderer (registered with render.renders while the
# test builds), and its schema (FIXTURE_SCHEMA)
FIXTURE = Rule("fixture", "/fixture/{code}/", "api/v1/fixture/{code}/{audience}index.json",
               (Segment("code", "country"),), timegate=True,
               endpoints=(Endpoint("fixture", "getFixture", "A fixture", "A fixture of the route table's test",
                                   "A document per country and audience, from a test's renderer.", "fixture"),))
FIXTURE_SCHEMA = {"$schema": "https://json-schema.org/draft/2020-12/schema", "title": "A fixture",
                  "type": "object", "required": ["fixture", "audience"], "additionalProperties": False,
                  "properties": {"fixture": {"type": "string", "minLength": 3, "maxLength": 3},
                                 "audience": {"type": "string"}}}


# docs/develop.md's "Adding a filter", done here alone: a group filter on endpoint 3, declared in its rule
GEO_TYPE = routes.Filter("geo_type", "geo_type", "group", "Exact geography type, case-insensitive",
                         "exact geography type, any case", "country or territory")
SCORES_WITH_GEO_TYPE = dataclasses.replace(routes.rule_named("scores"), variants=dataclasses.replace(
    routes.SCORE_VARIANTS, filters=(*routes.SCORE_VARIANTS.filters, GEO_TYPE)))


def fixture_documents(dataset, current, audiences):
    """Yield the fixture route's renderer: for each country and audience, its code and the audience's folder."""
    for country in dataset.countries:
        for grants in audiences:
            audience = locations.audience_name(grants)
            folder = locations.audience_folder(audience)
            yield (locations.Route(routes.url_for("fixture", code=country.code),
                                         f"api/v1/fixture/{country.code}/{folder}index.json", "fixture", audience),
                   {"fixture": country.code, "audience": folder or "public"})


def test_nginx_conf_s_routing_is_generated_from_the_table():
    assert NGINX_CONF.read_text() == write_into(NGINX_CONF)  # else: python scripts/nginx_conf.py
    check = subprocess.run([sys.executable, str(ROOT / "scripts" / "nginx_conf.py"), "--check"], capture_output=True,
                           text=True)
    assert check.returncode == 0, check.stderr
    # every rule has its location
    text = NGINX_CONF.read_text()
    assert all(f"location ~ {regex_argument(rule.nginx_regex())} " in text or f"location = {rule.template} " in text
               for rule in routes.RULES)


def _code(path) -> str:
    """Return a script without its comments: what it does, not what it says."""
    return re.sub(r"//[^\n]*", "", path.read_text())


def test_the_edge_core_and_usage_name_no_route_of_their_own():
    for script in (CORE, KEYCHECK):
        for word in ("riskscores", "configuration", "exports", "/releases", "api/v1", "/docs"):
            assert word not in _code(script), (script.name, word)
    usage = (ROOT / "generator" / "serve" / "usage.py").read_text()
    assert "/api/v1" not in usage and "riskscores" not in usage


def _example(rule: Rule) -> str:
    """Return a path of the rule: its template, each segment an example value of its kind."""
    samples = {"model": "sovereign", "country": "AUT", "name": "sovereign",
               "uri": "http://127.0.0.1:8080/api/v1/riskscores/sovereign/AUT/", "tile": "1/x002/345.p/17",
               "bundle": "x001/234.p/5"}

    def value(name: str) -> str:
        segment = rule.segment(name)
        return segment.choices[0] if segment.choices else samples[segment.kind]
    return re.sub(r"\{([a-z_]+)\}", lambda m: value(m[1]), rule.template)


def test_each_rule_answers_its_own_template_and_no_other_rule_comes_first():
    for rule in routes.RULES:
        path = _example(rule)
        assert routes.rule_of(path) == rule, path
        if path.endswith("/") and path != "/":
            assert routes.rule_of(path.rstrip("/")) == rule  # the final "/" may be left out
    assert route_of("/api/v1/riskscores/sovereign/AUT") == "/api/v1/riskscores/{model}/{country_code}/"
    assert route_of("/api/v1/riskscores/country/aut/") == "/api/v1/riskscores/country/{code}/"


# ---------------------------------------------------------------- a fixture endpoint, in one entry

@pytest.fixture(scope="module")
def fixture_servers(s3):
    """Yield the tiny release built through a route table with one more entry (FIXTURE) and one more filter on
    endpoint 3 (GEO_TYPE), and the schemas with its one more schema, served by nginx with nginx.conf
    generated from that table, and by the Worker and the CloudFront harness deployed from it. Nothing else
    is changed."""
    base = worker_readable_folder("riskapi-routes-")
    site, schemas = base / "site", base / "schemas"
    shutil.copytree(SCHEMA_DIR, schemas)
    (schemas / "fixture.json").write_text(json.dumps(FIXTURE_SCHEMA))
    keys_file = base / "keys" / "keys.csv"
    keys = {"alice": add_key(keys_file, "alice", ("acme_aml",)).key, "bob": add_key(keys_file, "bob").key}
    conf = base / "nginx.conf"
    shutil.copyfile(NGINX_CONF, conf)
    table = tuple(SCORES_WITH_GEO_TYPE if rule.name == "scores" else rule for rule in routes.RULES) + (FIXTURE,)
    with unittest.mock.patch.object(routes, "RULES", table), \
            unittest.mock.patch.object(routes, "ENDPOINTS", routes.bound_endpoints(table)), \
            unittest.mock.patch.dict(RENDERERS, {}):
        renders("fixture")(fixture_documents)
        build(TINY, site, schema_dir=schemas, grant_sets=[frozenset({"acme_aml"})])
        conf.write_text(write_into(conf))
        with unittest.mock.patch.object(configuration, "NGINX_CONF", conf):
            port = free_port()
            runtime = NginxRuntime(ServeSettings(site=site, keys=keys_file, port=port, workers="1"), base / "nginx")
            runtime.start()
            nginx = LiveServer(base, runtime, port, keys)
        servers = {"nginx": nginx, "workerd": start_edge_server(nginx), "cloudfront": start_cloudfront_server(
            nginx, s3, bucket="risk-routes")}
    yield servers, current_release(site)
    for server in servers.values():
        server.runtime.stop()
    shutil.rmtree(base, ignore_errors=True)


@pytest.mark.parametrize("server", SERVERS)
def test_an_endpoint_added_in_one_table_entry_is_served_by_every_server(fixture_servers, server):
    servers, release = fixture_servers
    live = servers[server]
    for path in ("/api/v1/fixture/AUT/", "/api/v1/fixture/aut", f"/api/v1/releases/{release}/fixture/AUT/"):
        answer = live.get(path, user="bob")
        assert answer.status == 200, (path, answer.body)
        assert json.loads(answer.body) == {"fixture": "AUT", "audience": "public"}
        assert answer.header("X-Release") == release
    mine = live.get("/api/v1/fixture/AUT/", user="alice")  # the audience slot: alice's variant
    assert json.loads(mine.body) == {"fixture": "AUT", "audience": "audience=acme_aml/"}
    assert live.get("/api/v1/fixture/ZZZ/", user="bob").status == 404  # a country segment: the release's codes
    refused = live.get("/api/v1/fixture/AUT/", user=None)
    assert refused.status == 403 and json.loads(refused.body) == {
        "detail": "Authentication credentials were not provided."}
    live_from = read_history(servers["nginx"].site).periods[-1].start_text  # within every server's record
    asked = live.get(f"/api/v1/fixture/AUT/?as_of={live_from}", user="bob")  # a TimeGate, as the entry says
    assert asked.status == 302 and asked.header("Location") == f"/api/v1/releases/{release}/fixture/AUT/"


@pytest.mark.parametrize("server", SERVERS)
def test_a_filter_declared_on_its_rule_alone_is_served_by_every_server(fixture_servers, server):
    servers, release = fixture_servers
    live = servers[server]
    # the tiny data's three countries are all of geo_type "country"; acme_aml scores all three
    for path in ("/api/v1/riskscores/acme_aml/?geo_type=Country&ordering=-country_code",
                 f"/api/v1/releases/{release}/riskscores/acme_aml/?geo_type=COUNTRY&ordering=-country_code"):
        answer = live.get(path, user="alice")
        assert answer.status == 200, (path, answer.body)
        assert [e["entity"]["countryCode"] for e in json.loads(answer.body)["data"]] == ["NGA", "CIV", "AUT"]
    combined = live.get("/api/v1/riskscores/acme_aml/?geo_type=country&region=Sub-Saharan+Africa", user="alice")
    assert [e["entity"]["countryCode"] for e in json.loads(combined.body)["data"]] == ["CIV", "NGA"]
    refused = live.get("/api/v1/riskscores/acme_aml/?geo_type=territory", user="alice")
    assert refused.status == 400 and json.loads(refused.body) == {
        "detail": "Invalid value for geo_type: use one of this release's values: country."}
    # endpoint 2 was given no such filter: the parameter is no parameter of it
    assert live.get("/api/v1/configuration/countries/?geo_type=territory", user="bob").status == 200


def test_an_endpoint_added_in_one_table_entry_is_documented_everywhere(fixture_servers):
    """The same entry, with nothing else edited, in OpenAPI (its path, operation and schema), the API root,
    the reference page and `riskapi usage`'s routes."""
    servers, _ = fixture_servers
    live = servers["nginx"]
    openapi = json.loads(live.get("/api/v1/openapi.json", user=None).body)
    operation = openapi["paths"]["/fixture/{code}/"]["get"]
    assert operation["operationId"] == "getFixture" and operation["summary"] == "A fixture of the route table's test"
    assert "fixture" in json.dumps(operation["responses"]["200"])
    assert openapi["paths"]["/releases/{release}/fixture/{code}/"]["get"]["operationId"] == "getFixtureInRelease"
    # the filter, typed: its values are the release's (all three countries are of geo_type "country")
    parameters = {p["name"]: p for p in openapi["paths"]["/riskscores/{model}/"]["get"]["parameters"]}
    assert parameters["geo_type"] == {"name": "geo_type", "in": "query", "required": False,
                                      "description": "Exact geography type, case-insensitive",
                                      "schema": {"type": "string", "enum": ["country", ""]}}
    root = json.loads(live.get("/api/v1/", user=None).body)
    assert {"operationId": "getFixture", "url": "http://127.0.0.1:8080/api/v1/fixture/{code}/",
            "summary": "A fixture of the route table's test", "keyRequired": True} in root["endpoints"]
    page = live.get("/docs/", user=None).body.decode()
    assert '<h3 id="fixture">A fixture</h3>' in page and "<code>GET /api/v1/fixture/{code}/</code>" in page
    with unittest.mock.patch.object(routes, "RULES", (*routes.RULES, FIXTURE)):
        assert route_of("/api/v1/fixture/aut") == "/api/v1/fixture/{code}/"
    assert route_of("/api/v1/fixture/aut") == "other"  # the table as shipped has no such route


def test_openapi_documents_every_route_of_the_table_and_nothing_else(tiny_site):
    paths = orjson.loads((tiny_site / CURRENT / "api/v1/openapi.json").read_bytes())["paths"]
    examples = {"model": "sovereign", "country_code": "AUT", "code": "AUT", "release": "20260101T000000Z"}
    answered = {}
    for path in paths:
        url = routes.API + re.sub(r"\{([a-z_]+)\}", lambda m: examples[m[1]], path)
        scoped = re.fullmatch(rf"{routes.RELEASES_UNDER}/{routes.RELEASE_ID}(/.*)", url)
        rule = routes.rule_of(url) if scoped is None else routes.rule_of(routes.API + dict(
            routes.SCOPED_ALIASES).get(scoped[1], scoped[1]))
        assert rule is not None and not rule.page, path
        answered.setdefault(rule.name, set()).add(path)
    # every rule of the API is documented (the pages and the favicon are not the API's; openapi.json is the
    # document itself; Memento's TimeGate and TimeMap take a whole URI, slashes and all, which no OpenAPI
    # path parameter may hold, nor a tile's or entry bundle's path (C2SP tlog-tiles' `L/N[.p/W]`): docs/api.md
    # documents them)
    assert set(answered) == {rule.name for rule in routes.RULES if rule.under == routes.API} - {
        "openapi", "timegate", "route-timemap", "tree-tile", "log-tile", "log-entries"}


def _chosen(locations, path: str):
    """Return the location nginx answers `path` with (ngx_http_core_find_location): an exact match; else the
    longest prefix, whose nested regular expressions are tried in order and which answers itself when it
    is `^~` or none matches; else the server's regular expressions in order; else the longest prefix."""
    def regex(location):
        return re.compile(location.match[2:].strip('"').replace("(?<", "(?P<"))
    exact = [loc for loc in locations if loc.match == f"= {path}"]
    if exact:
        return exact[0]
    prefixes = [loc for loc in locations if not loc.match.startswith(("= ", "~ "))
                and path.startswith(loc.match.removeprefix("^~ "))]
    longest = max(prefixes, key=lambda loc: len(loc.match.removeprefix("^~ ")))
    for nested in longest.nested:
        if regex(nested).search(path):
            return nested
    if longest.match.startswith("^~ "):
        return longest
    return next((loc for loc in locations if loc.match.startswith("~ ") and regex(loc).search(path)), longest)


def test_nested_locations_answer_every_path_as_the_routes_in_order_would():
    """nginx.conf nests the regex locations of a folder in `location ^~ /folder/` (a request tries its
    folder's few regexes, not every route's): every path — each route's, each without its final "/",
    and the near misses around the folders — is answered by the same location as the flat list in the
    route table's order would, or by a folder's 404 where the flat list has none but the catch-all."""
    from generator.serve.nginx import route_blocks
    flat = []
    for rule in routes.RULES:
        if rule.name == "releases":
            flat.append(route_blocks._scoped_location())
        flat.append(route_blocks._location(rule))
    flat.append(route_blocks.Location("/", ["return 404;"]))
    grouped = route_blocks.grouped(flat)
    assert [loc.match for loc in grouped if loc.nested] == [
        "^~ /api/v1/releases/", "^~ /api/v1/log/", "^~ /api/v1/exports/", "^~ /api/v1/configuration/",
        "^~ /api/v1/riskscores/", "^~ /docs/"]
    paths = {_example(rule) for rule in routes.RULES} | {"/api/v1/releases/20261126T101500Z/riskscores/aml/AUT/"}
    paths |= {p.rstrip("/") for p in paths} | {p + "x" for p in paths} | {p + "/x/" for p in paths}
    paths |= {"/api/v1", "/api/v1/", "/api/v1/releases", "/api/v1/releases/", "/api/v1/releasesx", "/docs",
              "/docs/", "/docsx", "/api/v1/riskscores/", "/api/v1/riskscores/country/", "/api/v1/exports/",
              "/api/v1/configuration/", "/api/v1/riskscores/country/AUT/", "/api/v1/riskscores/Aml/AUT/"}
    for path in sorted(paths - {""}):
        before, after = _chosen(flat, path), _chosen(grouped, path)
        if before.match == "/":  # no route: a 404 from the catch-all, or from the folder's location
            assert after.match == "/" or after.directives == [answer(404)], path
        else:
            assert after.match == before.match and after.directives == before.directives, path


def test_a_release_scoped_path_answers_as_its_route():
    # a kept release's path → the route it is a past answer of (cite's leaf URL); any other path as it is
    assert routes.route_path("/api/v1/releases/20261127T150140Z/riskscores/sovereign/AUT/") == \
        "/api/v1/riskscores/sovereign/AUT/"
    assert routes.route_path("/api/v1/releases/20261127T150140Z-02") == "/api/v1/releases/current/"
    assert routes.route_path("/api/v1/releases/20261127T150140Z/changes") == "/api/v1/releases/current/changes/"
    assert routes.route_path("/api/v1/releases/current/") == "/api/v1/releases/current/"  # no id: itself
    for path in ("/api/v1/riskscores/aml/", "/api/v1/releases/", "/docs/"):
        assert routes.route_path(path) == path


def test_the_edge_s_scoped_route_is_route_path_s():
    # a kept release's path answers as a current route: routes.route_path in Python (nginx.conf's maps and
    # usage are made from it), keycheck.js's routeOfScoped at the edges, over the same scope of the table
    release = "20260301T000000Z"
    rests = ["", "/", "/changes", "/changes/", "/datapackage.json", "/riskscores/sovereign/",
             "/configuration/countries/", "/changes/x/", "/exports/scores.csv", "/releases/"]
    code = (f"import {{ routeOfScoped }} from {json.dumps((KEYCHECK).as_uri())};\n"
            f"const scope = {json.dumps(routes.edge_table()['scope'])};\n"
            f"console.log(JSON.stringify({json.dumps(rests)}.map((rest) => routeOfScoped(rest, scope))));")
    done = subprocess.run([str(NODE_22 / "node"), "--input-type=module", "-e", code], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    edge = json.loads(done.stdout)
    python = [routes.route_path(f"{routes.RELEASES_UNDER}/{release}{rest}") for rest in rests]
    assert edge == python
    assert python[:3] == ["/api/v1/releases/current/", "/api/v1/releases/current/",
                          "/api/v1/releases/current/changes/"]  # the release itself, and what it changed
