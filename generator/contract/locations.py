"""Every document a release writes, one route each: the URL a client asks, the file that answers it, the
schema it must match and the audience it is for (routes.py holds the grammar the servers route by; this,
what the build writes under it). Also who may know of a file, how many documents a release has, and a
release's routing as data (what nginx's maps and the edge's tables are rendered from)."""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterable

from . import filters, routes, serving
from .encodings import client_encodings
from .routes import API, COUNTRY_ORDERINGS, NO_MATCH, PUBLIC, SCORE_ORDERINGS, rule_named, url_for


@dataclass(frozen=True)
class Route:
    url: str  # what a client requests, with the query that selects this variant
    file: str  # path of the answering file, relative to the release folder
    schema: str  # name of the schema in schemas/ (without .json)
    audience: str = PUBLIC  # which set of custom-model grants sees this variant

    def __str__(self) -> str:
        return self.url if self.audience == PUBLIC else f"{self.url} [audience {self.audience}]"


def audience_name(grants: frozenset[str] | tuple[str, ...]) -> str:
    """Return the name of the audience holding exactly these custom-model grants: `public` or `a+b`."""
    return "+".join(sorted(grants)) if grants else PUBLIC


def audiences(custom_models: tuple[str, ...], grant_sets: Iterable[Iterable[str]] = ()) -> list[frozenset[str]]:
    """Return the grant sets that get a pre-rendered variant of endpoints 1 and 5 (docs/api.md, custom models):
    none (public), each custom model alone, and each set of several that a client holds — never every
    subset, which would grow as 2 ** custom models."""
    known = set(custom_models)
    held = {frozenset(g) & known for g in grant_sets}
    sets: set[frozenset[str]] = {frozenset()} | {frozenset([m]) for m in known} | {g for g in held if len(g) > 1}
    return sorted(sets, key=lambda g: (len(g), sorted(g)))


def audience_for(grants: frozenset[str], existing: list[frozenset[str]]) -> frozenset[str]:
    """Return the variant a client with `grants` is served: its own set where the release has it, else the
    largest set it holds that has one (until a build renders its own)."""
    if grants in existing:
        return grants
    held = [a for a in existing if a <= grants]
    return min(held, key=lambda a: (-len(a), audience_name(a)))  # the largest; the first by name on a tie


_AUDIENCE_PREFIX = serving.FOLDERS["audience"].partition("{")[0]  # "audience="


def audience_folder(audience: str) -> str:
    """Return the variant folder (with its "/") an audience's documents are in; "" for the public."""
    return "" if audience == PUBLIC else serving.folder("audience", audience=audience)


def _endpoint(anchor: str) -> routes.Endpoint:
    """Return the endpoint of this anchor, bound to its rule (read when asked: a test may change the table)."""
    return next(e for e in routes.ENDPOINTS if e.anchor == anchor)


def _route(anchor: str, audience: str = PUBLIC, variant: str = "", query: str = "", **values: str) -> Route:
    """Return the route of an endpoint's document: its URL (with the query that selects `variant`), and the file
    its rule says it lives in."""
    endpoint = _endpoint(anchor)
    rule = endpoint.bound
    assert isinstance(rule, routes.Rule)
    return Route(rule.build(**values) + (f"?{query}" if query else ""), rule.file_for(audience, variant, **values),
                 endpoint.schema, audience)


def model_list(audience: str = PUBLIC) -> Route:
    """Return endpoint 1: the models a client may see."""
    return _route("models", audience)


@dataclass(frozen=True)
class ListVariant:
    """A document of a list endpoint: its route, the ordering its countries are in and which countries
    it holds (None: every one)."""

    route: Route
    ordering: str
    members: frozenset[str] | None


def list_variants(anchor: str, groups: filters.Groups, **values: str) -> list[ListVariant]:
    """Return every document of a list endpoint (its rule's variants) over a release's countries (`groups`: each
    code with its values of the group fields, in the list's order): each ordering of every country and of
    each selection of its group filters, each country's one-country answer, and the empty one."""
    variants = _endpoint(anchor).bound.variants  # type: ignore[attr-defined]
    found = []
    for selection in (None, *filters.selections(variants.groups, groups)):
        for at, ordering in enumerate(variants.orderings):
            order = f"{variants.order}={ordering}"
            folder = "" if at == 0 else serving.folder("order", parameter=variants.order, value=ordering)
            if selection is None:
                route = _route(anchor, variant=folder, query="" if at == 0 else order, **values)
            else:
                route = _route(anchor, variant=selection.folder + folder,
                               query=selection.query + ("" if at == 0 else "&" + order), **values)
            found.append(ListVariant(route, ordering, None if selection is None else selection.members))
    for code in (*groups, NO_MATCH):
        found.append(ListVariant(_one_country(anchor, variants, code, values), "",
                                 frozenset() if code == NO_MATCH else frozenset([code])))
    return found


