"""One build: load → score → render → validate → publish, returning a report."""
from __future__ import annotations

import contextlib
import gc
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import orjson

from .diff import ReleaseDiff, diff_releases, format_diff
from .errors import DataError, Problem, RiskApiError, ValidationFailed
from .load import Dataset, load_dataset
from .openapi import build_openapi
from .publish import CHANGES, ReleaseWriter
from .render import count_documents, render_all
from .render.pages import ReleaseChanges, example_routes, render_pages
from .routes import openapi
from .scoring import ModelScores, score_dataset, score_model
from .serve.maps import render_release_maps
from .validate import SCHEMA_DIR, DocumentValidator


@dataclass
class BuildReport:
    release: str | None = None
    changes: ReleaseDiff | None = None  # against the release that was current before
    documents: int = 0
    bytes: int = 0
    linked: int = 0
    countries: int = 0
    models: int = 0
    warnings: tuple[Problem, ...] = ()
    stages: dict[str, float] = field(default_factory=dict)

    @property
    def seconds(self) -> float:
        return sum(self.stages.values())


class _Stopwatch:
    """Adds elapsed time to stages; time spent in `timed` calls is not counted twice."""

    def __init__(self, stages: dict[str, float]):
        self.stages = stages
        self._inner = 0.0

    def add(self, stage: str, since: float) -> float:
        now = time.perf_counter()
        self.stages[stage] = self.stages.get(stage, 0.0) + now - since - self._inner
        self._inner = 0.0
        return now

    def timed(self, stage: str, function, *args):
        started = time.perf_counter()
        result = function(*args)
        elapsed = time.perf_counter() - started
        self.stages[stage] = self.stages.get(stage, 0.0) + elapsed
        self._inner += elapsed
        return result


@contextlib.contextmanager
def cyclic_gc_paused():
    """Pause Python's cyclic garbage collector for one build.

    A build makes millions of small acyclic objects (freed by reference counting); the cyclic
    collector would scan all live ones again and again, which cost a third of the build time and
    made it grow faster than linearly with the data (benchmarks/scale.py).
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def load(data_dir: Path, strict: bool, report: BuildReport) -> Dataset:
    """The load stage, shared by `build` and `check`."""
    started = time.perf_counter()
    dataset = load_dataset(data_dir)
    _Stopwatch(report.stages).add("load", started)
    report.warnings = dataset.warnings
    report.countries, report.models = len(dataset.countries), len(dataset.models)
    if strict and dataset.warnings:
        raise DataError(list(dataset.warnings), heading=f"{data_dir} has warnings, and --strict makes them errors")
    return dataset


def load_and_score(data_dir: Path, strict: bool, report: BuildReport) -> tuple[Dataset, tuple[ModelScores, ...]]:
    """Load and score everything at once (for `check`, which writes nothing)."""
    with cyclic_gc_paused():
        dataset = load(data_dir, strict, report)
        started = time.perf_counter()
        scores = score_dataset(dataset)
        _Stopwatch(report.stages).add("score", started)
    return dataset, scores


class TooManyClassChanges(RiskApiError):
    """A data release would move more countries between risk classes than the operator allows."""


def build(data_dir: Path, site_dir: Path, strict: bool = False,
          progress: Callable[[int, int], None] | None = None, schema_dir: Path = SCHEMA_DIR,
          max_class_changes: int | None = None) -> BuildReport:
    """Build every document from data_dir and publish them as a new current release of site_dir.

    With `max_class_changes`, a release that moves more countries between risk classes than that
    is not published (a guard against a broken data release)."""
    with cyclic_gc_paused():
        return _build(data_dir, site_dir, strict, progress, schema_dir, max_class_changes)


def _build(data_dir: Path, site_dir: Path, strict: bool, progress, schema_dir: Path,
           max_class_changes: int | None) -> BuildReport:
    report = BuildReport()
    dataset = load(data_dir, strict, report)
    clock = _Stopwatch(report.stages)
    validator = DocumentValidator(schema_dir)
    documents = list_documents(dataset, scored_one_by_one(dataset, clock), validator)
    total = count_documents(dataset)
    writer = ReleaseWriter(site_dir)
    failures: list[str] = []
    wanted = {route.file: (kind, route) for kind, route in example_routes(dataset).items()}
    examples: dict[str, tuple] = {}
    try:
        started = time.perf_counter()
        for route, document in documents:
            if route.file in wanted:
                kind, _ = wanted[route.file]
                examples[kind] = (route, document)  # real answers for the HTML reference
            started = clock.add("render", started)
            errors = validator.errors(route, document) if route.schema else []
            started = clock.add("validate", started)
            if errors:
                failures.extend(errors)
                continue
            body = orjson.dumps(document)
            started = clock.add("render", started)
            writer.write(route.file, body)
            report.documents += 1
            started = clock.add("publish", started)
            if progress:
                progress(1, total)
        if failures:
            raise ValidationFailed(failures)
        for path, body in render_release_maps(dataset).items():
            writer.write(path, body)
        started = time.perf_counter()
        writer.flush()
        report.changes = diff_releases(writer.previous_dir, writer.folder, new_files=writer.files)
        if max_class_changes is not None and report.changes.class_changes > max_class_changes:
            raise TooManyClassChanges(
                f"not published: {report.changes.class_changes} countries would change risk class, more than "
                f"--max-class-changes {max_class_changes}\n"
                + format_diff(report.changes, writer.previous, "this build"))
        clock.add("publish", started)
        for path, body in render_pages(dataset, examples, cli_commands(),
                                       ReleaseChanges(writer.previous, writer.id, report.changes)).items():
            writer.write(path, body)
        started = time.perf_counter()
        writer.finish()
        (writer.folder / CHANGES).write_text(format_diff(report.changes, writer.previous, writer.id) + "\n")
        release = writer.commit()
        clock.add("publish", started)
    except BaseException:
        writer.abort()
        raise
    report.release, report.bytes, report.linked = release.id, writer.bytes, writer.linked
    return report


def cli_commands() -> list[tuple[str, str]]:
    """Every riskapi command with its one-line help, for the reference page."""
    import click

    from .cli import main

    def walk(group: click.Group, prefix: str):
        for name, command in sorted(group.commands.items()):
            if isinstance(command, click.Group):
                yield from walk(command, f"{prefix} {name}")
            else:
                yield f"{prefix} {name}", command.get_short_help_str(limit=120)
    return list(walk(main, "riskapi"))


def scored_one_by_one(dataset: Dataset, clock: _Stopwatch):
    """Score each model when rendering reaches it; once its documents are out, drop its raw data,
    which this build owns, so memory holds about one model's series at a time."""
    for data in dataset.models:
        yield clock.timed("score", score_model, dataset, data)
        data.observations.clear()


def list_documents(dataset: Dataset, scores, validator: DocumentValidator):
    """Every (route, document) of a release, openapi.json last."""
    yield from render_all(dataset, scores)
    public_models = [m.model.code for m in dataset.models if not m.model.custom]
    yield openapi(), build_openapi(validator.schemas, public_models, [c.code for c in dataset.countries[:3]])

