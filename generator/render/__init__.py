"""Render every document of API.md, each paired with the route that owns its URL and file."""
from __future__ import annotations

from typing import Iterable, Iterator

from .. import routes
from ..load.records import Dataset
from ..scoring.results import CurrentScores, ModelScores
from .documents import (name_key, render_country_list, render_country_model_scores, render_country_scores,
                        render_model_list, render_model_scores, render_score_entry)

__all__ = ["render_all", "count_documents"]


def _ordered(items: list, ordering: str, code, name) -> list:
    """Apply an ordering value: by code or by folded name, `-` for descending (API.md)."""
    descending = ordering.startswith("-")
    by_name = ordering.lstrip("-") in ("name", "country_name")
    key = (lambda item: (name_key(name(item)), code(item))) if by_name else code
    return sorted(items, key=key, reverse=descending)


def render_all(dataset: Dataset, all_scores: Iterable[ModelScores]) -> Iterator[tuple[routes.Route, object]]:
    """Yield (route, document) for every document of the release except openapi.json.

    Models are taken one at a time: once a model's endpoints 3 and 4 are out, only its current
    results are kept (for endpoints 1 and 5), so memory holds one model's series, not all.
    """
    countries = list(dataset.countries)
    current: list[CurrentScores] = []
    models = iter(all_scores)
    while (scores := next(models, None)) is not None:
        yield from render_model_documents(scores, countries)
        current.append(CurrentScores.of(scores))
        del scores  # let the series go before the next model is scored

    # Endpoints 1 and 5 depend on the client's custom-model grants: one variant per audience.
    for grants in routes.audiences(dataset.custom_models):
        audience = routes.audience_name(grants)
        visible = [c for c in current if not c.model.custom or c.model.code in grants]
        yield routes.model_list(audience), render_model_list([c.model for c in visible])
        for country in countries:
            yield routes.country_scores(country.code, audience), render_country_scores(country, visible)

    # Endpoint 2.
    for ordering in routes.COUNTRY_ORDERINGS:
        yield routes.country_list(ordering), render_country_list(
            _ordered(countries, ordering, lambda c: c.code, lambda c: c.name))
    for country in countries:
        yield routes.country_list(country=country.code), render_country_list([country])
    yield routes.country_list(country=routes.NO_MATCH), render_country_list([])


def render_model_documents(scores: ModelScores, countries: list) -> Iterator[tuple[routes.Route, object]]:
    """Endpoints 3 (every ordering and filter answer) and 4 (every country) of one model."""
    model = scores.data.model
    # Each country's entry is rendered once and shared by the orderings and its filter answer.
    entries = {code: render_score_entry(scores, s) for code, s in scores.countries.items() if s.current is not None}
    scored = [scores.countries[code] for code in entries]
    for ordering in routes.SCORE_ORDERINGS:
        ordered = _ordered(scored, ordering, lambda s: s.country.code, lambda s: s.country.name)
        yield routes.model_scores(model.code, ordering), render_model_scores(
            model, [entries[s.country.code] for s in ordered])
    for country in countries:
        yield routes.model_scores(model.code, country=country.code), render_model_scores(
            model, [entries[country.code]] if country.code in entries else [])
    yield routes.model_scores(model.code, country=routes.NO_MATCH), render_model_scores(model, [])
    for country in countries:
        yield routes.country_model_scores(model.code, country.code), render_country_model_scores(
            scores, scores.countries[country.code])


def count_documents(dataset: Dataset) -> int:
    """How many documents render_all yields (for a progress bar), plus openapi.json."""
    n_countries, n_models = len(dataset.countries), len(dataset.models)
    n_audiences = 2 ** len(dataset.custom_models)
    return (n_audiences * (1 + n_countries) + len(routes.COUNTRY_ORDERINGS) + n_countries + 1
            + n_models * (len(routes.SCORE_ORDERINGS) + 2 * n_countries + 1) + 1)