NO_COUNTRY = "XXX"  # a well-formed code no country has: the query of the answer that matches none


def one_country_query(variants: routes.Variants, code: str) -> str:
    """Return the query that selects the one-country answer of `code` (NO_MATCH: the answer that matches none)."""
    return f"{variants.of_kind('code')[0].parameter}={NO_COUNTRY if code == NO_MATCH else code}"


def _one_country(anchor: str, variants: routes.Variants, code: str, values: dict[str, str]) -> Route:
    """Return the answer of the code and name filters that match `code` (NO_MATCH: that match no country)."""
    return _route(anchor, variant=serving.folder("filter", code=code), query=one_country_query(variants, code),
                  **values)


def country_list(ordering: str | None = None) -> Route:
    """Return endpoint 2 in an ordering (the first: the plain URL)."""
    return next(v.route for v in list_variants("countries", {}) if v.ordering == (ordering or COUNTRY_ORDERINGS[0]))


def model_scores(model: str, ordering: str | None = None) -> Route:
    """Return endpoint 3 of a model in an ordering (the first: the plain URL)."""
    return next(v.route for v in list_variants("scores", {}, model=model)
                if v.ordering == (ordering or SCORE_ORDERINGS[0]))


def score_list_models(files: Iterable[str]) -> list[str]:
    """Return the models whose endpoint 3 document (default ordering) is among `files` of a release."""
    prefix, suffix = model_scores("{model}").file.split("{model}")
    names = (f[len(prefix):-len(suffix)] for f in files if f.startswith(prefix) and f.endswith(suffix))
    return sorted(name for name in names if name and "/" not in name)


def country_model_scores(model: str, code: str) -> Route:
    """Return endpoint 4: the whole series of a model for one country."""
    return _route("country-model", model=model, country_code=code)


def country_scores(code: str, audience: str = PUBLIC) -> Route:
    """Return endpoint 5: current scores of every model the audience may see, for one country."""
    return _route("country", audience, code=code)


def api_root() -> Route:
    """Return the API root: no key needed, the same for every client."""
    return _route("root")


def current_release(audience: str = PUBLIC) -> Route:
    """Return the release and the models an audience may see."""
    return _route("release", audience)


def release_changes(audience: str = PUBLIC) -> Route:
    """Return what the release changed, as an audience may know it."""
    return _route("changes", audience)


def release_datapackage() -> Route:
    """Return the release's own Data Package of its exports: no key needed, the same for every client."""
    return _route("release-datapackage")


def audience_variant(file: str, audience: str) -> str | None:
    """Return the file an audience gets in place of a public document that has audience variants (endpoints 1
    and 5, the release documents), or None for a file of no such kind."""
    if audience == PUBLIC or not file.endswith("/index.json") or _AUDIENCE_PREFIX in file:
        return None
    folder = file.removesuffix("index.json")
    return f"{folder}{audience_folder(audience)}index.json" if _VARIED_FOLDERS.fullmatch(folder) else None


# the folders of the documents that have audience variants (endpoints 1 and 5, the release documents)
_VARIED_FOLDERS = re.compile("|".join(
    re.escape(kind.removesuffix("index.json")).replace(re.escape("{code}"), "[^/]+")
    for kind in (model_list().file, country_scores("{code}").file, current_release().file, release_changes().file)))


def url_of(file: str) -> str:
    """Return the URL path (and query) of an API document of a release: its folders, and its variant folders
    as the query that selects them (an audience's folder is no query: the key selects it); a file that is
    not an index.json (openapi.json, an export) is its own path."""
    if not file.endswith("index.json"):
        return "/" + file
    parts = file.removesuffix("index.json").strip("/").split("/")
    path = "/" + "/".join(p for p in parts if "=" not in p) + "/"
    query = []
    for name, _, value in (p.partition("=") for p in parts if "=" in p):
        if name == "filter":  # the one-country answer of the filters (none: a code no country has)
            rule = routes.rule_of(path)
            assert rule is not None and rule.variants is not None, file
            query.append(one_country_query(rule.variants, value))
        elif name != "audience":  # a group's value is in its folder as the query writes it
            query.append(f"{name}={value}")
    return path + ("?" + "&".join(query) if query else "")


