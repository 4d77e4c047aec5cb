"""Read one CSV file into rows of typed cells, collecting every problem with its location."""
from __future__ import annotations

import csv
import difflib
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator, Protocol

from ...contract.routes import COUNTRY_CODE, MODEL_CODE
from ...errors import CellError, Problem

_DECIMAL_COMMA = re.compile(r"-?[0-9]+,[0-9]+")
# ASCII digits only: Python's int() and float() also take `1_0` (as 10) and other scripts' digits.
_INTEGER = re.compile(r"-?[0-9]+")
_NUMBER = re.compile(r"[-+]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][-+]?[0-9]+)?|[-+]?(inf|infinity|nan)", re.I)
LARGEST_INTEGER = 2 ** 53 - 1  # JSON numbers are exact up to here (and orjson writes 64 bits at most)
_DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
_YEAR = re.compile(r"[0-9]{4}")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")  # a cell with one breaks the documents and the logs it reaches
FIRST_YEAR = 1900  # no indicator of this API has data before it; 0001 is a typo
# RFC 3986 characters only, with well-formed percent escapes (what the schemas' `uri` format accepts).
_URL = re.compile(r"https?://[A-Za-z0-9\-._~]+(:\d+)?([/?#]([A-Za-z0-9\-._~:/?#@!$&'()*+,;=]|%[0-9A-Fa-f]{2})*)?")
_CODE = COUNTRY_CODE
_CODE_ANY_CASE = re.compile(r"[A-Za-z]{3}")
_REFERENCE = re.compile(r"[A-Za-z0-9_.\-]{1,60}")


@dataclass(frozen=True)
class Column:
    name: str
    parse: Callable[[str], Any]
    required: bool = True  # the cell must not be blank
    in_header: bool = True  # False: the column may be left out of the file altogether


@dataclass(frozen=True)
class Row:
    line: int
    cells: dict[str, Any]

    def __getitem__(self, name: str) -> Any:
        return self.cells[name]


class ProblemSink(Protocol):
    """Where a table's problems go (load/problems.py): each problem, a file that could not be read at
    all, and the raw cells of a row that could not be read (what later checks must not trust)."""

    def append(self, problem: Problem) -> None: ...

    def unreadable(self, shown_as: str) -> None: ...

    def broken_row(self, shown_as: str, cells: dict[str, str]) -> None: ...


def read_table(path: Path, shown_as: str, columns: list[Column], problems: ProblemSink,
               root: Path | None = None) -> list[Row]:
    """Return the rows whose every cell parsed; append a Problem for every bad cell."""
    return list(iter_table(path, shown_as, columns, problems, root))


