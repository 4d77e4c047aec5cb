"""Bounds models (sdg, higher is better): normalisation, colours, trends, goals (docs/data.md §3)."""
from __future__ import annotations

from collections import defaultdict
from typing import cast

from ..load.records import Bounds, ModelData, Observation, Value
from .context import CountryContext, YearInputs, YearScores, percent, section_coverage, share
from .numbers import model_rating, result_quality, risk_class, round3
from .results import CountryScores, IndicatorResult, ModelResult, SdgMarks, SectionResult, missing_result

GOAL_MIN_SHARE = 0.50
MODEL_MIN_SHARE = 0.80
HIGHER_IS_BETTER = True  # bounds models score performance (the loader allows only direction performance)
TREND_BASE_YEAR = 2015
TARGET_YEAR = 2030

GREEN, YELLOW, ORANGE, RED, GRAY = "green", "yellow", "orange", "red", "gray"
COLOR_MEANING = {
    GREEN: "SDG achieved", YELLOW: "Challenges remain", ORANGE: "Significant challenges remain",
    RED: "Major challenges remain", GRAY: "Information unavailable",
}
UP, MODERATE, FLAT, DOWN, NO_TREND = "↑", "➚", "→", "↓", "•"
TREND_MEANING = {
    UP: "On track or maintaining SDG achievement", MODERATE: "Moderately improving", FLAT: "Stagnating",
    DOWN: "Decreasing", NO_TREND: "Trend information unavailable",
}
TREND_POINTS = {UP: 4, MODERATE: 3, FLAT: 2, DOWN: 1}
UNAVAILABLE = SdgMarks(GRAY, NO_TREND)  # a missing indicator


def normalise(x: float, bounds: Bounds) -> float:
    """Score 0–100: 100 at the optimum, 0 at the lower bound, linear between, either direction."""
    score = 100 * (x - bounds.lower) / (bounds.optimum - bounds.lower)
    return min(100.0, max(0.0, score))


def _goodness(x: float, bounds: Bounds) -> float:
    """Return the position of x on the lower → optimum axis (0 at lower, 1 at optimum), unclamped."""
    return (x - bounds.lower) / (bounds.optimum - bounds.lower)


def indicator_color(x: float, bounds: Bounds) -> str:
    """Return the colour: green at least as good as `green`, red at least as bad as `red`, yellow/orange by the
    midpoint."""
    t, green, red = _goodness(x, bounds), _goodness(bounds.green, bounds), _goodness(bounds.red, bounds)
    if t >= green:
        return GREEN
    if t <= red:
        return RED
    return YELLOW if t >= (green + red) / 2 else ORANGE


def color_points(x: float, bounds: Bounds) -> float:
    """Return colour points: lower 0, red 1, midpoint 2, green 3, optimum 4, linear between."""
    red, green = _goodness(bounds.red, bounds), _goodness(bounds.green, bounds)
    anchors = [(0.0, 0.0), (red, 1.0), ((red + green) / 2, 2.0), (green, 3.0), (1.0, 4.0)]
    t = min(1.0, max(0.0, _goodness(x, bounds)))
    for (t0, p0), (t1, p1) in zip(anchors, anchors[1:]):
        if t <= t1:
            return p1 if t1 == t0 else p0 + (p1 - p0) * (t - t0) / (t1 - t0)
    return 4.0


def numeric(value: Value) -> float:
    """Return an observation of a bounds model: a number (load/ checks every value of a bounds indicator is one)."""
    return cast(float, value)


def trend_base(series: tuple[Observation, ...]) -> Observation | None:
    """Return the first observation dated 2015 or later: where every trend of the series starts."""
    return next((o for o in series if o.year >= TREND_BASE_YEAR), None)


def indicator_trend(base: Observation | None, used: Observation, bounds: Bounds) -> str:
    """Return the arrow from the score at the first year ≥ 2015 (`base`) to the score of the value used now."""
    if base is None or used.year - base.year < 2:
        return NO_TREND
    s0, s1 = normalise(numeric(base.value), bounds), normalise(numeric(used.value), bounds)
    goal = normalise(bounds.green, bounds)
    if s1 >= goal:
        return UP
    observed = (s1 - s0) / (used.year - base.year)
    required = (goal - s0) / max(1, TARGET_YEAR - base.year)
    if observed < 0:
        return DOWN
    if observed >= required:
        return UP
    if observed >= required / 2:
        return MODERATE
    return FLAT


