"""Load `data/`: CSV files → checked, typed, immutable records (every problem reported at once)."""
from __future__ import annotations

import math
from collections import defaultdict
from pathlib import Path

from ..errors import CellError, DataError, Problem
from . import table as t
from .records import (Applicability, Bounds, Country, Dataset, Indicator, Model, ModelDefinition, ModelObservations,
                      Observation, ScoringMethod, Section, Value)
from .table import Column, Row, iter_table, read_table
from .thresholds import coverage_gaps, parse_threshold, value_kind

__all__ = ["load_dataset", "Dataset"]

WEIGHT_TOLERANCE = 0.001
APPLICABILITY_FIELDS = {"region": "region", "income": "income", "oecd_member": "oecd_member", "geo_type": "geo_type"}

COUNTRY_COLUMNS = [
    Column("code", t.country_code), Column("name", t.text), Column("region", t.text),
    Column("income", t.text), Column("oecd_member", t.yes_no), Column("geo_type", t.text),
]
MODEL_COLUMNS = [
    Column("code", t.model_code), Column("title", t.text), Column("description", t.text),
    Column("source", t.text), Column("version", t.text), Column("update_date", t.iso_date),
    Column("url", t.url), Column("direction", t.choice("risk", "performance")),
    Column("scoring", t.choice(*ScoringMethod)), Column("rating", t.yes_no), Column("custom", t.yes_no),
]
SECTION_COLUMNS = [
    Column("model", t.model_code), Column("reference", t.reference), Column("name", t.text),
    Column("description", t.text, required=False), Column("default_weight", t.weight),
    Column("sdg_number", t.integer, required=False, in_header=False),
]
INDICATOR_COLUMNS = [
    Column("model", t.model_code), Column("reference", t.reference), Column("section", t.reference),
    Column("name", t.text), Column("short_name", t.text), Column("source", t.text), Column("url", t.url),
    Column("description", t.text, required=False), Column("default_weight", t.weight),
    Column("frequency", t.text), Column("unit", t.text, required=False),
    Column("currency", t.text, required=False), Column("last_updated", t.iso_date),
    Column("max_lag", t.non_negative_integer), Column("applicability", t.text, required=False),
]
SCORING_COLUMNS = [
    Column("model", t.model_code), Column("indicator", t.reference), Column("threshold", t.text),
    Column("risk_points", t.non_negative_integer),
]
BOUNDS_COLUMNS = [
    Column("model", t.model_code), Column("indicator", t.reference), Column("optimum", t.number),
    Column("green", t.number), Column("red", t.number), Column("lower", t.number),
]
OBSERVATION_COLUMNS = [
    Column("indicator", t.reference), Column("country", t.country_code), Column("date", t.year_or_date),
    Column("value", t.text), Column("status", t.choice("actual", "projected")),
    Column("component", t.text, required=False, in_header=False),
]


def load_dataset(data_dir: Path | str) -> tuple[Dataset, dict[str, ModelObservations]]:
    """Read and check every CSV of `data_dir`: the dataset, and each model's observations by model code
    (a dict the caller owns, so it can let go of each model's observations once scored).
    Raise DataError listing every problem found."""
    data_dir = Path(data_dir)
    loader = _Loader(data_dir)
    loaded = loader.load()
    if loader.problems:
        raise DataError(loader.problems, heading=f"{data_dir} has problems")
    return loaded


