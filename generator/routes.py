"""Every URL of the API, the file that answers it and the schema it must match, as the build writes them;
and the URL grammar every server routes by (RULES): nginx.conf's locations and maps, the edge core's
route table (edge_table), `riskapi usage`'s routes and the download names are generated from it.

Files mirror the URL path, so a static host can serve `/x/` from `x/index.json`. Query variants and
audience variants live in sub-folders named like the query (`ordering=-country_name/`), which nginx
picks through generated whitelist maps; no request value ever reaches a path directly.
"""
from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Callable, Iterable

from . import release_ids
from .encodings import client_encodings

API = "/api/v1"
DEFAULT_SITE_URL = "http://127.0.0.1:8080"  # where `riskapi serve` answers by default
MODEL_CODE = re.compile(r"[a-z][a-z0-9_]{0,39}")  # models.csv, keys grants and the {model} of a URL
PUBLIC = "public"
NO_MATCH = "none"  # the filter variant that matches no country (its folder is `filter=none/`)

COUNTRY_ORDERINGS = ("code", "-code", "name", "-name")  # endpoint 2, parameter `model`
SCORE_ORDERINGS = ("country_code", "-country_code", "country_name", "-country_name")  # endpoint 3, `ordering`


# ---------------------------------------------------------------- the URL grammar: what every server routes by

RELEASE_ID = release_ids.PATTERN  # a release's UTC build time (release_ids.py makes and reads them)
NAME = r"[a-z][a-z0-9_]*"


@dataclass(frozen=True)
class Segment:
    """A typed part of a URL path. `model`: a model the key may see (else 404); `country`: a country code
    in any letter case, answered as the release's code (else 404); `choice`: one of `choices`; `name`: a
    lower-case name the file decides (a methodology page); `uri`: the rest of the path, slashes and all
    (an absolute URI, as Memento's TimeGates take it)."""

    name: str
    kind: str
    choices: tuple[str, ...] = ()

    @property
    def pattern(self) -> str:
        if self.kind == "choice":
            return "|".join(re.escape(choice) for choice in self.choices)
        return {"country": "[^/]+", "uri": ".+"}.get(self.kind, NAME)


@dataclass(frozen=True)
class Variants:
    """The query variants of a list (docs/api.md, filters and orderings): an exact code filter and an
    exact name filter (at most one country matches: `filter=CODE/`, or `filter=none/`), else an ordering
    (`ORDER=VALUE/`; the first is the plain URL). `name` names nginx's maps of it."""

    name: str
    code: str
    country_name: str
    order: str
    orderings: tuple[str, ...]


@dataclass(frozen=True)
class Rule:
    """One URL family of the API: its path under `under` (a template of literal parts and {segment}s; a
    final "/" may be left out by a client), who may ask, and the file that answers it. `file` is a
    template of the segments and the slots {audience} (the key's audience variant folder), {variant}
    (the query variant folder) and {preview} (the list with the staged releases, for keys that may
    preview); its `root` is the release answering ("release") or the list of releases and the
    TimeMap ("timeline"); `status` answers without a file."""

    name: str
    path: str
    file: str = ""
    segments: tuple[Segment, ...] = ()
    key: bool = True  # False: answered without a key (a key sent is not checked)
    challenge: bool = False  # without credentials: 401 with WWW-Authenticate (feed readers wait for it), not 403
    root: str = "release"
    variants: Variants | None = None
    download: bool = False  # an export: its download name says which release and model it is
    timegate: bool = False  # asked for an instant (Accept-Datetime, ?as_of=): the 302 to a past release's answer
    page: bool = False  # an HTML page or its script: the pages' Content-Security-Policy
    status: int = 0
    answer: str = ""  # RFC 7089 for the absolute URI in its `uri` segment: "timegate" (a 302), "timemap"
    under: str = API
    aliases: tuple[str, ...] = ()  # other spellings of the path that answer the same

    def regex(self) -> str:
        """The path as a regular expression (Python's and JavaScript's alike; nginx's PCRE takes it with
        named groups: nginx_regex)."""
        return "^" + _alternatives(self, lambda segment: f"({segment.pattern})") + "$"

    def nginx_regex(self) -> str:
        return "^" + _alternatives(self, lambda s: f"(?<{NGINX_CAPTURE.get(s.kind, s.name)}>{s.pattern})") + "$"

    @property
    def template(self) -> str:
        """The documented URL of the family, as `riskapi usage` names it."""
        return self.under + self.path

    def segment(self, name: str) -> Segment:
        return next(s for s in self.segments if s.name == name)


