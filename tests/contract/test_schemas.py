"""The contract schemas accept exactly what this API emits; schemas/original/ relaxes them to accept what
clients of the original service get; both reject what breaks the contract."""
import copy
import json

import orjson
import pytest
from openapi_spec_validator import validate as validate_openapi

from generator.building.validate import DocumentValidator, load_schemas
from generator.contract import locations

from ..conftest import GOLDEN

VALIDATOR = DocumentValidator()
ORIGINAL = DocumentValidator(original=True)


def golden(path: str, text: bool = False):
    content = (GOLDEN / path).read_text(encoding="utf-8")
    return content if text else json.loads(content)


def errors(route, document):
    return VALIDATOR.errors(route, document)


def test_every_schema_is_draft_2020_12_with_an_id():
    for name, schema in load_schemas().items():
        assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema", name
        assert schema["$id"].endswith(f"/{name}.json"), name


def test_the_original_schemas_replace_only_definitions_the_contract_has():
    contract, original = load_schemas()["common"]["$defs"], load_schemas(original=True)["common"]["$defs"]
    assert set(original) == set(contract)
    assert {name for name in contract if original[name] != contract[name]} == {
        "ModelResults", "RiskClassificationCategorical", "RawData"}


def test_results_may_be_a_single_object_in_the_original_only():
    document = golden("api/v1/riskscores/sovereign/AUT/index.json")
    document["results"] = document["results"][-1]
    route = locations.country_model_scores("sovereign", "AUT")
    assert ORIGINAL.errors(route, document) == []
    assert [e.split(": ")[1] for e in errors(route, document)] == ["at $.results"]


def test_original_spelling_very_low_on_endpoint_5_in_the_original_only():
    document = {"name": "Sweden", "code": "SWE",
                "riskscores": [{"model": "esg", "riskClassificationCategorical": "Very low",
                                "timestamp": "2019-12-31", "score": 11.831}]}
    assert ORIGINAL.errors(locations.country_scores("SWE"), document) == []
    assert [e.split(": ")[1] for e in errors(locations.country_scores("SWE"), document)] == [
        "at $.riskscores[0].riskClassificationCategorical"]


def test_raw_data_as_plain_values_in_the_original_only():
    document = golden("api/v1/riskscores/sovereign/AUT/index.json")
    document["indicators"][0]["results"][0]["data"] = {"name": "GDP growth", "value": 1.0}
    route = locations.country_model_scores("sovereign", "AUT")
    assert ORIGINAL.errors(route, document) == []
    assert len(errors(route, document)) == 2  # name and value


def test_optional_fields_may_be_left_out_and_keys_come_in_any_order():
    document = golden("api/v1/riskscores/sovereign/index.json")
    entry = document["data"][0]
    entry["results"][0] = {"score": 10.0, "timestamp": "2024-12-31"}
    entry["entity"] = {"countryCode": "AUT"}
    document["model"] = dict(reversed(list(document["model"].items())))
    assert errors(locations.model_scores("sovereign"), document) == []
    assert ORIGINAL.errors(locations.model_scores("sovereign"), document) == []


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
    found = errors(locations.country_model_scores("sovereign", "AUT"), document)
    assert any(f": at {where}: " in e for e in found), found
    assert all(e.startswith("/api/v1/riskscores/sovereign/AUT/: at ") for e in found)


def test_a_document_with_several_errors_reports_all():
    document = golden("api/v1/riskscores/sovereign/AUT/index.json")
    document["results"][0]["score"] = -1
    document["results"][1]["score"] = 101
    document["entity"]["oecdMember"] = "yes"
    assert len(errors(locations.country_model_scores("sovereign", "AUT"), document)) == 3


def test_golden_documents_are_valid_against_both():
    for path in GOLDEN.rglob("*.json"):
        relative = str(path.relative_to(GOLDEN))
        if relative.endswith("openapi.json"):
            continue
        route = _route_for(relative)
        document = json.loads(path.read_text().replace('"RELEASE"', '"20261123T120000Z"'))  # the masked id
        if relative.startswith("api/v1/releases/current/") and not relative.startswith(
                ("api/v1/releases/current/changes/", "api/v1/releases/current/datapackage.json")):
            document["builtAt"] = "2026-11-23T12:00:00Z"
        if relative == "api/v1/index.json":
            document["release"]["builtAt"] = "2026-11-23T12:00:00Z"
        if relative.endswith("datapackage.json"):  # its build time and its Parquet export's hash, masked
            document["created"] = "2026-11-23T12:00:00Z"
            for resource in document["resources"]:
                if not resource["hash"].startswith("sha256:"):
                    resource["hash"] = "sha256:" + "0" * 64
        assert errors(route, document) == [], relative
        assert ORIGINAL.errors(route, document) == [], relative


