"""The catalogue files: countries, models, sections, indicators and their scoring tables or bounds."""
from __future__ import annotations

import math

from ...contract.encodings import ascii_folded, client_encodings, identity
from ...contract.filters import group_fields
from ...errors import CellError
from .problems import ProblemLog
from .records import Applicability, Bounds, Country, Indicator, Model, ScoringMethod, Section
from .source_files import (
    BOUNDS,
    BOUNDS_COLUMNS,
    COUNTRIES,
    COUNTRY_COLUMNS,
    INDICATOR_COLUMNS,
    INDICATORS,
    MODEL_COLUMNS,
    MODELS,
    SCORING,
    SCORING_COLUMNS,
    SECTION_COLUMNS,
    SECTIONS,
)
from .table import Column, Row, read_table
from .thresholds import coverage_gaps, parse_threshold, value_kind

# Weights are written to 3 or 4 decimals (1/3 as 0.3333), so a sum may miss 1 by a few ten-thousandths.
WEIGHT_SUM_TOLERANCE = 0.001
# An indicator's default weight is published to 4 decimals; its points imply the exact share.
IMPLIED_WEIGHT_TOLERANCE = 0.0005
# The longest form of a country name a client may send (nginx.conf: map_hash_bucket_size 512 holds
# map keys of up to ~494 bytes; 200 leaves room for the release's id and a group filter's field).
MAX_NAME_BYTES = 200
APPLICABILITY_FIELDS = {"region": "region", "income": "income", "oecd_member": "oecd_member", "geo_type": "geo_type"}

RawIndicator = dict  # an indicators.csv row's cells, with its line, applicability and table rows


def read(log: ProblemLog, name: str, columns: list[Column]) -> list[Row]:
    return read_table(log.dir / name, log.shown(name), columns, log, root=log.dir)


def unique(log: ProblemLog, name: str, rows: list[Row], key_columns: tuple[str, ...]) -> list[Row]:
    """Drop and report rows whose key repeats an earlier row's."""
    first_line: dict[tuple, int] = {}
    kept = []
    for row in rows:
        key = tuple(row[c] for c in key_columns)
        if key in first_line:
            shown = ", ".join(f"{c} {row[c]}" for c in key_columns)
            log.problem(name, row, key_columns[-1], f"duplicate: {shown} is already on line {first_line[key]}",
                        "keep one row per key")
            continue
        first_line[key] = row.line
        kept.append(row)
    return kept


def load_countries(log: ProblemLog) -> dict[str, Country]:
    rows = unique(log, COUNTRIES, read(log, COUNTRIES, COUNTRY_COLUMNS), ("code",))
    if not rows and not log.is_unreadable(COUNTRIES) and not log.had_broken_row(COUNTRIES):
        log.problem(COUNTRIES, None, None, "has no countries", "list one country a row under the header", line=1)
    rows = _servable_groups(log, _servable_names(log, unique(log, COUNTRIES, rows, ("name",))))
    return {r["code"]: Country(r["code"], r["name"], r["region"], r["income"], r["oecd_member"], r["geo_type"])
            for r in rows}


def _servable_names(log: ProblemLog, rows: list[Row]) -> list[Row]:
    """Drop and report a name no server can look up as itself: the same name as an earlier one in
    other letter case or Unicode form (one lookup key on every server), one whose query-string form
    (any client's) is another name's, or one too long for a map entry of nginx (MAX_NAME_BYTES)."""
    names: dict[str, Row] = {}  # identity → first row
    forms: dict[str, Row] = {}  # a client's query-string form, as nginx compares it → its row
    kept = []
    for row in rows:
        first = names.setdefault(identity(row["name"]), row)
        if first is not row:
            log.problem(COUNTRIES, row, "name", f"{row['name']!r} is {first['name']!r} of line {first.line} in other "
                        "letter case or Unicode form", "every server looks names up ignoring case: keep one")
            continue
        encoded = client_encodings(row["name"])
        longest = max(len(form.encode()) for form in encoded)
        if longest > MAX_NAME_BYTES:
            log.problem(COUNTRIES, row, "name", f"is too long to look up: a client sends it as up to {longest} "
                        f"bytes, over {MAX_NAME_BYTES}", "shorten it (the demo's longest name, 44 characters, is 56 "
                        "bytes at most)")
            continue
        clash = next((forms[ascii_folded(f)] for f in encoded if ascii_folded(f) in forms), None)
        if clash is not None:
            log.problem(COUNTRIES, row, "name", f"{row['name']!r} reads as {clash['name']!r} of line {clash.line} in a "
                        "query string", "a client could not tell them apart: rename one")
            continue
        forms.update((ascii_folded(f), row) for f in encoded)
        kept.append(row)
    return kept