# what nginx.conf's maps read a segment as ($uri is nginx's own)
NGINX_CAPTURE = {"model": "model", "country": "path_code", "uri": "timegate_target"}
CHALLENGE = 'Basic realm="country risk API", charset="UTF-8"'  # WWW-Authenticate of a challenging rule's 401


def _alternatives(rule: Rule, group: Callable[[Segment], str]) -> str:
    spellings = []
    for path in (rule.path, *rule.aliases):
        optional = path.endswith("/") and path != "/" or (path == "/" and rule.under != "")
        parts = re.split(r"(\{[a-z_]+\})", (rule.under + path).rstrip("/") if optional else rule.under + path)
        spellings.append("".join(group(rule.segment(part[1:-1])) if part.startswith("{") else re.escape(part)
                                 for part in parts) + ("/?" if optional else ""))
    return spellings[0] if len(spellings) == 1 else "(?:" + "|".join(spellings) + ")"


_FORMAT = Segment("format", "choice", ("csv", "jsonl"))
_BASE = API.strip("/")
COUNTRY_VARIANTS = Variants("countries", "code", "name", "model", COUNTRY_ORDERINGS)
SCORE_VARIANTS = Variants("scores", "country_code", "country_name", "ordering", SCORE_ORDERINGS)

# In the order they are matched: the first rule whose path matches answers.
RULES = (
    Rule("root", "/", f"{_BASE}/index.json", key=False, timegate=True),
    Rule("openapi", "/openapi.json", f"{_BASE}/openapi.json", key=False, timegate=True),
    # Memento's TimeGate of an original, as archives and clients address one: {site}/api/v1/timegate/{URI}
    Rule("timegate", "/timegate/{uri}", segments=(Segment("uri", "uri"),), answer="timegate"),
    # and its TimeMap: the kept releases in which that route answered this key
    Rule("route-timemap", "/timemap/{uri}", segments=(Segment("uri", "uri"),), answer="timemap"),
    Rule("releases", "/releases/", "lists/{preview}{audience}index.json", root="timeline"),
    Rule("timemap", "/releases/timemap", "timemap.link", root="timeline"),
    Rule("feed", "/releases/feed.{format}", "feeds/{audience}feed.{format}",
         (Segment("format", "choice", ("json", "atom")),), root="timeline", challenge=True),
    Rule("release", "/releases/current/", f"{_BASE}/releases/current/{{audience}}index.json", timegate=True),
    Rule("changes", "/releases/current/changes/", f"{_BASE}/releases/current/changes/{{audience}}index.json",
         timegate=True),
    Rule("export", "/exports/scores.{format}", f"{_BASE}/exports/scores.{{format}}", (_FORMAT,), download=True,
         timegate=True),
    Rule("model-export", "/exports/{model}/scores.{format}", f"{_BASE}/exports/{{model}}/scores.{{format}}",
         (Segment("model", "model"), _FORMAT), download=True, timegate=True),
    Rule("models", "/configuration/riskscoremodels/", f"{_BASE}/configuration/riskscoremodels/{{audience}}index.json",
         timegate=True, aliases=("/configuration/riskscoresmodels/",)),
    Rule("countries", "/configuration/countries/", f"{_BASE}/configuration/countries/{{variant}}index.json",
         variants=COUNTRY_VARIANTS, timegate=True),
    Rule("country", "/riskscores/country/{code}/", f"{_BASE}/riskscores/country/{{code}}/{{audience}}index.json",
         (Segment("code", "country"),), timegate=True),
    Rule("scores", "/riskscores/{model}/", f"{_BASE}/riskscores/{{model}}/{{variant}}index.json",
         (Segment("model", "model"),), variants=SCORE_VARIANTS, timegate=True),
    Rule("country-model", "/riskscores/{model}/{country_code}/",
         f"{_BASE}/riskscores/{{model}}/{{country_code}}/index.json",
         (Segment("model", "model"), Segment("country_code", "country")), timegate=True),
    # the reference pages, outside the API: no key
    Rule("home", "/", "docs/index.html", key=False, page=True, under=""),
    Rule("docs", "/docs/", "docs/index.html", key=False, page=True, under=""),
    Rule("docs-page", "/docs/{page}/", "docs/{page}/index.html", (Segment("page", "choice", ("explorer", "changes")),),
         key=False, page=True, under=""),
    Rule("model-page", "/docs/models/{model}/", "docs/models/{model}/index.html", (Segment("model", "name"),),
         key=False, page=True, under=""),
    Rule("explorer-script", "/docs/explorer.js", "docs/explorer.js", key=False, page=True, under=""),
    Rule("favicon", "/favicon.ico", key=False, status=204, under=""),  # no icon, and no 404 in browsers' consoles
)
# Where the pages' Content-Security-Policy applies (any path there, a 404 too): the pages' own folder
PAGES = "/docs"
# Every kept release under RELEASES_UNDER/{id}: each route of RULES (under API) as that release
# answered it; the release itself is its release document, …/changes/ what it changed (SCOPED_ALIASES:
# the rest of the path, a final "/" optional → the route it answers as); the releases' own routes
# (SCOPED_REFUSED…) are no route there.
RELEASES_UNDER = f"{API}/releases"
SCOPED_ALIASES = (("/", "/releases/current/"), ("/changes/", "/releases/current/changes/"))
SCOPED_REFUSED = "/releases/"


