"""The route table (RULES): the URL grammar every server routes by, and the endpoints that document it.

nginx.conf's locations and maps, the edge core's table (edge_table), `riskapi usage`'s routes, OpenAPI's
paths and the download names are all generated from it. contract/locations.py names the documents a
release writes under it.

Files mirror the URL path, so a static host can serve `/x/` from `x/index.json`. Query variants and
audience variants live in sub-folders named like the query (`ordering=-country_name/`), which nginx
picks through generated whitelist maps; no request value ever reaches a path directly.
"""
from __future__ import annotations

import dataclasses
import re

from . import serving
from .endpoints import Endpoint, Parameter
from .grammar import (  # noqa: F401 (the grammar's parts, as the route table's users name them)
    API,
    BUNDLE,
    COUNTRY_GROUPS,
    NAME,
    NGINX_CAPTURE,
    RELEASE_ID,
    SELECTIONS,
    TILE,
    Filter,
    Rule,
    Segment,
    Variants,
    values_table,
)

DEFAULT_SITE_URL = "http://127.0.0.1:8080"  # where `riskapi serve` answers by default
MODEL_CODE = re.compile(r"[a-z][a-z0-9_]{0,39}")  # models.csv, keys grants and the {model} of a URL
COUNTRY_CODE = re.compile(r"[A-Z]{3}")  # countries.csv, the exports and the code a filter picks (nginx's maps)
PUBLIC = serving.PUBLIC_AUDIENCE
NO_MATCH = serving.NO_MATCH  # the filter variant that matches no country (its folder is `filter=none/`)

COUNTRY_ORDERINGS = ("code", "-code", "name", "-name")  # endpoint 2, parameter `model`
SCORE_ORDERINGS = ("country_code", "-country_code", "country_name", "-country_name")  # endpoint 3, `ordering`


# ---------------------------------------------------------------- the URL grammar: what every server routes by

_FORMAT = Segment("format", "choice", ("csv", "jsonl", "parquet"))
_BASE = API.strip("/")

# docs/api.md: an empty value is no filter (as in the original service); another length than 3 is a 400.
CODE_FILTER = "Exact country code (3 characters), case-insensitive; empty means no filter"
_CODE_FILTER_CONSTRAINTS = (("pattern", "^(.{3})?$"),)


def _code(parameter: str) -> Filter:
    return Filter(parameter, "code", "code", CODE_FILTER, "exact country code, any case", "3 characters",
                  _CODE_FILTER_CONSTRAINTS)


def _name(parameter: str) -> Filter:
    return Filter(parameter, "name", "name", "Exact country name, case-insensitive", "exact country name, any case",
                  "a name of the list")


# the World Bank's groups of the country list (its columns region and income): a release's own values
REGION = Filter("region", "region", "group", "Exact World Bank region, case-insensitive (the entities' "
                "regionName); one of the release's regions; empty means no filter", "exact region, any case",
                "a region of the list, such as Europe & Central Asia")
INCOME = Filter("income", "income", "group", "Exact World Bank income group, case-insensitive (the entities' "
                "worldBankClassification); one of the release's groups; empty means no filter",
                "exact income group, any case", "an income group of the list, such as High income")
COUNTRY_VARIANTS = Variants("countries", (_code("code"), _name("name"), REGION, INCOME), "model", COUNTRY_ORDERINGS,
                            "Ordering (the parameter is named model); empty means the default",
                            "the ordering (the parameter is called model)")
SCORE_VARIANTS = Variants("scores", (_code("country_code"), _name("country_name"), REGION, INCOME), "ordering",
                          SCORE_ORDERINGS, "Ordering; a leading minus sorts descending; empty means the default",
                          "the order of the list")
_MODEL = Parameter("model", "path", "Model code; custom models only for clients granted them",
                   (("pattern", "^[a-z][a-z0-9_]*$"),), examples="models")
_COUNTRY_CODE = Parameter("country_code", "path", "ISO 3166-1 alpha-3 code, any letter case",
                          (("minLength", 3), ("maxLength", 3)), examples="countries")
_EXPORTS = "Every result of the release's public models"
_CSV, _JSONL, _PARQUET = serving.MEDIA_TYPES["csv"], serving.MEDIA_TYPES["jsonl"], serving.MEDIA_TYPES["parquet"]

