"""The bulk exports: every result of a release as rows of CSV, JSON Lines and Parquet (parquet.py).

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
from typing import TYPE_CHECKING, Any, Callable, Iterator

import orjson

from ...contract import locations
from ...system.files import Part, WholeFile
from ..output.twins import GzipPartFile, gzip_part

if TYPE_CHECKING:
    import pyarrow as pa

    from . import parquet

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
    """Yield (level, reference, results) of an endpoint 4 document: the model, each section, each indicator."""
    yield "model", "", document["results"]
    for section in document.get("sections", []):
        yield "section", section["reference"], section.get("results", [])
    for indicator in document.get("indicators", []):
        yield "indicator", indicator["reference"], indicator.get("results", [])


def _raw(result: dict) -> tuple[Any, dict | None]:
    """Return an indicator result's raw value and its named components (None where there are none)."""
    data = result.get("data")
    if not data or data["value"] is None:
        return None, None
    return data["value"][0], dict(zip(data["name"][1:], data["value"][1:])) or None


def _components_cell(components: dict) -> str:
    return "; ".join(f"{name}={'' if value is None else value}" for name, value in components.items())


FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")  # what a spreadsheet reads as a formula (OWASP CSV injection)


def spreadsheet_safe(cell: Any) -> Any:
    """Return a text cell a spreadsheet would run as a formula (`=2+3`, `@SUM(…)`, `-A1`), with a leading `'`
    so it is shown as the text it is; anything else as it is. Only the CSV export: JSON keeps the value."""
    return "'" + cell if isinstance(cell, str) and cell.startswith(FORMULA_STARTS) else cell


_VALUE_COLUMNS = HEADER[4:-2]  # date … data_quality: the columns read off a result's fields


@dataclass(frozen=True)
class SharedResult:
    """A result without a value, shared by many documents (documents.py): its cells, and the text both
    text exports write of them after the row's model, country, level and reference."""

    result: dict  # held, so its id stays its own while this is kept
    cells: tuple
    csv_tail: str  # ",date,…\n"
    json_tail: bytes  # b',"date":…}'


SharedCells = dict[int, SharedResult]  # by id(result)


@dataclass
class DocumentRows:
    """One endpoint 4 document's rows: as tuples of the columns' values (what the Parquet export types),
    as JSON Lines rows (dicts, or a shared result's row as its text), the indexes of the rows the CSV
    export writes otherwise (_csv_rows), and the CSV lines of shared results' rows by index."""

    rows: list[tuple] = field(default_factory=list)
    json_rows: list = field(default_factory=list)
    to_csv: list[int] = field(default_factory=list)
    csv_lines: dict[int, str] = field(default_factory=dict)


def _csv_line(cells: tuple) -> str:
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\n").writerow(cells)
    return buffer.getvalue()


def _rows_of(document: dict, shared: SharedCells) -> DocumentRows:
    """Return one endpoint 4 document's rows for the three exports (the JSON Lines rows without what has no
    value, as the API's documents leave it out). One pass for all three: the rows are most of a build's
    rendering.

    A result without a score is one dict shared by many documents (documents.py): its cells and their
    text (seven in ten rows of the demo) are made once into `shared`, and each row of it is its level's
    text and that (csv's writer takes ten times longer a row)."""
    model, country = document["model"]["type"], document["entity"]["countryCode"]
    out = DocumentRows()
    rows, json_rows, to_csv = out.rows, out.json_rows, out.to_csv
    for level, reference, results in _levels(document):
        unsafe = reference.startswith(FORMULA_STARTS)
        head = (model, country, level, reference)  # every row of the level starts so
        base = dict(zip(HEADER, head))
        indicators = level == "indicator"  # only an indicator's results hold raw data
        heads: tuple[str, bytes] | None = None  # the level's text before a shared result's
        for result in results:
            known = shared.get(id(result))
            if known is not None:  # the very dict: `shared` holds it, so no other object has its id
                if heads is None:
                    heads = (_csv_line(head)[:-1], orjson.dumps(base)[:-1])
                if unsafe:
                    to_csv.append(len(rows))
                else:
                    out.csv_lines[len(rows)] = heads[0] + known.csv_tail
                rows.append(head + known.cells)
                json_rows.append(orjson.Fragment(heads[1] + known.json_tail))
                continue
            # tuples joined, and the JSON row's fields set in one loop: a list, a dict of the fields
            # and an update cost a sixth of the rows' time
            values = tuple(map(result.get, _FIELD_NAMES))
            row = base.copy()
            for name, value in zip(_VALUE_COLUMNS, values):
                if value is not None:
                    row[name] = value
            raw_value, components = _raw(result) if indicators else (None, None)
            if unsafe or components is not None or spreadsheet_safe(raw_value) is not raw_value:
                to_csv.append(len(rows))
            rows.append(head + values + (raw_value, components))
            if raw_value is None and components is None:
                if result.get("score") is None:
                    cells = (*values, None, None)
                    fields = {name: value for name, value in row.items() if name not in base}
                    tail = b"," + orjson.dumps(fields)[1:] if fields else b"}"
                    shared[id(result)] = SharedResult(result, cells, "," + _csv_line(cells), tail)
            else:
                if raw_value is not None:
                    row["raw_value"] = raw_value
                if components is not None:
                    row["raw_components"] = components
            json_rows.append(row)
    return out


