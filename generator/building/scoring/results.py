"""What scoring produces: results per country, level and year, each with its classifications."""
from __future__ import annotations

import bisect
from array import array
from dataclasses import dataclass, field
from functools import lru_cache
from typing import NamedTuple

from ..load.records import Country, Model, ModelData, Observation

HISTORY, CURRENT, PROJECTION = "history", "current", "projection"

# The results are named tuples: immutable, and made four times faster than frozen dataclasses (each
# field of one set through object.__setattr__); a build makes hundreds of thousands.


class SdgMarks(NamedTuple):
    """Colour and trend of an sdg indicator or goal (docs/data.md §3)."""

    color: str
    trend: str


class IndicatorResult(NamedTuple):
    year: int
    type: str
    observation: Observation | None  # None: missing or not applicable
    score: float | None  # rounded
    risk_points: int | None
    risk_points_max: int | None
    weight: float | None  # rounded, 0–100 within the section
    risk_class: int | None  # 1–5 (docs/data.md §4); None without a score
    sdg: SdgMarks | None = None


@lru_cache(maxsize=None)
def missing_result(year: int, type: str, sdg: SdgMarks | None = None) -> IndicatorResult:
    """Return the result of an indicator without a value in a year: the same for every indicator and country,
    so one is made for each year (and marks) and shared."""
    return IndicatorResult(year, type, None, None, None, None, None, None, sdg)


class SectionResult(NamedTuple):
    year: int
    type: str
    score: float
    risk_points: int | None
    risk_points_max: int | None
    weight: float  # rounded, 0–100 among the sections with a result
    share: float  # rounded share of available applicable indicators
    risk_class: int  # 1–5
    quality: int  # data quality 1–5 of the share
    sdg: SdgMarks | None = None


class ModelResult(NamedTuple):
    year: int
    type: str
    score: float
    risk_points: int | None
    risk_points_max: int | None
    share: float
    risk_class: int  # 1–5
    quality: int  # data quality 1–5 of the share
    rating: int | None  # 1 (AAA) … 21 (D) for models with a rating


@dataclass(frozen=True)
class CountryScores:
    country: Country
    results: tuple[ModelResult, ...]  # years with a model result, ascending
    sections: dict[str, tuple[SectionResult, ...]]  # by section reference
    indicators: dict[str, tuple[IndicatorResult, ...]]  # by indicator reference, every year of the timeline

    @property
    def current(self) -> ModelResult | None:
        return next((r for r in self.results if r.type == CURRENT), None)


RankKey = tuple[str, str, int]  # (level, reference, year); the model level's reference is ""
MODEL, SECTION, INDICATOR = "model", "section", "indicator"
# docs/data.md §4: a model or section score built on too little data is published with its quality,
# but takes no rank and does not count in the universe (as the Basel AML Index's public edition).
MIN_RANKED_QUALITY = 3  # Medium


def takes_rank(level: str, result: ModelResult | SectionResult | IndicatorResult) -> bool:
    """Return whether a result with a score is ranked at its level."""
    return level == INDICATOR or isinstance(result, (ModelResult, SectionResult)) and \
        result.quality >= MIN_RANKED_QUALITY


@dataclass(frozen=True)
class Ranking:
    """The scores of one level (model, a section or an indicator) at one date, sorted (ranks.py).

    A rank is 1 + the number of strictly less risky scores, so a sorted array of 8-byte floats
    answers it by bisection; a dict of country → rank took ten times the memory.
    """

    sorted_scores: array = field(hash=False)
    higher_is_better: bool

    @property
    def universe(self) -> int:
        return len(self.sorted_scores)

    def rank_of(self, score: float) -> int:
        if self.higher_is_better:  # ties share a rank: 1, 2, 2, 4
            return len(self.sorted_scores) - bisect.bisect_right(self.sorted_scores, score) + 1
        return bisect.bisect_left(self.sorted_scores, score) + 1


@dataclass(frozen=True)
class ModelScores:
    data: ModelData
    countries: dict[str, CountryScores]  # every country of the list, by code
    rankings: dict[RankKey, Ranking] = field(hash=False)
    regional: dict[tuple[str, int], float] = field(hash=False)  # (region, year) -> rounded mean, bounds models

    def rank(self, level: str, reference: str, result: ModelResult | SectionResult | IndicatorResult
             ) -> tuple[int, int] | None:
        """(rank, universe) of a result at a level ("model", "section", "indicator"); None where it has none."""
        ranking = self.rankings.get((level, reference, result.year))
        if ranking is None or result.score is None or not takes_rank(level, result):
            return None
        return ranking.rank_of(result.score), ranking.universe


@dataclass(frozen=True)
class CurrentScores:
    """What endpoints 1 and 5 need of a scored model: the model and each country's current result."""

    model: Model
    current: dict[str, ModelResult]  # by country code, countries with a current result only

    @classmethod
    def of(cls, scores: ModelScores) -> "CurrentScores":
        return cls(scores.data.model, {code: c.current for code, c in scores.countries.items()
                                       if c.current is not None})
