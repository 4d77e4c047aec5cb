"""Risk-point models: indicator → section → model for one country and year (SCORING.md §2)."""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from ..load.records import Country, Indicator, ModelData, Observation, Section
from .numbers import round3
from .results import IndicatorResult, ModelResult, SectionResult
from .timeline import YearInputs

SECTION_MIN_SHARE = 0.30
MODEL_MIN_SHARE = 0.30


@dataclass(frozen=True)
class CountryContext:
    """What scoring needs of a country for every year: which indicators apply, and sdg trend bases."""

    country: Country
    applicable: frozenset[str]  # indicator references that apply to the country
    trend_bases: dict[str, Observation | None]  # bounds models: first observation from 2015 on
    # per section: its indicators and those that apply to the country (the same every year)
    sections: tuple[tuple[Section, tuple[Indicator, ...], tuple[Indicator, ...]], ...]

    @classmethod
    def of(cls, data: ModelData, country: Country) -> "CountryContext":
        from .bounds import trend_base
        applicable = frozenset(i.reference for i in data.indicators if i.applies_to(country))
        bases = {}
        if data.model.scoring == "bounds":
            bases = {ref: trend_base(data.observations[ref].get(country.code, ())) for ref in applicable}
        sections = []
        for section in data.sections:
            members = data.indicators_of(section.reference)
            sections.append((section, members, tuple(i for i in members if i.reference in applicable)))
        return cls(country, applicable, bases, tuple(sections))


@dataclass(frozen=True)
class YearScores:
    indicators: dict[str, IndicatorResult]
    sections: dict[str, SectionResult]
    model: ModelResult | None


def rescale_weights(default_weights: dict[str, float]) -> dict[str, float]:
    """Weights 0–100 proportional to the default weights of what has a result (0.15 / 0.925 → 16.216)."""
    total = sum(default_weights.values())  # insertion order is section order: the same sum every run
    if total <= 0:
        return {}
    return {key: 100 * weight / total for key, weight in default_weights.items()}


def section_coverage(country: CountryContext, year: YearInputs):
    """Each section with its indicators, those that apply to the country, and those with a value."""
    inputs = year.inputs
    for section, members, applicable in country.sections:
        yield section, members, applicable, [i for i in applicable if inputs[i.reference] is not None]


@lru_cache(maxsize=65536)
def percent(part: int, whole: int) -> float:
    """round3(100 × part / whole) of whole numbers; a few pairs recur hundreds of thousands of times."""
    return round3(100 * part / whole)


def score_year(data: ModelData, country: CountryContext, year: YearInputs) -> YearScores:
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
                indicators[indicator.reference] = IndicatorResult(year.year, year.type, None, None, None, None, None)
                continue
            points = indicator.points_for(observation.value)
            points_max = indicator.risk_points_max
            points_sum += points
            indicators[indicator.reference] = IndicatorResult(
                year.year, year.type, observation, percent(points, points_max), points, points_max,
                percent(points_max, section_max))
        share = round3(len(available) / len(applicable)) if applicable else 0.0
        if available and share >= SECTION_MIN_SHARE:
            section_raw[section.reference] = (points_sum, section_max, share)
    weights = rescale_weights({s.reference: s.default_weight for s in data.sections if s.reference in section_raw})
    sections: dict[str, SectionResult] = {}
    model_score = 0.0
    model_points = model_max = 0
    for section in data.sections:
        if section.reference not in weights:
            continue
        points, points_max, share = section_raw[section.reference]
        score = 100 * points / points_max
        model_score += weights[section.reference] * score / 100
        model_points += points
        model_max += points_max
        sections[section.reference] = SectionResult(year.year, year.type, round3(score), points, points_max,
                                                    round3(weights[section.reference]), share)
    share = round3(available_total / applicable_total) if applicable_total else 0.0
    model = None
    if sections and share >= MODEL_MIN_SHARE:
        model = ModelResult(year.year, year.type, round3(model_score), model_points, model_max, share)
    return YearScores(indicators, sections, model)
