"""The bulk exports: every result of a release as rows of CSV and JSON Lines.

Rows are read off the endpoint 4 documents the build has just rendered and validated, so an export
says number for number what the JSON answers say. Each model's rows are rendered once, into its own
export; the public models' export joins theirs. No export depends on who asks: a release's exports
grow with its models, never with its clients."""
from __future__ import annotations

import csv
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator

import orjson

from .. import routes
from ..files import NamedFile

COLUMNS = (
    ("model", "the model's code"),
    ("country_code", "ISO 3166-1 alpha-3"),
    ("level", "model, section or indicator"),
    ("reference", "the section's or indicator's reference (empty for the model)"),
    ("date", "YYYY-12-31, the year of the result"),
    ("type", "history, current or projection"),
    ("score", "0 to 100 (empty: an indicator without a value)"),
    ("risk_class", "Very Low … Very High"),
    ("risk_class_numeric", "1 to 5"),
    ("country_rank", "1 = least risk (empty: not ranked)"),
    ("country_universe", "how many countries are ranked"),
    ("risk_points", "points models: the points"),
    ("risk_points_max", "points models: the most points possible"),
    ("weight", "the share in percent a section or indicator weighs in its year"),
    ("rating_letter", "models with a rating: AAA … D"),
    ("data_quality", "model and section: Very Poor … Very Good"),
    ("raw_value", "indicators: the raw value used (empty: none)"),
    ("raw_components", "indicators: the raw value's named components (CSV: name=value; …)"),
)
HEADER = tuple(name for name, _ in COLUMNS)

# The field of a result in the JSON documents that each column from `date` to `data_quality` holds.
_FIELDS = (("date", "timestamp"), ("type", "type"), ("score", "score"),
           ("risk_class", "riskClassificationCategorical"), ("risk_class_numeric", "riskClassificationNumeric"),
           ("country_rank", "countryRank"), ("country_universe", "countryUniverse"), ("risk_points", "riskPoints"),
           ("risk_points_max", "riskPointsMax"), ("weight", "weight"), ("rating_letter", "ratingLetter"),
           ("data_quality", "dataQualityCategorical"))
_FIELD_NAMES = tuple(name for _, name in _FIELDS)
assert HEADER[4:-2] == tuple(column for column, _ in _FIELDS)


def export_rows(document: dict) -> list[tuple]:
    """The rows of one endpoint 4 document (a model for one country), as tuples in column order
    (None where a result has no such field)."""
    model, country = document["model"]["type"], document["entity"]["countryCode"]
    levels = [("model", "", document["results"])]
    levels += [("section", s["reference"], s.get("results", [])) for s in document.get("sections", [])]
    levels += [("indicator", i["reference"], i.get("results", [])) for i in document.get("indicators", [])]
    rows = []
    for level, reference, results in levels:
        for result in results:
            raw_value = components = None
            data = result.get("data")
            if data and data["value"] is not None:
                raw_value = data["value"][0]
                components = dict(zip(data["name"][1:], data["value"][1:])) or None
            rows.append((model, country, level, reference, *map(result.get, _FIELD_NAMES), raw_value, components))
    return rows


def _components_cell(components: dict) -> str:
    return "; ".join(f"{name}={'' if value is None else value}" for name, value in components.items())


FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")  # what a spreadsheet reads as a formula (OWASP CSV injection)


def spreadsheet_safe(cell: Any) -> Any:
    """A text cell a spreadsheet would run as a formula (`=2+3`, `@SUM(…)`, `-A1`), with a leading `'`
    so it is shown as the text it is; anything else as it is. Only the CSV export: JSON keeps the value."""
    return "'" + cell if isinstance(cell, str) and cell.startswith(FORMULA_STARTS) else cell


def _csv_row(row: tuple) -> tuple:
    """A row as the CSV export writes it: the free-text cells (reference, raw value, components)
    spreadsheet-safe; numbers, codes and categories are never formulas."""
    components = None if row[-1] is None else spreadsheet_safe(_components_cell(row[-1]))
    return (*row[:3], spreadsheet_safe(row[3]), *row[4:-2], spreadsheet_safe(row[-2]), components)


@dataclass
class ExportChunks:
    """Each model's rows, rendered once as CSV and as JSON Lines into files of `folder`, copied into the
    exports by the writer (a release at 10× the demo has exports of hundreds of MB: none is held)."""

    folder: Path
    csv: dict[str, Path] = field(default_factory=dict)
    jsonl: dict[str, Path] = field(default_factory=dict)
    custom: set[str] = field(default_factory=set)

    @contextmanager
    def model(self, code: str, custom: bool) -> Iterator[Callable[[dict], None]]:
        """A model's rows files, open while its documents are rendered: `add(document)` writes one
        endpoint 4 document's rows (no model's documents are held for the exports)."""
        self.csv[code], self.jsonl[code] = self.folder / f"{code}.csv", self.folder / f"{code}.jsonl"
        with NamedFile(self.csv[code], text=True) as text, NamedFile(self.jsonl[code]) as lines:
            writer = csv.writer(text, lineterminator="\n")

            def add(document: dict) -> None:
                for row in export_rows(document):
                    # csv writes None as an empty cell and numbers as Python writes them (as the JSON does)
                    writer.writerow(_csv_row(row))
                    # JSON Lines leave out what has no value, as the API's documents do
                    lines.write(orjson.dumps({k: v for k, v in zip(HEADER, row) if v is not None}) + b"\n")
            yield add
        if custom:
            self.custom.add(code)

    def render(self) -> Iterator[tuple[routes.Route, "ExportFile"]]:
        """Both exports of the public models (the same file for every key) and both of each model alone,
        as the models' files in order (the writer copies them one after the other): every model's rows
        are written twice at most, whatever the number of audiences."""
        header = (",".join(HEADER) + "\n").encode()
        public = [code for code in sorted(self.csv) if code not in self.custom]
        yield routes.export("csv"), ExportFile([header] + [self.csv[c] for c in public])
        yield routes.export("jsonl"), ExportFile([self.jsonl[c] for c in public])
        for code in sorted(self.csv):
            yield routes.export("csv", code), ExportFile([header, self.csv[code]])
            yield routes.export("jsonl", code), ExportFile([self.jsonl[code]])


@dataclass(frozen=True)
class ExportFile:
    """An export as consecutive parts, bytes or files, written one after the other (ReleaseWriter.write_parts)."""

    parts: list[bytes | Path]

    def head(self, size: int) -> bytes:
        """Its first `size` bytes (an example for the reference)."""
        head = b""
        for part in self.parts:
            if len(head) >= size:
                break
            if isinstance(part, Path):
                with open(part, "rb") as source:
                    head += source.read(size - len(head))
            else:
                head += part[:size - len(head)]
        return head