def _servable_groups(log: ProblemLog, rows: list[Row]) -> list[Row]:
    """Drop and report a row whose value of a group filter's column (region, income) no server can look
    up as itself: the same value as an earlier row's in other letter case or Unicode form (the filters
    match ignoring case), or one too long for a map entry of nginx."""
    first: dict[tuple[str, str], Row] = {}  # (column, identity) → the first row with that value
    kept = []
    for row in rows:
        problem = None
        for field in group_fields():
            value = row[field]
            seen = first.setdefault((field, identity(value)), row)
            if seen[field] != value:
                problem = (field, f"{value!r} is {seen[field]!r} of line {seen.line} in other letter case or Unicode "
                           "form", f"the {field} filter matches ignoring case: write it as on line {seen.line}")
            elif max(len(form.encode()) for form in client_encodings(value)) > MAX_NAME_BYTES:
                problem = (field, f"is too long for the {field} filter to look up", "shorten it")
        if problem is not None:
            log.problem(COUNTRIES, row, *problem)
            continue
        kept.append(row)
    return kept


def load_models(log: ProblemLog) -> dict[str, Model]:
    models = {}
    for r in unique(log, MODELS, read(log, MODELS, MODEL_COLUMNS), ("code",)):
        if (r["scoring"] == ScoringMethod.BOUNDS) != (r["direction"] == "performance"):
            log.problem(MODELS, r, "direction", f"{r['direction']!r} does not fit scoring {r['scoring']!r}",
                        "points models measure risk (direction risk); bounds models score 100 at the "
                        "optimum (direction performance)")
            continue
        models[r["code"]] = Model(**{c.name: r[c.name] for c in MODEL_COLUMNS if c.name != "scoring"},
                                  scoring=ScoringMethod(r["scoring"]))
    return models


def _known_model(log: ProblemLog, name: str, row: Row, models: dict[str, Model]) -> bool:
    if row["model"] in models:
        return True
    if log.is_unreadable(MODELS) or log.had_broken_row(MODELS, code=row["model"]):
        log.not_checked(name, MODELS)
    else:
        log.problem(name, row, "model", f"{row['model']!r} is not in models.csv", "add the model first")
    return False


def load_sections(log: ProblemLog, models: dict[str, Model]) -> dict[tuple[str, str], Section]:
    sections = {}
    for r in unique(log, SECTIONS, read(log, SECTIONS, SECTION_COLUMNS), ("model", "reference")):
        if not _known_model(log, SECTIONS, r, models):
            continue
        if r["sdg_number"] is not None and not 1 <= r["sdg_number"] <= 17:
            log.problem(SECTIONS, r, "sdg_number", f"{r['sdg_number']} is not an SDG number", "write 1 to 17")
            continue
        sections[(r["model"], r["reference"])] = Section(
            r["model"], r["reference"], r["name"], r["description"] or "", r["default_weight"], r["sdg_number"])
    return sections


