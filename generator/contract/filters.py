"""A list's filters over a release's countries (grammar.Filter, declared on each list's rule): which
selections of its group filters hold a country, each variant's folder and query, and the tables every
server looks a query value up in, made from a release's routing (routing.json) here and nowhere else:
nginx's runtime maps are rendered from them, the edges read them from the release's manifest, njs from
the file serve writes."""
from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations
from typing import Any, Iterable, Mapping
from urllib.parse import quote

from . import routes, serving
from .encodings import ascii_folded, client_encodings
from .grammar import COUNTRY_GROUPS, SELECTIONS, Filter, Variants, group_table, values_table

# A country's values of the group fields: {code: {field: value}}
Groups = Mapping[str, Mapping[str, str]]


def query_value(value: str) -> str:
    """Return a value as the API writes it in a URL's query and a group's folder: percent-encoded (RFC 3986,
    upper-case escapes), so no "/", "&" or "=" is left in it."""
    return quote(value, safe="")


def group_folder(selected: Iterable[tuple[Filter, str]]) -> str:
    """Return the folders of group filters with their values, in the order given: `region=…/income=…/`."""
    return "".join(serving.folder("group", parameter=f.parameter, value=query_value(value)) for f, value in selected)


@dataclass(frozen=True)
class Selection:
    """Values of some of a list's group filters that some countries have: its folder (the orderings
    beneath it), its query and the countries in it."""

    folder: str
    query: str
    members: frozenset[str]


def selections(groups: tuple[Filter, ...], countries: Groups) -> list[Selection]:
    """Return every selection of the group filters (each non-empty subset, in declaration order) with a value
    of each that a country has: the variants a release renders. A selection no country is in answers
    as the empty filter answer (`filter=none/`), so it has no folder of its own."""
    found = []
    for size in range(1, len(groups) + 1):
        for subset in combinations(groups, size):
            held: dict[tuple[str, ...], set[str]] = {}
            for code, values in countries.items():
                held.setdefault(tuple(values[f.field] for f in subset), set()).add(code)
            for chosen in sorted(held):
                pairs = list(zip(subset, chosen))
                query = "&".join(f"{f.parameter}={query_value(v)}" for f, v in pairs)
                found.append(Selection(group_folder(pairs), query, frozenset(held[chosen])))
    return found


def _lists() -> list[Variants]:
    """Return the variants of every list of the route table (read when asked: a test may add a filter)."""
    return [rule.variants for rule in routes.RULES if rule.variants is not None]


def country_groups(countries: Iterable[Any]) -> dict[str, dict[str, str]]:
    """Return each country's values of the group fields, by code (`countries`: records with a code and the fields)."""
    fields = group_fields()
    return {country.code: {field: getattr(country, field) for field in fields} for country in countries}


def group_values(countries: Groups) -> dict[str, list[str]]:
    """Return each group field's values among the countries, sorted: the closed vocabulary a group filter takes."""
    return {field: sorted({values[field] for values in countries.values() if field in values})
            for field in group_fields()}


def group_fields() -> tuple[str, ...]:
    """Return the fields the lists' group filters read, each once: what a release's routing carries of its countries."""
    return tuple(dict.fromkeys(f.field for variants in _lists() for f in variants.groups))


def lookup_tables(routing: Mapping) -> dict[str, dict]:
    """Return a release's tables, as every server looks a request up in them: `countries` (a code in lower case →
    the code), `country_names` (a name as a client sends it, in lower case → its code), `models` (code →
    public or custom); per group field `group:FIELD` (a value as a client sends it, in lower case → its
    query value) and `values:FIELD` (its values, for the 400 that names them); `selections` (the folder of
    each selection that holds a country) and `country_groups` (a country's folders of every group
    filter, which a one-country answer under a selection is checked against). A routing written
    before the group filters has no groups: every value is none of the release's."""
    tables: dict[str, dict] = {
        "countries": {ascii_folded(code): code for code in routing["countries"]},
        "country_names": {ascii_folded(encoded): code for encoded, code in routing["country_names"]},
        "models": {code: "custom" if custom else "public" for code, custom in routing["models"]}}
    countries = {code: dict(pairs) for code, pairs in routing.get("groups", ())}
    fields = group_fields()
    for field, values in group_values(countries).items():
        tables[group_table(field)] = {ascii_folded(encoded): query_value(value) for value in values
                                    for encoded in client_encodings(value)}
        tables[values_table(field)] = {"": ", ".join(values)}
    tables[SELECTIONS] = {s.folder: 1 for groups in dict.fromkeys(v.groups for v in _lists() if v.groups)
                            if all(f.field in v for v in countries.values() for f in groups)
                            for s in selections(groups, countries)}
    # a country's own folders of every group filter: a selection holds it where each of its folders is one
    # (nginx checks each folder with a back-reference, the edges by splitting; no table of pairs, which
    # grows as countries × selections)
    tables[COUNTRY_GROUPS] = {code: "".join(serving.folder("group", parameter=field, value=query_value(v[field]))
                                              for field in fields if field in v) for code, v in countries.items()}
    return tables