# In the order they are matched: the first rule whose path matches answers. Each rule's endpoints
# document it (OpenAPI, the API root, the reference page).
RULES = (
    Rule("root", "/", f"{_BASE}/index.json", key=False, timegate=True, endpoints=(Endpoint(
        "root", "getApiRoot", "API root", "The API root: its endpoints, links and the current release",
        "Each endpoint's URL template and summary, the links to openapi.json and these pages, and the current "
        "release's id and build time; no key needed.", "root", tag="release"),)),
    Rule("openapi", "/openapi.json", f"{_BASE}/openapi.json", key=False, timegate=True),
    # the data catalogues (building/render/data_package.py, switch/catalogues.py): for harvesters, no key
    Rule("datapackage", "/datapackage.json", "datapackage.json", root="timeline", key=False, endpoints=(Endpoint(
        "datapackage", "getDataPackage", "The bulk files as a Data Package",
        "The bulk files as a Frictionless Data Package",
        "A Frictionless Data Package (v2) of the bulk files answered now: the current release's exports at their "
        "release-scoped URLs and the point-in-time panel, each with its media type, size, SHA-256 and a typed "
        "Table Schema; the data's licences and sources. Written at each switch; no key needed (the files need "
        "one). A kept release's own is /releases/{{release}}/datapackage.json.", "datapackage",
        tag="catalogues"),)),
    Rule("catalog", "/catalog.jsonld", "catalog.jsonld", root="timeline", key=False, endpoints=(Endpoint(
        "catalog", "getDataCatalog", "The releases as a DCAT-AP catalogue", "The releases as a DCAT-AP 3 catalogue",
        "DCAT-AP 3 in JSON-LD (its @context inline): a catalogue holding the API as a dataset series and each "
        "kept release as a dataset in it, with a distribution per bulk file (download URL, media type, size, "
        "SHA-256). Written at each switch; no key needed.", "", media_type=serving.MEDIA_TYPES["jsonld"],
        tag="catalogues"),)),
    # Memento's TimeGate of an original, as archives and clients address one: {site}/api/v1/timegate/{URI}
    Rule("timegate", "/timegate/{uri}", segments=(Segment("uri", "uri"),), answer="timegate"),
    # and its TimeMap: the kept releases in which that route answered this key
    Rule("route-timemap", "/timemap/{uri}", segments=(Segment("uri", "uri"),), answer="timemap", cache="computed"),
    Rule("releases", "/releases/", "lists/{preview}{audience}index.json", root="timeline", endpoints=(Endpoint(
        "list-releases", "listReleases", "Releases", "The kept releases, newest first",
        "Every kept release with when it was live (liveFrom, liveUntil, every period), its status (live, kept; "
        "staged ones only to keys that may preview) and its change counts: the Memento TimeMap as JSON.",
        "releases", tag="releases"),)),
    Rule("timemap", "/releases/timemap", "timemap.link", root="timeline", endpoints=(Endpoint(
        "timemap", "getTimeMap", "The releases as a TimeMap", "The kept releases as a Memento TimeMap",
        "RFC 7089 link format: the release document as the original resource and its own TimeGate, and each "
        "kept release that was live as a memento, dated when it first went live.", "",
        media_type=serving.MEDIA_TYPES["link"], tag="releases"),)),
    # the feeds: one rule each, as their files differ in type (a file's type is its extension's)
    Rule("feed-json", "/releases/feed.json", "feeds/{audience}feed.jsonfeed", root="timeline", challenge=True,
         endpoints=(Endpoint(
             "feed-json", "getReleasesJsonFeed", "The releases as a JSON Feed", "The releases as a JSON Feed",
             "JSON Feed 1.1: an item per kept release that was live, newest first, with the headline of its "
             "movers this key may see and links to its release and change documents. Feed readers may send "
             "the key as HTTP Basic.", "", media_type=serving.MEDIA_TYPES["jsonfeed"], tag="releases"),)),
    Rule("feed-atom", "/releases/feed.atom", "feeds/{audience}feed.atom", root="timeline", challenge=True,
         endpoints=(Endpoint(
             "feed-atom", "getReleasesAtomFeed", "The releases as an Atom feed", "The releases as an Atom feed",
             "Atom 1.0: the same entries as the JSON Feed.", "", media_type=serving.MEDIA_TYPES["atom"],
             tag="releases"),)),
    # the log of releases (C2SP tlog-tiles): public, so monitors and witnesses follow it without a key
    Rule("log-checkpoint", "/log/checkpoint", "log/checkpoint.txt", root="timeline", key=False, cache="fresh",
         endpoints=(Endpoint(
        "log-checkpoint", "getLogCheckpoint", "The log of releases: its checkpoint",
        "The signed checkpoint of the log of releases",
        "The log's size and root hash (C2SP tlog-checkpoint) in a note signed with the operator's Ed25519 key "
        "(C2SP signed-note; its verifier key is in the API root): what every citation's proofs end at. The "
        "log's tiles and entry bundles are under /log/tile/ (C2SP tlog-tiles). No key needed.", "",
        media_type=serving.MEDIA_TYPES["txt"], tag="releases"),)),
    Rule("log-entries", "/log/tile/entries/{bundle}", "log/tile/entries/{bundle}.bundle",
         (Segment("bundle", "bundle"),), root="timeline", key=False, cache="forever"),
    Rule("log-tile", "/log/tile/{tile}", "log/tile/{tile}.tile", (Segment("tile", "tile"),), root="timeline",
         key=False, cache="forever"),
    Rule("release", "/releases/current/", f"{_BASE}/releases/current/{{audience}}index.json", timegate=True,
         endpoints=(Endpoint(
             "release", "getCurrentRelease", "Current release", "The release the answers come from",
             "The release every answer comes from (each answer names it in its X-Release header too): when it was "
             "built, the data vintage and the number of scored countries of each model this key may see, and what "
             "changed against the previous release.", "release", tag="release",
             past=("getRelease", "A kept release's own release document",
                   "What /releases/current/ said while this release was live.")),)),
    Rule("release-datapackage", "/releases/current/datapackage.json",
         f"{_BASE}/releases/current/datapackage.json", key=False, endpoints=(Endpoint(
             "release-datapackage", "getReleaseDataPackage", "The release's own Data Package",
             "The current release's exports as a Frictionless Data Package",
             "The release's own exports (scores.csv, scores.jsonl, scores.parquet) at their release-scoped, "
             "immutable URLs, with their sizes, SHA-256 and Table Schemas; no key needed. What "
             "/releases/{{release}}/datapackage.json answers for a kept release.", "datapackage",
             tag="catalogues", past=("getKeptReleaseDataPackage", "A kept release's own Data Package",
                                     "Its exports at their immutable URLs, as that release wrote them.")),)),
    Rule("changes", "/releases/current/changes/", f"{_BASE}/releases/current/changes/{{audience}}index.json",
         timegate=True, endpoints=(Endpoint(
             "changes", "getReleaseChanges", "What the release changed",
             "What the release changed against the one before it",
             "Against the release before it, per model this key may see: the countries added and removed, every "
             "country whose risk class or rating moved (from, to, the score before and after, the section that "
             "moved most), the largest score moves; and every document added, changed or removed, with the "
             "SHA-256 of its new bytes, so a client re-fetches only those. A kept release's is "
             "/releases/{{release}}/changes/.", "changes", tag="release"),)),
    # the Merkle tree of the release's documents (history/proof/), as tlog-tiles serves a tree: hashes only, so
    # any active key may read every tile; a kept release's at /releases/{id}/tree/tile/…, immutable
    Rule("tree-tile", "/tree/tile/{tile}", f"{_BASE}/tree/tile/{{tile}}.tile", (Segment("tile", "tile"),)),
    Rule("export", "/exports/scores.{format}", f"{_BASE}/exports/scores.{{format}}", (_FORMAT,), download=True,
         timegate=True, endpoints=(
             Endpoint("export-csv", "exportScoresCsv", "Bulk export (CSV)", f"{_EXPORTS} as CSV",
                      f"{_EXPORTS} in one file, the same for every key: one row per model, country, date and level "
                      "(model, section, indicator), with the columns below. A custom model's rows are in its own "
                      "export.", "", media_type=_CSV, tag="exports", choice="csv"),
             Endpoint("export-jsonl", "exportScoresJsonl", "Bulk export (JSON Lines)", f"{_EXPORTS} as JSON Lines",
                      "The same rows as the CSV export, one JSON object per line (numbers as numbers; a field is left "
                      "out where the CSV cell is empty).", "", media_type=_JSONL, tag="exports", choice="jsonl"),
             Endpoint("export-parquet", "exportScoresParquet", "Bulk export (Parquet)", f"{_EXPORTS} as Apache Parquet",
                      "The same rows and columns as the CSV export, typed (dates as dates, scores as floats, "
                      "categories dictionary-encoded, empty cells as nulls), each column described and the release "
                      "named in the file's metadata; sorted by model and country, a row group per model or run of "
                      "countries, so a reader that asks for one model's columns fetches only those (Range "
                      "requests).", "", media_type=_PARQUET, tag="exports", choice="parquet"))),
    Rule("model-export", "/exports/{model}/scores.{format}", f"{_BASE}/exports/{{model}}/scores.{{format}}",
         (Segment("model", "model"), _FORMAT), download=True, timegate=True, endpoints=(
             Endpoint("export-model-csv", "exportModelScoresCsv", "Bulk export of one model (CSV)",
                      "Every result of one model as CSV", "The rows of one model, as the CSV export has them; a "
                      "custom model's only for keys granted it.", "", (_MODEL,), media_type=_CSV, tag="exports",
                      choice="csv"),
             Endpoint("export-model-jsonl", "exportModelScoresJsonl", "Bulk export of one model (JSON Lines)",
                      "Every result of one model as JSON Lines", "The rows of one model, as the JSON Lines export "
                      "has them.", "", (_MODEL,), media_type=_JSONL, tag="exports", choice="jsonl"),
             Endpoint("export-model-parquet", "exportModelScoresParquet", "Bulk export of one model (Parquet)",
                      "Every result of one model as Apache Parquet", "The rows of one model, as the Parquet export "
                      "has them.", "", (_MODEL,), media_type=_PARQUET, tag="exports", choice="parquet"))),
    # the point-in-time panel (switch/panel.py): every value published and when, kept with the list of
    # releases (it changes with every switch, and holds pruned releases' periods)
    Rule("history", "/exports/history.parquet", "history.parquet", root="timeline", endpoints=(Endpoint(
        "history", "exportHistoryParquet", "Point-in-time panel (Parquet)",
        "Every value the public models published, with when it was published",
        "The export's rows of every release that was live, with `known_from` and `known_until`: when the release "
        "answering that value went live and stopped being live (null while it answers). A value unchanged across "
        "releases is one row; a pruned release's values stay. Join a backtest's dates to it as of each date "
        "(pandas `merge_asof`, polars `join_asof`, DuckDB `ASOF JOIN`) and it sees what was published then. "
        "`first_release` names the release that first published a row's value and `revision` counts the changes "
        "of its observation before it (0: its first value), so a backtest can take first releases only.",
        "", media_type=_PARQUET, tag="exports"),)),
    Rule("model-history", "/exports/{model}/history.parquet", "history/{model}.parquet", (Segment("model", "model"),),
         root="timeline", endpoints=(Endpoint(
             "model-history", "exportModelHistoryParquet", "Point-in-time panel of one model (Parquet)",
             "Every value one model published, with when it was published", "One model's rows of the "
             "point-in-time panel; a custom model's only for keys granted it.", "", (_MODEL,), media_type=_PARQUET,
             tag="exports"),)),
    Rule("models", "/configuration/riskscoremodels/", f"{_BASE}/configuration/riskscoremodels/{{audience}}index.json",
         timegate=True, aliases=("/configuration/riskscoresmodels/",), endpoints=(Endpoint(
             "models", "listRiskScoreModels", "Risk score models", "List risk score models",
             "The models this key may see.", "riskscoremodels", number=1,
             alias_summary="List risk score models (the earlier reference's spelling)",
             alias_operation="listRiskScoreModelsEarlierSpelling"),)),
    Rule("countries", "/configuration/countries/", f"{_BASE}/configuration/countries/{{variant}}index.json",
         variants=COUNTRY_VARIANTS, timegate=True, endpoints=(Endpoint(
             "countries", "listCountries", "Countries", "List countries",
             "Every country, with filters and an ordering.", "countries", number=2),)),
    Rule("country", "/riskscores/country/{code}/", f"{_BASE}/riskscores/country/{{code}}/{{audience}}index.json",
         (Segment("code", "country"),), timegate=True, endpoints=(Endpoint(
             "country", "getCountryScores", "A country with its current scores",
             "A country with the current score of each model", "The current score of every model this key may see.",
             "country-scores",
             (Parameter("code", "path", _COUNTRY_CODE.description, _COUNTRY_CODE.constraints, examples="countries"),),
             number=5),)),
    Rule("scores", "/riskscores/{model}/", f"{_BASE}/riskscores/{{model}}/{{variant}}index.json",
         (Segment("model", "model"),), variants=SCORE_VARIANTS, timegate=True, endpoints=(Endpoint(
             "scores", "getModelScores", "Risk scores of a model", "Current risk scores of a model for all countries",
             "The current score of every country that has one, for example {example}.", "model-scores", (_MODEL,),
             number=3),)),
    Rule("country-model", "/riskscores/{model}/{country_code}/",
         f"{_BASE}/riskscores/{{model}}/{{country_code}}/index.json",
         (Segment("model", "model"), Segment("country_code", "country")), timegate=True, endpoints=(Endpoint(
             "country-model", "getModelCountryScores", "Risk scores of a model for one country",
             "Risk scores of a model for one country: history, current and projection, with sections and "
             "indicators",
             "The whole series (history, current, projection) of the model, its sections and its indicators.",
             "country-model-scores", (_MODEL, _COUNTRY_CODE), number=4),)),
    # the reference pages, outside the API: no key
    Rule("home", "/", "docs/index.html", key=False, page=True, under=""),
    Rule("docs", "/docs/", "docs/index.html", key=False, page=True, under=""),
    Rule("docs-page", "/docs/{page}/", "docs/{page}/index.html", (Segment("page", "choice", ("explorer", "changes")),),
         key=False, page=True, under=""),
    Rule("model-page", "/docs/models/{model}/", "docs/models/{model}/index.html", (Segment("model", "name"),),
         key=False, page=True, under=""),
    Rule("explorer-script", "/docs/explorer.js", "docs/explorer.js", key=False, page=True, under=""),
    # the citation verifier (ES module, WebCrypto): the explorer checks what it shows; clients may import it
    Rule("verify-script", "/docs/verify.js", "docs/verify.js", key=False, page=True, under=""),
    Rule("stylesheet", "/docs/style.css", "docs/style.css", key=False, page=True, under=""),
    Rule("favicon", "/favicon.ico", key=False, status=204, under=""),  # no icon, and no 404 in browsers' consoles
)


