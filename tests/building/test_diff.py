"""Release diff: a changed observation shows up exactly where expected; the class-change guard."""
import pytest
from click.testing import CliRunner

from generator.cli import main
from generator.errors import TooManyClassChanges
from generator.history.site import CHANGES, CURRENT, current_release, releases
from generator.publish.build_release import build

from ..conftest import make_nga_black


def test_identical_data_changes_nothing(tmp_path):
    from ..conftest import TINY
    build(TINY, tmp_path)
    report = build(TINY, tmp_path)
    assert report.changes.headline() == "0 documents changed, 0 added, 0 removed; 0 countries changed risk class"


def ordered(folder: str) -> list[str]:
    """Return a list's documents in a folder: its 4 orderings, in the order of their paths."""
    return [folder + "index.json", *(f"{folder}ordering={o}/index.json"
                                     for o in ("-country_code", "-country_name", "country_name"))]


def test_a_changed_observation_shows_up_exactly_where_expected(tmp_path, data_copy):
    build(data_copy, tmp_path)
    make_nga_black(data_copy)
    report = build(data_copy, tmp_path)
    changes = report.changes
    # NGA's acme_aml score: grey 50 → black 100 (100 of 100 points); class Medium → Very High; ranks
    # were AUT 1, CIV 2, NGA 2 (tie at 50) and become AUT 1, CIV 2, NGA 3, so only NGA's rank moves.
    # acme_aml's own exports hold NGA's rows; the public models' exports hold none of acme_aml's. Its lists
    # change in every ordering: all countries, and the selections NGA is in (Sub-Saharan Africa, Lower middle
    # income, and both).
    assert changes.changed == (
        "api/v1/exports/acme_aml/scores.csv",
        "api/v1/exports/acme_aml/scores.jsonl",
        "api/v1/riskscores/acme_aml/NGA/index.json",
        "api/v1/riskscores/acme_aml/filter=NGA/index.json",
        *ordered("api/v1/riskscores/acme_aml/income=Lower%20middle%20income/"),
        *ordered("api/v1/riskscores/acme_aml/"),
        *ordered("api/v1/riskscores/acme_aml/region=Sub-Saharan%20Africa/income=Lower%20middle%20income/"),
        *ordered("api/v1/riskscores/acme_aml/region=Sub-Saharan%20Africa/"),
        "api/v1/riskscores/country/NGA/audience=acme_aml/index.json",
    )
    assert (changes.added, changes.removed) == ((), ())
    acme = next(m for m in changes.models if m.model == "acme_aml")
    assert [(c.code, c.old["riskClassificationCategorical"], c.new["riskClassificationCategorical"])
            for c in acme.class_changes] == [("NGA", "Medium", "Very High")]
    assert [(c.code, c.old["countryRank"], c.new["countryRank"]) for c in acme.rank_changes] == [("NGA", 2, 3)]
    assert [(c.code, c.score_move) for c in acme.largest_moves] == [("NGA", 50.0)]
    assert all(not m.class_changes for m in changes.models if m.model != "acme_aml")
    assert "    NGA: Medium → Very High" in (tmp_path / CURRENT / CHANGES).read_text()


def test_diff_command_defaults_to_current_against_the_one_before(tmp_path, data_copy):
    build(data_copy, tmp_path)
    make_nga_black(data_copy)
    build(data_copy, tmp_path)
    old, new = releases(tmp_path)
    result = CliRunner().invoke(main, ["diff", "--site", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert result.output.splitlines()[:3] == [
        f"{old} → {new}: 21 documents changed, 0 added, 0 removed; 1 country changed risk class",
        "  acme_aml: 1 class, 0 rating and 1 rank changes",
        "    NGA: Medium → Very High",
    ]
    back = CliRunner().invoke(main, ["diff", new, old, "--site", str(tmp_path)])
    assert "    NGA: Very High → Medium" in back.output
    assert CliRunner().invoke(main, ["diff", "nope", "--site", str(tmp_path)]).exit_code == 1


def test_max_class_changes_refuses_to_publish(tmp_path, data_copy):
    build(data_copy, tmp_path)
    before = current_release(tmp_path)
    make_nga_black(data_copy)
    with pytest.raises(TooManyClassChanges, match="1 countries would change risk class"):
        build(data_copy, tmp_path, max_class_changes=0)
    assert current_release(tmp_path) == before and releases(tmp_path) == [before]
    result = CliRunner().invoke(main, ["build", "--data", str(data_copy), "--site", str(tmp_path),
                                       "--max-class-changes", "0"])
    assert result.exit_code == 1 and "NGA: Medium → Very High" in result.output
    assert build(data_copy, tmp_path, max_class_changes=1).release != before


def test_the_changes_page_shows_public_models_only(tmp_path, data_copy):
    from ..conftest import replace_in
    build(data_copy, tmp_path)
    make_nga_black(data_copy)  # a custom model's change: never on the public page
    # sovereign CIV 2024: inflation 8 (25 of 50 points) → 12 (50 of 50); economy (50 + 50) / 150 = 66.667;
    # score 0.6 × 66.667 + 0.4 × 50 (institutions) = 60, was 50: class Medium → High
    replace_in(data_copy / "observations" / "sovereign.csv", "inflation,CIV,2024,8,", "inflation,CIV,2024,12,")
    build(data_copy, tmp_path)
    old, new = releases(tmp_path)
    page = (tmp_path / CURRENT / "docs" / "changes" / "index.html").read_text()
    assert f"Release <code>{new}</code> against <code>{old}</code>" in page
    # documents: acme_aml's 21 (above) + sovereign's CIV document, NGA's (its rank moves), CIV's filter, the
    # list in 4 orderings, the 3 selections CIV is in (as NGA) in 4 orderings, CIV's country document for
    # both audiences, sovereign's 2 exports and the public models' 2 = 21 + 2 + 1 + 4 + 12 + 2 + 2 + 2 = 46;
    # class changes: public models only
    assert "46 documents changed, 0 added, 0 removed; 1 country changed risk class" in page
    assert '<tr><td>CIV</td><td>Medium</td><td>High</td></tr>' in page
    assert '<tr><td>CIV</td><td>50.0</td><td>60.0</td><td>+10</td></tr>' in page
    assert "acme_aml" not in page and "NGA" not in page


def test_diff_compares_what_the_change_document_compares_after_a_rollback(tmp_path, data_copy):
    # stage → promote → rollback → build: the new release was built against the release live before it (A),
    # not against the one rolled back from (S), and a plain `riskapi diff` says the same as its change document
    import orjson

    from generator.contract.locations import release_changes
    from generator.history.site import RELEASES, rollback
    from generator.publish.promote import promote
    a = build(data_copy, tmp_path).release
    make_nga_black(data_copy)
    s = build(data_copy, tmp_path, stage=True).release
    promote(tmp_path, s)
    assert rollback(tmp_path) == a
    b = build(data_copy, tmp_path).release
    assert releases(tmp_path) == [a, s, b]
    changes = orjson.loads((tmp_path / RELEASES / b / release_changes().file).read_bytes())
    assert changes["previous"] == a
    result = CliRunner().invoke(main, ["diff", "--site", str(tmp_path)])
    assert result.output.splitlines()[:3] == [
        f"{a} → {b}: 21 documents changed, 0 added, 0 removed; 1 country changed risk class",
        "  acme_aml: 1 class, 0 rating and 1 rank changes",
        "    NGA: Medium → Very High",
    ]