def iter_table(path: Path, shown_as: str, columns: list[Column], problems: ProblemSink,
               root: Path | None = None) -> Iterator[Row]:
    """Yield, one at a time, the rows whose every cell parsed; append a Problem for every bad cell.

    A file that is a link to somewhere outside `root` (the data folder) is refused unread: its first
    line would be quoted in a problem (a leak wherever builds run on contributed data)."""
    if not path.is_file():
        problems.append(Problem(shown_as, None, None, "file is missing"))
        problems.unreadable(shown_as)
        return
    if root is not None and not path.resolve().is_relative_to(root.resolve()):
        problems.append(Problem(shown_as, None, None, "is a link to a file outside the data folder; not read",
                                "copy the file into the data folder"))
        problems.unreadable(shown_as)
        return
    by_name = {column.name: column for column in columns}
    with path.open(newline="", encoding="utf-8-sig") as handle:
        reader = csv.reader(handle, strict=True)
        ended, header = 0, None  # where the last whole record ended; the header once read
        try:
            header = next(reader, None)
            if header is None:
                problems.append(Problem(shown_as, 1, None, "file is empty", f"expected the header {','.join(by_name)}"))
                problems.unreadable(shown_as)
                return
            header = [name.strip() for name in header]
            if not _header_ok(header, columns, shown_as, problems):
                problems.unreadable(shown_as)
                return
            # Parsed values are remembered per column: codes, references, dates and statuses repeat
            # on most of an observations file's rows.
            plan: list[tuple[str, Any, bool, dict]] = [(name, by_name[name].parse, by_name[name].required, {})
                                                       for name in header]
            empty = {column.name: None for column in columns}
            ended = reader.line_num  # where the previous record ended
            for record in reader:
                # A record's line is where it starts: a quoted cell may run over several lines.
                line, ended = ended + 1, reader.line_num
                if not any(cell.strip() for cell in record):
                    continue  # blank lines are a spreadsheet habit, not an error
                if len(record) != len(header):
                    problems.append(Problem(shown_as, line, None,
                                            f"has {len(record)} cells, the header has {len(header)}",
                                            "quote cells that contain commas"))
                    problems.broken_row(shown_as, dict(zip(header, (cell.strip() for cell in record))))
                    continue
                if _CONTROL.search("".join(record)):  # one search per row; the cell is found only then
                    _control_characters(record, header, shown_as, line, problems)
                    problems.broken_row(shown_as, dict(zip(header, (cell.strip() for cell in record))))
                    continue
                row = _parse_record(record, plan, empty, shown_as, line, problems)
                if row is not None:
                    yield row
                else:
                    problems.broken_row(shown_as, dict(zip(header, (cell.strip() for cell in record))))
        except csv.Error as error:
            oversized = _oversized_cell(path, ended + 1) if str(error).startswith("field larger") else None
            if oversized is not None:
                column, size = oversized
                name = header[column] if header and column < len(header) else f"number {column + 1}"
                problems.append(Problem(shown_as, ended + 1, name, f"a cell of {size:,} characters, more than the "
                                        f"{csv.field_size_limit():,} a cell may hold",
                                        "check the quotes: a quote left open runs the cell on over the lines after"))
            else:
                problems.append(Problem(shown_as, reader.line_num, None, f"malformed CSV: {error}",
                                        "check the quotes on this line"))
            problems.unreadable(shown_as)  # the rest of the file is lost with it
        except UnicodeDecodeError as error:
            problems.append(Problem(shown_as, None, None, f"is not UTF-8 text: {error.reason} at byte {error.start}",
                                    "save the file as CSV UTF-8"))
            problems.unreadable(shown_as)


def _oversized_cell(path: Path, line: int) -> tuple[int, int] | None:
    """Return the record that starts on `line` read again without the csv module's cell limit (only once that limit
    has stopped the file): which of its cells is over the limit, and how long it is."""
    limit = csv.field_size_limit()
    csv.field_size_limit((1 << 31) - 1)
    try:
        with path.open(newline="", encoding="utf-8-sig") as handle:
            reader = csv.reader(handle)
            ended = 0
            for record in reader:
                if ended + 1 == line:
                    return next(((i, len(cell)) for i, cell in enumerate(record) if len(cell) > limit), None)
                ended = reader.line_num
    except (csv.Error, UnicodeDecodeError):
        return None
    finally:
        csv.field_size_limit(limit)
    return None


def _header_ok(header: list[str], columns: list[Column], shown_as: str, problems: ProblemSink) -> bool:
    known = [column.name for column in columns]
    ok = True
    seen: set[str] = set()
    for name in header:
        if name in seen:
            problems.append(Problem(shown_as, 1, name, "column appears twice in the header"))
            ok = False
        seen.add(name)
        if name not in known:
            close = difflib.get_close_matches(name, known, n=1, cutoff=0.5)
            hint = f"did you mean {close[0]}?" if close else f"known columns: {', '.join(known)}"
            problems.append(Problem(shown_as, 1, name, "unknown column", hint))
            ok = False
    for column in columns:
        if column.in_header and column.name not in seen:
            problems.append(Problem(shown_as, 1, column.name, "column is missing from the header",
                                    f"the header is {','.join(c.name for c in columns if c.in_header)}"))
            ok = False
    return ok


def _control_characters(record: list[str], header: list[str], shown_as: str, line: int,
                        problems: ProblemSink) -> None:
    for name, cell in zip(header, record):
        if found := _CONTROL.search(cell):
            problems.append(Problem(shown_as, line, name, f"contains the control character U+{ord(found[0]):04X}",
                                    "remove line breaks, tabs and NUL bytes from cells"))