def bound_endpoints(rules: tuple[Rule, ...]) -> tuple[Endpoint, ...]:
    """Return every documented operation of `rules`, bound to its rule, a list's query parameters from its rule's
    variants: docs/api.md's numbered endpoints first, the rest in the table's order."""
    return tuple(sorted((dataclasses.replace(e, rule=rule, parameters=e.parameters + (
                             rule.variants.parameters if rule.variants else ()))
                         for rule in rules for e in rule.endpoints), key=lambda e: e.number or len(rules)))


ENDPOINTS = bound_endpoints(RULES)
# The pages' own folder: their 2xx and 3xx answers get the pages' Content-Security-Policy
PAGES = "/docs"
# Every kept release under RELEASES_UNDER/{id}: each route of RULES (under API) as that release
# answered it; the release itself is its release document, …/changes/ what it changed (SCOPED_ALIASES:
# the rest of the path, a final "/" optional → the route it answers as); the releases' own routes, the
# log's and every other route of the timeline (the point-in-time panel: no release holds it) are no
# route there (SCOPED_REFUSED: regular expressions of the rest of the path).
RELEASES_UNDER = f"{API}/releases"
SCOPED_ALIASES = (("/", "/releases/current/"), ("/changes/", "/releases/current/changes/"),
                  ("/datapackage.json", "/releases/current/datapackage.json"))
