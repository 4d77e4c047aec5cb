"""Render each kind of API document as plain dicts in docs/api.md's field order."""
from __future__ import annotations

import functools
import unicodedata

from ..load.records import Country, Indicator, Model, ModelData, Observation, ScoringMethod, Section, Value
from ..scoring.bounds import COLOR_MEANING, TREND_MEANING, reference_scores
from ..scoring.numbers import DATA_QUALITY, RATING_LETTERS, RISK_CLASSES
from ..scoring.ranks import INDICATOR, MODEL, SECTION
from ..scoring.results import (
    CountryScores,
    CurrentScores,
    IndicatorResult,
    ModelResult,
    ModelScores,
    SdgMarks,
    SectionResult,
)


@functools.lru_cache(maxsize=None)
def timestamp(year: int) -> str:
    return f"{year}-12-31"  # docs/data.md §4: results are annual, dated YYYY-12-31


def name_key(name: str) -> str:
    """Sort key for names: case-insensitive, accents folded (docs/api.md: Côte d'Ivoire among the C's)."""
    decomposed = unicodedata.normalize("NFKD", name)
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch)).casefold()


# Classes are decided in scoring; here each number only picks its fields (read, never changed).
RISK_CLASS_FIELDS = {number: {"riskClassificationNumeric": number, "riskClassificationCategorical": name}
                     for number, name in enumerate(RISK_CLASSES, start=1)}
QUALITY_FIELDS = {number: {"dataQualityNumeric": number, "dataQualityCategorical": name}
                  for number, name in enumerate(DATA_QUALITY, start=1)}


def _add_rank(doc: dict, scores: ModelScores, level: str, reference: str,
              result: ModelResult | SectionResult | IndicatorResult) -> None:
    rank = scores.rank(level, reference, result)
    if rank is not None:
        doc["countryRank"], doc["countryUniverse"] = rank


def _sdg(marks: SdgMarks) -> dict:
    return {"sdgColor": marks.color, "sdgColorInterpretation": COLOR_MEANING[marks.color],
            "sdgTrendArrow": marks.trend, "sdgTrendInterpretation": TREND_MEANING[marks.trend]}


# ---------------------------------------------------------------- configuration

def render_model_config(model: Model) -> dict:
    return {"title": model.title, "description": model.description, "source": model.source, "code": model.code}


def render_country_config(country: Country) -> dict:
    return {"name": country.name, "code": country.code}


def render_model_definition(model: Model) -> dict:
    doc = {"type": model.code, "version": model.version, "updateDate": model.update_date,
           "description": model.description, "source": model.source}
    if model.url is not None:
        doc["url"] = model.url
    return doc


def render_entity(country: Country, scored: CountryScores) -> dict:
    return {"geoType": country.geo_type, "countryCode": country.code, "countryName": country.name,
            "regionName": country.region, "worldBankClassification": country.income,
            "oecdMember": country.oecd_member, "resultsTimeSeriesAvailable": len(scored.results) > 1}


# ---------------------------------------------------------------- results

def render_model_result(result: ModelResult, scores: ModelScores, country: Country) -> dict:
    doc: dict = {"timestamp": timestamp(result.year), "type": result.type, "score": result.score}
    if scores.data.model.scoring == ScoringMethod.BOUNDS:
        doc["regionalScore"] = scores.regional[(country.region, result.year)]
    doc.update(RISK_CLASS_FIELDS[result.risk_class])
    if result.risk_points is not None:
        doc["riskPoints"] = result.risk_points
        doc["riskPointsMax"] = result.risk_points_max
    if result.rating is not None:
        doc["ratingNumeric"] = result.rating
        doc["ratingLetter"] = RATING_LETTERS[result.rating - 1]
    doc["shareIndicatorsAvailable"] = result.share
    doc.update(QUALITY_FIELDS[result.quality])
    _add_rank(doc, scores, MODEL, "", result)
    return doc


def render_section_result(result: SectionResult, section: Section, scores: ModelScores) -> dict:
    doc: dict = {"timestamp": timestamp(result.year), "type": result.type, "score": result.score}
    if result.sdg is not None:
        doc.update(_sdg(result.sdg))
    doc.update(RISK_CLASS_FIELDS[result.risk_class])
    if result.risk_points is not None:
        doc["riskPoints"] = result.risk_points
        doc["riskPointsMax"] = result.risk_points_max
    doc.update(QUALITY_FIELDS[result.quality])
    _add_rank(doc, scores, SECTION, section.reference, result)
    doc["weight"] = result.weight
    return doc


def render_indicator_result(result: IndicatorResult, indicator: Indicator, scores: ModelScores,
                            points: bool) -> dict:
    """Return one result of an indicator (`points`: whether its model is a points model)."""
    if result.observation is None:
        return _without_value(result, indicator.short_name, points)
    doc = _indicator_fields(result, points)
    if result.score is not None:
        _add_rank(doc, scores, INDICATOR, indicator.reference, result)
        doc["weight"] = result.weight
    doc["data"] = render_raw_data(result.observation, indicator.short_name)
    return doc


def _indicator_fields(result: IndicatorResult, points: bool) -> dict:
    """Return an indicator result's fields before its rank: date, type, score, class, points, sdg marks."""
    doc: dict = {"timestamp": timestamp(result.year), "type": result.type, "score": result.score}
    if result.score is not None and result.risk_class is not None:  # one is None where the other is
        doc.update(RISK_CLASS_FIELDS[result.risk_class])
    if points:  # docs/api.md: null points when the value is missing
        doc["riskPoints"] = result.risk_points
        doc["riskPointsMax"] = result.risk_points_max
    if result.sdg is not None:
        doc.update(_sdg(result.sdg))
    return doc


