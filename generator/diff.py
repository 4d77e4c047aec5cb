"""What a release changes against another: documents, and per model the countries whose class,
rating or rank moved, with the largest score moves (`riskapi diff`, and a guard in `riskapi build`)."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import orjson

from .publish import read_manifest

SCORE_LISTS = "api/v1/riskscores/{model}/index.json"


@dataclass(frozen=True)
class CountryChange:
    code: str
    old: dict | None  # the current result in the old release (None: not scored there)
    new: dict | None

    def moved(self, key: str) -> bool:
        return (self.old or {}).get(key) != (self.new or {}).get(key)

    @property
    def score_move(self) -> float:
        return round((self.new or {}).get("score", 0) - (self.old or {}).get("score", 0), 3)


@dataclass(frozen=True)
class ModelChanges:
    model: str
    class_changes: tuple[CountryChange, ...]
    rating_changes: tuple[CountryChange, ...]
    rank_changes: tuple[CountryChange, ...]
    largest_moves: tuple[CountryChange, ...]


@dataclass(frozen=True)
class ReleaseDiff:
    added: tuple[str, ...]
    removed: tuple[str, ...]
    changed: tuple[str, ...]
    models: tuple[ModelChanges, ...] = field(default=())

    @property
    def class_changes(self) -> int:
        return sum(len(m.class_changes) for m in self.models)

    def headline(self) -> str:
        if not self.models and not self.removed and not self.changed:
            return f"first release: {len(self.added)} documents"
        return (f"{len(self.changed)} documents changed, {len(self.added)} added, {len(self.removed)} removed; "
                f"{self.class_changes} countries changed risk class")


def _documents(files: dict[str, dict]) -> dict[str, str]:
    return {path: entry["sha256"] for path, entry in files.items() if path.startswith("api/") and path.endswith(".json")}


def _current_scores(release: Path, model: str) -> dict[str, dict]:
    path = release / SCORE_LISTS.format(model=model)
    if not path.is_file():
        return {}
    return {entry["entity"]["countryCode"]: entry["results"][0] for entry in orjson.loads(path.read_bytes())["data"]}


def _models(documents: dict[str, str]) -> set[str]:
    return {path.split("/")[3] for path in documents
            if path.count("/") == 4 and path.startswith("api/v1/riskscores/") and "/country/" not in path}


def diff_releases(old: Path | None, new: Path, largest: int = 5, new_files: dict[str, dict] | None = None) -> ReleaseDiff:
    """Compare two release folders (a missing old release counts as empty).

    `new_files` stands for the new release's manifest while it is still being written."""
    before = _documents(read_manifest(old)) if old else {}
    after = _documents(read_manifest(new) if new_files is None else new_files)
    added = tuple(sorted(set(after) - set(before)))
    removed = tuple(sorted(set(before) - set(after)))
    changed = tuple(sorted(p for p in set(before) & set(after) if before[p] != after[p]))
    models = []
    for model in sorted(_models(before) | _models(after)) if old else ():  # a first release compares to nothing
        old_scores = _current_scores(old, model) if old else {}
        new_scores = _current_scores(new, model)
        changes = [CountryChange(code, old_scores.get(code), new_scores.get(code))
                   for code in sorted(set(old_scores) | set(new_scores))]
        moves = sorted((c for c in changes if c.score_move), key=lambda c: (-abs(c.score_move), c.code))
        models.append(ModelChanges(
            model,
            tuple(c for c in changes if c.moved("riskClassificationNumeric")),
            tuple(c for c in changes if c.moved("ratingNumeric")),
            tuple(c for c in changes if c.moved("countryRank")),
            tuple(moves[:largest])))
    return ReleaseDiff(added, removed, changed, tuple(models))


def format_diff(diff: ReleaseDiff, old: str | None, new: str) -> str:
    out = [f"{old or '(nothing)'} → {new}: {diff.headline()}"]
    for m in diff.models:
        if not (m.class_changes or m.rating_changes or m.rank_changes or m.largest_moves):
            continue
        out.append(f"  {m.model}: {len(m.class_changes)} class, {len(m.rating_changes)} rating and "
                   f"{len(m.rank_changes)} rank changes")
        for c in m.class_changes:
            out.append(f"    {c.code}: {_value(c.old, 'riskClassificationCategorical')} → "
                       f"{_value(c.new, 'riskClassificationCategorical')}")
        if m.largest_moves:
            out.append("    largest score moves: " + ", ".join(
                f"{c.code} {_value(c.old, 'score')} → {_value(c.new, 'score')} ({c.score_move:+g})"
                for c in m.largest_moves))
    return "\n".join(out)


def _value(result: dict | None, key: str):
    return "not scored" if result is None else result.get(key)