def past_path(path: str) -> str:
    """The path (under API) a kept release answers a route's path (under API) under."""
    under = RELEASES_UNDER.removeprefix(API) + "/{release}"
    return under + next((rest for rest, route in SCOPED_ALIASES if route == path), path)


def in_release(url: str, release: str) -> str:
    """The URL path a route's URL path (under API) has under one release: what stays that release's answer
    once it is no longer current."""
    return API + past_path(url.removeprefix(API)).replace("{release}", release)


def rule_of(path: str) -> Rule | None:
    """The rule a normalised path answers by, or None."""
    return next((rule for rule, pattern in _compiled(RULES) if pattern.match(path)), None)


@functools.cache
def _compiled(rules: tuple[Rule, ...]) -> list[tuple[Rule, re.Pattern[str]]]:
    """Each rule with its regex compiled, once per table (usage reads a log line by line)."""
    return [(rule, re.compile(rule.regex())) for rule in rules]


def answers_a_timegate(file: str) -> bool:
    """Whether a release file is the answer of a route that is also its own TimeGate (an original, in
    RFC 7089's terms), at its own URL."""
    if not file.startswith(API.strip("/") + "/"):
        return False
    found = rule_of(url_of(file).partition("?")[0])
    return found is not None and found.timegate


def download_name(release: str, format: str, model: str = "") -> str:
    """The name an export downloads under: which release (and model) it is."""
    return f"country-risk-scores-{model + '-' if model else ''}{release}.{format}"


def download_of(file: str, release: str) -> str | None:
    """The download name of a release file that is an export (a rule's `download` file), else None."""
    for rule in RULES:
        if rule.download:
            found = re.fullmatch(file_pattern(rule), file)
            if found:
                return download_name(release, found["format"], found.groupdict().get("model") or "")
    return None


def file_pattern(rule: Rule) -> str:
    """A rule's file template as a regular expression, its segments as named groups."""
    parts = re.split(r"(\{[a-z_]+\})", rule.file)
    return "".join(f"(?P<{part[1:-1]}>{rule.segment(part[1:-1]).pattern})" if part.startswith("{")
                   else re.escape(part) for part in parts)


