"""Score every model for every country and year: pure functions over the loaded records."""
from __future__ import annotations

from ..load.records import Country, ModelData, ScoringMethod
from .bounds import BoundsMethod
from .context import CountryContext
from .points import PointsMethod
from .ranks import rank_all
from .results import CountryScores, CurrentScores, ModelScores
from .years import country_timeline, model_span

__all__ = ["score_model", "ModelScores", "CountryScores", "CurrentScores"]

# The one place that picks a model's method (docs/data.md §2 and §3).
METHODS: dict[ScoringMethod, type[PointsMethod] | type[BoundsMethod]] = {
    ScoringMethod.POINTS: PointsMethod, ScoringMethod.BOUNDS: BoundsMethod}


def score_model(countries: tuple[Country, ...], data: ModelData) -> ModelScores:
    """Return every country's results of one model, with their ranks and (bounds models) regional scores."""
    method = METHODS[data.model.scoring](data)
    span = model_span(data)
    scored: dict[str, CountryScores] = {}
    for country in countries:
        context = CountryContext.of(data, country)
        years = [method.score_year(context, year) for year in country_timeline(data, context, span)]
        scored[country.code] = CountryScores(
            country,
            tuple(y.model for y in years if y.model is not None),
            {s.reference: tuple(y.sections[s.reference] for y in years if s.reference in y.sections)
             for s in data.sections},
            {i.reference: tuple(y.indicators[i.reference] for y in years) for i in data.indicators},
        )
    return ModelScores(data, scored, rank_all(scored, data.model.higher_is_better), method.regional_scores(scored))
