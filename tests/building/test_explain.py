"""`riskapi explain`: its numbers add up to the published score."""
import pytest
from click.testing import CliRunner

from generator.building.explain import explain, format_explanation
from generator.cli import main
from generator.errors import ExplainError


def test_explanation_of_the_hand_worked_case(tiny_site):
    # tests/building/test_scoring.py: AUT 2024 economy 25/150 = 16.667 (weight 60), institutions 0 (weight 40) → 10.0
    result = CliRunner().invoke(main, ["explain", "sovereign", "aut", "--site", str(tiny_site)])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[:4] == [
        "sovereign / AUT (Austria), 2024-12-31",
        "  score 10.0 (current) → class 1 Very Low, rating 2 AA+",
        "  share of indicators 1.0 → data quality 5 Very Good; rank 1 of 2",
        "  score = Σ section weight × section score / 100 = 60.0 × 16.667 / 100 + 40.0 × 0.0 / 100 = 10.0",
    ]
    assert "    inflation: 4.0 matches '3 <= x < 10' → 25 of 50 points, score 50.0, weight 33.333" in lines
    assert "    imf_programme: missing (no value within its max lag, or it does not apply)" in lines


CASES = [(m, c) for m in ("sovereign", "sdg", "acme_aml") for c in ("AUT", "CIV", "NGA") if (m, c) != ("sdg", "NGA")]


@pytest.mark.parametrize("model, code", CASES)
def test_numbers_add_up_to_the_published_score(tiny_site, model, code):
    for date in explain(tiny_site, model, code).dates:  # every year: history, current, projection
        e = explain(tiny_site, model, code, date)
        with_result = [s for s in e.sections if s.score is not None]
        if e.result is not None:
            # the score line ends in the published score (or names it, for sdg's unrounded goals)
            line = next(x for x in format_explanation(e).splitlines() if x.startswith("  score = "))
            assert line.endswith(f" = {e.result['score']}") or line.endswith(
                f"; {e.result['score']} from the goals' unrounded scores")
            total = sum(s.weight * s.score for s in with_result) / 100
            # inputs are rounded to 3 decimals: the sum may differ by that rounding, no more
            assert abs(total - e.result["score"]) <= 0.001 * len(with_result)
            assert abs(sum(s.weight for s in with_result) - 100) <= 0.001 * len(with_result)
        for section in with_result:
            scored = [i for i in section.indicators if i.score is not None]
            if section.points is not None:
                assert section.points == sum(i.points for i in scored)
                assert section.points_max == sum(i.points_max for i in scored)
                assert section.score == round(100 * section.points / section.points_max, 3)
            for indicator in scored:
                if indicator.points is not None:
                    assert indicator.score == round(100 * indicator.points / indicator.points_max, 3)
                    assert indicator.rule is not None


def test_unknown_country_or_date_is_an_error(tiny_site):
    with pytest.raises(ExplainError, match="no model 'sovereign' for country 'XXX'"):
        explain(tiny_site, "sovereign", "XXX")
    with pytest.raises(ExplainError, match="dates: 2023-12-31, 2024-12-31, 2025-12-31"):
        explain(tiny_site, "sovereign", "AUT", "2019-12-31")
    with pytest.raises(ExplainError, match="dates: none"):
        explain(tiny_site, "sdg", "NGA")  # NGA has no sdg data at all
    assert CliRunner().invoke(main, ["explain", "nomodel", "AUT", "--site", str(tiny_site)]).exit_code == 1
