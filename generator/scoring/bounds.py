"""Bounds models (sdg, higher is better): normalisation, colours, trends, goals (SCORING.md §3)."""
from __future__ import annotations

from ..load.records import Bounds, Indicator, ModelData, Observation
from .numbers import round3
from .points import CountryContext, YearScores, percent, section_coverage
from .results import IndicatorResult, ModelResult, SdgMarks, SectionResult
from .timeline import YearInputs

GOAL_MIN_SHARE = 0.50
MODEL_MIN_SHARE = 0.80
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


def normalise(x: float, bounds: Bounds) -> float:
    """Score 0–100: 100 at the optimum, 0 at the lower bound, linear between, either direction."""
    score = 100 * (x - bounds.lower) / (bounds.optimum - bounds.lower)
    return min(100.0, max(0.0, score))


def _goodness(x: float, bounds: Bounds) -> float:
    """Position of x on the lower → optimum axis (0 at lower, 1 at optimum), unclamped."""
    return (x - bounds.lower) / (bounds.optimum - bounds.lower)


def indicator_color(x: float, bounds: Bounds) -> str:
    """Green at least as good as `green`, red at least as bad as `red`, yellow/orange by the midpoint."""
    t, green, red = _goodness(x, bounds), _goodness(bounds.green, bounds), _goodness(bounds.red, bounds)
    if t >= green:
        return GREEN
    if t <= red:
        return RED
    return YELLOW if t >= (green + red) / 2 else ORANGE


def color_points(x: float, bounds: Bounds) -> float:
    """Colour points: lower 0, red 1, midpoint 2, green 3, optimum 4, linear between."""
    red, green = _goodness(bounds.red, bounds), _goodness(bounds.green, bounds)
    anchors = [(0.0, 0.0), (red, 1.0), ((red + green) / 2, 2.0), (green, 3.0), (1.0, 4.0)]
    t = min(1.0, max(0.0, _goodness(x, bounds)))
    for (t0, p0), (t1, p1) in zip(anchors, anchors[1:]):
        if t <= t1:
            return p1 if t1 == t0 else p0 + (p1 - p0) * (t - t0) / (t1 - t0)
    return 4.0


def trend_base(series: tuple[Observation, ...]) -> Observation | None:
    """The first observation dated 2015 or later: where every trend of the series starts."""
    return next((o for o in series if o.year >= TREND_BASE_YEAR), None)


def indicator_trend(base: Observation | None, used: Observation, bounds: Bounds) -> str:
    """Arrow from the score at the first year ≥ 2015 (`base`) to the score of the value used now."""
    if base is None or used.year - base.year < 2:
        return NO_TREND
    s0, s1 = normalise(base.value, bounds), normalise(used.value, bounds)
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
    """Colour of a goal from its two worst indicators (by colour points)."""
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


def score_year(data: ModelData, country: CountryContext, year: YearInputs) -> YearScores:
    indicators: dict[str, IndicatorResult] = {}
    goals: dict[str, SectionResult] = {}
    goal_scores: list[float] = []
    available_total = applicable_total = 0
    for section, members, applicable, available in section_coverage(country, year):
        applicable_total += len(applicable)
        available_total += len(available)
        scores, colors, arrows = [], [], []
        for indicator in members:
            observation = year.inputs[indicator.reference]
            if observation is None:
                indicators[indicator.reference] = IndicatorResult(
                    year.year, year.type, None, None, None, None, None, SdgMarks(GRAY, NO_TREND))
                continue
            marks, score = _indicator_marks(indicator, observation, country.trend_bases.get(indicator.reference))
            scores.append(score)
            colors.append((color_points(observation.value, indicator.bounds), marks.color))
            arrows.append(marks.trend)
            indicators[indicator.reference] = IndicatorResult(
                year.year, year.type, observation, round3(score), None, None, percent(1, len(available)), marks)
        share = round3(len(available) / len(applicable)) if applicable else 0.0
        if available and share >= GOAL_MIN_SHARE:
            score = sum(scores) / len(scores)
            goal_scores.append(score)
            goals[section.reference] = SectionResult(year.year, year.type, round3(score), None, None, 0.0, share,
                                                     SdgMarks(goal_color(colors), goal_trend(arrows)))
    # SCORING.md §3: goals weigh equally.
    goals = {ref: _with_weight(goal, percent(1, len(goals))) for ref, goal in goals.items()}
    share = round3(available_total / applicable_total) if applicable_total else 0.0
    model = None
    if goals and share >= MODEL_MIN_SHARE:
        model = ModelResult(year.year, year.type, round3(sum(goal_scores) / len(goal_scores)), None, None, share)
    return YearScores(indicators, goals, model)


def _indicator_marks(indicator: Indicator, observation: Observation, base) -> tuple[SdgMarks, float]:
    bounds = indicator.bounds
    return (SdgMarks(indicator_color(observation.value, bounds), indicator_trend(base, observation, bounds)),
            normalise(observation.value, bounds))


def _with_weight(goal: SectionResult, weight: float) -> SectionResult:
    return SectionResult(goal.year, goal.type, goal.score, None, None, weight, goal.share, goal.sdg)