def edge_table() -> dict:
    """The URL grammar as the edge core (generator/edge/core.js) reads it: each rule's regex, the kinds
    of its segments in order, and what answers it."""
    def entry(rule: Rule) -> dict:
        described: dict = {"name": rule.name, "re": rule.regex(), "segments": [[s.name, s.kind] for s in rule.segments]}
        for field_name in ("file", "key", "challenge", "root", "download", "timegate", "status", "answer"):
            described[field_name] = getattr(rule, field_name)
        if rule.variants is not None:
            described["variants"] = {"code": rule.variants.code, "name": rule.variants.country_name,
                                     "order": rule.variants.order, "orderings": list(rule.variants.orderings)}
        return described
    return {"rules": [entry(rule) for rule in RULES], "pages": f"^/(?:{PAGES[1:]}(?:/.*)?)?$",
            "challenge": CHALLENGE, "no_match": NO_MATCH,
            "download": {"all": download_name("{release}", "{format}"),
                         "model": download_name("{release}", "{format}", "{model}")},
            "scope": {"prefix": API, "under": RELEASES_UNDER, "id": RELEASE_ID,
                      "aliases": [list(a) for a in SCOPED_ALIASES], "refused": SCOPED_REFUSED,
                      "list": rule_named("releases").template, "timemap": rule_named("timemap").template,
                      "timegate": timegate_prefix(), "timemaps": timegate_prefix("route-timemap")}}


def timegate_prefix(rule: str = "timegate") -> str:
    """Where the TimeGate (or the TimeMap) of any original URI is: this, then the URI (MementoClient's
    timegate_uri)."""
    return rule_named(rule).template.removesuffix("{uri}")


def rule_named(name: str) -> Rule:
    return next(rule for rule in RULES if rule.name == name)


# ---------------------------------------------------------------- the endpoints, described once

@dataclass(frozen=True)
class Parameter:
    name: str
    where: str  # "path" or "query"
    description: str  # for openapi.json
    constraints: tuple[tuple[str, object], ...] = ()  # JSON Schema keywords of the string value, in order
    examples: str | None = None  # "models" or "countries": openapi.json lists the release's own
    meaning: str = ""  # for the reference page (query parameters)
    allowed: str = ""


@dataclass(frozen=True)
class Endpoint:
    anchor: str  # the endpoint's short name (and the reference page's anchor)
    operation: str  # openapi.json's operationId: the method name generated clients get
    title: str
    rule: str  # the rule of RULES it documents ("name", or "name:choice" for one value of its choice segment)
    summary: str  # openapi.json's summary
    text: str  # the reference page's sentence; {example} is an example URL
    schema: str  # name of the response schema in schemas/ ("" for a file that is not JSON)
    parameters: tuple[Parameter, ...] = ()
    alias_summary: str | None = None
    alias_operation: str | None = None
    keyed: bool = True  # False: answered without a key
    media_type: str = "application/json"
    tag: str = ""  # openapi.json groups operations by it (generated clients by module)

    @property
    def query_parameters(self) -> tuple[Parameter, ...]:
        return tuple(p for p in self.parameters if p.where == "query")

    @property
    def path(self) -> str:
        """Its URL template under API, as its rule has it (a choice segment given its value)."""
        name, _, choice = self.rule.partition(":")
        rule = rule_named(name)
        chosen = {s.name: choice for s in rule.segments if s.kind == "choice" and choice}
        return re.sub(r"\{([a-z_]+)\}", lambda m: chosen.get(m[1], m[0]), rule.path)

    @property
    def alias(self) -> str | None:
        """Another spelling of the path that answers the same."""
        aliases = rule_named(self.rule.partition(":")[0]).aliases
        return aliases[0] if aliases else None


# docs/api.md: an empty value is no filter (as in the original service); another length than 3 is a 400.
CODE_FILTER = "Exact country code (3 characters), case-insensitive; empty means no filter"
_CODE_FILTER_CONSTRAINTS = (("pattern", "^(.{3})?$"),)
_MODEL = Parameter("model", "path", "Model code; custom models only for clients granted them",
                   (("pattern", "^[a-z][a-z0-9_]*$"),), examples="models")
_COUNTRY_CODE = Parameter("country_code", "path", "ISO 3166-1 alpha-3 code, any letter case",
                          (("minLength", 3), ("maxLength", 3)), examples="countries")