def _csv_rows(rows: list[tuple], to_csv: list[int]) -> list[tuple]:
    """Return the rows as the CSV export writes them: the free-text cells (reference, raw value, components)
    spreadsheet-safe, the components as `name=value; …`; numbers, codes and categories are never
    formulas. Only the rows `to_csv` names differ from the values."""
    if not to_csv:
        return rows
    written = rows.copy()
    for i in to_csv:
        row = rows[i]
        components = row[-1]
        written[i] = (*row[:3], spreadsheet_safe(row[3]), *row[4:-2], spreadsheet_safe(row[-2]),
                      None if components is None else spreadsheet_safe(_components_cell(components)))
    return written


_ROW_START = b'{"model":'  # every row's first key


def _json_lines(rows: list[dict]) -> bytes:
    """Return rows as JSON Lines, serialised in one call: the list's `},{"model":` are the rows' boundaries
    (inside a string a quote is escaped, and no row holds a list of objects), each made a line break."""
    if not rows:
        return b""
    listed = orjson.dumps(rows)
    return listed[1:-1].replace(b"}," + _ROW_START, b"}\n" + _ROW_START) + b"\n"


def gzip_part_of(rows: Path) -> Path:
    """Return where a rows file's bytes, compressed as a part of a joined gzip twin, are written beside it."""
    return rows.with_name(rows.name + ".deflate")


@dataclass
class ExportChunks:
    """Each model's rows, rendered once as CSV, as JSON Lines and as Parquet into files of `folder` (a
    release at 10× the demo has exports of hundreds of MB: none is held). A text rows file is the model's
    export as it is, moved into the release by the writer; the public export is copied from those. The
    text ones are compressed once as they are written: the parts of the gzip twins of its export and the
    public one. The Parquet files name `release` in their metadata."""

    folder: Path
    release: str = ""
    # an earlier release's copy of a file by its path in a release, where its bytes are as published (None:
    # none): the Parquet exports carry over the row groups whose rows did not change
    earlier: Callable[[str], Path | None] = lambda _: None
    # the release's folder, where each model's text exports are moved once written (the public ones
    # are joined from there)
    into: Path | None = None
    csv: dict[str, Path] = field(default_factory=dict)
    jsonl: dict[str, Path] = field(default_factory=dict)
    parquet: dict[str, Path] = field(default_factory=dict)
    custom: set[str] = field(default_factory=set)
    # by model, its text rows files as written (each the model's export), until render_model hands them on
    _whole: dict[str, dict[str, WholeFile]] = field(default_factory=dict, init=False, repr=False)

    def __post_init__(self) -> None:
        # pyarrow (~100 MB of address space) is loaded by a build alone, in its process before the
        # workers fork; a command that builds nothing never pays for it
        from . import parquet
        self._parquet = parquet

    @contextmanager
    def model(self, code: str, custom: bool) -> Iterator["ModelRows"]:
        """Yield a model's rows files, open while its documents are rendered (no model's documents are held
        for the exports)."""
        self.register(code, custom)
        csv_rows, jsonl_rows = self.csv[code], self.jsonl[code]
        typed = self._parquet.ParquetRows(self.parquet[code], self.parquet_schema(code),
                                          self.earlier(locations.export("parquet", code).file))
        try:
            with GzipPartFile(csv_rows, gzip_part_of(csv_rows), _HEADER_LINE) as csv_file, \
                    GzipPartFile(jsonl_rows, gzip_part_of(jsonl_rows)) as jsonl_file:
                yield ModelRows(csv_file, jsonl_file, typed)
        except BaseException:
            typed.discard()
            raise
        typed.close()
        self._whole[code] = {"csv": csv_file.whole, "jsonl": jsonl_file.whole}

    def register(self, code: str, custom: bool) -> None:
        """Know a model's rows files (written here, or by a build's worker process: the same names)."""
        self.csv[code], self.jsonl[code] = self.folder / f"{code}.csv", self.folder / f"{code}.jsonl"
        self.parquet[code] = self.folder / f"{code}.parquet"
        if custom:
            self.custom.add(code)

    def parquet_schema(self, code: str | None = None) -> "pa.Schema":
        return self._parquet.schema(COLUMNS, self.release, self._parquet.rows_of(code))

    def render_model(self, code: str) -> Iterator[tuple[locations.Route, "ExportFile"]]:
        """Yield the exports of one model alone, once its rows are written."""
        whole = self._whole.pop(code)  # each rows file is the whole export (the CSV's begins with its header)
        yield locations.export("csv", code), ExportFile(
            [self.csv[code]], [gzip_part(_HEADER_LINE), gzip_part_of(self.csv[code])], whole["csv"])
        yield locations.export("jsonl", code), ExportFile([self.jsonl[code]], [gzip_part_of(self.jsonl[code])],
                                                          whole["jsonl"])
        yield locations.export("parquet", code), ExportFile([self.parquet[code]], None)

    def render_public(self) -> Iterator[tuple[locations.Route, "ExportFile"]]:
        """Yield the exports of the public models (the same file for every key), as the models' files in order
        (the writer copies the text ones one after the other; the Parquet one joins their row groups' bytes
        under a new footer): every model's rows are written twice at most (here and in its own exports), whatever the
        number of audiences."""
        public = [code for code in sorted(self.csv) if code not in self.custom]
        assert self.into is not None, "the public exports are joined from the models' in the release"
        csv_rows = [(self.into / locations.export("csv", c).file, len(_HEADER_LINE)) for c in public]
        yield locations.export("csv"), ExportFile([_HEADER_LINE, *csv_rows], [
            gzip_part(_HEADER_LINE), *(gzip_part_of(self.csv[c]) for c in public)])
        jsonl_rows: list[Part] = [self.into / locations.export("jsonl", c).file for c in public]
        yield locations.export("jsonl"), ExportFile(jsonl_rows, [gzip_part_of(self.jsonl[c]) for c in public])
        joined = self.folder / "public.parquet"
        self._parquet.join(joined, [self.parquet[c] for c in public], self.parquet_schema())
        yield locations.export("parquet"), ExportFile([joined], None)


