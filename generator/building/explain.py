"""`riskapi explain`: how a published score was reached, read back from the current release."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import orjson

from ..contract import locations
from ..errors import ExplainError
from ..history.site import CURRENT
from .load.thresholds import parse_threshold
from .scoring.numbers import round3
from .scoring.points import rescale_weights


@dataclass(frozen=True)
class IndicatorLine:
    reference: str
    value: object  # the raw value, None when missing
    rule: str | None  # the matching threshold row, or the bounds used
    score: float | None
    points: int | None
    points_max: int | None
    weight: float | None


@dataclass(frozen=True)
class SectionLine:
    reference: str
    default_weight: float
    score: float | None  # None: the section has no result that year
    points: int | None
    points_max: int | None
    weight: float | None
    indicators: tuple[IndicatorLine, ...]


@dataclass(frozen=True)
class Explanation:
    model: str
    code: str
    name: str
    timestamp: str
    result: dict | None  # the model result of that date (None below the coverage cut-off)
    sections: tuple[SectionLine, ...]
    dates: tuple[str, ...]  # every date with results for this model and country


def explain(site: Path, model: str, code: str, date: str | None = None) -> Explanation:
    """Read the endpoint 4 document of the current release and line up what made its score."""
    path = site / CURRENT / locations.country_model_scores(model, code.upper()).file
    if not path.is_file():
        raise ExplainError(f"the current release of {site} has no model {model!r} for country {code!r}")
    document = orjson.loads(path.read_bytes())
    dates = sorted({r["timestamp"] for i in document["indicators"] for r in i["results"]})
    current = next((r["timestamp"] for r in document["results"] if r["type"] == "current"), None)
    chosen = date or current or (dates[-1] if dates else None)
    if chosen is None or chosen not in dates:
        raise ExplainError(f"no results on {date or 'any date'} for {model}/{code.upper()}; "
                           f"dates: {', '.join(dates) or 'none'}")
    result = next((r for r in document["results"] if r["timestamp"] == chosen), None)
    sections = []
    for section in document["sections"]:
        at = next((r for r in section["results"] if r["timestamp"] == chosen), None)
        lines = tuple(_indicator_line(i, chosen) for i in document["indicators"]
                      if i["section"] == section["reference"])
        sections.append(SectionLine(section["reference"], section["defaultWeight"], at and at["score"],
                                    at and at.get("riskPoints"), at and at.get("riskPointsMax"),
                                    at and at["weight"], lines))
    entity = document["entity"]
    return Explanation(model, entity["countryCode"], entity["countryName"], chosen, result, tuple(sections),
                       tuple(dates))


def _indicator_line(indicator: dict, date: str) -> IndicatorLine:
    found = next(r for r in indicator["results"] if r["timestamp"] == date)
    values = found["data"]["value"]
    value = values[0] if isinstance(values, list) else values
    rule = None
    if value is not None:
        if found.get("riskPoints") is not None:
            rows = [parse_threshold(row["threshold"], int(row["riskPoints"])) for row in indicator["scoring"]]
            raw = {"true": True, "false": False}.get(value, value) if isinstance(value, str) else value
            rule = next((row.threshold for row in rows if row.matches(raw)), None)
        else:
            rule = ", ".join(row["threshold"] for row in indicator["scoring"])
    return IndicatorLine(indicator["reference"], value, rule, found["score"], found.get("riskPoints"),
                         found.get("riskPointsMax"), found.get("weight"))


def model_sum_line(terms: list[SectionLine], published: float) -> str:
    """Return the model score as the sum the build computed, ending in the published score.

    The weights and section scores shown are rounded; the sum is taken the way the build takes it
    (points models: from the default weights and the integer points), so it rounds to the published
    score exactly instead of drifting by the rounding of its terms (23.334 for 23.333)."""
    shown = " + ".join(f"{s.weight} × {s.score} / 100" for s in terms)
    points = [(s, s.points, s.points_max) for s in terms if s.points is not None and s.points_max]
    if len(points) == len(terms):
        weights = rescale_weights({s.reference: s.default_weight for s in terms})
        total = 0.0
        for s, earned, most in points:
            total += weights[s.reference] * (100 * earned / most) / 100
        return f"  score = Σ section weight × section score / 100 = {shown} = {round3(total)}"
    # sdg: the mean of the goals; the goals' unrounded scores are not published
    mean = round3(sum(s.score or 0.0 for s in terms) / len(terms))  # terms: the sections with a score
    line = f"  score = mean of the goal scores = ({' + '.join(str(s.score) for s in terms)}) / {len(terms)} = {mean}"
    return line if mean == published else f"{line}; {published} from the goals' unrounded scores"


def format_explanation(e: Explanation) -> str:
    """Return the explanation as text for a terminal."""
    out = [f"{e.model} / {e.code} ({e.name}), {e.timestamp}"]
    r = e.result
    if r is None:
        out.append("  no model result on this date: too few indicators have a value (coverage cut-off)")
    else:
        line = (f"  score {r['score']} ({r['type']}) → class {r['riskClassificationNumeric']} "
                f"{r['riskClassificationCategorical']}")
        if "ratingLetter" in r:
            line += f", rating {r['ratingNumeric']} {r['ratingLetter']}"
        out.append(line)
        rank = (f"rank {r['countryRank']} of {r['countryUniverse']}" if "countryRank" in r
                else "not ranked (data quality below Medium)")
        out.append(f"  share of indicators {r['shareIndicatorsAvailable']} → data quality "
                   f"{r['dataQualityNumeric']} {r['dataQualityCategorical']}; {rank}"
                   + (f"; regional score {r['regionalScore']}" if "regionalScore" in r else ""))
        terms = [s for s in e.sections if s.score is not None]
        out.append(model_sum_line(terms, r["score"]))
        total = sum(s.default_weight for s in e.sections)
        used = sum(s.default_weight for s in terms)
        if len(terms) < len(e.sections):
            out.append(f"  sections without a result leave out {total - used:g} of the default weights; the "
                       f"other {used:g} are rescaled to 100")
    for s in e.sections:
        if s.score is None:
            out.append(f"  section {s.reference} (default weight {s.default_weight}): no result (too few indicators)")
        else:
            points = f"{s.points} / {s.points_max} points → " if s.points is not None else "mean of indicator scores → "
            out.append(f"  section {s.reference} (default weight {s.default_weight}, weight {s.weight}): "
                       f"{points}{s.score}")
        for i in s.indicators:
            if i.value is None:
                out.append(f"    {i.reference}: missing (no value within its max lag, or it does not apply)")
            elif i.points is not None:
                out.append(f"    {i.reference}: {i.value} matches {i.rule!r} → {i.points} of {i.points_max} points, "
                           f"score {i.score}, weight {i.weight}")
            else:
                out.append(f"    {i.reference}: {i.value} on [{i.rule}] → score {i.score}, weight {i.weight}")
    return "\n".join(out)
