"""Validate every document against its JSON Schema in schemas/ (Draft 2020-12, formats checked).

schemas/ is the contract: exactly what this API emits. schemas/original/common.json relaxes a few of
its definitions to accept what the original service sends (`DocumentValidator(original=True)`)."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Iterable

import jsonschema_rs

from ..contract.locations import Route
from ..contract.resources import SCHEMA_DIR

__all__ = ["DocumentValidator", "SCHEMA_DIR", "load_schemas"]
ORIGINAL = "original"  # the folder of schema_dir whose $defs replace the contract's


def load_schemas(schema_dir: Path = SCHEMA_DIR, original: bool = False) -> dict[str, dict]:
    """Return every schema of schema_dir by name (file name without .json); with `original`, common.json's
    definitions replaced by those of original/common.json (same $id, so the endpoint schemas use them)."""
    schemas = {path.stem: json.loads(path.read_text(encoding="utf-8")) for path in sorted(schema_dir.glob("*.json"))}
    if original:
        relaxed = json.loads((schema_dir / ORIGINAL / "common.json").read_text(encoding="utf-8"))["$defs"]
        common = schemas["common"]
        schemas["common"] = {**common, "$defs": {**common["$defs"], **relaxed}}
    return schemas


def json_path(path: Iterable[str | int]) -> str:
    """Return `$.data[0].results[0].score` from a list of keys and indexes."""
    return "$" + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path)


class DocumentValidator:
    """Compiled validators for every response schema, sharing common.json through a registry."""

    def __init__(self, schema_dir: Path = SCHEMA_DIR, original: bool = False):
        self.schemas = load_schemas(schema_dir, original)
        common = self.schemas["common"]
        registry = jsonschema_rs.Registry([(common["$id"], common)])
        self._validators = {
            name: jsonschema_rs.validator_for(schema, registry=registry, validate_formats=True)
            for name, schema in self.schemas.items() if name != "common"
        }

    def errors(self, route: Route, document: object) -> list[str]:
        """Return every violation of the route's schema, each named by URL and JSON path."""
        return [f"{route}: {problem}" for problem in self.schema_errors(route.schema, document)]

    def schema_errors(self, schema: str, document: object) -> list[str]:
        """Return every violation of the schema `schema` (its file's name in schemas/), each named by JSON path."""
        validator = self._validators[schema]
        if validator.is_valid(document):
            return []
        return [f"at {json_path(error.instance_path)}: {error.message}" for error in validator.iter_errors(document)]