_HEADER_LINE = (",".join(HEADER) + "\n").encode()


class ModelRows:
    """One model's export rows as they are written: `render(document)` gives an endpoint 4 document's
    rows as CSV, as JSON Lines and as values, `write(rows)` appends them to the model's files (and
    compresses the text ones into their gzip parts; the values go to its Parquet file), a document at a
    time."""

    def __init__(self, csv_file: GzipPartFile, jsonl_file: GzipPartFile, typed: "parquet.ParquetRows"):
        self._csv_file, self._jsonl_file, self._typed = csv_file, jsonl_file, typed
        self._buffer = io.StringIO()
        self._writer = csv.writer(self._buffer, lineterminator="\n")
        self._shared: SharedCells = {}  # for this model's documents only: held while they are rendered

    def render(self, document: dict) -> tuple[bytes, bytes, list[tuple]]:
        made = _rows_of(document, self._shared)
        # csv writes None as an empty cell and numbers as Python writes them (as the JSON does).
        # One write per run of rows between shared results' lines: a call per row cost a fifth of the
        # build's render.
        self._buffer.seek(0)
        self._buffer.truncate()
        written, start = _csv_rows(made.rows, made.to_csv), 0
        for index, line in made.csv_lines.items():  # in the rows' order
            if index > start:
                self._writer.writerows(written[start:index])
            self._buffer.write(line)
            start = index + 1
        self._writer.writerows(written[start:])
        return self._buffer.getvalue().encode(), _json_lines(made.json_rows), made.rows

    def write(self, rows: tuple[bytes, bytes, list[tuple]]) -> None:
        self._csv_file.write(rows[0])
        self._jsonl_file.write(rows[1])
        self._typed.add(rows[2], rows[1])


@dataclass(frozen=True)
class ExportFile:
    """An export as consecutive parts, bytes or files, written one after the other (ReleaseWriter.write_parts)."""

    parts: list[Part]
    gzip_parts: list[Part] | None  # each part as a part of a joined gzip twin (twins.py); None: no twin
    whole: WholeFile | None = None  # the one file of `parts`, which holds the whole export: moved, not copied

    def head(self, size: int) -> bytes:
        """Return its first `size` bytes (an example for the reference)."""
        head = b""
        for part in self.parts:
            if len(head) >= size:
                break
            if isinstance(part, bytes):
                head += part[:size - len(head)]
                continue
            path, offset = part if isinstance(part, tuple) else (part, 0)
            with open(path, "rb") as source:
                source.seek(offset)
                head += source.read(size - len(head))
        return head
