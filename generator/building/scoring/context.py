"""What both scoring methods share: a country's context, one year's inputs and scores, coverage."""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Iterator

from ..load.records import Country, Indicator, ModelData, Observation, Section
from .numbers import round3
from .results import IndicatorResult, ModelResult, SectionResult


@dataclass(frozen=True)
class CountryContext:
    """What scoring needs of a country for every year: which indicators apply, and their observations."""

    country: Country
    applicable: tuple[Indicator, ...]  # in file order
    series: dict[str, tuple[Observation, ...]]  # applicable indicator reference -> observations by year
    # per section: its indicators and those that apply to the country (the same every year)
    sections: tuple[tuple[Section, tuple[Indicator, ...], tuple[Indicator, ...]], ...]

    @classmethod
    def of(cls, data: ModelData, country: Country) -> "CountryContext":
        applicable = tuple(i for i in data.indicators if i.applies_to(country))
        series = {i.reference: data.observations[i.reference].get(country.code, ()) for i in applicable}
        sections = []
        for section in data.sections:
            members = data.indicators_of(section.reference)
            sections.append((section, members, tuple(i for i in members if i.reference in series)))
        return cls(country, applicable, series, tuple(sections))


@dataclass(frozen=True)
class YearInputs:
    year: int
    type: str  # history, current or projection
    inputs: dict[str, Observation | None]  # by indicator reference; None: missing or not applicable


@dataclass(frozen=True)
class YearScores:
    indicators: dict[str, IndicatorResult]
    sections: dict[str, SectionResult]
    model: ModelResult | None


def section_coverage(country: CountryContext, year: YearInputs
                     ) -> Iterator[tuple[Section, tuple[Indicator, ...], tuple[Indicator, ...], list[Indicator]]]:
    """Yield each section with its indicators, those that apply to the country, and those with a value."""
    inputs = year.inputs
    for section, members, applicable in country.sections:
        yield section, members, applicable, [i for i in applicable if inputs[i.reference] is not None]


@lru_cache(maxsize=65536)
def share(available: int, applicable: int) -> float:
    """Return the rounded share of applicable indicators that have a value (0 when none applies); the pairs of
    counts recur for every country and year."""
    return round3(available / applicable) if applicable else 0.0


@lru_cache(maxsize=65536)
def percent(part: int, whole: int) -> float:
    """Return round3(100 × part / whole) of whole numbers; a few pairs recur hundreds of thousands of times."""
    return round3(100 * part / whole)
