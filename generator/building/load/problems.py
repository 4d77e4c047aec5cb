"""The problem log one load fills: every located problem and warning, reported together at the end.

Structural problems must not flood (a missing column, a broken row, millions of repeats): the log
keeps the first few problems of each kind and counts the rest; it knows which files could not be
read at all and which catalogue rows could not be read, so that the checks depending on them are
skipped and said to be skipped once, instead of failing row by row.
"""
from __future__ import annotations

from collections import Counter, defaultdict
from pathlib import Path

from ...errors import DataError, Problem
from .source_files import BOUNDS, COUNTRIES, INDICATORS, MODELS, SCORING, SECTIONS
from .table import Row

SHOWN_PER_KIND = 5  # problems of one kind (file, column, fix) listed before the rest are counted
# Catalogue files whose unreadable rows later checks consult (observation files are only counted:
# they may hold millions of rows).
REMEMBERED_ROWS = (COUNTRIES, MODELS, SECTIONS, INDICATORS, SCORING, BOUNDS)


class ProblemLog:
    """Problems (the build stops) and warnings (it goes on; --strict stops) of one data folder."""

    def __init__(self, data_dir: Path):
        self.dir = data_dir
        self.problems: list[Problem] = []  # the ones shown
        self.warnings: list[Problem] = []
        self.total = 0
        self._kinds: Counter = Counter()
        self._unreadable: set[str] = set()  # shown names of files nothing could be read of
        self._broken_rows: dict[str, list[dict[str, str]]] = defaultdict(list)  # shown name -> raw cells
        self._remembered = {self.shown(name) for name in REMEMBERED_ROWS}
        self._not_checked: Counter = Counter()  # (file, the file it depends on) -> rows not checked
        self.notes: list[str] = []

    def shown(self, name: str) -> str:
        """Return how a file of the folder is named in messages."""
        return str(self.dir / name)

    # ---------------------------------------------------------------- the table reader's sink

    def append(self, problem: Problem) -> None:
        self.total += 1
        kind = (problem.file, problem.column, problem.hint) if problem.line is not None else None
        if kind is not None:
            self._kinds[kind] += 1
            if self._kinds[kind] > SHOWN_PER_KIND:
                return
        self.problems.append(problem)

    def unreadable(self, shown_as: str) -> None:
        self._unreadable.add(shown_as)

    def broken_row(self, shown_as: str, cells: dict[str, str]) -> None:
        if shown_as in self._remembered:
            self._broken_rows[shown_as].append(cells)

    # ---------------------------------------------------------------- for the checks that follow

    def problem(self, name: str, row: Row | None, column: str | None, message: str, hint: str | None = None,
                line: int | None = None) -> None:
        self.append(Problem(self.shown(name), row.line if row else line, column, message, hint))

    def warn(self, name: str, row: Row | None, column: str | None, message: str, hint: str | None = None,
             line: int | None = None) -> None:
        self.warnings.append(Problem(self.shown(name), row.line if row else line, column, message, hint))

    def is_unreadable(self, name: str) -> bool:
        return self.shown(name) in self._unreadable

    def had_broken_row(self, name: str, **cells: str) -> bool:
        """Return whether a row of `name` that could not be read had these (raw) cells, e.g. model=…, reference=…."""
        return any(all(raw.get(k) == v for k, v in cells.items()) for raw in self._broken_rows[self.shown(name)])

    def not_checked(self, name: str, because_of: str, rows: int = 1) -> None:
        """Count rows of `name` whose check against `because_of` is skipped (its problem is above)."""
        self._not_checked[(name, because_of)] += rows

    def note(self, text: str) -> None:
        self.notes.append(text)

    def raise_if_any(self) -> None:
        if not self.total:
            return
        notes = [f"… and {count - SHOWN_PER_KIND:,} more like the last of {file}"
                 + (f" column {column}" if column else "")
                 for (file, column, _), count in self._kinds.items() if count > SHOWN_PER_KIND]
        notes += [f"{self.shown(name)}: {count:,} row{'s' if count != 1 else ''} not checked against {because}, "
                  "which has problems above"
                  for (name, because), count in self._not_checked.items()]
        raise DataError(self.problems, heading=f"{self.dir} has problems", total=self.total,
                        notes=notes + self.notes)
