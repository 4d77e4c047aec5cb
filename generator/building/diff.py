"""What a release changes against another: documents, and per model the countries whose class,
rating or rank moved, with the largest score moves (`riskapi diff`, and a guard in `riskapi build`)."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import orjson

from ..contract import locations
from ..contract.words import counted
from ..history.site import read_manifest
from .output.twins import TWIN_SUFFIXES


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
            return f"first release: {counted(len(self.added), 'document')}"
        return (f"{counted(len(self.changed), 'document')} changed, {len(self.added)} added, {len(self.removed)} "
                f"removed; {counted(self.class_changes, 'country', 'countries')} changed risk class")


@dataclass(frozen=True)
class ReleaseSnapshot:
    """What a diff compares of a release: each API document's digest and each model's current results."""

    documents: dict[str, str]  # path of every API document -> sha256
    scores: dict[str, dict[str, dict]]  # model -> country code -> its current result as published
    observations: dict[str, int] = field(default_factory=dict)  # model -> observations loaded

    @classmethod
    def of(cls, files: dict[str, dict], score_lists: dict[str, dict],
           observations: dict[str, int] | None = None) -> "ReleaseSnapshot":
        """Read, by model, from a manifest's files and each model's endpoint 3 document (default ordering)."""
        # every file the API answers (its .gz/.br twins are the same bytes) but those that name their
        # release (they change with every build)
        return cls({path: entry["sha256"] for path, entry in files.items() if path.startswith("api/")
                    and not path.endswith(TWIN_SUFFIXES) and not locations.names_its_release(path)},
                   {model: current_results(document) for model, document in score_lists.items()},
                   observations or {})


def current_results(score_list: dict) -> dict[str, dict]:
    """Return each country's current result in an endpoint 3 document, by country code."""
    return {entry["entity"]["countryCode"]: entry["results"][0] for entry in score_list["data"]}


DATA_COUNTS = "data.json"  # what the release was built from: observations per model


def read_snapshot(release: Path) -> ReleaseSnapshot:
    """Return the snapshot of a release folder on disk."""
    files = read_manifest(release)
    counts = release / DATA_COUNTS
    observations = orjson.loads(counts.read_bytes())["observations"] if counts.is_file() else {}
    scores = {model: orjson.loads((release / locations.model_scores(model).file).read_bytes())
              for model in locations.score_list_models(files)}
    return ReleaseSnapshot.of(files, scores, observations)


def diff_releases(old: ReleaseSnapshot | None, new: ReleaseSnapshot, largest: int = 5) -> ReleaseDiff:
    """Compare two releases (a missing old release counts as empty and has no model changes)."""
    before = old.documents if old else {}
    after = new.documents
    added = tuple(sorted(set(after) - set(before)))
    removed = tuple(sorted(set(before) - set(after)))
    changed = tuple(sorted(p for p in set(before) & set(after) if before[p] != after[p]))
    models = []
    for model in sorted(set(old.scores) | set(new.scores)) if old else ():
        assert old is not None
        old_scores, new_scores = old.scores.get(model, {}), new.scores.get(model, {})
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


@dataclass(frozen=True)
class ChangeGuard:
    """Changes a data release rarely means: most often a file was cut short or a column went wrong."""

    max_lost_share: float = 0.10  # of a model's scored countries that would lose their score
    max_class_change_share: float = 0.25  # of the countries scored in both releases
    min_countries: int = 10  # below this many scored countries a share says little
    max_observations_lost_share: float = 0.5  # of a model's observations against the previous release

    def refusals(self, old: ReleaseSnapshot | None, new: ReleaseSnapshot, diff: ReleaseDiff) -> list[str]:
        """Return why publishing this release would be suspicious, one line per model; empty when it is not."""
        found = []
        for model, before in (old.observations if old else {}).items():
            after = new.observations.get(model, 0)
            if before and (before - after) / before > self.max_observations_lost_share:
                found.append(f"observations/{model}.csv holds {after:,} observations, {after / before:.0%} of the "
                             f"{before:,} of that release")
        for changes in diff.models if old else ():
            assert old is not None
            had, has = old.scores.get(changes.model, {}), new.scores.get(changes.model, {})
            if len(had) < self.min_countries:
                continue
            lost = len(set(had) - set(has))
            if lost / len(had) > self.max_lost_share:
                found.append(f"{changes.model} would lose the score of {lost} of its {len(had)} countries "
                             f"({lost / len(had):.0%}; the guard allows {self.max_lost_share:.0%})")
            both = len(set(had) & set(has))
            moved = sum(1 for c in changes.class_changes if c.old and c.new)
            if both and moved / both > self.max_class_change_share:
                found.append(f"{changes.model} would move {moved} of {both} countries to another risk class "
                             f"({moved / both:.0%}; the guard allows {self.max_class_change_share:.0%})")
        return found


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


def _value(result: dict | None, key: str) -> object:
    return "not scored" if result is None else result.get(key)
