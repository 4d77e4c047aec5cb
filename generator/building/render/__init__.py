"""Render API documents as plain dicts, each paired with the route that owns its URL and file."""
from __future__ import annotations

from typing import Any, Callable, Iterable

from ...contract import filters, locations
from ..load.records import Country
from ..scoring.results import CurrentScores, ModelScores
from .api_documents import (
    name_key,
    render_country_list,
    render_country_model_scores,
    render_country_scores,
    render_model_list,
    render_model_scores,
    render_score_entry,
)

__all__ = ["RENDERERS", "renders", "render_model_lists", "render_country_model_scores", "render_shared_documents"]

Rendered = list[tuple[locations.Route, object]]
# A renderer called with the dataset, the models' current scores and the audiences: one (Route, document)
# pair per file its route's template names.
RouteRenderer = Callable[..., Iterable[tuple[locations.Route, object]]]
# The renderer of each route the build writes beyond the documents below, by the route's name (routes.RULES).
RENDERERS: dict[str, RouteRenderer] = {}


def renders(route: str) -> Callable[[RouteRenderer], RouteRenderer]:
    """Register the decorated function as the renderer of the route named `route`."""
    def register(renderer: RouteRenderer) -> RouteRenderer:
        if route in RENDERERS:
            raise ValueError(f"route {route!r} has a renderer already: {RENDERERS[route].__qualname__}")
        RENDERERS[route] = renderer
        return renderer
    return register


def _ordered(items: list, ordering: str, code: Callable[[Any], str], name: Callable[[Any], str]) -> list:
    """Apply an ordering value: by code or by folded name, `-` for descending (docs/api.md)."""
    descending = ordering.startswith("-")
    by_name = ordering.lstrip("-") in ("name", "country_name")
    key = (lambda item: (name_key(name(item)), code(item))) if by_name else code
    return sorted(items, key=key, reverse=descending)


def _list_documents(variants: list[locations.ListVariant], items: list, code: Callable[[Any], str],
                    name: Callable[[Any], str], document: Callable[[list], object]) -> Rendered:
    """Return a list endpoint's documents (its rule's variants): each the items it holds, in its ordering."""
    rendered: Rendered = []
    for variant in variants:
        held = [item for item in items if variant.members is None or code(item) in variant.members]
        rendered.append((variant.route, document(_ordered(held, variant.ordering, code, name) if variant.ordering
                                                 else held)))
    return rendered


def render_model_lists(scores: ModelScores, countries: tuple[Country, ...]) -> Rendered:
    """Return endpoint 3 of one model: every ordering, selection and filter answer (one country, or none)."""
    model = scores.data.model
    # Each country's entry is rendered once and shared by every variant that holds it.
    entries = {code: render_score_entry(scores, s) for code, s in scores.countries.items() if s.current is not None}
    scored = [scores.countries[code] for code in entries]
    variants = locations.list_variants("scores", filters.country_groups(countries), model=model.code)
    return _list_documents(variants, scored, lambda s: s.country.code, lambda s: s.country.name,
                           lambda held: render_model_scores(model, [entries[s.country.code] for s in held]))


def render_shared_documents(countries: tuple[Country, ...], current: list[CurrentScores],
                            audiences: list[frozenset[str]]) -> Rendered:
    """Return endpoints 1 and 5 for every audience, and endpoint 2 (every ordering, selection and filter answer)."""
    rendered: Rendered = []
    # Endpoints 1 and 5 depend on the client's custom-model grants: one variant per audience.
    for grants in audiences:
        audience = locations.audience_name(grants)
        visible = [c for c in current if not c.model.custom or c.model.code in grants]
        rendered.append((locations.model_list(audience), render_model_list([c.model for c in visible])))
        for country in countries:
            route = locations.country_scores(country.code, audience)
            rendered.append((route, render_country_scores(country, visible)))
    variants = locations.list_variants("countries", filters.country_groups(countries))
    return rendered + _list_documents(variants, list(countries), lambda c: c.code, lambda c: c.name,
                                      render_country_list)