def load_indicators(log: ProblemLog, models: dict[str, Model],
                    sections: dict[tuple[str, str], Section]) -> dict[tuple[str, str], RawIndicator]:
    indicators = {}
    for r in unique(log, INDICATORS, read(log, INDICATORS, INDICATOR_COLUMNS), ("model", "reference")):
        if not _known_model(log, INDICATORS, r, models):
            continue
        if (r["model"], r["section"]) not in sections:
            if log.is_unreadable(SECTIONS) or log.had_broken_row(SECTIONS, model=r["model"], reference=r["section"]):
                log.not_checked(INDICATORS, SECTIONS)
                # not an indicator now: what refers to it is not checked either, rather than "not an indicator"
                log.broken_row(log.shown(INDICATORS), {"model": r["model"], "reference": r["reference"]})
            else:
                log.problem(INDICATORS, r, "section", f"{r['section']!r} is not a section of {r['model']} in "
                            "sections.csv", "add the section first or fix the reference")
            continue
        applicability = None
        if r["applicability"]:
            try:
                applicability = parse_applicability(r["applicability"])
            except CellError as error:
                log.problem(INDICATORS, r, "applicability", f"{r['applicability']!r} {error.message}", error.hint)
                continue
        indicators[(r["model"], r["reference"])] = dict(r.cells, applicability=applicability, line=r.line,
                                                       scoring=[], bounds=None)
    return indicators


def load_scoring_tables(log: ProblemLog, models: dict[str, Model],
                        indicators: dict[tuple[str, str], RawIndicator]) -> None:
    """Attach each threshold row (scoring.csv) and bounds row (bounds.csv) to its raw indicator."""
    for r in read(log, SCORING, SCORING_COLUMNS):
        indicator = _scored_indicator(log, SCORING, r, models, indicators, ScoringMethod.POINTS)
        if indicator is None:
            continue
        try:
            indicator["scoring"].append((r.line, parse_threshold(r["threshold"], r["risk_points"])))
        except CellError as error:
            log.problem(SCORING, r, "threshold", f"{r['threshold']!r} {error.message}", error.hint)
    for r in unique(log, BOUNDS, read(log, BOUNDS, BOUNDS_COLUMNS), ("model", "indicator")):
        indicator = _scored_indicator(log, BOUNDS, r, models, indicators, ScoringMethod.BOUNDS)
        if indicator is None:
            continue
        bounds = Bounds(r["optimum"], r["green"], r["red"], r["lower"])
        order = [bounds.lower, bounds.red, bounds.green, bounds.optimum]
        if not (order == sorted(order) or order == sorted(order, reverse=True)) or bounds.lower == bounds.optimum:
            log.problem(BOUNDS, r, "optimum", f"lower {bounds.lower:g}, red {bounds.red:g}, green {bounds.green:g}, "
                        f"optimum {bounds.optimum:g} are not in order",
                        "lower ≤ red ≤ green ≤ optimum, or the reverse when lower values are better")
            continue
        indicator["bounds"] = bounds


def _scored_indicator(log: ProblemLog, name: str, r: Row, models: dict[str, Model],
                      indicators: dict[tuple[str, str], RawIndicator], kind: ScoringMethod) -> RawIndicator | None:
    if not _known_model(log, name, r, models):
        return None
    if models[r["model"]].scoring != kind:
        other = SCORING if kind == ScoringMethod.BOUNDS else BOUNDS
        log.problem(name, r, "model", f"{r['model']} is a {models[r['model']].scoring} model",
                    f"its tables belong in {other}")
        return None
    indicator = indicators.get((r["model"], r["indicator"]))
    if indicator is None:
        if log.is_unreadable(INDICATORS) or log.had_broken_row(INDICATORS, model=r["model"], reference=r["indicator"]):
            log.not_checked(name, INDICATORS)
        else:
            log.problem(name, r, "indicator", f"{r['indicator']!r} is not an indicator of {r['model']} "
                        "in indicators.csv", "add the indicator first or fix the reference")
    return indicator


