"""Build openapi.json (OpenAPI 3.1) from the JSON Schemas in schemas/, so the two never disagree."""
from __future__ import annotations

from .. import routes

RESPONSES = {
    "riskscoremodels": "RiskScoreModels", "countries": "Countries", "model-scores": "ModelScores",
    "country-model-scores": "CountryModelScores", "country-scores": "CountryScores", "error": "ErrorBody",
}
ERRORS = {
    "400": "Invalid parameter value; `detail` names the parameter and its allowed values.",
    "403": "Missing or invalid API key.",
    "404": "Unknown route, model or country, or a custom model the client is not granted.",
    "405": "Method not allowed; the `Allow` header lists GET, HEAD, OPTIONS.",
    "429": "Rate limit exceeded (only where the operator turned a limit on); see `Retry-After`.",
    "500": "Server error.",
}


def _rewrite_refs(node):
    """Point `common.json#/$defs/X` and `#/$defs/X` at `#/components/schemas/X`."""
    if isinstance(node, dict):
        out = {}
        for key, value in node.items():
            if key == "$ref" and isinstance(value, str):
                name = value.rsplit("/", 1)[-1]
                out[key] = f"#/components/schemas/{name}"
            elif key in ("$schema", "$id"):
                continue
            else:
                out[key] = _rewrite_refs(value)
        return out
    if isinstance(node, list):
        return [_rewrite_refs(item) for item in node]
    return node


# API.md: an empty value is no filter (as in the original service); another length than 3 is a 400.
CODE_FILTER = "Exact country code (3 characters), case-insensitive; empty means no filter"


def _parameter(name: str, where: str, description: str, **schema) -> dict:
    return {"name": name, "in": where, "required": where == "path", "description": description,
            "schema": {"type": "string", **schema}}


def _operation(summary: str, response: str, parameters: list[dict], keyed: bool = True) -> dict:
    responses = {"200": {"description": "OK", "content": {"application/json": {
        "schema": {"$ref": f"#/components/schemas/{RESPONSES[response]}"}}}}}
    for status, text in ERRORS.items():
        if not keyed and status == "403":
            continue
        responses[status] = {"description": text, "content": {"application/json": {
            "schema": {"$ref": "#/components/schemas/ErrorBody"}}}}
    operation = {"summary": summary, "parameters": parameters, "responses": responses}
    if not keyed:
        operation["security"] = []
    return operation


def build_openapi(schemas: dict[str, dict], model_codes: list[str], country_codes: list[str]) -> dict:
    """The OpenAPI 3.1 description of every route of API.md."""
    components = {name: _rewrite_refs(schema) for name, schema in schemas["common"]["$defs"].items()}
    for name, component in RESPONSES.items():
        schema = {k: v for k, v in schemas[name].items() if k not in ("$schema", "$id")}
        components[component] = _rewrite_refs(schema)
    code = _parameter("country_code", "path", "ISO 3166-1 alpha-3 code, any letter case",
                      minLength=3, maxLength=3, examples=country_codes)
    model = _parameter("model", "path", "Model code; custom models only for clients granted them",
                       pattern="^[a-z][a-z0-9_]*$", examples=model_codes)
    models_op = _operation("List risk score models", "riskscoremodels", [])
    paths = {
        "/configuration/riskscoremodels/": {"get": models_op},
        "/configuration/riskscoresmodels/": {"get": {**models_op, "summary": "List risk score models "
                                                     "(the earlier reference's spelling)"}},
        "/configuration/countries/": {"get": _operation("List countries", "countries", [
            _parameter("code", "query", CODE_FILTER, pattern="^(.{3})?$"),
            _parameter("name", "query", "Exact country name, case-insensitive"),
            _parameter("model", "query", "Ordering (the parameter is named model); empty means the default",
                       enum=[*routes.COUNTRY_ORDERINGS, ""], default="code"),
        ])},
        "/riskscores/{model}/": {"get": _operation("Current risk scores of a model for all countries",
                                                   "model-scores", [
            model,
            _parameter("country_code", "query", CODE_FILTER, pattern="^(.{3})?$"),
            _parameter("country_name", "query", "Exact country name, case-insensitive"),
            _parameter("ordering", "query", "Ordering; a leading minus sorts descending; empty means the default",
                       enum=[*routes.SCORE_ORDERINGS, ""], default="country_code"),
        ])},
        "/riskscores/{model}/{country_code}/": {"get": _operation(
            "Risk scores of a model for one country: history, current and projection, with sections and "
            "indicators", "country-model-scores", [model, code])},
        "/riskscores/country/{code}/": {"get": _operation(
            "A country with the current score of each model", "country-scores",
            [{**code, "name": "code"}])},
    }
    return {
        "openapi": "3.1.0",
        "info": {"title": "Country risk API", "version": "1.0.0",
                 "description": "Country risk scores per model and country, with the models and countries. "
                                "Every route needs an API key in the Authorization header: `apikey USER:KEY`, "
                                "the bare `KEY`, or HTTP Basic with USER and KEY."},
        "servers": [{"url": routes.API}],
        "security": [{"apiKey": []}, {"basic": []}],
        "paths": paths,
        "components": {
            "schemas": components,
            "securitySchemes": {
                "apiKey": {"type": "apiKey", "in": "header", "name": "Authorization",
                           "description": "`apikey USER:KEY` or the bare KEY"},
                "basic": {"type": "http", "scheme": "basic", "description": "USER and KEY as user and password"},
            },
        },
    }
