"""Which years a country gets results for, their type, and the observation each indicator uses (docs/data.md §4)."""
from __future__ import annotations

from dataclasses import dataclass

from ..load.records import ModelData, Observation
from .context import CountryContext, YearInputs
from .results import CURRENT, HISTORY, PROJECTION


@dataclass(frozen=True)
class ModelSpan:
    first: int  # earliest observation year of the model
    last: int  # latest observation year
    last_actual: int  # latest year with an actual observation


def model_span(data: ModelData) -> ModelSpan | None:
    years, actual = [], []
    for per_country in data.observations.values():
        for observations in per_country.values():
            for observation in observations:
                years.append(observation.year)
                if not observation.projected:
                    actual.append(observation.year)
    if not years:
        return None
    return ModelSpan(min(years), max(years), max(actual) if actual else min(years) - 1)


def latest_within_lag(observations: tuple[Observation, ...], year: int, max_lag: int) -> Observation | None:
    """Return the latest observation dated in `year` or up to `max_lag` years before."""
    for observation in reversed(observations):
        if observation.year <= year:
            return observation if observation.year >= year - max_lag else None
    return None


def country_timeline(data: ModelData, context: CountryContext, span: ModelSpan | None) -> list[YearInputs]:
    """Return every year with inputs for the country of `context`, typed history/current/projection."""
    if span is None:
        return []
    applicable, series = context.applicable, context.series
    years: list[tuple[int, bool, dict]] = []
    for year in range(span.first, span.last + 1):
        inputs = {i.reference: latest_within_lag(series[i.reference], year, i.max_lag) for i in applicable}
        used = [o for o in inputs.values() if o is not None]
        if not used:
            continue
        projected = any(o.projected for o in used)
        # A year past the last actual data exists only as a projection: carrying old actual
        # values forward by max_lag must not make a future year look "current".
        if year > span.last_actual and not projected:
            continue
        full = {i.reference: inputs.get(i.reference) for i in data.indicators}
        years.append((year, projected, full))
    actual_years = [year for year, projected, _ in years if not projected]
    current = max(actual_years) if actual_years else None
    return [YearInputs(year, PROJECTION if projected else CURRENT if year == current else HISTORY, inputs)
            for year, projected, inputs in years]
