"""The problem log one load fills: every located problem and warning, reported together at the end."""
from __future__ import annotations

from pathlib import Path

from ..errors import Problem
from .table import Row


class ProblemLog:
    """Problems (the build stops) and warnings (it goes on; --strict stops) of one data folder."""

    def __init__(self, data_dir: Path):
        self.dir = data_dir
        self.problems: list[Problem] = []
        self.warnings: list[Problem] = []

    def shown(self, name: str) -> str:
        """How a file of the folder is named in messages."""
        return str(self.dir / name)

    def problem(self, name: str, row: Row | None, column: str | None, message: str, hint: str | None = None,
                line: int | None = None) -> None:
        self.problems.append(Problem(self.shown(name), row.line if row else line, column, message, hint))

    def warn(self, name: str, row: Row | None, column: str | None, message: str, hint: str | None = None,
             line: int | None = None) -> None:
        self.warnings.append(Problem(self.shown(name), row.line if row else line, column, message, hint))