def _route_for(relative: str) -> locations.Route:
    parts = relative.split("/")[2:-1]  # drop api/v1 and index.json
    if not parts:
        return locations.api_root()
    if relative.endswith("/datapackage.json"):
        return locations.release_datapackage()
    if parts[0] == "releases":
        return locations.release_changes() if parts[2:3] == ["changes"] else locations.current_release()
    if parts[0] == "configuration":
        return locations.model_list() if parts[1] == "riskscoremodels" else locations.country_list()
    if parts[1] == "country":
        return locations.country_scores(parts[2])
    if len(parts) == 3 and len(parts[2]) == 3:
        return locations.country_model_scores(parts[1], parts[2])
    return locations.model_scores(parts[1])


def test_openapi_is_valid_openapi_3_1():
    document = golden("api/v1/openapi.json")
    assert document["openapi"] == "3.1.0"
    validate_openapi(copy.deepcopy(document))
    keyed = {"/configuration/riskscoremodels/", "/configuration/countries/", "/riskscores/{model}/",
             "/riskscores/{model}/{country_code}/", "/riskscores/country/{code}/", "/exports/scores.csv",
             "/exports/scores.jsonl", "/exports/scores.parquet", "/exports/{model}/scores.csv",
             "/exports/{model}/scores.jsonl", "/exports/{model}/scores.parquet"}
    # every keyed route also as a kept release answered it; the releases' list, TimeMap and documents
    assert set(document["paths"]) == keyed | {"/configuration/riskscoresmodels/", "/", "/releases/current/",
                                              "/releases/current/changes/", "/releases/{release}/changes/"} | {
        "/releases/{release}" + path for path in keyed} | {"/releases/", "/releases/timemap", "/releases/{release}/",
                                                         "/releases/feed.json", "/releases/feed.atom",
                                                         "/log/checkpoint", "/exports/history.parquet",
                                                         "/exports/{model}/history.parquet"} | {
        "/datapackage.json", "/catalog.jsonld", "/releases/current/datapackage.json",
        "/releases/{release}/datapackage.json"}  # the data catalogues, and a kept release's own Data Package
    assert "as_of" in [p["name"] for p in document["paths"]["/riskscores/{model}/"]["get"]["parameters"]]
    assert "302" in document["paths"]["/riskscores/{model}/"]["get"]["responses"]
    scoped = document["paths"]["/releases/{release}/riskscores/{model}/"]["get"]
    assert [p["name"] for p in scoped["parameters"]][:2] == ["release", "model"] and "410" in scoped["responses"]
    assert document["paths"]["/"]["get"]["security"] == []  # the root needs no key
    assert "403" not in document["paths"]["/"]["get"]["responses"]
    assert set(document["paths"]["/exports/scores.csv"]["get"]["responses"]["200"]["content"]) == {"text/csv"}
    # JSON Lines, with text/plain beside it for generators that read no other text type (the same body)
    assert list(document["paths"]["/exports/scores.jsonl"]["get"]["responses"]["200"]["content"]) == [
        "application/x-ndjson", "text/plain"]
    one = document["paths"]["/exports/{model}/scores.jsonl"]["get"]
    assert list(one["responses"]["200"]["content"]) == ["application/x-ndjson", "text/plain"] and "404" in one["responses"]
    for feed, media in (("/releases/feed.atom", "application/atom+xml"), ("/releases/timemap", "application/link-format")):
        assert list(document["paths"][feed]["get"]["responses"]["200"]["content"]) == [media, "text/plain"]
    checkpoint = document["paths"]["/log/checkpoint"]["get"]
    assert list(checkpoint["responses"]["200"]["content"]) == ["text/plain"] and checkpoint["security"] == []
    assert [p["name"] for p in one["parameters"]][0] == "model"


def test_openapi_components_are_the_objects_and_enums_of_the_schemas_named_as_identifiers():
    document = golden("api/v1/openapi.json")
    definitions = load_schemas()["common"]["$defs"]
    components = document["components"]["schemas"]
    named = {name for name, schema in definitions.items() if schema.get("type") == "object" or "allOf" in schema
             or "enum" in schema}
    assert set(components) == named | {"ModelScores", "CountryModelScores", "CountryScores", "ApiRoot", "Release",
                                       "Releases", "KeptRelease", "ReleaseChanges"}
    assert {"ModelResult", "SectionResult", "IndicatorResult", "RatingLetter", "Error"} <= set(components)
    assert all(name.isidentifier() for name in components)
    schemas = [components] + [c["schema"] for item in document["paths"].values()
                              for r in item["get"]["responses"].values() for c in r.get("content", {}).values()]
    text = orjson.dumps(schemas).decode()
    # generators lose types under if/then/else, and name classes by titles (a property may be called title)
    for keyword in ('"if":', '"then":', '"else":', '"title":"'):
        assert keyword not in text, keyword
    refs = _refs(document)
    assert refs and all(set(node) == {"$ref"} and node["$ref"].startswith("#/components/schemas/") for node in refs)


def _refs(node) -> list[dict]:
    if isinstance(node, dict):
        return ([node] if "$ref" in node else []) + [r for value in node.values() for r in _refs(value)]
    if isinstance(node, list):
        return [r for item in node for r in _refs(item)]
    return []


