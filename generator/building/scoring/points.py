"""Risk-point models: indicator → section → model for one country and year (docs/data.md §2)."""
from __future__ import annotations

import bisect

from ..load.records import Indicator, ModelData, Value
from ..load.thresholds import by_lower_bound, lower_bound
from .context import CountryContext, YearInputs, YearScores, percent, section_coverage, share
from .numbers import model_rating, result_quality, risk_class, round3
from .results import CountryScores, IndicatorResult, ModelResult, SectionResult, missing_result

SECTION_MIN_SHARE = 0.30
MODEL_MIN_SHARE = 0.30
HIGHER_IS_BETTER = False  # points models measure risk (the loader allows only direction risk)


class PointsTable:
    """An indicator's threshold rows, ready to look up: by bisection for numbers, by label otherwise."""

    def __init__(self, indicator: Indicator):
        self.numeric = indicator.value_kind == "number"
        rows = by_lower_bound(indicator.scoring)
        self._rows = rows
        self._lowers = [lower_bound(row) for row in rows]
        self._by_label: dict[tuple[type, object], int | None] = {(type(row.label), row.label): row.risk_points
                                                         for row in rows}

    def points_for(self, x: Value) -> int | None:
        """Return the points of the row that matches x (a checked table has exactly one), None if none does."""
        if not self.numeric:
            return self._by_label.get((type(x), x))
        band = bisect.bisect_right(self._lowers, x) - 1  # rows sorted by lower bound, covering every number
        return self._rows[band].risk_points if band >= 0 and self._rows[band].matches(x) else None


def rescale_weights(default_weights: dict[str, float]) -> dict[str, float]:
    """Return weights 0–100 proportional to the default weights of what has a result (0.15 / 0.925 → 16.216)."""
    total = sum(default_weights.values())  # insertion order is section order: the same sum every run
    if total <= 0:
        return {}
    return {key: 100 * weight / total for key, weight in default_weights.items()}


class PointsMethod:
    """Scores a points model's years; built once per model."""

    def __init__(self, data: ModelData):
        self.data = data
        self.tables = {i.reference: PointsTable(i) for i in data.indicators}
        self.rated = data.model.rating

    def regional_scores(self, countries: dict[str, CountryScores]) -> dict[tuple[str, int], float]:
        return {}  # docs/data.md: only bounds models publish a regional score

    def score_year(self, country: CountryContext, year: YearInputs) -> YearScores:
        indicators: dict[str, IndicatorResult] = {}
        section_raw: dict[str, tuple[int, int, float]] = {}  # points, max, share
        available_total = applicable_total = 0
        for section, members, applicable, available in section_coverage(country, year):
            applicable_total += len(applicable)
            available_total += len(available)
            section_max = sum(i.risk_points_max for i in available)
            points_sum = 0
            for indicator in members:
                observation = year.inputs[indicator.reference]
                if observation is None:
                    indicators[indicator.reference] = missing_result(year.year, year.type)
                    continue
                points = self.tables[indicator.reference].points_for(observation.value)
                assert points is not None  # a checked table has a row for every value (load/thresholds.py)
                points_max = indicator.risk_points_max
                points_sum += points
                score = percent(points, points_max)
                indicators[indicator.reference] = IndicatorResult(
                    year.year, year.type, observation, score, points, points_max, percent(points_max, section_max),
                    risk_class(score, HIGHER_IS_BETTER))
            section_share = share(len(available), len(applicable))
            if available and section_share >= SECTION_MIN_SHARE:
                section_raw[section.reference] = (points_sum, section_max, section_share)
        weights = rescale_weights({s.reference: s.default_weight for s in self.data.sections
                                   if s.reference in section_raw})
        sections: dict[str, SectionResult] = {}
        model_score = 0.0
        model_points = model_max = 0
        for section in self.data.sections:
            if section.reference not in weights:
                continue
            points, points_max, section_share = section_raw[section.reference]
            score = 100 * points / points_max
            model_score += weights[section.reference] * score / 100
            model_points += points
            model_max += points_max
            rounded = round3(score)
            sections[section.reference] = SectionResult(
                year.year, year.type, rounded, points, points_max, round3(weights[section.reference]), section_share,
                risk_class(rounded, HIGHER_IS_BETTER), result_quality(section_share))
        model_share = share(available_total, applicable_total)
        model = None
        if sections and model_share >= MODEL_MIN_SHARE:
            rounded = round3(model_score)
            model = ModelResult(year.year, year.type, rounded, model_points, model_max, model_share,
                                risk_class(rounded, HIGHER_IS_BETTER), result_quality(model_share),
                                model_rating(rounded, HIGHER_IS_BETTER) if self.rated else None)
        return YearScores(indicators, sections, model)

