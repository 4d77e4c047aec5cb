"""Score every model for every country and year: pure functions over the loaded records."""
from __future__ import annotations

from array import array
from collections import defaultdict

from ..load.records import Dataset, ModelData
from . import bounds, points
from .points import CountryContext
from .numbers import round3
from .results import CountryScores, ModelScores, Ranking
from .timeline import country_timeline, model_span

__all__ = ["score_dataset", "score_model", "ModelScores", "CountryScores"]


def score_dataset(dataset: Dataset) -> tuple[ModelScores, ...]:
    return tuple(score_model(dataset, data) for data in dataset.models)


def score_model(dataset: Dataset, data: ModelData) -> ModelScores:
    score_year = bounds.score_year if data.model.scoring == "bounds" else points.score_year
    span = model_span(data)
    countries: dict[str, CountryScores] = {}
    for country in dataset.countries:
        context = CountryContext.of(data, country)
        years = [score_year(data, context, year) for year in country_timeline(data, context, span)]
        countries[country.code] = CountryScores(
            country,
            tuple(y.model for y in years if y.model is not None),
            {s.reference: tuple(y.sections[s.reference] for y in years if s.reference in y.sections)
             for s in data.sections},
            {i.reference: tuple(y.indicators[i.reference] for y in years) for i in data.indicators},
        )
    regional = regional_scores(countries) if data.model.scoring == "bounds" else {}
    return ModelScores(data, countries, rank_all(countries, data.model.higher_is_better), regional)


def rank_all(countries: dict[str, CountryScores], higher_is_better: bool) -> dict[tuple[str, str, int], Ranking]:
    """Ranks per level and date over the countries with a score there (SCORING.md §4)."""
    scores: dict[tuple[str, str, int], dict[str, float]] = defaultdict(dict)
    for code, scored in countries.items():
        for result in scored.results:
            scores[("model", "", result.year)][code] = result.score
        for reference, results in scored.sections.items():
            for result in results:
                scores[("section", reference, result.year)][code] = result.score
        for reference, results in scored.indicators.items():
            for result in results:
                if result.score is not None:
                    scores[("indicator", reference, result.year)][code] = result.score
    return {key: Ranking(array("d", sorted(level.values())), higher_is_better) for key, level in scores.items()}


def regional_scores(countries: dict[str, CountryScores]) -> dict[tuple[str, int], float]:
    """Mean of the rounded scores of a region's countries with a result on the same date."""
    members: dict[tuple[str, int], list[float]] = defaultdict(list)
    for code in sorted(countries):
        scored = countries[code]
        for result in scored.results:
            members[(scored.country.region, result.year)].append(result.score)
    return {key: round3(sum(scores) / len(scores)) for key, scores in members.items()}
