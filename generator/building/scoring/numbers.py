"""Rounding and the shared classifications of docs/data.md §1 and §4."""
from __future__ import annotations

import math
from decimal import ROUND_HALF_UP, Decimal
from functools import lru_cache

RISK_CLASSES = ("Very Low", "Low", "Medium", "High", "Very High")
DATA_QUALITY = ("Very Poor", "Poor", "Medium", "Good", "Very Good")
RATING_LETTERS = ("AAA", "AA+", "AA", "AA-", "A+", "A", "A-", "BBB+", "BBB", "BBB-", "BB+", "BB", "BB-",
                  "B+", "B", "B-", "CCC+", "CCC", "CCC-", "CC - C", "D")
_THOUSANDTH = Decimal("0.001")
_ONE = Decimal("1")


def round3(x: float) -> float:
    """Round half-up to 3 decimals on the shortest decimal form of x (docs/data.md §1: 2.0005 → 2.001)."""
    if not math.isfinite(x):
        # orjson would write NaN as null without complaint (docs/data.md §1).
        raise ValueError(f"non-finite number {x!r} reached the output")
    # Plain float arithmetic is exact enough except within a hair of a decimal tie (…5 in the
    # 4th place), where the binary value may sit on either side: those few go through Decimal.
    scaled = x * 10000
    nearest = round(scaled)
    if nearest % 10 == 5 and abs(scaled - nearest) < 1e-6 * max(1.0, abs(scaled)):
        return float(Decimal(repr(x)).quantize(_THOUSANDTH, rounding=ROUND_HALF_UP))
    return math.floor(x * 1000 + 0.5) / 1000


def round_half_up(x: float) -> int:
    return int(Decimal(repr(x)).quantize(_ONE, rounding=ROUND_HALF_UP))


def classify_risk(risk_score: float) -> int:
    """Return the risk class 1–5 of a rounded risk score: [0,20) 1 … [80,100] 5."""
    return min(5, int(risk_score // 20) + 1)


def as_risk(score: float, higher_is_better: bool) -> float:
    """Return the score read as risk: sdg's higher-is-better score turns into 100 − score (docs/data.md §4)."""
    return round3(100 - score) if higher_is_better else score


# Scores repeat a great deal (indicator scores are a few points values): classify each once.
@lru_cache(maxsize=65536)
def risk_class(score: float, higher_is_better: bool) -> int:
    """Return the risk class 1–5 of a rounded score of a model of either direction."""
    return classify_risk(as_risk(score, higher_is_better))


@lru_cache(maxsize=4096)
def data_quality(share: float) -> int | None:
    """Return the data quality 1–5 of a rounded share; None below 0.30 (no result)."""
    for floor, quality in ((0.86, 5), (0.72, 4), (0.58, 3), (0.44, 2), (0.30, 1)):
        if share >= floor:
            return quality
    return None


def result_quality(share: float) -> int:
    """Return the data quality of the share of a result: every caller has checked the share gives one (≥ 0.30)."""
    quality = data_quality(share)
    if quality is None:
        raise ValueError(f"a share of {share} gives no result")
    return quality


def rating(risk_score: float) -> int:
    """Return the rating position 1 (AAA) … 21 (D) of a rounded risk score."""
    return min(21, max(1, round_half_up(risk_score * 21 / 100)))


def model_rating(score: float, higher_is_better: bool) -> int:
    """Return the rating position of a rounded model score of either direction."""
    return rating(as_risk(score, higher_is_better))
