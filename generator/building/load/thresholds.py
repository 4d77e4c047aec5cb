"""Parse threshold expressions and check that a points table covers every value once (docs/data.md §2)."""
from __future__ import annotations

import math
import re
from typing import Iterable

from ...errors import CellError
from .records import ThresholdRow

_NUMBER = r"(-?[0-9]+(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?)"  # ASCII digits: float() takes others too
_BELOW = re.compile(rf"x\s*<\s*{_NUMBER}")
_BETWEEN = re.compile(rf"{_NUMBER}\s*<=\s*x\s*<\s*{_NUMBER}")
_AT_LEAST = re.compile(rf"x\s*>=\s*{_NUMBER}")
_LABEL = re.compile(r'x\s*==\s*"([^"]+)"')
_BOOLEAN = re.compile(r"x\s*==\s*(true|false)")

GRAMMAR = 'x < B, A <= x < B, x >= A, x == "label" or x == true/false'


def parse_threshold(text: str, risk_points: int) -> ThresholdRow:
    """Return the row for one threshold expression, or raise CellError."""
    if m := _BELOW.fullmatch(text):
        return ThresholdRow(text, risk_points, upper=float(m[1]))
    if m := _BETWEEN.fullmatch(text):
        lower, upper = float(m[1]), float(m[2])
        if lower >= upper:
            raise CellError("is an empty range", "the left bound must be below the right one")
        return ThresholdRow(text, risk_points, lower=lower, upper=upper)
    if m := _AT_LEAST.fullmatch(text):
        return ThresholdRow(text, risk_points, lower=float(m[1]))
    if m := _LABEL.fullmatch(text):
        return ThresholdRow(text, risk_points, label=m[1])
    if m := _BOOLEAN.fullmatch(text):
        return ThresholdRow(text, risk_points, label=m[1] == "true")
    raise CellError("is not a threshold", f"write {GRAMMAR}")


def value_kind(rows: list[ThresholdRow]) -> str | None:
    """Return the kind of raw value a table scores ("number", "label", "boolean"), None if mixed."""
    kinds = {"number" if row.is_numeric else "boolean" if isinstance(row.label, bool) else "label" for row in rows}
    return kinds.pop() if len(kinds) == 1 else None


def lower_bound(row: ThresholdRow) -> float:
    """Return where a numeric row starts (-inf for `x < B`)."""
    return -math.inf if row.lower is None else row.lower


def by_lower_bound(rows: Iterable[ThresholdRow]) -> list[ThresholdRow]:
    return sorted(rows, key=lower_bound)


def coverage_gaps(rows: list[ThresholdRow]) -> list[str]:
    """Describe every gap or overlap of a table; an empty list means every value matches exactly one row."""
    kind = value_kind(rows)
    if kind is None:
        return ["mixes numeric, categorical and boolean thresholds"]
    if kind != "number":
        labels = [row.label for row in rows]
        repeated = sorted({str(label) for label in labels if labels.count(label) > 1})
        problems = [f"lists {label!r} more than once" for label in repeated]
        if kind == "boolean" and set(labels) != {True, False}:
            problems.append("must have one row for x == true and one for x == false")
        return problems
    ordered = by_lower_bound(rows)
    problems = []
    if ordered[0].lower is not None:
        problems.append(f"has no row for values below {_fmt(ordered[0].lower)} (add 'x < {_fmt(ordered[0].lower)}')")
    for before, after in zip(ordered, ordered[1:]):
        end, start = before.upper, after.lower
        if end is None or (start is not None and start < end):
            problems.append(f"has overlapping rows '{before.threshold}' and '{after.threshold}'")
        elif start is None:
            problems.append(f"has overlapping rows '{before.threshold}' and '{after.threshold}'")
        elif start > end:
            problems.append(f"has a gap between {_fmt(end)} and {_fmt(start)}")
    if ordered[-1].upper is not None:
        problems.append(f"has no row for values of {_fmt(ordered[-1].upper)} and above "
                        f"(add 'x >= {_fmt(ordered[-1].upper)}')")
    return problems


def _fmt(x: float) -> str:
    return f"{x:g}"