def finish_indicator(log: ProblemLog, model: Model, raw: RawIndicator) -> Indicator | None:
    """Return the indicator record, once its table (points models) or bounds (bounds models) is complete."""
    where = f"indicator {raw['model']}/{raw['reference']}"
    rows = [row for _, row in raw["scoring"]]
    kind: str | None = "number"
    table = SCORING if model.scoring == ScoringMethod.POINTS else BOUNDS
    if log.is_unreadable(table) or log.had_broken_row(table, model=raw["model"], indicator=raw["reference"]):
        log.not_checked(INDICATORS, table)  # its table is incomplete: that file's problem, said above
        return None
    if model.scoring == ScoringMethod.POINTS:
        if not rows:
            log.problem(SCORING, None, None, f"{where} has no scoring rows", "add its threshold rows")
            return None
        first_line = raw["scoring"][0][0]
        gaps = coverage_gaps(rows)
        if gaps:
            for gap in gaps:
                log.problem(SCORING, None, "threshold", f"the table of {where} {gap}",
                            "every value must match exactly one row", line=first_line)
            return None
        if max(row.risk_points for row in rows) == 0:
            log.problem(SCORING, None, "risk_points", f"every row of {where} gives 0 points",
                        "the riskiest row needs points", line=first_line)
            return None
        kind = value_kind(rows)
    elif raw["bounds"] is None:
        log.problem(BOUNDS, None, None, f"{where} has no bounds row", "add optimum, green, red and lower")
        return None
    fields = {c.name: raw[c.name] for c in INDICATOR_COLUMNS if c.name not in ("description", "currency")}
    return Indicator(**fields, description=raw["description"] or "", currency=raw["currency"],
                     value_kind=kind, scoring=tuple(rows), bounds=raw["bounds"])


def check_weights(log: ProblemLog, model: Model, sections: tuple[Section, ...], indicators: tuple[Indicator, ...],
                  incomplete_sections: set[str]) -> None:
    """Check that section weights sum to 1, each section's indicator weights sum to 1, and (points models) each
    indicator's default weight is the one its points imply. Sections in `incomplete_sections` lost an
    indicator to a problem above (its table or bounds): their sums would mislead, so they are skipped."""
    if not sections:
        log.problem(SECTIONS, None, None, f"model {model.code} has no sections", "add its sections")
        return
    total = math.fsum(s.default_weight for s in sections)
    if log.had_broken_row(SECTIONS, model=model.code):
        log.note(f"{log.shown(SECTIONS)}: the section weights of {model.code} were not summed, as a row of it "
                 "could not be read")
    elif abs(total - 1) > WEIGHT_SUM_TOLERANCE:
        log.problem(SECTIONS, None, "default_weight",
                    f"the section weights of {model.code} sum to {total:.4f}, not 1", "adjust them to sum to 1")
    if log.is_unreadable(INDICATORS):
        return  # nothing of indicators.csv could be read: its problem is above
    for section in sections:
        members = [i for i in indicators if i.section == section.reference]
        if section.reference in incomplete_sections or log.had_broken_row(
                INDICATORS, model=model.code, section=section.reference):
            log.note(f"{log.shown(INDICATORS)}: the indicator weights of section {model.code}/{section.reference} "
                     "were not checked, as a row they depend on could not be read")
            continue
        if not members:
            log.problem(INDICATORS, None, "section", f"section {model.code}/{section.reference} has no indicators",
                        "add at least one")
            continue
        total = math.fsum(i.default_weight for i in members)
        if abs(total - 1) > WEIGHT_SUM_TOLERANCE:
            log.problem(INDICATORS, None, "default_weight",
                        f"the indicator weights of section {model.code}/{section.reference} sum to {total:.4f}, "
                        "not 1", "adjust them to sum to 1")
        if model.scoring == ScoringMethod.POINTS:
            # docs/data.md §2: a section weighs its indicators by riskPointsMax, so say when the
            # published default weight would mislead a reader.
            points = sum(i.risk_points_max for i in members)
            for indicator in members:
                implied = indicator.risk_points_max / points
                if abs(implied - indicator.default_weight) > IMPLIED_WEIGHT_TOLERANCE:
                    log.warn(INDICATORS, None, "default_weight",
                             f"{model.code}/{indicator.reference} has default weight "
                             f"{indicator.default_weight:g}, its points imply {implied:.4f}",
                             "section scores weigh indicators by their maximum points")


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