def test_openapi_names_every_operation_and_gives_rating_letters_distinct_identifiers():
    document = golden("api/v1/openapi.json")
    operations = {path: item["get"]["operationId"] for path, item in document["paths"].items()}
    assert operations == {
        "/configuration/riskscoremodels/": "listRiskScoreModels",
        "/configuration/riskscoresmodels/": "listRiskScoreModelsEarlierSpelling",
        "/configuration/countries/": "listCountries", "/riskscores/{model}/": "getModelScores",
        "/riskscores/{model}/{country_code}/": "getModelCountryScores",
        "/riskscores/country/{code}/": "getCountryScores", "/": "getApiRoot", "/releases/current/": "getCurrentRelease",
        "/exports/scores.csv": "exportScoresCsv", "/exports/scores.jsonl": "exportScoresJsonl",
        "/releases/current/changes/": "getReleaseChanges", "/releases/{release}/changes/": "getReleaseChangesInRelease",
        "/exports/{model}/scores.csv": "exportModelScoresCsv", "/exports/{model}/scores.jsonl": "exportModelScoresJsonl",
        "/exports/scores.parquet": "exportScoresParquet", "/exports/{model}/scores.parquet": "exportModelScoresParquet",
        "/releases/{release}/exports/scores.parquet": "exportScoresParquetInRelease",
        "/releases/{release}/exports/{model}/scores.parquet": "exportModelScoresParquetInRelease",
        "/releases/{release}/configuration/riskscoremodels/": "listRiskScoreModelsInRelease",
        "/releases/{release}/configuration/countries/": "listCountriesInRelease",
        "/releases/{release}/riskscores/{model}/": "getModelScoresInRelease",
        "/releases/{release}/riskscores/{model}/{country_code}/": "getModelCountryScoresInRelease",
        "/releases/{release}/riskscores/country/{code}/": "getCountryScoresInRelease",
        "/releases/{release}/exports/scores.csv": "exportScoresCsvInRelease",
        "/releases/{release}/exports/scores.jsonl": "exportScoresJsonlInRelease",
        "/releases/{release}/exports/{model}/scores.csv": "exportModelScoresCsvInRelease",
        "/releases/{release}/exports/{model}/scores.jsonl": "exportModelScoresJsonlInRelease",
        "/releases/": "listReleases", "/releases/timemap": "getTimeMap", "/releases/{release}/": "getRelease",
        "/releases/feed.json": "getReleasesJsonFeed", "/releases/feed.atom": "getReleasesAtomFeed",
        "/log/checkpoint": "getLogCheckpoint", "/exports/history.parquet": "exportHistoryParquet",
        "/exports/{model}/history.parquet": "exportModelHistoryParquet", "/datapackage.json": "getDataPackage",
        "/catalog.jsonld": "getDataCatalog", "/releases/current/datapackage.json": "getReleaseDataPackage",
        "/releases/{release}/datapackage.json": "getKeptReleaseDataPackage"}
    letters = document["components"]["schemas"]["RatingLetter"]
    names = letters["x-enum-varnames"]
    assert len(names) == len(letters["enum"]) == len(set(names)) == 21
    assert dict(zip(letters["enum"], names))["AA+"] == "AA_PLUS"
    assert all(name.isidentifier() for name in names)


def test_openapi_examples_are_real_answers_of_the_release():
    document = golden("api/v1/openapi.json")
    example = document["paths"]["/configuration/riskscoremodels/"]["get"]["responses"]["200"]["content"][
        "application/json"]["examples"]["release"]
    assert example["value"] == golden("api/v1/configuration/riskscoremodels/index.json")
    shown = 0
    for path, item in document["paths"].items():
        content = item["get"]["responses"]["200"]["content"]
        if path in ("/releases/", "/releases/timemap", "/releases/{release}/", "/releases/feed.json",
                    "/releases/feed.atom", "/log/checkpoint", "/datapackage.json", "/catalog.jsonld",
                    "/releases/current/datapackage.json", "/releases/{release}/datapackage.json"):
            assert not any("examples" in c for c in content.values())  # they change with every build
            continue
        path = path.removeprefix("/releases/{release}")  # a kept release's route: the current one's example
        if path.endswith(".parquet"):  # bytes: no example, the bytes beside its own type for generic clients
            assert list(content) == ["application/vnd.apache.parquet", "application/octet-stream"]
            assert not any("examples" in c for c in content.values())
            continue
        if path.startswith("/exports/"):  # the export's first lines, as they are
            media, answer = next(iter(content.items()))  # its own type first (text/plain beside JSON Lines)
            assert golden("api/v1" + path.replace("{model}", "sovereign"), text=True).startswith(
                answer["examples"]["release"]["value"])
            shown += 1
            continue
        if "examples" not in content["application/json"]:
            assert path in ("/", "/releases/current/", "/releases/current/changes/", "/changes/")  # these change with every build
            continue
        route = _route_for("api/v1" + path.replace("{model}", "sovereign").replace("{country_code}", "AUT")
                           .replace("{code}", "AUT").replace("riskscoresmodels", "riskscoremodels") + "index.json")
        assert errors(route, content["application/json"]["examples"]["release"]["value"]) == [], path
        shown += 1
    assert shown == 19  # 10 routes, 9 of them also under /releases/{release}
