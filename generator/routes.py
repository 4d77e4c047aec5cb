"""Every URL of the API, the file that answers it and the schema it must match: the one owner of that mapping.

Files mirror the URL path, so a static host can serve `/x/` from `x/index.json`. Query variants and
audience variants live in sub-folders named like the query (`ordering=-country_name/`), which nginx
picks through generated whitelist maps; no request value ever reaches a path directly.
"""
from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations

API = "/api/v1"
PUBLIC = "public"
NO_MATCH = "none"  # filter variant that matches no country

COUNTRY_ORDERINGS = ("code", "-code", "name", "-name")  # endpoint 2, parameter `model`
SCORE_ORDERINGS = ("country_code", "-country_code", "country_name", "-country_name")  # endpoint 3, `ordering`


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


def audiences(custom_models: tuple[str, ...]) -> list[frozenset[str]]:
    """Every set of grants a client can hold: one pre-rendered variant each (API.md, custom models)."""
    ordered = sorted(custom_models)
    return [frozenset(c) for size in range(len(ordered) + 1) for c in combinations(ordered, size)]


def _file(path: str, *variant: str) -> str:
    parts = [path.strip("/").removeprefix("api/v1").strip("/")] + [v for v in variant if v]
    return "/".join(["api/v1"] + [p for p in parts if p] + ["index.json"])


def _audience_folder(audience: str) -> str:
    return "" if audience == PUBLIC else f"audience={audience}"


def model_list(audience: str = PUBLIC) -> Route:
    """Endpoint 1: the models a client may see."""
    path = f"{API}/configuration/riskscoremodels/"
    return Route(path, _file(path, _audience_folder(audience)), "riskscoremodels", audience)


def _list_route(path: str, schema: str, order_parameter: str, orderings: tuple[str, ...], ordering: str,
                filter_parameter: str, country: str | None) -> Route:
    """A list endpoint's variant: its filter answer for one country (or none), or an ordering."""
    if country is not None:
        query = f"{filter_parameter}=" + ("XXX" if country == NO_MATCH else country)
        return Route(f"{path}?{query}", _file(path, f"filter={country}"), schema)
    if ordering == orderings[0]:  # the default ordering is the plain URL
        return Route(path, _file(path), schema)
    return Route(f"{path}?{order_parameter}={ordering}", _file(path, f"{order_parameter}={ordering}"), schema)


def country_list(ordering: str = "code", country: str | None = None) -> Route:
    """Endpoint 2: every ordering, and the one-country (or no-country) answer of the filters."""
    return _list_route(f"{API}/configuration/countries/", "countries", "model", COUNTRY_ORDERINGS, ordering,
                       "code", country)


def model_scores(model: str, ordering: str = "country_code", country: str | None = None) -> Route:
    """Endpoint 3: current scores of a model for all countries, every ordering and filter answer."""
    return _list_route(f"{API}/riskscores/{model}/", "model-scores", "ordering", SCORE_ORDERINGS, ordering,
                       "country_code", country)


def score_list_models(files) -> list[str]:
    """The models whose endpoint 3 document (default ordering) is among `files` of a release."""
    prefix, suffix = model_scores("{model}").file.split("{model}")
    names = (f[len(prefix):-len(suffix)] for f in files if f.startswith(prefix) and f.endswith(suffix))
    return sorted(name for name in names if name and "/" not in name)


def country_model_scores(model: str, code: str) -> Route:
    """Endpoint 4: the whole series of a model for one country."""
    path = f"{API}/riskscores/{model}/{code}/"
    return Route(path, _file(path), "country-model-scores")


def country_scores(code: str, audience: str = PUBLIC) -> Route:
    """Endpoint 5: current scores of every model the audience may see, for one country."""
    path = f"{API}/riskscores/country/{code}/"
    return Route(path, _file(path, _audience_folder(audience)), "country-scores", audience)


def document_count(countries: int, models: int, custom_models: int) -> int:
    """How many API documents a release has: the routes above, for every model, country and audience."""
    audiences = 2 ** custom_models
    per_model = len(SCORE_ORDERINGS) + countries + 1 + countries  # endpoint 3 (orderings, filters, none), 4
    shared = audiences * (1 + countries) + len(COUNTRY_ORDERINGS) + countries + 1  # endpoints 1 and 5, 2
    return models * per_model + shared + 1  # + openapi.json


def openapi() -> Route:
    return Route(f"{API}/openapi.json", "api/v1/openapi.json", "")  # checked against the OpenAPI meta-schema in tests
