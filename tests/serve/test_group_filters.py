"""docs/api.md's `region` and `income` filters on endpoints 2 and 3, on every server of the tiny release:
alone, together, with the code and name filters and the ordering, in every spelling a client sends, and
the 400 that names the release's values.

The tiny data (tests/fixtures/tiny/countries.csv): AUT is in Europe & Central Asia, High income; CIV and
NGA in Sub-Saharan Africa, Lower middle income. acme_aml scores all three; sovereign AUT and CIV.
"""
import json

import pytest

from generator.contract import filters, locations, routes
from generator.history.site import current_release

from ..conftest import SERVERS

SERVED_BY = SERVERS
API = "/api/v1"
ECA, SSA = "Europe%20%26%20Central%20Asia", "Sub-Saharan%20Africa"
HIGH, LOWER_MIDDLE = "High%20income", "Lower%20middle%20income"


def scored(answer) -> list[str]:
    return [entry["entity"]["countryCode"] for entry in json.loads(answer.body)["data"]]


# (query of acme_aml's scores, the countries in the answer, in order)
SCORES = [
    (f"region={SSA}", ["CIV", "NGA"]),
    ("region=sub-saharan+africa", ["CIV", "NGA"]),  # any case, + for a space (requests, URLSearchParams)
    ("region=SUB-SAHARAN%20AFRICA&ordering=-country_code", ["NGA", "CIV"]),
    (f"region={SSA}&ordering=-country_name", ["NGA", "CIV"]),  # Nigeria after Côte d'Ivoire
    (f"income={HIGH}", ["AUT"]),
    (f"income={LOWER_MIDDLE}&region={SSA}", ["CIV", "NGA"]),  # either order of the parameters
    (f"region={ECA}&income={LOWER_MIDDLE}", []),  # a pair no country is in
    (f"region={SSA}&country_code=aut", []),  # AUT is not in it
    (f"region={SSA}&country_code=nga&ordering=-country_code", ["NGA"]),
    (f"income={LOWER_MIDDLE}&country_name=Nigeria", ["NGA"]),
    (f"region={SSA}&income={LOWER_MIDDLE}&country_name=Austria", []),
    ("region=&income=", ["AUT", "CIV", "NGA"]),  # empty counts as absent
]


@pytest.mark.parametrize("query, countries", SCORES)
def test_region_and_income_pick_the_countries_of_a_group(live, query, countries):
    answer = live.get(f"{API}/riskscores/acme_aml/?{query}")
    assert answer.status == 200, answer.body
    assert scored(answer) == countries


def test_a_selection_answers_its_own_file_in_every_ordering(live):
    for ordering in routes.SCORE_ORDERINGS:
        answer = live.get(f"{API}/riskscores/sovereign/?region={SSA}&income={LOWER_MIDDLE}&ordering={ordering}")
        file = f"api/v1/riskscores/sovereign/region={SSA}/income={LOWER_MIDDLE}/" + (
            "" if ordering == routes.SCORE_ORDERINGS[0] else f"ordering={ordering}/") + "index.json"
        assert answer.status == 200 and answer.body == live.release_file(file), (ordering, answer.body)
    assert scored(live.get(f"{API}/riskscores/sovereign/?region={SSA}")) == ["CIV"]  # NGA: listed, no score


def test_the_country_list_takes_the_same_filters(live):
    assert json.loads(live.get(f"{API}/configuration/countries/?region={ECA}").body) == [
        {"name": "Austria", "code": "AUT"}]
    assert [c["code"] for c in json.loads(live.get(
        f"{API}/configuration/countries/?income=lower+middle+income&model=-name").body)] == ["NGA", "CIV"]
    assert json.loads(live.get(f"{API}/configuration/countries/?income={HIGH}&code=CIV").body) == []


def test_a_value_that_is_none_of_the_release_s_is_a_400_naming_them(live):
    answer = live.get(f"{API}/riskscores/acme_aml/?region=Europe")
    assert answer.status == 400
    assert json.loads(answer.body) == {"detail": "Invalid value for region: use one of this release's values: "
                                                 "Europe & Central Asia, Sub-Saharan Africa."}
    income = live.get(f"{API}/configuration/countries/?income=High")
    assert json.loads(income.body) == {"detail": "Invalid value for income: use one of this release's values: "
                                                 "High income, Lower middle income."}
    # the ordering's 400 first, then the filters' in the rule's order (code, then region)
    assert "ordering" in json.loads(live.get(f"{API}/riskscores/acme_aml/?region=Europe&ordering=x").body)["detail"]
    assert "country_code" in json.loads(live.get(
        f"{API}/riskscores/acme_aml/?region=Europe&country_code=AUSTRIA").body)["detail"]


def test_a_kept_release_answers_the_filters_under_its_id(live):
    release = current_release(live.site)
    answer = live.get(f"{API}/releases/{release}/riskscores/acme_aml/?region={SSA}&ordering=-country_code")
    assert answer.status == 200 and scored(answer) == ["NGA", "CIV"]


def test_a_selection_s_url_is_the_query_that_selects_it():
    # the leaf of a release's tree and the change document name a document by url_of its file
    file = f"api/v1/riskscores/sdg/region={SSA}/income={LOWER_MIDDLE}/ordering=-country_name/index.json"
    assert locations.url_of(file) == f"/api/v1/riskscores/sdg/?region={SSA}&income={LOWER_MIDDLE}" \
                                     "&ordering=-country_name"
    assert filters.query_value("Europe & Central Asia") == ECA  # no "&", "/" or "=" is left in a folder's value