class _Loader:
    def __init__(self, data_dir: Path):
        self.dir = data_dir
        self.problems: list[Problem] = []
        self.warnings: list[Problem] = []
        # Indicators already reported as broken: their observations are not reported again.
        self.broken_indicators: set[tuple[str, str]] = set()

    def shown(self, name: str) -> str:
        return str(self.dir / name)

    def read(self, name: str, columns: list[Column]) -> list[Row]:
        return read_table(self.dir / name, self.shown(name), columns, self.problems)

    def problem(self, name: str, row: Row | None, column: str | None, message: str, hint: str | None = None):
        self.problems.append(Problem(self.shown(name), row.line if row else None, column, message, hint))

    def warn(self, name: str, row: Row | None, column: str | None, message: str, hint: str | None = None):
        self.warnings.append(Problem(self.shown(name), row.line if row else None, column, message, hint))

    def unique(self, name: str, rows: list[Row], key_columns: tuple[str, ...]) -> list[Row]:
        """Drop and report rows whose key repeats an earlier row's."""
        first_line: dict[tuple, int] = {}
        kept = []
        for row in rows:
            key = tuple(row[c] for c in key_columns)
            if key in first_line:
                shown = ", ".join(f"{c} {row[c]}" for c in key_columns)
                self.problem(name, row, key_columns[-1], f"duplicate: {shown} is already on line {first_line[key]}",
                             "keep one row per key")
                continue
            first_line[key] = row.line
            kept.append(row)
        return kept

    # ------------------------------------------------------------------ files

    def load(self) -> tuple[Dataset, dict[str, ModelObservations]]:
        countries = self.load_countries()
        models = self.load_models()
        sections = self.load_sections(models)
        indicators = self.load_indicators(models, sections)
        self.load_scoring(models, indicators)
        definitions, observations = [], {}
        for code, model in sorted(models.items()):
            model_sections = tuple(s for s in sections.values() if s.model == code)
            model_indicators = tuple(self.finish_indicator(models, i) for i in indicators.values() if i["model"] == code)
            model_indicators = tuple(i for i in model_indicators if i is not None)
            self.check_structure(model, model_sections, model_indicators)
            observations[code] = self.load_observations(model, model_indicators, countries)
            definitions.append(ModelDefinition(model, model_sections, model_indicators))
        return (Dataset(tuple(sorted(countries.values(), key=lambda c: c.code)), tuple(definitions),
                        tuple(self.warnings)), observations)

    def load_countries(self) -> dict[str, Country]:
        name = "countries.csv"
        rows = self.unique(name, self.read(name, COUNTRY_COLUMNS), ("code",))
        rows = self.unique(name, rows, ("name",))
        return {r["code"]: Country(r["code"], r["name"], r["region"], r["income"], r["oecd_member"], r["geo_type"])
                for r in rows}

    def load_models(self) -> dict[str, Model]:
        name = "models.csv"
        models = {}
        for r in self.unique(name, self.read(name, MODEL_COLUMNS), ("code",)):
            if (r["scoring"] == ScoringMethod.BOUNDS) != (r["direction"] == "performance"):
                self.problem(name, r, "direction", f"{r['direction']!r} does not fit scoring {r['scoring']!r}",
                             "points models measure risk (direction risk); bounds models score 100 at the "
                             "optimum (direction performance)")
                continue
            models[r["code"]] = Model(**{c.name: r[c.name] for c in MODEL_COLUMNS if c.name != "scoring"},
                                      scoring=ScoringMethod(r["scoring"]))
        return models

    def load_sections(self, models: dict[str, Model]) -> dict[tuple[str, str], Section]:
        name = "sections.csv"
        sections = {}
        for r in self.unique(name, self.read(name, SECTION_COLUMNS), ("model", "reference")):
            if r["model"] not in models:
                self.problem(name, r, "model", f"{r['model']!r} is not in models.csv", "add the model first")
                continue
            if r["sdg_number"] is not None and not 1 <= r["sdg_number"] <= 17:
                self.problem(name, r, "sdg_number", f"{r['sdg_number']} is not an SDG number", "write 1 to 17")
                continue
            sections[(r["model"], r["reference"])] = Section(
                r["model"], r["reference"], r["name"], r["description"] or "", r["default_weight"], r["sdg_number"])
        return sections

    def load_indicators(self, models, sections) -> dict[tuple[str, str], dict]:
        name = "indicators.csv"
        indicators = {}
        for r in self.unique(name, self.read(name, INDICATOR_COLUMNS), ("model", "reference")):
            if r["model"] not in models:
                self.problem(name, r, "model", f"{r['model']!r} is not in models.csv", "add the model first")
                continue
            if (r["model"], r["section"]) not in sections:
                self.problem(name, r, "section", f"{r['section']!r} is not a section of {r['model']} in sections.csv",
                             "add the section first or fix the reference")
                continue
            applicability = None
            if r["applicability"]:
                try:
                    applicability = parse_applicability(r["applicability"])
                except CellError as error:
                    self.problem(name, r, "applicability", f"{r['applicability']!r} {error.message}", error.hint)
                    continue
            indicators[(r["model"], r["reference"])] = dict(r.cells, applicability=applicability, line=r.line,
                                                           scoring=[], bounds=None)
        return indicators

    def load_scoring(self, models, indicators) -> None:
        name = "scoring.csv"
        for r in self.read(name, SCORING_COLUMNS):
            indicator = self.scored_indicator(name, r, models, indicators, ScoringMethod.POINTS)
            if indicator is None:
                continue
            try:
                indicator["scoring"].append((r.line, parse_threshold(r["threshold"], r["risk_points"])))
            except CellError as error:
                self.problem(name, r, "threshold", f"{r['threshold']!r} {error.message}", error.hint)
        name = "bounds.csv"
        for r in self.unique(name, self.read(name, BOUNDS_COLUMNS), ("model", "indicator")):
            indicator = self.scored_indicator(name, r, models, indicators, ScoringMethod.BOUNDS)
            if indicator is None:
                continue
            bounds = Bounds(r["optimum"], r["green"], r["red"], r["lower"])
            order = [bounds.lower, bounds.red, bounds.green, bounds.optimum]
            if not (order == sorted(order) or order == sorted(order, reverse=True)) or bounds.lower == bounds.optimum:
                self.problem(name, r, "optimum", f"lower {bounds.lower:g}, red {bounds.red:g}, green {bounds.green:g}, "
                             f"optimum {bounds.optimum:g} are not in order",
                             "lower ≤ red ≤ green ≤ optimum, or the reverse when lower values are better")
                continue
            indicator["bounds"] = bounds

    def scored_indicator(self, name, r, models, indicators, kind) -> dict | None:
        if r["model"] not in models:
            self.problem(name, r, "model", f"{r['model']!r} is not in models.csv", "add the model first")
            return None
        if models[r["model"]].scoring != kind:
            other = "scoring.csv" if kind == ScoringMethod.BOUNDS else "bounds.csv"
            self.problem(name, r, "model", f"{r['model']} is a {models[r['model']].scoring} model",
                         f"its tables belong in {other}")
            return None
        indicator = indicators.get((r["model"], r["indicator"]))
        if indicator is None:
            self.problem(name, r, "indicator", f"{r['indicator']!r} is not an indicator of {r['model']} "
                         "in indicators.csv", "add the indicator first or fix the reference")
        return indicator

    def finish_indicator(self, models, raw: dict) -> Indicator | None:
        indicator = self._finish_indicator(models, raw)
        if indicator is None:
            self.broken_indicators.add((raw["model"], raw["reference"]))
        return indicator

    def _finish_indicator(self, models, raw: dict) -> Indicator | None:
        model = models[raw["model"]]
        where = f"indicator {raw['model']}/{raw['reference']}"
        rows = [row for _, row in raw["scoring"]]
        kind = "number"
        if model.scoring == ScoringMethod.POINTS:
            if not rows:
                self.problems.append(Problem(self.shown("scoring.csv"), None, None,
                                             f"{where} has no scoring rows", "add its threshold rows"))
                return None
            gaps = coverage_gaps(rows)
            if gaps:
                first_line = raw["scoring"][0][0]
                for gap in gaps:
                    self.problems.append(Problem(self.shown("scoring.csv"), first_line, "threshold",
                                                 f"the table of {where} {gap}",
                                                 "every value must match exactly one row"))
                return None
            if max(row.risk_points for row in rows) == 0:
                self.problems.append(Problem(self.shown("scoring.csv"), raw["scoring"][0][0], "risk_points",
                                             f"every row of {where} gives 0 points", "the riskiest row needs points"))
                return None
            kind = value_kind(rows)
        elif raw["bounds"] is None:
            self.problems.append(Problem(self.shown("bounds.csv"), None, None, f"{where} has no bounds row",
                                         "add optimum, green, red and lower"))
            return None
        fields = {c.name: raw[c.name] for c in INDICATOR_COLUMNS if c.name not in ("description", "currency")}
        return Indicator(**fields, description=raw["description"] or "", currency=raw["currency"],
                         value_kind=kind, scoring=tuple(rows), bounds=raw["bounds"])

    def check_structure(self, model: Model, sections: tuple[Section, ...], indicators: tuple[Indicator, ...]):
        if not sections:
            self.problem("sections.csv", None, None, f"model {model.code} has no sections", "add its sections")
            return
        total = math.fsum(s.default_weight for s in sections)
        if abs(total - 1) > WEIGHT_TOLERANCE:
            self.problem("sections.csv", None, "default_weight",
                         f"the section weights of {model.code} sum to {total:.4f}, not 1", "adjust them to sum to 1")
        for section in sections:
            members = [i for i in indicators if i.section == section.reference]
            if not members:
                self.problem("indicators.csv", None, "section",
                             f"section {model.code}/{section.reference} has no indicators", "add at least one")
                continue
            total = math.fsum(i.default_weight for i in members)
            if abs(total - 1) > WEIGHT_TOLERANCE:
                self.problem("indicators.csv", None, "default_weight",
                             f"the indicator weights of section {model.code}/{section.reference} sum to {total:.4f}, "
                             "not 1", "adjust them to sum to 1")
            if model.scoring == ScoringMethod.POINTS:
                # SCORING.md §2: a section weighs its indicators by riskPointsMax, so say when the
                # published default weight would mislead a reader.
                points = sum(i.risk_points_max for i in members)
                for indicator in members:
                    implied = indicator.risk_points_max / points
                    if abs(implied - indicator.default_weight) > 0.0005:
                        self.warn("indicators.csv", None, "default_weight",
                                  f"{model.code}/{indicator.reference} has default weight "
                                  f"{indicator.default_weight:g}, its points imply {implied:.4f}",
                                  "section scores weigh indicators by their maximum points")

    def load_observations(self, model: Model, indicators: tuple[Indicator, ...], countries: dict[str, Country]):
        name = f"observations/{model.code}.csv"
        by_reference = {i.reference: i for i in indicators}
        labels = {i.reference: {row.label for row in i.scoring} for i in indicators}
        # Only line numbers and values are kept per row: these files are the bulk of the data.
        main: dict[tuple[str, str, str], tuple[int, Value, bool]] = {}
        components: dict[tuple[str, str, str], list[tuple[int, str, Value | None]]] = defaultdict(list)
        outside: dict[str, list[tuple[int, str]]] = defaultdict(list)  # indicator → (line, country)
        unknown: dict[tuple[str, str], list[int]] = defaultdict(list)  # (column, value) → lines
        for r in iter_table(self.dir / name, self.shown(name), OBSERVATION_COLUMNS, self.problems):
            cells = r.cells
            reference, country = cells["indicator"], cells["country"]
            indicator = by_reference.get(reference)
            if indicator is None:
                if (model.code, reference) not in self.broken_indicators:
                    unknown[("indicator", reference)].append(r.line)
                continue
            if country not in countries:
                unknown[("country", country)].append(r.line)
                continue
            key = (reference, country, cells["date"])
            component = cells["component"]
            earlier = main.get(key) if not component else next(
                (c for c in components.get(key, ()) if c[1] == component), None)
            if earlier is not None:
                self.problem(name, r, "date", f"duplicate: {reference} {country} {cells['date']}"
                             + (f" component {component!r}" if component else "")
                             + f" is already on line {earlier[0]}", "keep one row per date")
                continue
            projected = cells["status"] == "projected"
            if component:
                components[key].append((r.line, component, component_value(cells["value"])))
                continue
            try:
                value = parse_value(cells["value"], indicator)
            except CellError as error:
                self.problem(name, r, "value", f"{cells['value']!r} {error.message}", error.hint)
                continue
            # A checked numeric table covers every number; labels must be one of the table's.
            if indicator.value_kind == "label" and value not in labels[reference]:
                self.problem(name, r, "value", f"{cells['value']!r} matches no scoring row of "
                             f"{model.code}/{indicator.reference}",
                             "allowed: " + ", ".join(row.threshold for row in indicator.scoring))
                continue
            if not indicator.applies_to(countries[country]):
                outside[reference].append((r.line, country))
            main[key] = (r.line, value, projected)
        for (column, value), lines in unknown.items():
            message, hint = (f"{value!r} is not an indicator of {model.code}",
                             "fix the reference or add the indicator to indicators.csv") if column == "indicator" \
                else (f"{value!r} is not in countries.csv", "add the country or fix the code")
            self.problems.append(Problem(self.shown(name), lines[0], column, message, hint + _more_lines(lines)))
        for reference, rows in outside.items():
            codes = sorted({country for _, country in rows})
            self.warnings.append(Problem(
                self.shown(name), rows[0][0], "country", f"{len(rows)} observations of {reference} are for countries "
                f"outside its applicability {by_reference[reference].applicability.text!r} "
                f"({', '.join(codes[:5])}{', …' if len(codes) > 5 else ''}); they are ignored"))
        for key, extra in components.items():
            if key not in main:
                line, component, _ = extra[0]
                self.problems.append(Problem(
                    self.shown(name), line, "component", f"component {component!r} of {key[0]} {key[1]} {key[2]} "
                    "has no main row", "add the row with a blank component that holds the scored value"))
        series: dict[str, dict[str, list[Observation]]] = defaultdict(lambda: defaultdict(list))
        for key, (_line, value, projected) in main.items():
            indicator, country, date = key
            extra = tuple((component, v) for _, component, v in sorted(components.get(key, [])))
            series[indicator][country].append(Observation(int(date[:4]), date, value, projected, extra))
        result: dict[str, dict[str, tuple[Observation, ...]]] = {}
        for indicator in indicators:
            per_country = series.get(indicator.reference, {})
            result[indicator.reference] = {
                country: tuple(_latest_per_year(sorted(observations, key=lambda o: o.date)))
                for country, observations in sorted(per_country.items())
            }
        return result


