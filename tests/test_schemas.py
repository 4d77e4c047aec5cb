"""The schemas accept what clients of the original service get, and reject what breaks the contract."""
import copy
import json

import orjson
import pytest
from openapi_spec_validator import validate as validate_openapi

from generator import routes
from generator.validate import DocumentValidator, load_schemas

from .conftest import GOLDEN

VALIDATOR = DocumentValidator()


def golden(path: str):
    return json.loads((GOLDEN / path).read_text(encoding="utf-8"))


def errors(route, document):
    return VALIDATOR.errors(route, document)


def test_every_schema_is_draft_2020_12_with_an_id():
    for name, schema in load_schemas().items():
        assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema", name
        assert schema["$id"].endswith(f"/{name}.json"), name


def test_results_may_be_a_single_object():
    document = golden("api/v1/riskscores/sovereign/AUT/index.json")
    document["results"] = document["results"][-1]
    assert errors(routes.country_model_scores("sovereign", "AUT"), document) == []


def test_original_spelling_very_low_on_endpoint_5():
    document = {"name": "Sweden", "code": "SWE",
                "riskscores": [{"model": "esg", "riskClassificationCategorical": "Very low",
                                "timestamp": "2019-12-31", "score": 11.831}]}
    assert errors(routes.country_scores("SWE"), document) == []


def test_optional_fields_may_be_left_out_and_keys_come_in_any_order():
    document = golden("api/v1/riskscores/sovereign/index.json")
    entry = document["data"][0]
    entry["results"][0] = {"score": 10.0, "timestamp": "2024-12-31"}
    entry["entity"] = {"countryCode": "AUT"}
    document["model"] = dict(reversed(list(document["model"].items())))
    assert errors(routes.model_scores("sovereign"), document) == []


@pytest.mark.parametrize("path, change, where", [
    ("api/v1/riskscores/sovereign/AUT/index.json", lambda d: d["results"][0].update(score=100.5),
     "$.results[0].score"),
    ("api/v1/riskscores/sovereign/AUT/index.json", lambda d: d["results"][0].update(timestamp="2024-13-31"),
     "$.results[0].timestamp"),
    ("api/v1/riskscores/sovereign/AUT/index.json", lambda d: d["model"].update(url="not a uri"), "$.model.url"),
    ("api/v1/riskscores/sovereign/AUT/index.json", lambda d: d["results"][0].update(ratingLetter="AAA+"),
     "$.results[0].ratingLetter"),
    ("api/v1/riskscores/sovereign/AUT/index.json", lambda d: d["results"][0].update(riskClassificationNumeric=6),
     "$.results[0].riskClassificationNumeric"),
    ("api/v1/riskscores/sovereign/AUT/index.json", lambda d: d["sections"][0]["results"][0].update(weight=101),
     "$.sections[0].results[0].weight"),
    ("api/v1/riskscores/sovereign/AUT/index.json", lambda d: d["results"][0].update(shareIndicatorsAvailable=1.2),
     "$.results[0].shareIndicatorsAvailable"),
    ("api/v1/riskscores/sovereign/AUT/index.json", lambda d: d["indicators"][0]["results"][0].update(riskPoints=-1),
     "$.indicators[0].results[0].riskPoints"),
    ("api/v1/riskscores/sovereign/AUT/index.json", lambda d: d["entity"].update(countryCode="AT"),
     "$.entity.countryCode"),
    ("api/v1/riskscores/sovereign/AUT/index.json", lambda d: d["results"][0].update(type="forecast"),
     "$.results[0].type"),
    ("api/v1/riskscores/sovereign/AUT/index.json", lambda d: d["sections"][0].update(defaultWeight=1.5),
     "$.sections[0].defaultWeight"),
])
def test_planted_errors_are_reported_with_their_json_path(path, change, where):
    document = golden(path)
    change(document)
    found = errors(routes.country_model_scores("sovereign", "AUT"), document)
    assert any(f": at {where}: " in e for e in found), found
    assert all(e.startswith("/api/v1/riskscores/sovereign/AUT/: at ") for e in found)


def test_a_document_with_several_errors_reports_all():
    document = golden("api/v1/riskscores/sovereign/AUT/index.json")
    document["results"][0]["score"] = -1
    document["results"][1]["score"] = 101
    document["entity"]["oecdMember"] = "yes"
    assert len(errors(routes.country_model_scores("sovereign", "AUT"), document)) == 3


def test_golden_documents_are_valid():
    for path in GOLDEN.rglob("*.json"):
        relative = str(path.relative_to(GOLDEN))
        if relative.endswith("openapi.json"):
            continue
        route = _route_for(relative)
        assert errors(route, json.loads(path.read_text())) == [], relative


def _route_for(relative: str) -> routes.Route:
    parts = relative.split("/")[2:-1]  # drop api/v1 and index.json
    if parts[0] == "configuration":
        return routes.model_list() if parts[1] == "riskscoremodels" else routes.country_list()
    if parts[1] == "country":
        return routes.country_scores(parts[2])
    if len(parts) == 3 and len(parts[2]) == 3:
        return routes.country_model_scores(parts[1], parts[2])
    return routes.model_scores(parts[1])


def test_openapi_is_valid_openapi_3_1():
    document = golden("api/v1/openapi.json")
    assert document["openapi"] == "3.1.0"
    validate_openapi(copy.deepcopy(document))
    assert set(document["paths"]) == {"/configuration/riskscoremodels/", "/configuration/riskscoresmodels/",
                                      "/configuration/countries/", "/riskscores/{model}/",
                                      "/riskscores/{model}/{country_code}/", "/riskscores/country/{code}/"}


def test_openapi_components_are_the_schemas():
    document = golden("api/v1/openapi.json")
    schemas = load_schemas()
    components = document["components"]["schemas"]
    assert set(schemas["common"]["$defs"]) <= set(components)
    # every $ref points inside the document
    refs = [m for m in orjson.dumps(document).decode().split('"$ref":')[1:]]
    assert refs and all(r.startswith('"#/components/schemas/') for r in refs)
