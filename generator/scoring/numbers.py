"""Rounding and the shared classifications of SCORING.md §1 and §4."""
from __future__ import annotations

import math
from decimal import ROUND_HALF_UP, Decimal

RISK_CLASSES = ("Very Low", "Low", "Medium", "High", "Very High")
DATA_QUALITY = ("Very Poor", "Poor", "Medium", "Good", "Very Good")
RATING_LETTERS = ("AAA", "AA+", "AA", "AA-", "A+", "A", "A-", "BBB+", "BBB", "BBB-", "BB+", "BB", "BB-",
                  "B+", "B", "B-", "CCC+", "CCC", "CCC-", "CC - C", "D")
_THOUSANDTH = Decimal("0.001")
_ONE = Decimal("1")


def round3(x: float) -> float:
    """Round half-up to 3 decimals on the shortest decimal form of x (SCORING.md §1: 2.0005 → 2.001)."""
    if not math.isfinite(x):
        # NGINX_NOTES.md: orjson would write NaN as null without complaint.
        raise ValueError(f"non-finite number {x!r} reached the output")
    text = repr(abs(x))
    whole, dot, fraction = text.partition(".")
    if "e" in text or not dot:
        return float(Decimal(repr(x)).quantize(_THOUSANDTH, rounding=ROUND_HALF_UP))
    if len(fraction) <= 3:
        return x
    # Work on the digits of the shortest form, as Decimal(repr(x)) would, but without Decimal's cost.
    thousandths = int(whole + fraction[:3]) + (fraction[3] >= "5")
    return math.copysign(thousandths / 1000, x)


def round_half_up(x: float) -> int:
    return int(Decimal(repr(x)).quantize(_ONE, rounding=ROUND_HALF_UP))


def classify_risk(risk_score: float) -> int:
    """Risk class 1–5 of a rounded risk score: [0,20) 1 … [80,100] 5."""
    return min(5, int(risk_score // 20) + 1)


def data_quality(share: float) -> int | None:
    """Data quality 1–5 of a rounded share; None below 0.30 (no result)."""
    for floor, quality in ((0.86, 5), (0.72, 4), (0.58, 3), (0.44, 2), (0.30, 1)):
        if share >= floor:
            return quality
    return None


def rating(risk_score: float) -> int:
    """Rating position 1 (AAA) … 21 (D) of a rounded risk score."""
    return min(21, max(1, round_half_up(risk_score * 21 / 100)))


def competition_ranks(scores: dict[str, float], higher_is_better: bool) -> dict[str, int]:
    """Rank = 1 + the number of strictly less risky countries; ties share a rank (1, 2, 2, 4)."""
    ordered = sorted(scores.values(), reverse=higher_is_better)
    first_position: dict[float, int] = {}
    for position, score in enumerate(ordered, start=1):
        first_position.setdefault(score, position)
    return {country: first_position[score] for country, score in scores.items()}
