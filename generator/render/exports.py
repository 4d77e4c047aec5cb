"""The bulk exports: every result of a release as rows of CSV and JSON Lines.

Rows are read off the endpoint 4 documents the build has just rendered and validated, so an export
says number for number what the JSON answers say. Each model's rows are rendered once, into its own
export; the public models' export joins theirs. No export depends on who asks: a release's exports
grow with its models, never with its clients."""
from __future__ import annotations

import csv
import io
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

import orjson

from .. import document_routes
from ..publish.twins import GzipPartFile, gzip_part

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


def _levels(document: dict) -> Iterator[tuple[str, str, list[dict]]]:
    """(level, reference, results) of an endpoint 4 document: the model, each section, each indicator."""
    yield "model", "", document["results"]
    for section in document.get("sections", []):
        yield "section", section["reference"], section.get("results", [])
    for indicator in document.get("indicators", []):
        yield "indicator", indicator["reference"], indicator.get("results", [])


def _raw(result: dict) -> tuple[Any, dict | None]:
    """An indicator result's raw value and its named components (None where there are none)."""
    data = result.get("data")
    if not data or data["value"] is None:
        return None, None
    return data["value"][0], dict(zip(data["name"][1:], data["value"][1:])) or None


def _components_cell(components: dict) -> str:
    return "; ".join(f"{name}={'' if value is None else value}" for name, value in components.items())


FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")  # what a spreadsheet reads as a formula (OWASP CSV injection)


def spreadsheet_safe(cell: Any) -> Any:
    """A text cell a spreadsheet would run as a formula (`=2+3`, `@SUM(…)`, `-A1`), with a leading `'`
    so it is shown as the text it is; anything else as it is. Only the CSV export: JSON keeps the value."""
    return "'" + cell if isinstance(cell, str) and cell.startswith(FORMULA_STARTS) else cell


_VALUE_COLUMNS = HEADER[4:-2]  # date … data_quality: the columns read off a result's fields


SharedCells = dict[int, tuple[dict, tuple, dict]]  # id(result) → (result, its CSV cells, its JSON fields)


def _rows_of(document: dict, csv_rows: list[tuple], json_rows: list[dict], shared: SharedCells) -> None:
    """Append one endpoint 4 document's rows as the CSV export writes them (the free-text cells —
    reference, raw value, components — spreadsheet-safe; numbers, codes and categories are never
    formulas) and as the JSON Lines export does (without what has no value, as the API's documents
    leave it out). One pass for both: the rows are most of a build's rendering.

    A result without a score is one dict shared by many documents (documents.py): its cells are read
    once into `shared`, which holds the dict, so its id stays its own while they are kept."""
    model, country = document["model"]["type"], document["entity"]["countryCode"]
    for level, reference, results in _levels(document):
        safe_reference = spreadsheet_safe(reference)
        base = {"model": model, "country_code": country, "level": level, "reference": reference}
        indicators = level == "indicator"  # only an indicator's results hold raw data
        for result in results:
            known = shared.get(id(result))
            if known is not None:  # the very dict: `shared` holds it, so no other object has its id
                csv_rows.append((model, country, level, safe_reference, *known[1]))
                row = base.copy()
                row.update(known[2])
                json_rows.append(row)
                continue
            values = list(map(result.get, _FIELD_NAMES))
            fields = {name: value for name, value in zip(_VALUE_COLUMNS, values) if value is not None}
            row = base.copy()
            row.update(fields)
            raw_value, components = _raw(result) if indicators else (None, None)
            if raw_value is None and components is None:
                cells = (*values, None, None)
                csv_rows.append((model, country, level, safe_reference, *cells))
                if result.get("score") is None:
                    shared[id(result)] = (result, cells, fields)
            else:
                csv_rows.append((model, country, level, safe_reference, *values, spreadsheet_safe(raw_value),
                                 None if components is None else spreadsheet_safe(_components_cell(components))))
                if raw_value is not None:
                    row["raw_value"] = raw_value
                if components is not None:
                    row["raw_components"] = components
            json_rows.append(row)


_ROW_START = b'{"model":'  # every row's first key


def _json_lines(rows: list[dict]) -> bytes:
    """Rows as JSON Lines, serialised in one call: the list's `},{"model":` are the rows' boundaries
    (inside a string a quote is escaped, and no row holds a list of objects), each made a line break."""
    if not rows:
        return b""
    listed = orjson.dumps(rows)
    return listed[1:-1].replace(b"}," + _ROW_START, b"}\n" + _ROW_START) + b"\n"


