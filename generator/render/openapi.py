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


def _parameter(parameter: routes.Parameter, examples: dict[str, list[str]]) -> dict:
    schema = {"type": "string", **dict(parameter.constraints)}
    if parameter.examples:
        schema["examples"] = examples[parameter.examples]
    return {"name": parameter.name, "in": parameter.where, "required": parameter.where == "path",
            "description": parameter.description, "schema": schema}


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
    """The OpenAPI 3.1 description of every endpoint of routes.ENDPOINTS."""
    components = {name: _rewrite_refs(schema) for name, schema in schemas["common"]["$defs"].items()}
    for name, component in RESPONSES.items():
        schema = {k: v for k, v in schemas[name].items() if k not in ("$schema", "$id")}
        components[component] = _rewrite_refs(schema)
    examples = {"models": model_codes, "countries": country_codes}
    paths = {}
    for endpoint in routes.ENDPOINTS:
        operation = _operation(endpoint.summary, endpoint.schema,
                               [_parameter(p, examples) for p in endpoint.parameters])
        paths[endpoint.path] = {"get": operation}
        if endpoint.alias:
            paths[endpoint.alias] = {"get": {**operation, "summary": endpoint.alias_summary}}
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
