"""The observation files: one long-form file of raw values per model."""
from __future__ import annotations

import datetime
from collections import defaultdict
from dataclasses import dataclass, field

from ...errors import CellError
from . import table as t
from .problems import ProblemLog
from .records import Country, Indicator, Model, ModelObservations, Observation, Value
from .source_files import COUNTRIES, INDICATORS, OBSERVATION_COLUMNS, observations_file
from .table import iter_table


def load_observations(log: ProblemLog, model: Model, indicators: tuple[Indicator, ...], countries: dict[str, Country],
                      broken_indicators: set[str]) -> ModelObservations:
    """Return the observations of one model's indicators, by indicator and country, one per year, sorted by date.

    `broken_indicators` were reported already: their rows are skipped without a second problem."""
    name = observations_file(model.code)
    problems_before = log.total
    rows = _read_rows(log, name, model, indicators, countries, broken_indicators)
    if not rows.read and log.total == problems_before:  # only its header (a release cut to nothing)
        log.problem(name, None, None, "has no observations", "a model without observations scores no country: "
                    "restore the file's rows", line=1)
    _report_unknown(log, name, model, rows.unknown)
    _report_outside(log, name, {i.reference: i for i in indicators}, rows.outside)
    _report_orphan_components(log, name, rows)
    return _series(rows, indicators)


@dataclass
class _Rows:
    """An observations file as read. Only line numbers and values are kept per row: these files are the
    bulk of the data."""

    main: dict[tuple[str, str, str], tuple[int, Value, bool]] = field(default_factory=dict)
    components: dict[tuple[str, str, str], list[tuple[int, str, Value | None]]] = field(
        default_factory=lambda: defaultdict(list))
    outside: dict[str, list[tuple[int, str]]] = field(default_factory=lambda: defaultdict(list))  # → (line, country)
    unknown: dict[tuple[str, str], list[int]] = field(default_factory=lambda: defaultdict(list))  # (column, value)
    read: int = 0


def _read_rows(log: ProblemLog, name: str, model: Model, indicators: tuple[Indicator, ...],
               countries: dict[str, Country], broken_indicators: set[str]) -> _Rows:
    """Return each row checked on its own (a duplicate, a date, a value); what refers elsewhere is collected."""
    this_year = datetime.date.today().year
    by_reference = {i.reference: i for i in indicators}
    labels = {i.reference: {row.label for row in i.scoring} for i in indicators}
    rows = _Rows()
    main, components, outside, unknown = rows.main, rows.components, rows.outside, rows.unknown
    rows_read = 0
    for r in iter_table(log.dir / name, log.shown(name), OBSERVATION_COLUMNS, log, root=log.dir):
        rows_read += 1
        cells = r.cells
        reference, country = cells["indicator"], cells["country"]
        indicator = by_reference.get(reference)
        if indicator is None:
            if reference not in broken_indicators:
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
            log.problem(name, r, "date", f"duplicate: {reference} {country} {cells['date']}"
                         + (f" component {component!r}" if component else "")
                         + f" is already on line {earlier[0]}", "keep one row per date")
            continue
        projected = cells["status"] == "projected"
        if not projected and int(cells["date"][:4]) > this_year:
            log.problem(name, r, "date", f"{cells['date']} is after this year ({this_year}) but the observation "
                        "is marked actual", "mark it projected, or fix the date")
            continue
        if component:
            components[key].append((r.line, component, component_value(cells["value"])))
            continue
        try:
            value = parse_value(cells["value"], indicator)
        except CellError as error:
            log.problem(name, r, "value", f"{cells['value']!r} {error.message}", error.hint)
            continue
        # A checked numeric table covers every number; labels must be one of the table's.
        if indicator.value_kind == "label" and value not in labels[reference]:
            log.problem(name, r, "value", f"{cells['value']!r} matches no scoring row of "
                         f"{model.code}/{indicator.reference}",
                         "allowed: " + ", ".join(row.threshold for row in indicator.scoring))
            continue
        if not indicator.applies_to(countries[country]):
            outside[reference].append((r.line, country))
        main[key] = (r.line, value, projected)
    rows.read = rows_read
    return rows


def _report_unknown(log: ProblemLog, name: str, model: Model, unknown: dict[tuple[str, str], list[int]]) -> None:
    """Report rows naming an indicator or country the catalogue lacks: one problem per value, with its lines."""
    for (column, value), lines in unknown.items():
        # A reference into a file (or a row) that could not be read is that file's problem, said above.
        source, cells = (INDICATORS, dict(model=model.code, reference=value)) if column == "indicator" \
            else (COUNTRIES, dict(code=value))
        if log.is_unreadable(source) or log.had_broken_row(source, **cells):
            log.not_checked(name, source, rows=len(lines))
            continue
        message, hint = (f"{value!r} is not an indicator of {model.code}",
                         "fix the reference or add the indicator to indicators.csv") if column == "indicator" \
            else (f"{value!r} is not in countries.csv", "add the country or fix the code")
        log.problem(name, None, column, message, hint + _more_lines(lines), line=lines[0])


def _report_outside(log: ProblemLog, name: str, by_reference: dict[str, Indicator],
                    outside: dict[str, list[tuple[int, str]]]) -> None:
    """Warn of observations for countries outside their indicator's applicability: a warning each indicator."""
    for reference, rows in outside.items():
        codes = sorted({country for _, country in rows})
        applicability = by_reference[reference].applicability
        assert applicability is not None  # only an indicator with an applicability has rows outside it
        log.warn(name, None, "country", f"{len(rows)} observations of {reference} are for countries outside its "
                 f"applicability {applicability.text!r} "
                 f"({', '.join(codes[:5])}{', …' if len(codes) > 5 else ''}); they are ignored", line=rows[0][0])


def _report_orphan_components(log: ProblemLog, name: str, rows: _Rows) -> None:
    for key, extra in rows.components.items():
        if key not in rows.main:
            line, component, _ = extra[0]
            log.problem(name, None, "component", f"component {component!r} of {key[0]} {key[1]} {key[2]} has no "
                        "main row", "add the row with a blank component that holds the scored value", line=line)


def _series(rows: _Rows, indicators: tuple[Indicator, ...]) -> ModelObservations:
    """Return each indicator's observations by country, one a year (the latest date), oldest first."""
    series: dict[str, dict[str, list[Observation]]] = defaultdict(lambda: defaultdict(list))
    for observed, (_line, value, projected) in rows.main.items():
        reference, country, date = observed
        parts = tuple((component, v) for _, component, v in sorted(rows.components.get(observed, [])))
        series[reference][country].append(Observation(int(date[:4]), date, value, projected, parts))
    result: dict[str, dict[str, tuple[Observation, ...]]] = {}
    for indicator in indicators:
        per_country = series.get(indicator.reference, {})
        result[indicator.reference] = {
            country: tuple(_latest_per_year(sorted(observations, key=lambda o: o.date)))
            for country, observations in sorted(per_country.items())
        }
    return result


def _more_lines(lines: list[int]) -> str:
    """Return `; also on lines 18, 19, 20 and 7 more` for a problem that repeats on many rows."""
    if len(lines) == 1:
        return ""
    shown = ", ".join(str(line) for line in lines[1:4])
    more = f" and {len(lines) - 4} more" if len(lines) > 4 else ""
    return f"; also on lines {shown}{more}"


def _latest_per_year(observations: list[Observation]) -> list[Observation]:
    """Keep, for each year, the observation with the latest date (docs/data.md §4: results are annual)."""
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
