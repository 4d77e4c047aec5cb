"""Typed clients out of the box: third-party generators, with their default settings, on the openapi.json
that the live fixture API serves, then used against that API.

- openapi-python-client generates a Python client; every operation is called and every field read is typed.
- openapi-typescript generates types; tests/clients/client.ts reads the same fields under `tsc --strict`.
- Spectral's OpenAPI rules find nothing (tests/clients/.spectral.yaml turns one rule off, and says why).
The Node tools are installed by scripts/install.sh from tests/clients/package-lock.json.
"""
from __future__ import annotations

import datetime
import importlib
import json
import shutil
import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from generator.history.site import CURRENT

from ..contract.test_schemas import _route_for

CLIENTS = Path(__file__).resolve().parent.parent / "clients"
NODE_BIN = CLIENTS / "node_modules" / ".bin"
PACKAGE = "country_risk_api_client"  # openapi-python-client names it after info.title


def _run(command: list, cwd: Path) -> subprocess.CompletedProcess:
    done = subprocess.run([str(part) for part in command], cwd=cwd, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, f"{command[0]} failed:\n{done.stdout}\n{done.stderr}"
    return done


@pytest.fixture(scope="module")
def served_openapi(live, tmp_path_factory) -> Path:
    answer = live.get("/api/v1/openapi.json", user=None)
    assert answer.status == 200
    path = tmp_path_factory.mktemp("openapi") / "openapi.json"
    path.write_bytes(answer.body)
    return path


@pytest.fixture(scope="module")
def python_client(served_openapi, tmp_path_factory):
    """Yield the generated package, imported (default settings: no config file)."""
    folder = tmp_path_factory.mktemp("python-client")
    generator = Path(sys.executable).parent / "openapi-python-client"
    done = _run([generator if generator.exists() else shutil.which("openapi-python-client"), "generate",
                 "--path", served_openapi, "--output-path", folder / PACKAGE, "--meta", "none"], folder)
    # every operation generated as declared: no "Unsupported content_type" (JSON Lines, link-format, Atom)
    assert "warning" not in (done.stdout + done.stderr).lower(), done.stdout + done.stderr
    sys.path.insert(0, str(folder))
    try:
        yield importlib.import_module(PACKAGE)
    finally:
        sys.path.remove(str(folder))
        for name in [n for n in sys.modules if n == PACKAGE or n.startswith(PACKAGE + ".")]:
            del sys.modules[name]


def _client(python_client, live, user="alice"):
    return python_client.AuthenticatedClient(base_url=f"http://127.0.0.1:{live.port}/api/v1",
                                             token=f"{user}:{live.keys[user]}", prefix="apikey")


def _untyped(value, where="$") -> list[str]:
    """Return every place of a parsed answer where a field fell into `additional_properties` (no type)."""
    if isinstance(value, list):
        return [u for i, item in enumerate(value) for u in _untyped(item, f"{where}[{i}]")]
    if hasattr(value, "additional_properties"):
        found = [f"{where}.{name}" for name in value.additional_properties]
        for name in value.__attrs_attrs__:
            if name.name != "additional_properties":
                found += _untyped(getattr(value, name.name), f"{where}.{name.name}")
        return found
    return []


def _as_json(value):
    if isinstance(value, list):
        return [_as_json(item) for item in value]
    return value.to_dict() if hasattr(value, "to_dict") else value


def _served(live, path: str):
    return json.loads(live.get(path).body)


def test_every_operation_of_the_python_client_answers_with_typed_fields(python_client, live):
    from country_risk_api_client.api.configuration import list_countries, list_risk_score_models
    from country_risk_api_client.api.riskscores import get_country_scores, get_model_country_scores, get_model_scores
    from country_risk_api_client.models import RatingLetter
    client = _client(python_client, live)
    answers = {
        "/api/v1/configuration/riskscoremodels/": list_risk_score_models.sync(client=client),
        "/api/v1/configuration/countries/": list_countries.sync(client=client),
        "/api/v1/riskscores/sovereign/": get_model_scores.sync(client=client, model="sovereign"),
        "/api/v1/riskscores/sovereign/AUT/": get_model_country_scores.sync(client=client, model="sovereign",
                                                                           country_code="AUT"),
        "/api/v1/riskscores/country/AUT/": get_country_scores.sync(client=client, code="AUT"),
    }
    for path, parsed in answers.items():
        assert _untyped(parsed) == [], path
        assert _as_json(parsed) == _served(live, path), path  # number for number, nothing lost

    # tests/fixtures/tiny: alice holds acme_aml, so she sees it beside the public models
    assert [m.code for m in answers["/api/v1/configuration/riskscoremodels/"]] == ["acme_aml", "sdg", "sovereign"]
    scores = answers["/api/v1/riskscores/sovereign/"]
    first = scores.data[0]
    assert first.entity.country_code == "AUT"
    # AUT's current sovereign result (golden tree): score 10.0, AA+, first of 2
    assert (first.results[0].score, first.results[0].rating_letter, first.results[0].country_rank) == (
        10.0, RatingLetter.AA_PLUS, 1)
    series = answers["/api/v1/riskscores/sovereign/AUT/"]
    assert series.results[0].timestamp == datetime.date(2023, 12, 31)
    # economy weighs 60 % in 2023; AUT's 2023 GDP growth was 1.0 %
    assert series.sections[0].results[0].weight == 60.0
    assert series.indicators[0].results[0].data.value == [1.0]
    country = answers["/api/v1/riskscores/country/AUT/"]
    assert {s.model: s.score for s in country.riskscores}["sovereign"] == 10.0


def test_the_root_release_and_export_operations_of_the_python_client(python_client, live):
    from country_risk_api_client.api.exports import (
        export_model_scores_csv,
        export_model_scores_jsonl,
        export_scores_csv,
        export_scores_jsonl,
    )
    from country_risk_api_client.api.release import get_api_root, get_current_release
    client = _client(python_client, live)
    keyless = python_client.Client(base_url=f"http://127.0.0.1:{live.port}/api/v1")
    root, release = get_api_root.sync(client=keyless), get_current_release.sync(client=client)
    for path, parsed in (("/api/v1/", root), ("/api/v1/releases/current/", release)):
        assert _untyped(parsed) == [], path
        # builtAt is a typed datetime: it writes UTC back as +00:00 where the API writes Z
        assert orjson.loads(orjson.dumps(_as_json(parsed)).replace(b"+00:00", b"Z")) == _served(live, path), path
    assert root.release.id == release.id == live.get("/api/v1/").header("X-Release")
    assert [m.code for m in release.models] == ["acme_aml", "sdg", "sovereign"]
    # the exports are not JSON: the client hands over their bytes, as served
    for operation, path in ((export_scores_csv, "/api/v1/exports/scores.csv"),
                            (export_scores_jsonl, "/api/v1/exports/scores.jsonl")):
        answer = operation.sync_detailed(client=client)
        assert answer.status_code == 200 and answer.content == live.get(path).body
    # a model's own, listed under its entry of the release document (alice is granted acme_aml)
    assert {m.code: m.exports.csv for m in release.models}["acme_aml"].endswith(
        f"/api/v1/releases/{release.id}/exports/acme_aml/scores.csv")  # this release's, under its id
    for operation, path in ((export_model_scores_csv, "/api/v1/exports/acme_aml/scores.csv"),
                            (export_model_scores_jsonl, "/api/v1/exports/acme_aml/scores.jsonl")):
        answer = operation.sync_detailed(client=client, model="acme_aml")
        assert answer.status_code == 200 and answer.content == live.get(path).body
        # sync() returns the body on a 200 (a string: the text/plain beside JSON Lines), not None
        assert operation.sync(client=client, model="acme_aml") == live.get(path).body.decode()


def test_errors_parse_into_the_error_type(python_client, live):
    from country_risk_api_client.api.riskscores import get_model_scores
    from country_risk_api_client.models import Error
    missing = get_model_scores.sync(client=_client(python_client, live, "bob"), model="acme_aml")
    assert isinstance(missing, Error) and missing.detail == "Not found."  # bob is not granted acme_aml
    client = python_client.AuthenticatedClient(base_url=f"http://127.0.0.1:{live.port}/api/v1",
                                               token="alice:wrong", prefix="apikey")
    refused = get_model_scores.sync(client=client, model="sovereign")
    assert isinstance(refused, Error) and refused.detail == "Invalid API key."


SCHEMA_TYPES = {"riskscoremodels": "RiskModelConfig", "countries": "CountryConfig", "model-scores": "ModelScores",
                "country-model-scores": "CountryModelScores", "country-scores": "CountryScores"}


def test_every_served_document_parses_into_the_generated_types(python_client, live):
    models = importlib.import_module(f"{PACKAGE}.models")
    release = live.site / CURRENT
    documents = sorted(release.glob("api/v1/**/index.json"))
    assert len(documents) >= 49  # the tiny release's documents (golden tree), the new ones too
    for path in documents:
        relative = str(path.relative_to(release))
        if not relative.startswith(("api/v1/configuration/", "api/v1/riskscores/")):
            continue
        document = json.loads(path.read_bytes())
        kind = getattr(models, SCHEMA_TYPES[_route_for(relative).schema])
        parsed = [kind.from_dict(item) for item in document] if isinstance(document, list) else kind.from_dict(document)
        assert _untyped(parsed) == [], relative
        assert _as_json(parsed) == document, relative


@pytest.mark.slow  # tsc over the generated types: ten seconds
def test_typescript_types_compile_under_strict_and_read_the_same_fields(served_openapi, live, tmp_path):
    _run([NODE_BIN / "openapi-typescript", served_openapi, "-o", tmp_path / "api.d.ts"], tmp_path)
    shutil.copy(CLIENTS / "client.ts", tmp_path / "client.ts")
    (tmp_path / "tsconfig.json").write_text(json.dumps({"compilerOptions": {
        "strict": True, "target": "es2022", "module": "es2022", "moduleResolution": "bundler",
        "lib": ["es2022", "dom"], "outDir": "out"}, "files": ["client.ts"]}))
    _run([NODE_BIN / "tsc", "--noEmit", "-p", "."], tmp_path)  # TS2571/TS2339 here if a field is untyped
    _run([NODE_BIN / "tsc", "-p", "."], tmp_path)
    (tmp_path / "out" / "package.json").write_text('{"type": "module"}')
    done = _run(["node", "out/client.js", f"http://127.0.0.1:{live.port}/api/v1",
                 f"apikey alice:{live.keys['alice']}"], tmp_path)
    read = json.loads(done.stdout)
    scores, series = _served(live, "/api/v1/riskscores/sovereign/"), _served(live, "/api/v1/riskscores/sovereign/AUT/")
    current = scores["data"][0]["results"][0]
    assert read["scores"] == {"score": current["score"], "ratingLetter": current["ratingLetter"],
                              "countryRank": current["countryRank"]}
    assert read["series"]["score"] == series["results"][0]["score"]
    assert read["sectionWeight"] == series["sections"][0]["results"][0]["weight"] == 60.0
    assert read["indicatorValue"] == series["indicators"][0]["results"][0]["data"]["value"][0] == 1.0
    assert read["models"] == [m["code"] for m in _served(live, "/api/v1/configuration/riskscoremodels/")]
    assert read["country"] == [[s["model"], s["score"], s["riskClassificationCategorical"]]
                               for s in _served(live, "/api/v1/riskscores/country/AUT/")["riskscores"]]
    release = _served(live, "/api/v1/releases/current/")
    assert read["root"]["release"] == release["id"] == live.get("/api/v1/releases/current/").header("X-Release")
    assert read["root"]["operations"][:2] == ["listRiskScoreModels", "listCountries"]
    assert read["release"]["vintages"] == [[m["code"], m["dataVintage"]] for m in release["models"]]


def test_spectral_finds_nothing_in_the_served_openapi(served_openapi):
    done = subprocess.run([NODE_BIN / "spectral", "lint", "-r", CLIENTS / ".spectral.yaml", "--fail-severity", "hint",
                           served_openapi], cwd=CLIENTS, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and "No results" in done.stdout, done.stdout + done.stderr


def test_the_python_client_reads_past_releases(python_client, live):
    # the releases over time with default settings: the list, and a route under a kept release's id
    from country_risk_api_client.api.releases import get_model_scores_in_release, get_release, list_releases
    client = _client(python_client, live)
    listed = list_releases.sync(client=client)
    assert _untyped(listed) == []
    current = live.get("/api/v1/").header("X-Release")
    assert listed.current == current and listed.releases[0].id == current and listed.releases[0].status == "live"
    scores = get_model_scores_in_release.sync(client=client, release=current, model="sovereign")
    assert _untyped(scores) == []
    assert _as_json(scores) == _served(live, f"/api/v1/releases/{current}/riskscores/sovereign/")
    assert _as_json(scores) == _served(live, "/api/v1/riskscores/sovereign/")  # the current release, byte for byte
    assert get_release.sync(client=client, release=current).id == current
