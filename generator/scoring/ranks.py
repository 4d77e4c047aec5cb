"""Ranks per model, level and date (SCORING.md §4): rank = 1 + the number of strictly less risky scores."""
from __future__ import annotations

from array import array
from collections import defaultdict

from .results import INDICATOR, MODEL, SECTION, CountryScores, Ranking, RankKey, takes_rank

__all__ = ["rank_all", "MODEL", "SECTION", "INDICATOR"]


def rank_all(countries: dict[str, CountryScores], higher_is_better: bool) -> dict[RankKey, Ranking]:
    """A ranking per level and date over the countries with a score there that takes a rank."""
    scores: dict[RankKey, list[float]] = defaultdict(list)
    for scored in countries.values():
        for result in scored.results:
            if takes_rank(MODEL, result):
                scores[(MODEL, "", result.year)].append(result.score)
        for reference, results in scored.sections.items():
            for result in results:
                if takes_rank(SECTION, result):
                    scores[(SECTION, reference, result.year)].append(result.score)
        for reference, results in scored.indicators.items():
            for result in results:
                if result.score is not None:
                    scores[(INDICATOR, reference, result.year)].append(result.score)
    return {key: Ranking(array("d", sorted(level)), higher_is_better) for key, level in scores.items()}