def goal_color(points: list[tuple[float, str]]) -> str:
    """Return the colour of a goal from its two worst indicators (by colour points)."""
    if not points:
        return GRAY
    worst = sorted(points)[:2]
    p = sum(point for point, _ in worst) / len(worst)
    if p >= 3 and all(color == GREEN for _, color in worst):
        return GREEN
    return YELLOW if p >= 2 else ORANGE if p >= 1 else RED


def goal_trend(arrows: list[str]) -> str:
    points = [TREND_POINTS[a] for a in arrows if a in TREND_POINTS]
    if not points:
        return NO_TREND
    mean = sum(points) / len(points)
    return UP if mean >= 3.5 else MODERATE if mean >= 2.5 else FLAT if mean >= 1.5 else DOWN


def reference_scores(bounds: Bounds) -> list[tuple[str, float, float]]:
    """Return the four reference values, each with the rounded score it gets (what `scoring` lists for sdg)."""
    return [(label, value, round3(normalise(value, bounds)))
            for label, value in (("optimum", bounds.optimum), ("green", bounds.green),
                                 ("red", bounds.red), ("lower", bounds.lower))]


class BoundsMethod:
    """Scores a bounds model's years; built once per model."""

    def __init__(self, data: ModelData):
        self.data = data
        self._trend_bases: dict[str, dict[str, Observation | None]] = {}  # by country code, filled once each

    def trend_bases(self, country: CountryContext) -> dict[str, Observation | None]:
        code = country.country.code
        if code not in self._trend_bases:
            self._trend_bases[code] = {ref: trend_base(series) for ref, series in country.series.items()}
        return self._trend_bases[code]

    def regional_scores(self, countries: dict[str, CountryScores]) -> dict[tuple[str, int], float]:
        """Mean of the rounded scores of a region's countries with a result on the same date."""
        members: dict[tuple[str, int], list[float]] = defaultdict(list)
        for code in sorted(countries):
            scored = countries[code]
            for result in scored.results:
                members[(scored.country.region, result.year)].append(result.score)
        return {key: round3(sum(scores) / len(scores)) for key, scores in members.items()}

    def score_year(self, country: CountryContext, year: YearInputs) -> YearScores:
        bases = self.trend_bases(country)
        indicators: dict[str, IndicatorResult] = {}
        goals: dict[str, tuple[float, float, SdgMarks]] = {}  # unrounded score, share, marks
        available_total = applicable_total = 0
        for section, members, applicable, available in section_coverage(country, year):
            applicable_total += len(applicable)
            available_total += len(available)
            scores, colors, arrows = [], [], []
            for indicator in members:
                observation = year.inputs[indicator.reference]
                if observation is None:
                    indicators[indicator.reference] = missing_result(year.year, year.type, UNAVAILABLE)
                    continue
                bounds = indicator.bounds
                assert bounds is not None  # every indicator of a bounds model has its bounds (load/)
                value = numeric(observation.value)
                marks = SdgMarks(indicator_color(value, bounds),
                                 indicator_trend(bases[indicator.reference], observation, bounds))
                score = normalise(value, bounds)
                scores.append(score)
                colors.append((color_points(value, bounds), marks.color))
                arrows.append(marks.trend)
                rounded = round3(score)
                indicators[indicator.reference] = IndicatorResult(
                    year.year, year.type, observation, rounded, None, None, percent(1, len(available)),
                    risk_class(rounded, HIGHER_IS_BETTER), marks)
            goal_share = share(len(available), len(applicable))
            if available and goal_share >= GOAL_MIN_SHARE:
                goals[section.reference] = (sum(scores) / len(scores), goal_share,
                                            SdgMarks(goal_color(colors), goal_trend(arrows)))
        # docs/data.md §3: goals weigh equally.
        weight = percent(1, len(goals)) if goals else 0.0
        sections = {}
        for reference, (score, goal_share, marks) in goals.items():
            rounded = round3(score)
            sections[reference] = SectionResult(year.year, year.type, rounded, None, None, weight, goal_share,
                                                risk_class(rounded, HIGHER_IS_BETTER), result_quality(goal_share),
                                                marks)
        model_share = share(available_total, applicable_total)
        model = None
        if goals and model_share >= MODEL_MIN_SHARE:
            rounded = round3(sum(score for score, _, _ in goals.values()) / len(goals))
            model = ModelResult(year.year, year.type, rounded, None, None, model_share,
                                risk_class(rounded, HIGHER_IS_BETTER), result_quality(model_share),
                                model_rating(rounded, HIGHER_IS_BETTER) if self.data.model.rating else None)
        return YearScores(indicators, sections, model)
