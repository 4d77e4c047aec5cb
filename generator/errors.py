"""Every error of the package: one small hierarchy rooted in click.ClickException.

A RiskApiError is an expected failure: the CLI prints its message (a traceback only with -v) and
exits 1. CellError is the loader's signal for one unreadable cell; it never leaves load/.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import click


@dataclass(frozen=True)
class Problem:
    """One located problem in the source data: file, line, column, what is wrong, the fix."""

    file: str
    line: int | None
    column: str | None
    message: str
    hint: str | None = None

    def __str__(self) -> str:
        where = self.file if self.line is None else f"{self.file}:{self.line}"
        column = f" column {self.column}:" if self.column else ""
        hint = f" ({self.hint})" if self.hint else ""
        return f"{where}:{column} {self.message}{hint}"


class RiskApiError(click.ClickException):
    """A failure the CLI reports as one message and exit code 1."""

    exit_code = 1


class DataError(RiskApiError):
    """The source data has problems; every one of them is listed."""

    def __init__(self, problems: list[Problem], heading: str = "the data has problems", total: int | None = None,
                 notes: Sequence[str] = ()):
        self.problems = list(problems)
        lines = [f"{heading}: {total if total is not None else len(self.problems):,} found"]
        lines += [f"  {problem}" for problem in self.problems]
        lines += [f"  {note}" for note in notes]  # what was summarised or not checked because of the above
        super().__init__("\n".join(lines))


class ValidationFailed(RiskApiError):
    """Rendered documents do not match their JSON Schemas."""

    def __init__(self, failures: list[str]):
        self.failures = list(failures)
        lines = [f"{len(self.failures)} schema violation(s); nothing was published"]
        lines += [f"  {failure}" for failure in self.failures[:200]]
        if len(self.failures) > 200:
            lines.append(f"  … and {len(self.failures) - 200} more")
        super().__init__("\n".join(lines))


class PublishError(RiskApiError):
    """The release could not be written or switched."""


class ClockBehind(PublishError):
    """The clock reads earlier than the last switch by more than the tolerance: a switch dated from it would
    claim instants that never were."""


class CatalogueError(RiskApiError):
    """The release catalogue is missing, damaged or of another version: named, with how to repair it."""


class TooManyClassChanges(RiskApiError):
    """A data release would move more countries between risk classes than the operator allows."""


class ChangesRefused(RiskApiError):
    """A data release would lose many scores or move many classes, and nobody said that is meant."""


class ExplainError(RiskApiError):
    """The model, country or date is not in the current release."""


class ServeError(RiskApiError):
    """nginx is missing, its configuration is wrong, or it did not start."""


class KeysError(RiskApiError):
    """The keys file is malformed, or a keys command cannot do what was asked."""


class CellError(ValueError):
    """A cell that cannot be read; carries the message and the fix."""

    def __init__(self, message: str, hint: str | None = None):
        super().__init__(message)
        self.message = message
        self.hint = hint