ENDPOINTS = (
    Endpoint("models", "listRiskScoreModels", "1. Risk score models", "models",
             "List risk score models",
             "The models this key may see.", "riskscoremodels",
             alias_summary="List risk score models (the earlier reference's spelling)",
             alias_operation="listRiskScoreModelsEarlierSpelling"),
    Endpoint("countries", "listCountries", "2. Countries", "countries", "List countries",
             "Every country, with filters and an ordering.", "countries", (
                 Parameter("code", "query", CODE_FILTER, _CODE_FILTER_CONSTRAINTS,
                           meaning="exact country code, any case", allowed="3 characters"),
                 Parameter("name", "query", "Exact country name, case-insensitive",
                           meaning="exact country name, any case", allowed="a name of the list"),
                 Parameter("model", "query", "Ordering (the parameter is named model); empty means the default",
                           (("enum", [*COUNTRY_ORDERINGS, ""]), ("default", COUNTRY_ORDERINGS[0])),
                           meaning="the ordering (the parameter is called model)",
                           allowed=", ".join(COUNTRY_ORDERINGS) + f" (default {COUNTRY_ORDERINGS[0]})"))),
    Endpoint("scores", "getModelScores", "3. Risk scores of a model", "scores",
             "Current risk scores of a model for all countries",
             "The current score of every country that has one, for example {example}.", "model-scores", (
                 _MODEL,
                 Parameter("country_code", "query", CODE_FILTER, _CODE_FILTER_CONSTRAINTS,
                           meaning="exact country code, any case", allowed="3 characters"),
                 Parameter("country_name", "query", "Exact country name, case-insensitive",
                           meaning="exact country name, any case", allowed="a name of the list"),
                 Parameter("ordering", "query",
                           "Ordering; a leading minus sorts descending; empty means the default",
                           (("enum", [*SCORE_ORDERINGS, ""]), ("default", SCORE_ORDERINGS[0])),
                           meaning="the order of the list",
                           allowed=", ".join(SCORE_ORDERINGS) + f" (default {SCORE_ORDERINGS[0]})"))),
    Endpoint("country-model", "getModelCountryScores", "4. Risk scores of a model for one country",
             "country-model",
             "Risk scores of a model for one country: history, current and projection, with sections and "
             "indicators",
             "The whole series (history, current, projection) of the model, its sections and its indicators.",
             "country-model-scores", (_MODEL, _COUNTRY_CODE)),
    Endpoint("country", "getCountryScores", "5. A country with its current scores", "country",
             "A country with the current score of each model",
             "The current score of every model this key may see.", "country-scores",
             (Parameter("code", "path", _COUNTRY_CODE.description, _COUNTRY_CODE.constraints, examples="countries"),)),
    Endpoint("root", "getApiRoot", "API root", "root", "The API root: its endpoints, links and the current release",
             "Each endpoint's URL template and summary, the links to openapi.json and these pages, and the current "
             "release's id and build time; no key needed.", "root", keyed=False, tag="release"),
    Endpoint("release", "getCurrentRelease", "Current release", "release",
             "The release the answers come from",
             "The release every answer comes from (each answer names it in its X-Release header too): when it was "
             "built, the data vintage and the number of scored countries of each model this key may see, and what "
             "changed against the previous release.", "release", tag="release"),
    Endpoint("changes", "getReleaseChanges", "What the release changed", "changes",
             "What the release changed against the one before it",
             "Against the release before it, per model this key may see: the countries added and removed, every "
             "country whose risk class or rating moved (from, to, the score before and after, the section that "
             "moved most), the largest score moves; and every document added, changed or removed, with the "
             "SHA-256 of its new bytes, so a client re-fetches only those. A kept release's is "
             "/releases/{{release}}/changes/.", "changes", tag="release"),
    Endpoint("export-csv", "exportScoresCsv", "Bulk export (CSV)", "export:csv",
             "Every result of the release's public models as CSV",
             "Every result of the release's public models in one file, the same for every key: one row per model, "
             "country, date and level (model, section, indicator), with the columns below. A custom model's rows "
             "are in its own export.", "", media_type="text/csv", tag="exports"),
    Endpoint("export-jsonl", "exportScoresJsonl", "Bulk export (JSON Lines)", "export:jsonl",
             "Every result of the release's public models as JSON Lines",
             "The same rows as the CSV export, one JSON object per line (numbers as numbers; a field is left "
             "out where the CSV cell is empty).", "", media_type="application/x-ndjson", tag="exports"),
    Endpoint("export-model-csv", "exportModelScoresCsv", "Bulk export of one model (CSV)",
             "model-export:csv", "Every result of one model as CSV",
             "The rows of one model, as the CSV export has them; a custom model's only for keys granted it.", "",
             (_MODEL,), media_type="text/csv", tag="exports"),
    Endpoint("export-model-jsonl", "exportModelScoresJsonl", "Bulk export of one model (JSON Lines)",
             "model-export:jsonl", "Every result of one model as JSON Lines",
             "The rows of one model, as the JSON Lines export has them.", "", (_MODEL,),
             media_type="application/x-ndjson", tag="exports"),
)