_OWN = ("/releases/", "/log/")  # refused whole: whatever follows
SCOPED_REFUSED = (*(f"^{own}" for own in _OWN), *(dataclasses.replace(rule, under="").regex() for rule in RULES
                                                 if rule.root == "timeline" and not rule.path.startswith(_OWN)
                                                 and rule.path not in dict(SCOPED_ALIASES)))


def past_path(path: str) -> str:
    """Return the path (under API) a kept release answers a route's path (under API) under."""
    under = RELEASES_UNDER.removeprefix(API) + "/{release}"
    return under + next((rest for rest, route in SCOPED_ALIASES if route == path), path)


def in_release(url: str, release: str) -> str:
    """Return the URL path a route's URL path (under API) has under one release: what stays that release's answer
    once it is no longer current."""
    return API + past_path(url.removeprefix(API)).replace("{release}", release)


def route_path(path: str) -> str:
    """Return the route's path a path answers as: a kept release's (RELEASES_UNDER/{id}/…, past_path) as the
    current route it is a past answer of (its release document and change document by their aliases);
    any other as it is. The edge core's routeOfScoped is the same for the edges."""
    scoped = re.match(rf"^{RELEASES_UNDER}/{RELEASE_ID}(/.*)?$", path)
    if scoped is None:
        return path
    rest = scoped.group(1) or "/"
    return API + next((route for alias, route in SCOPED_ALIASES if rest.rstrip("/") == alias.rstrip("/")), rest)