def _parse_record(record: list[str], plan: list[tuple[str, Any, bool, dict]], empty: dict[str, Any], shown_as: str,
                  line: int, problems: ProblemSink) -> Row | None:
    cells = dict(empty)
    ok = True
    for (name, parse, required, memory), raw in zip(plan, record):
        value = raw.strip()
        if not value:
            if required:
                problems.append(Problem(shown_as, line, name, "is empty", "this column needs a value"))
                ok = False
            continue
        if parse is text:
            cells[name] = value
            continue
        parsed = memory.get(value, _UNSEEN)
        if parsed is _UNSEEN:
            try:
                parsed = parse(value)
            except CellError as error:
                parsed = error
            memory[value] = parsed
        if isinstance(parsed, CellError):
            problems.append(Problem(shown_as, line, name, f"{value!r} {parsed.message}", parsed.hint))
            ok = False
        else:
            cells[name] = parsed
    return Row(line, cells) if ok else None


_UNSEEN = object()


# Cell parsers: each takes the stripped, non-empty text and returns a value or raises CellError.

def text(value: str) -> str:
    return value


def number(value: str) -> float:
    if _DECIMAL_COMMA.fullmatch(value):
        raise CellError("is not a number", "use '.' as decimal separator")
    if not _NUMBER.fullmatch(value):
        raise CellError("is not a number", "write a plain decimal number such as 12.5")
    parsed = float(value)
    if not math.isfinite(parsed):
        raise CellError("is not a finite number", "leave the observation out instead of writing NaN or infinity")
    return parsed


def integer(value: str) -> int:
    if not _INTEGER.fullmatch(value):
        raise CellError("is not a whole number", "write digits only, such as 3")
    if abs(int(value)) > LARGEST_INTEGER:
        raise CellError("is too large", f"write at most {LARGEST_INTEGER:,} (2^53 - 1)".replace(",", ""))
    return int(value)


def non_negative_integer(value: str) -> int:
    parsed = integer(value)
    if parsed < 0:
        raise CellError("is negative", "write 0 or more")
    return parsed


def weight(value: str) -> float:
    parsed = number(value)
    if not 0 <= parsed <= 1:
        raise CellError("is not between 0 and 1", "write weights as shares, 0.25 rather than 25")
    return parsed


def yes_no(value: str) -> bool:
    folded = value.casefold()
    if folded in ("yes", "true", "1"):
        return True
    if folded in ("no", "false", "0"):
        return False
    raise CellError("is not yes or no", "write yes or no")


def iso_date(value: str) -> str:
    if not _DATE.fullmatch(value) or not _real_date(value):
        raise CellError("is not a date", "write dates as YYYY-MM-DD, for example 2024-12-31")
    if int(value[:4]) < FIRST_YEAR:
        raise CellError(f"is before {FIRST_YEAR}", "check the year")
    return value


def year_or_date(value: str) -> str:
    """Return an observation date: YYYY-MM-DD, or a bare year YYYY meaning YYYY-12-31."""
    return iso_date(f"{value}-12-31" if _YEAR.fullmatch(value) else value)


def url(value: str) -> str:
    if not _URL.fullmatch(value):
        raise CellError("is not a URL", "write a full address starting with https://, with spaces and other "
                        "special characters percent-encoded")
    return value


def country_code(value: str) -> str:
    if not _CODE.fullmatch(value):
        if _CODE_ANY_CASE.fullmatch(value):
            raise CellError("is not an upper-case code", f"write {value.upper()}")
        raise CellError("is not an ISO 3166-1 alpha-3 code", "write three letters such as AUT")
    return value


def model_code(value: str) -> str:
    if not MODEL_CODE.fullmatch(value):
        raise CellError("is not a model code", "use lower-case letters, digits and _, starting with a letter")
    if value == "country":
        raise CellError("is reserved", "/riskscores/country/ is the country endpoint; choose another code")
    return value


def reference(value: str) -> str:
    if not _REFERENCE.fullmatch(value):
        raise CellError("is not a reference", "use letters, digits, '_', '.' and '-' only")
    return value


def choice(*allowed: str) -> Callable[[str], str]:
    def parse(value: str) -> str:
        if value not in allowed:
            raise CellError("is not allowed", f"write one of: {', '.join(allowed)}")
        return value
    return parse


def _real_date(value: str) -> bool:
    import datetime
    try:
        datetime.date.fromisoformat(value)
    except ValueError:
        return False
    return True