# ---------------------------------------------------------------- one route per document


@dataclass(frozen=True)
class Route:
    url: str  # what a client requests, with the query that selects this variant
    file: str  # path of the answering file, relative to the release folder
    schema: str  # name of the schema in schemas/ (without .json)
    audience: str = PUBLIC  # which set of custom-model grants sees this variant

    def __str__(self) -> str:
        return self.url if self.audience == PUBLIC else f"{self.url} [audience {self.audience}]"


def audience_name(grants: frozenset[str] | tuple[str, ...]) -> str:
    """Name of the audience holding exactly these custom-model grants: `public` or `a+b`."""
    return "+".join(sorted(grants)) if grants else PUBLIC


def audiences(custom_models: tuple[str, ...], grant_sets: Iterable[Iterable[str]] = ()) -> list[frozenset[str]]:
    """The grant sets that get a pre-rendered variant of endpoints 1 and 5 (docs/api.md, custom models):
    none (public), each custom model alone, and each set of several that a client holds — never every
    subset, which would grow as 2 ** custom models."""
    known = set(custom_models)
    held = {frozenset(g) & known for g in grant_sets}
    sets: set[frozenset[str]] = {frozenset()} | {frozenset([m]) for m in known} | {g for g in held if len(g) > 1}
    return sorted(sets, key=lambda g: (len(g), sorted(g)))


def audience_for(grants: frozenset[str], existing: list[frozenset[str]]) -> frozenset[str]:
    """The variant a client with `grants` is served: its own set where the release has it, else the
    largest set it holds that has one (until a build renders its own)."""
    if grants in existing:
        return grants
    held = [a for a in existing if a <= grants]
    return min(held, key=lambda a: (-len(a), audience_name(a)))  # the largest; the first by name on a tie


def _file(path: str, *variant: str) -> str:
    """The file answering `path` (+ variant folders): the URL path itself, then index.json."""
    return "/".join([path.strip("/")] + [v for v in variant if v] + ["index.json"])


def _audience_folder(audience: str) -> str:
    return "" if audience == PUBLIC else f"audience={audience}"


_BY_ANCHOR = {e.anchor: e for e in ENDPOINTS}


def _endpoint(anchor: str, **values: str) -> tuple[str, str]:
    """An endpoint's URL with its path parameters filled in, and its schema."""
    endpoint = _BY_ANCHOR[anchor]
    return API + endpoint.path.format(**values), endpoint.schema


def model_list(audience: str = PUBLIC) -> Route:
    """Endpoint 1: the models a client may see."""
    path, schema = _endpoint("models")
    return Route(path, _file(path, _audience_folder(audience)), schema, audience)


def _list_route(endpoint: tuple[str, str], order_parameter: str, orderings: tuple[str, ...], ordering: str,
                filter_parameter: str, country: str | None) -> Route:
    """A list endpoint's variant: its filter answer for one country (or none), or an ordering."""
    path, schema = endpoint
    if country is not None:
        query = f"{filter_parameter}=" + ("XXX" if country == NO_MATCH else country)
        return Route(f"{path}?{query}", _file(path, f"filter={country}"), schema)
    if ordering == orderings[0]:  # the default ordering is the plain URL
        return Route(path, _file(path), schema)
    return Route(f"{path}?{order_parameter}={ordering}", _file(path, f"{order_parameter}={ordering}"), schema)


def country_list(ordering: str = "code", country: str | None = None) -> Route:
    """Endpoint 2: every ordering, and the one-country (or no-country) answer of the filters."""
    return _list_route(_endpoint("countries"), "model", COUNTRY_ORDERINGS, ordering, "code", country)