def route_of(path: str) -> str:
    """Return the documented route a request's path answers by, as `riskapi usage` counts it: its rule's template
    (a kept release's under RELEASES_UNDER/{id}, its aliases as themselves), "pages" for the pages, else
    "other"."""
    scoped = re.match(rf"^{RELEASES_UNDER}/{RELEASE_ID}(/.*)?$", path)
    if scoped:
        rest, under = scoped.group(1) or "/", RELEASES_UNDER + "/{id}"
        aliased = [alias for alias, _ in SCOPED_ALIASES if rest.rstrip("/") == alias.rstrip("/")]
        if aliased:
            return under + aliased[0]
        inner = route_of(API + rest)
        return under + inner.removeprefix(API) if inner.startswith(API) else "other"
    if re.match(rf"^/(?:{PAGES[1:]}(?:/.*)?)?$", path):
        return "pages"
    rule = rule_of(path)
    return rule.template if rule is not None and not rule.page else "other"


def rule_of(path: str) -> Rule | None:
    """Return the rule a normalised path answers by, or None."""
    return next((rule for rule in RULES if rule.matches(path)), None)


def download_name(release: str, format: str, model: str = "") -> str:
    """Return the name an export downloads under: which release (and model) it is."""
    return f"country-risk-scores-{model + '-' if model else ''}{release}.{format}"


