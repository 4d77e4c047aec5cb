"""Ranks per model, level and date (docs/data.md §4): rank = 1 + the number of strictly less risky scores."""
from __future__ import annotations

from array import array
from collections import defaultdict

from .results import INDICATOR, MODEL, SECTION, CountryScores, Ranking, RankKey, takes_rank

__all__ = ["rank_all", "MODEL", "SECTION", "INDICATOR"]


def rank_all(countries: dict[str, CountryScores], higher_is_better: bool) -> dict[RankKey, Ranking]:
    """Return a ranking per level and date over the countries with a score there that takes a rank."""
    scores: dict[RankKey, list[float]] = defaultdict(list)
    for scored in countries.values():
        for model in scored.results:
            if takes_rank(MODEL, model):
                scores[(MODEL, "", model.year)].append(model.score)
        for reference, sections in scored.sections.items():
            for section in sections:
                if takes_rank(SECTION, section):
                    scores[(SECTION, reference, section.year)].append(section.score)
        for reference, indicators in scored.indicators.items():
            for indicator in indicators:
                if indicator.score is not None:
                    scores[(INDICATOR, reference, indicator.year)].append(indicator.score)
    return {key: Ranking(array("d", sorted(level)), higher_is_better) for key, level in scores.items()}