def model_scores(model: str, ordering: str = "country_code", country: str | None = None) -> Route:
    """Endpoint 3: current scores of a model for all countries, every ordering and filter answer."""
    return _list_route(_endpoint("scores", model=model), "ordering", SCORE_ORDERINGS, ordering, "country_code",
                       country)


def score_list_models(files: Iterable[str]) -> list[str]:
    """The models whose endpoint 3 document (default ordering) is among `files` of a release."""
    prefix, suffix = model_scores("{model}").file.split("{model}")
    names = (f[len(prefix):-len(suffix)] for f in files if f.startswith(prefix) and f.endswith(suffix))
    return sorted(name for name in names if name and "/" not in name)


def country_model_scores(model: str, code: str) -> Route:
    """Endpoint 4: the whole series of a model for one country."""
    path, schema = _endpoint("country-model", model=model, country_code=code)
    return Route(path, _file(path), schema)


def country_scores(code: str, audience: str = PUBLIC) -> Route:
    """Endpoint 5: current scores of every model the audience may see, for one country."""
    path, schema = _endpoint("country", code=code)
    return Route(path, _file(path, _audience_folder(audience)), schema, audience)


def api_root() -> Route:
    """The API root: no key needed, the same for every client."""
    path, schema = _endpoint("root")
    return Route(path, _file(path), schema)


def current_release(audience: str = PUBLIC) -> Route:
    """The release and the models an audience may see."""
    path, schema = _endpoint("release")
    return Route(path, _file(path, _audience_folder(audience)), schema, audience)


def release_changes(audience: str = PUBLIC) -> Route:
    """What the release changed, as an audience may know it."""
    path, schema = _endpoint("changes")
    return Route(path, _file(path, _audience_folder(audience)), schema, audience)


def audience_variant(file: str, audience: str) -> str | None:
    """The file an audience gets in place of a public document that has audience variants (endpoints 1
    and 5, the release documents), or None for a file of no such kind."""
    if audience == PUBLIC or not file.endswith("/index.json") or "audience=" in file:
        return None
    folder = file.removesuffix("index.json")
    return f"{folder}{_audience_folder(audience)}/index.json" if _VARIED_FOLDERS.fullmatch(folder) else None


# the folders of the documents that have audience variants (endpoints 1 and 5, the release documents)
_VARIED_FOLDERS = re.compile("|".join(
    re.escape(kind.removesuffix("index.json")).replace(re.escape("{code}"), "[^/]+")
    for kind in (model_list().file, country_scores("{code}").file, current_release().file, release_changes().file)))


def url_of(file: str) -> str:
    """The URL path (and query) of an API document of a release: its folders, and its variant folders
    as the query that selects them (an audience's folder is no query: the key selects it); a file that is
    not an index.json (openapi.json, an export) is its own path."""
    if not file.endswith("index.json"):
        return "/" + file
    parts = file.removesuffix("index.json").strip("/").split("/")
    path = "/" + "/".join(p for p in parts if "=" not in p) + "/"
    query = []
    for name, _, value in (p.partition("=") for p in parts if "=" in p):
        if name == "filter":  # the one-country answer of the filters (none: a code no country has)
            parameter = "code" if path == _endpoint("countries")[0] else "country_code"
            query.append(f"{parameter}={'XXX' if value == NO_MATCH else value}")
        elif name != "audience":
            query.append(f"{name}={value}")
    return path + ("?" + "&".join(query) if query else "")


EXPORT_FORMATS = {"csv": "export-csv", "jsonl": "export-jsonl"}
MODEL_EXPORT_FORMATS = {"csv": "export-model-csv", "jsonl": "export-model-jsonl"}


def export(format: str, model: str | None = None) -> Route:
    """A bulk export (not JSON: no schema): the public models' rows, the same file for every key, or
    (`model`) one model's — written once per release, whatever the audiences."""
    if model is None:
        path, _ = _endpoint(EXPORT_FORMATS[format])
    else:
        path, _ = _endpoint(MODEL_EXPORT_FORMATS[format], model=model)
    return Route(path, path.strip("/"), "")


_ROOT_FILE, _RELEASE_FOLDER = api_root().file, current_release().file.removesuffix("index.json")