def edge_table() -> dict:
    """Return the URL grammar as the edge core (generator/serve/edge/core.js) reads it: each rule's regex, the kinds
    of its segments in order, and what answers it."""
    def entry(rule: Rule) -> dict:
        described: dict = {"name": rule.name, "re": rule.regex(), "segments": [[s.name, s.kind] for s in rule.segments]}
        for field_name in ("file", "key", "challenge", "root", "download", "timegate", "status", "answer", "cache"):
            described[field_name] = getattr(rule, field_name)
        if rule.variants is not None:
            described["variants"] = {
                "filters": [{"parameter": f.parameter, "kind": f.kind, "table": f.table,
                             "values": values_table(f.field)} for f in rule.variants.filters],
                "order": rule.variants.order, "orderings": list(rule.variants.orderings),
                "selections": SELECTIONS, "country_groups": COUNTRY_GROUPS}
        return described
    return {"rules": [entry(rule) for rule in RULES], "pages": f"^/(?:{PAGES[1:]}(?:/.*)?)?$",
            "download": {"all": download_name("{release}", "{format}"),
                         "model": download_name("{release}", "{format}", "{model}")},
            "scope": {"prefix": API, "under": RELEASES_UNDER, "id": RELEASE_ID,
                      "aliases": [list(a) for a in SCOPED_ALIASES], "refused": list(SCOPED_REFUSED),
                      "list": rule_named("releases").template, "timemap": rule_named("timemap").template,
                      "timegate": timegate_prefix(), "timemaps": timegate_prefix("route-timemap")}}


def timegate_prefix(rule: str = "timegate") -> str:
    """Return where the TimeGate (or the TimeMap) of any original URI is: this, then the URI (MementoClient's
    timegate_uri)."""
    return rule_named(rule).template.removesuffix("{uri}")


def known_arguments() -> tuple[str, ...]:
    """Return the API's query parameters, each once in the table's order: all of a query the access log keeps."""
    return tuple(dict.fromkeys(p.name for rule in RULES if rule.variants for p in rule.variants.parameters))


def rule_named(name: str) -> Rule:
    return next(rule for rule in RULES if rule.name == name)


def url_for(name: str, release: str | None = None, **segments: str) -> str:
    """Return the path of the route `name` with its segments filled in (`url_for("scores", model="aml")`); under
    `release`, the path that release answers it at (`url_for("changes", release=ID)`). Every URL the
    build writes into a document, a feed, a page or a webhook is made here."""
    url = rule_named(name).build(**segments)
    return in_release(url, release) if release is not None else url