# An indicator without a value has the same result in every country's document for a year (seven in
# ten indicator results of the demo): rendered once and shared by those documents, which nothing changes
# once rendered (they are validated, serialised and read for the export rows). A country's documents
# need a few hundred (the demo's largest model 488 in all; more than 16,384 would take 180 indicators).
@functools.lru_cache(maxsize=16384)
def _without_value(result: IndicatorResult, short_name: str, points: bool) -> dict:
    """Return render_indicator_result of a result without an observation (no score: no rank, no weight)."""
    doc = _indicator_fields(result, points)
    doc["data"] = render_raw_data(None, short_name)
    return doc


def _display(value: Value | None) -> str | float | None:
    """Return raw values as docs/api.md allows them in `data.value`: string, number or null."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return value


def render_raw_data(observation: Observation | None, short_name: str) -> dict:
    if observation is None:
        return {"name": [short_name], "value": None}
    if not observation.components:  # the common case, without building lists twice
        return {"name": [short_name], "value": [_display(observation.value)]}
    names = [short_name] + [name for name, _ in observation.components]
    values = [_display(observation.value)] + [_display(value) for _, value in observation.components]
    return {"name": names, "value": values}


# ---------------------------------------------------------------- definitions

def render_scoring(indicator: Indicator) -> list[dict]:
    if indicator.bounds is None:
        return [{"threshold": row.threshold, "riskPoints": row.risk_points} for row in indicator.scoring]
    # docs/data.md §3: the four reference values, each with the score it gets.
    return [{"threshold": f"{label}: x = {value:g}", "riskPoints": score}
            for label, value, score in reference_scores(indicator.bounds)]


def render_section(section: Section, scores: ModelScores, scored: CountryScores) -> dict:
    results = scored.sections[section.reference]
    doc: dict = {"resultsTimeSeriesAvailable": len(results) > 1, "name": section.name,
                 "reference": section.reference, "defaultWeight": section.default_weight}
    if section.description:
        doc["description"] = section.description
    if section.sdg_number is not None:
        doc["SDGnumber"] = section.sdg_number
    doc["results"] = [render_section_result(r, section, scores) for r in results]
    return doc


def render_indicator(indicator: Indicator, scores: ModelScores, scored: CountryScores) -> dict:
    results = scored.indicators[indicator.reference]
    doc: dict = {"resultsTimeSeriesAvailable": sum(r.score is not None for r in results) > 1,
                 "name": indicator.name, "reference": indicator.reference, "shortName": indicator.short_name,
                 "source": indicator.source, "url": indicator.url}
    if indicator.description:
        doc["description"] = indicator.description
    doc["defaultWeight"] = indicator.default_weight
    doc["frequency"] = indicator.frequency
    if indicator.unit:
        doc["unit"] = indicator.unit
    doc["currency"] = indicator.currency
    doc["lastUpdated"] = indicator.last_updated
    doc["section"] = indicator.section
    doc["scoring"] = render_scoring(indicator)
    if indicator.applicability is not None:
        doc["applicableFlag"] = indicator.applicability.text
    points = scores.data.model.scoring == ScoringMethod.POINTS  # once: a tenth of the results' time
    doc["results"] = [render_indicator_result(r, indicator, scores, points) for r in results]
    return doc


# ---------------------------------------------------------------- endpoints

def render_model_list(models: list[Model]) -> list[dict]:
    """Return endpoint 1."""
    return [render_model_config(m) for m in models]


def render_country_list(countries: list[Country]) -> list[dict]:
    """Return endpoint 2."""
    return [render_country_config(c) for c in countries]


def render_score_entry(scores: ModelScores, scored: CountryScores) -> dict:
    """Return one element of endpoint 3's `data`: the entity and its current result."""
    assert scored.current is not None  # endpoint 3 lists the countries with a current result
    return {"entity": render_entity(scored.country, scored),
            "results": [render_model_result(scored.current, scores, scored.country)]}


def render_model_scores(model: Model, entries: list[dict]) -> dict:
    """Return endpoint 3."""
    return {"model": render_model_definition(model), "data": entries}


def render_country_model_scores(scores: ModelScores, scored: CountryScores) -> dict:
    """Return endpoint 4: the whole series for the model, each section and each indicator."""
    data: ModelData = scores.data
    return {
        "model": render_model_definition(data.model),
        "entity": render_entity(scored.country, scored),
        "results": [render_model_result(r, scores, scored.country) for r in scored.results],
        "sections": [render_section(s, scores, scored) for s in data.sections],
        "indicators": [render_indicator(i, scores, scored) for i in data.indicators],
    }


def render_country_scores(country: Country, visible: list[CurrentScores]) -> dict:
    """Return endpoint 5: the current score of every visible model that has one."""
    riskscores = []
    for scores in visible:
        current = scores.current.get(country.code)
        if current is None:
            continue
        riskscores.append({"model": scores.model.code,
                           "riskClassificationCategorical": RISK_CLASSES[current.risk_class - 1],
                           "timestamp": timestamp(current.year), "score": current.score})
    return {"name": country.name, "code": country.code, "riskscores": riskscores}