def gzip_part_of(rows: Path) -> Path:
    """Where a rows file's bytes, compressed as a part of a joined gzip twin, are written beside it."""
    return rows.with_name(rows.name + ".deflate")


@dataclass
class ExportChunks:
    """Each model's rows, rendered once as CSV and as JSON Lines into files of `folder`, copied into the
    exports by the writer (a release at 10× the demo has exports of hundreds of MB: none is held), and
    compressed once as they are written: the parts of the gzip twins of its export and the public one."""

    folder: Path
    csv: dict[str, Path] = field(default_factory=dict)
    jsonl: dict[str, Path] = field(default_factory=dict)
    custom: set[str] = field(default_factory=set)

    @contextmanager
    def model(self, code: str, custom: bool) -> Iterator["ModelRows"]:
        """A model's rows files, open while its documents are rendered (no model's documents are held
        for the exports)."""
        self.register(code, custom)
        csv_rows, jsonl_rows = self.csv[code], self.jsonl[code]
        with GzipPartFile(csv_rows, gzip_part_of(csv_rows)) as csv_file, \
                GzipPartFile(jsonl_rows, gzip_part_of(jsonl_rows)) as jsonl_file:
            yield ModelRows(csv_file, jsonl_file)

    def register(self, code: str, custom: bool) -> None:
        """Know a model's rows files (written here, or by a build's worker process: the same names)."""
        self.csv[code], self.jsonl[code] = self.folder / f"{code}.csv", self.folder / f"{code}.jsonl"
        if custom:
            self.custom.add(code)

    def render_model(self, code: str) -> Iterator[tuple[document_routes.Route, "ExportFile"]]:
        """Both exports of one model alone, once its rows are written."""
        yield document_routes.export("csv", code), ExportFile.of_rows([_HEADER_LINE], [self.csv[code]])
        yield document_routes.export("jsonl", code), ExportFile.of_rows([], [self.jsonl[code]])

    def render_public(self) -> Iterator[tuple[document_routes.Route, "ExportFile"]]:
        """Both exports of the public models (the same file for every key), as the models' files in order
        (the writer copies them one after the other): every model's rows are written twice at most (here
        and in its own exports), whatever the number of audiences."""
        public = [code for code in sorted(self.csv) if code not in self.custom]
        yield document_routes.export("csv"), ExportFile.of_rows([_HEADER_LINE], [self.csv[c] for c in public])
        yield document_routes.export("jsonl"), ExportFile.of_rows([], [self.jsonl[c] for c in public])


_HEADER_LINE = (",".join(HEADER) + "\n").encode()


class ModelRows:
    """One model's export rows as they are written: `render(document)` gives an endpoint 4 document's
    rows as CSV and as JSON Lines, `write(rows)` appends them to the model's files (and compresses them
    into their gzip parts), a document at a time."""

    def __init__(self, csv_file: GzipPartFile, jsonl_file: GzipPartFile):
        self._csv_file, self._jsonl_file = csv_file, jsonl_file
        self._buffer = io.StringIO()
        self._writer = csv.writer(self._buffer, lineterminator="\n")
        self._shared: SharedCells = {}  # for this model's documents only: held while they are rendered

    def render(self, document: dict) -> tuple[bytes, bytes]:
        csv_rows: list[tuple] = []
        json_rows: list[dict] = []
        _rows_of(document, csv_rows, json_rows, self._shared)
        # csv writes None as an empty cell and numbers as Python writes them (as the JSON does).
        # One write per document and format: a call per row cost a fifth of the build's render.
        self._buffer.seek(0)
        self._buffer.truncate()
        self._writer.writerows(csv_rows)
        return self._buffer.getvalue().encode(), _json_lines(json_rows)

    def write(self, rows: tuple[bytes, bytes]) -> None:
        self._csv_file.write(rows[0])
        self._jsonl_file.write(rows[1])


@dataclass(frozen=True)
class ExportFile:
    """An export as consecutive parts, bytes or files, written one after the other (ReleaseWriter.write_parts)."""

    parts: list[bytes | Path]
    gzip_parts: list[bytes | Path]  # each part as a part of a joined gzip twin (twins.py)

    @classmethod
    def of_rows(cls, heads: list[bytes], rows: list[Path]) -> "ExportFile":
        """Lines given as bytes, then rows files an ExportChunks wrote (each with its gzip part beside it)."""
        return cls([*heads, *rows], [*map(gzip_part, heads), *map(gzip_part_of, rows)])

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