def visible_to(file: str, grants: frozenset[str], custom_models: set[str]) -> bool:
    """Whether a release file is one an audience may know of: no custom model it is not granted, and
    no variant of another audience."""
    model, audience = _visibility(file)
    return model not in custom_models - grants and audience in (None, audience_name(grants))


def _visibility(file: str) -> tuple[str | None, str | None]:
    """What decides who may know of a file: the model its path names (endpoints 3 and 4, exports), and
    its audience folder."""
    parts = file.split("/")
    model = parts[3] if len(parts) > 3 and parts[2] in ("riskscores", "exports") else None
    folders = [p.partition("=")[2] for p in parts if p.startswith("audience=")]
    return model, folders[0] if folders else None


class VisibleFiles:
    """Files grouped by what decides their visibility, so that what each of many audiences may know of
    costs the groups, not the files (visible_to per file and audience grows as audiences × documents)."""

    def __init__(self, files: Iterable[str]) -> None:
        self.groups: dict[tuple[str | None, str | None], list[str]] = {}
        for file in files:
            self.groups.setdefault(_visibility(file), []).append(file)

    def _visible(self, grants: frozenset[str], custom_models: set[str]) -> list[list[str]]:
        hidden, mine = custom_models - grants, audience_name(grants)
        return [files for (model, audience), files in self.groups.items()
                if model not in hidden and audience in (None, mine)]

    def count(self, grants: frozenset[str], custom_models: set[str]) -> int:
        return sum(len(files) for files in self._visible(grants, custom_models))

    def of(self, grants: frozenset[str], custom_models: set[str]) -> list[str]:
        """The files an audience may know of, sorted."""
        return sorted(file for files in self._visible(grants, custom_models) for file in files)


def names_its_release(file: str) -> bool:
    """The documents that name their own release: left out when releases are compared."""
    return file == _ROOT_FILE or file.startswith(_RELEASE_FOLDER)


def document_count(countries: int, models: int, audiences: int) -> int:
    """How many API documents a release has: the routes above, for every model, country and audience."""
    # endpoint 3 (orderings, filters, none), 4, the model's exports
    per_model = len(SCORE_ORDERINGS) + countries + 1 + countries + len(MODEL_EXPORT_FORMATS)
    shared = audiences * (1 + countries) + len(COUNTRY_ORDERINGS) + countries + 1  # endpoints 1 and 5, 2
    per_release = 1 + 1 + 2 * audiences + len(EXPORT_FORMATS)  # openapi.json, root; release, changes; exports
    return models * per_model + shared + per_release


def model_page(site_url: str, code: str) -> str:
    """The address of a public model's methodology page."""
    return f"{site_url}/docs/models/{code}/"


def openapi() -> Route:
    # checked against the OpenAPI meta-schema in tests
    return Route(f"{API}/openapi.json", f"{API.strip('/')}/openapi.json", "")


# ---------------------------------------------------------------- a release's routing, as data

@dataclass(frozen=True)
class ReleaseRouting:
    """Everything a server needs to map a request of one release to its file: what nginx's maps are
    rendered from (and what an edge worker would read)."""

    countries: tuple[str, ...]  # country codes; matched ignoring case
    country_names: tuple[tuple[str, str], ...]  # (a name as a client encodes it in a query, its code)
    models: tuple[tuple[str, bool], ...]  # (model code, custom)
    audiences: tuple[tuple[str, tuple[str, ...]], ...]  # (audience name, the custom models it sees)
    prefix: str = API
    score_orderings: tuple[str, ...] = SCORE_ORDERINGS
    country_orderings: tuple[str, ...] = COUNTRY_ORDERINGS
    no_match: str = NO_MATCH


def release_routing(countries: list[tuple[str, str]], models: list[tuple[str, bool]],
                    variants: list[frozenset[str]]) -> ReleaseRouting:
    """The routing of a release with these (code, name) countries, (code, custom) models and audiences."""
    return ReleaseRouting(
        countries=tuple(code for code, _ in countries),
        country_names=tuple((encoded, code) for code, name in countries for encoded in client_encodings(name)),
        models=tuple(models),
        audiences=tuple((audience_name(grants), tuple(sorted(grants))) for grants in variants))