EXPORT_FORMATS = {"csv": "export-csv", "jsonl": "export-jsonl", "parquet": "export-parquet"}
MODEL_EXPORT_FORMATS = {"csv": "export-model-csv", "jsonl": "export-model-jsonl", "parquet": "export-model-parquet"}


def export(format: str, model: str | None = None) -> Route:
    """Return a bulk export (not JSON: no schema): the public models' rows, the same file for every key, or
    (`model`) one model's — written once per release, whatever the audiences."""
    route = _route(EXPORT_FORMATS[format], format=format) if model is None \
        else _route(MODEL_EXPORT_FORMATS[format], model=model, format=format)
    return Route(route.url, route.file, "")


_ROOT_FILE, _RELEASE_FOLDER = api_root().file, current_release().file.removesuffix("index.json")
_TREE_FOLDER = rule_named("tree-tile").file.split("{")[0]  # the tiles of its tree, made from every document
_NAMED_SUFFIX = ".parquet"  # a Parquet export names its release in the file's metadata


def visible_to(file: str, grants: frozenset[str], custom_models: set[str]) -> bool:
    """Return whether a release file is one an audience may know of: no custom model it is not granted, and
    no variant of another audience."""
    model, audience = _visibility(file)
    return model not in custom_models - grants and audience in (None, audience_name(grants))


def _visibility(file: str) -> tuple[str | None, str | None]:
    """Return what decides who may know of a file: the model its path names (endpoints 3 and 4, exports), and
    its audience folder."""
    parts = file.split("/")
    model = parts[3] if len(parts) > 3 and parts[2] in ("riskscores", "exports") else None
    folders = [p.removeprefix(_AUDIENCE_PREFIX) for p in parts if p.startswith(_AUDIENCE_PREFIX)]
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
        """Return the files an audience may know of, sorted."""
        return sorted(file for files in self._visible(grants, custom_models) for file in files)


def names_its_release(file: str) -> bool:
    """Return the documents that name their own release (the API root, the release documents, the Parquet
    exports in their metadata), and the tiles of the tree over them: left out when releases are compared."""
    return file == _ROOT_FILE or file.startswith((_RELEASE_FOLDER, _TREE_FOLDER)) or file.endswith(_NAMED_SUFFIX)


def document_count(groups: filters.Groups, models: int, audiences: int) -> int:
    """Return how many API documents a release has: the routes above, for every model, country (`groups`: each
    with its values of the group fields) and audience."""
    countries = len(groups)
    # endpoint 3 (orderings, selections, one-country answers, none), 4, the model's exports
    per_model = len(list_variants("scores", groups, model="m")) + countries + len(MODEL_EXPORT_FORMATS)
    shared = audiences * (1 + countries) + len(list_variants("countries", groups))  # endpoints 1 and 5, 2
    # openapi.json, root, the Data Package; release, changes; exports
    per_release = 1 + 1 + 1 + 2 * audiences + len(EXPORT_FORMATS)
    return models * per_model + shared + per_release


def model_page(site_url: str, code: str) -> str:
    """Return the address of a public model's methodology page."""
    return site_url + url_for("model-page", model=code)


def openapi() -> Route:
    # checked against the OpenAPI meta-schema in tests
    return Route(url_for("openapi"), rule_named("openapi").file, "")


# ---------------------------------------------------------------- a release's routing, as data

@dataclass(frozen=True)
class ReleaseRouting:
    """Everything a server needs to map a request of one release to its file: what nginx's maps are
    rendered from (and what an edge worker would read)."""

    countries: tuple[str, ...]  # country codes; matched ignoring case
    country_names: tuple[tuple[str, str], ...]  # (a name as a client encodes it in a query, its code)
    models: tuple[tuple[str, bool], ...]  # (model code, custom)
    audiences: tuple[tuple[str, tuple[str, ...]], ...]  # (audience name, the custom models it sees)
    # (country code, its (field, value) of each field a group filter reads): filters.lookup_tables
    groups: tuple[tuple[str, tuple[tuple[str, str], ...]], ...] = ()
    prefix: str = API


def release_routing(countries: list[tuple[str, str]], models: list[tuple[str, bool]],
                    variants: list[frozenset[str]], groups: filters.Groups | None = None) -> ReleaseRouting:
    """Return the routing of a release with these (code, name) countries, (code, custom) models and audiences,
    and the countries' values of the group fields."""
    return ReleaseRouting(
        countries=tuple(code for code, _ in countries),
        country_names=tuple((encoded, code) for code, name in countries for encoded in client_encodings(name)),
        models=tuple(models),
        audiences=tuple((audience_name(grants), tuple(sorted(grants))) for grants in variants),
        groups=tuple((code, tuple(values.items())) for code, values in (groups or {}).items()))
