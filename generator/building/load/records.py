"""Typed, immutable records of the source data, passed from load to scoring and render."""
from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from functools import cached_property
from typing import Union

from ...errors import Problem

Value = Union[float, str, bool]


@dataclass(frozen=True)
class Country:
    code: str
    name: str
    region: str
    income: str
    oecd_member: bool
    geo_type: str


class ScoringMethod(StrEnum):
    """How a model turns raw values into scores (docs/data.md §2 and §3)."""

    POINTS = "points"  # threshold tables give risk points; higher scores are riskier
    BOUNDS = "bounds"  # reference values normalise to 0–100; higher scores are better (sdg)


@dataclass(frozen=True)
class Model:
    code: str
    title: str
    description: str
    source: str
    version: str
    update_date: str
    url: str | None  # blank in models.csv: the model's page on the site (build --site-url)
    direction: str  # "risk" (higher is riskier) or "performance" (higher is better)
    scoring: ScoringMethod
    rating: bool
    custom: bool

    @property
    def higher_is_better(self) -> bool:
        return self.direction == "performance"


@dataclass(frozen=True)
class Section:
    model: str
    reference: str
    name: str
    description: str
    default_weight: float
    sdg_number: int | None


@dataclass(frozen=True)
class ThresholdRow:
    """One row of a points table: `threshold` as written, and what it matches."""

    threshold: str
    risk_points: int
    lower: float | None = None  # numeric rows: lower <= x < upper (None = unbounded)
    upper: float | None = None
    label: str | bool | None = None  # categorical or boolean rows: x == label

    @property
    def is_numeric(self) -> bool:
        return self.label is None

    def matches(self, x: Value) -> bool:
        if self.label is not None:
            return x == self.label and type(x) is type(self.label)
        if isinstance(x, (bool, str)):
            return False
        return (self.lower is None or x >= self.lower) and (self.upper is None or x < self.upper)


@dataclass(frozen=True)
class Bounds:
    """Reference values of a bounds (sdg) indicator; `optimum` scores 100, `lower` scores 0."""

    optimum: float
    green: float
    red: float
    lower: float


@dataclass(frozen=True)
class Applicability:
    """Which countries an indicator applies to: `field` of the country is one of `values`."""

    text: str
    field: str
    values: frozenset[str]

    def applies_to(self, country: Country) -> bool:
        value = getattr(country, self.field)
        if isinstance(value, bool):
            value = "yes" if value else "no"
        return value.casefold() in self.values


@dataclass(frozen=True)
class Indicator:
    model: str
    reference: str
    section: str
    name: str
    short_name: str
    source: str
    url: str
    description: str
    default_weight: float
    frequency: str
    unit: str
    currency: str | None
    last_updated: str
    max_lag: int
    applicability: Applicability | None
    value_kind: str | None  # "number", "label" or "boolean" (None: mixed, which coverage_gaps refuses)
    scoring: tuple[ThresholdRow, ...] = ()
    bounds: Bounds | None = None
    licence: str | None = None  # SPDX ids, "; "-separated as `source` is (None: not stated)

    @cached_property
    def risk_points_max(self) -> int:
        return max(row.risk_points for row in self.scoring)

    def applies_to(self, country: Country) -> bool:
        return self.applicability is None or self.applicability.applies_to(country)


@dataclass(frozen=True, slots=True)
class Observation:
    """One raw value of an indicator for a country at a date, with any extra components."""

    year: int
    date: str
    value: Value
    projected: bool
    components: tuple[tuple[str, Value | None], ...] = ()


# observations[indicator reference][country code] -> observations sorted by year
ModelObservations = dict[str, dict[str, tuple[Observation, ...]]]


def observation_count(observations: ModelObservations) -> int:
    """Return how many observations one model is built from."""
    return sum(len(series) for per_country in observations.values() for series in per_country.values())


def observation_counts(observations: dict[str, ModelObservations]) -> dict[str, int]:
    """Return how many observations each model is built from."""
    return {code: observation_count(by_indicator) for code, by_indicator in observations.items()}


@dataclass(frozen=True)
class ModelDefinition:
    """A model with its sections and indicators (in file order): what scoring and the docs pages read."""

    model: Model
    sections: tuple[Section, ...]
    indicators: tuple[Indicator, ...]

    def indicators_of(self, section: str) -> tuple[Indicator, ...]:
        return self._by_section.get(section, ())

    @cached_property
    def _by_section(self) -> dict[str, tuple[Indicator, ...]]:
        return {s.reference: tuple(i for i in self.indicators if i.section == s.reference) for s in self.sections}


@dataclass(frozen=True)
class ModelData:
    """A model's definition with its observations: the input of scoring one model."""

    definition: ModelDefinition
    observations: ModelObservations = field(hash=False, compare=False)

    @property
    def model(self) -> Model:
        return self.definition.model

    @property
    def sections(self) -> tuple[Section, ...]:
        return self.definition.sections

    @property
    def indicators(self) -> tuple[Indicator, ...]:
        return self.definition.indicators

    def indicators_of(self, section: str) -> tuple[Indicator, ...]:
        return self.definition.indicators_of(section)


@dataclass(frozen=True)
class Dataset:
    """Everything the build needs from `data/` but the observations, checked and typed."""

    countries: tuple[Country, ...]  # sorted by code
    models: tuple[ModelDefinition, ...]  # sorted by code
    warnings: tuple[Problem, ...] = ()

    @property
    def custom_models(self) -> tuple[str, ...]:
        return tuple(m.model.code for m in self.models if m.model.custom)