def _more_lines(lines: list[int]) -> str:
    """`; also on lines 18, 19, 20 and 7 more` for a problem that repeats on many rows."""
    if len(lines) == 1:
        return ""
    shown = ", ".join(str(line) for line in lines[1:4])
    more = f" and {len(lines) - 4} more" if len(lines) > 4 else ""
    return f"; also on lines {shown}{more}"


def _latest_per_year(observations: list[Observation]) -> list[Observation]:
    """Keep, for each year, the observation with the latest date (SCORING.md §4: results are annual)."""
    by_year: dict[int, Observation] = {}
    for observation in observations:
        by_year[observation.year] = observation
    return [by_year[year] for year in sorted(by_year)]


def parse_value(text: str, indicator: Indicator) -> Value:
    """Read an observation value as the kind its indicator's table scores."""
    if indicator.value_kind == "number":
        return t.number(text)
    if indicator.value_kind == "boolean":
        folded = text.casefold()
        if folded not in ("true", "false"):
            raise CellError("is not true or false", f"{indicator.reference} is scored as a yes/no flag")
        return folded == "true"
    return text


def component_value(text: str | None) -> Value | None:
    if text is None:
        return None
    try:
        return t.number(text)
    except CellError:
        return text


def parse_applicability(text: str) -> Applicability:
    """Read `field: value | value`, e.g. `income: Low income | Lower middle income`."""
    field, sep, values = text.partition(":")
    field = field.strip()
    if not sep or field not in APPLICABILITY_FIELDS:
        raise CellError("is not an applicability rule",
                        f"write FIELD: VALUE | VALUE with FIELD one of {', '.join(APPLICABILITY_FIELDS)}")
    chosen = frozenset(v.strip().casefold() for v in values.split("|") if v.strip())
    if not chosen:
        raise CellError("names no values", "list at least one value after the colon")
    return Applicability(text, APPLICABILITY_FIELDS[field], chosen)
