"""Each model's share of a build: score → render → validate → write its endpoint 3 and 4 documents and
its export rows. In the build's own process (one job), or in worker processes forked after the rest of the
data folder is read (`riskapi build --jobs N`), each reading its model's observations and writing its
model's files, twins included, into the release itself.

The release is the same, file for file and byte for byte, whatever the number of jobs: a model's
documents depend on its own data only, every file has the release's one mtime, and the parent takes
the models' results in the models' order."""
from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Iterator

import orjson

from ..contract import locations
from ..errors import Problem
from .load import LoadedModels
from .load.records import Country, ModelData, ModelDefinition, ModelObservations, observation_count
from .output.release_files import ReleaseFiles
from .render import render_country_model_scores, render_model_lists
from .render.changes import Sections, current_sections
from .render.exports import ExportChunks, ExportFile
from .scoring import CurrentScores, score_model
from .validate import DocumentValidator
from .writer import ReleaseWriter

__all__ = ["ModelBuild", "ModelJob", "ModelWorkers", "ObservationProblems", "StageClock", "ValidatedWriter",
           "default_jobs"]
EXAMPLE_BYTES = 16_384  # of a bulk export, kept to show its first lines


class StageClock:
    """Adds the time of each call to its stage (load, score, render, validate, publish)."""

    def __init__(self, stages: dict[str, float]):
        self.stages = stages

    def run(self, stage: str, function: Callable[..., Any], *args: Any) -> Any:
        started = time.perf_counter()
        try:
            return function(*args)
        finally:
            self.stages[stage] = self.stages.get(stage, 0.0) + time.perf_counter() - started


class ValidatedWriter:
    """Validates each document against its route's schema, serialises it and hands it to the release writer;
    keeps every schema violation (nothing is published if there is one) and the documents the reference shows."""

    def __init__(self, writer: ReleaseFiles, validator: DocumentValidator, clock: StageClock,
                 example_files: set[str], progress: Callable[[int, int], None] | None, total: int):
        self.writer, self.validator, self.clock = writer, validator, clock
        self.example_files, self.progress, self.total = example_files, progress, total
        self.failures: list[str] = []
        self.examples: dict[str, object] = {}  # by file: real answers for the HTML reference
        self.documents = 0

    def add(self, rendered: Iterable[tuple[locations.Route, object]]) -> None:
        for route, document in rendered:
            self.add_one(route, document)

    def add_one(self, route: locations.Route, document: object) -> None:
        """Add a document (a dict or list), or an export (its parts: no schema, written as they are)."""
        if isinstance(document, ExportFile):
            if route.file in self.example_files:  # of an export, its beginning is enough
                self.examples[route.file] = document.head(EXAMPLE_BYTES)
            self.clock.run("publish", self.writer.write_parts, route.file, document.parts,
                           document.gzip_parts, document.whole)
        else:
            if route.file in self.example_files:
                self.examples[route.file] = document
            errors = self.clock.run("validate", self.validator.errors, route, document) if route.schema else []
            if errors:
                self.failures.extend(errors)
                return
            self.clock.run("publish", self.writer.write, route.file, self.clock.run("render", orjson.dumps, document))
        self.documents += 1
        if self.progress:
            self.progress(1, self.total)


@dataclass
class ModelJob:
    """What every model's build needs; worker processes inherit it when they fork. The observations
    are read here (`observations`, by model: each dropped once its model is built) or, by the build's
    worker processes, each model's in the process that builds it (`loaded`: the rest of the folder)."""

    countries: tuple[Country, ...]
    definitions: tuple[ModelDefinition, ...]
    observations: dict[str, ModelObservations] | None
    loaded: LoadedModels | None
    validator: DocumentValidator
    example_files: set[str]
    total: int  # documents in the release, for the progress bar


class ObservationProblems(Exception):
    """A model's observations file has problems (its worker found them): the build reads the whole data
    folder again to say every problem at once, as a build with one job does."""


@dataclass
class ModelBuild:
    """What the rest of the build needs of one built model."""

    code: str
    current: CurrentScores  # for endpoints 1 and 5
    score_list: dict  # its endpoint 3 document, for the diff
    sections: Sections  # each country's current section scores, for the change document
    examples: dict[str, object]
    failures: list[str]
    documents: int
    stages: dict[str, float]
    # Written by a worker process: its files' manifest entries, for the parent's writer to take
    files: dict[str, dict] = field(default_factory=dict)
    linked: int = 0
    bytes: int = 0
    # Read by a worker process: the warnings of its observations, and how many there are (the guard's)
    warnings: tuple[Problem, ...] = ()
    observed: int = 0


def default_jobs() -> int:
    """Return the cores this process may run on."""
    return len(os.sched_getaffinity(0))


def build_model(job: ModelJob, definition: ModelDefinition, observations: ModelObservations, writer: ReleaseFiles,
                exports: ExportChunks, progress: Callable[[int, int], None] | None,
                stages: dict[str, float] | None = None) -> ModelBuild:
    """Score one model, and render, validate and write its documents and its export rows."""
    stages = {} if stages is None else stages
    clock = StageClock(stages)
    out = ValidatedWriter(writer, job.validator, clock, job.example_files, progress, job.total)
    model = definition.model
    scores = clock.run("score", score_model, job.countries, ModelData(definition, observations))
    lists = clock.run("render", render_model_lists, scores, job.countries)
    out.add(lists)
    sections: Sections = {}
    with exports.model(model.code, model.custom) as export_rows:
        for country in job.countries:  # endpoint 4 of every country: also the rows of the bulk exports
            document = clock.run("render", render_country_model_scores, scores, scores.countries[country.code])
            out.add_one(locations.country_model_scores(model.code, country.code), document)
            clock.run("publish", export_rows.write, clock.run("render", export_rows.render, document))
            sections[country.code] = current_sections(document)
    out.add(exports.render_model(model.code))
    scores_route = locations.model_scores(model.code)
    return ModelBuild(model.code, CurrentScores.of(scores), dict(lists)[scores_route], sections,
                      out.examples, out.failures, out.documents, stages)


_JOB: tuple[ModelJob, ReleaseWriter, ExportChunks] | None = None  # set in the parent before its workers fork


def _build_in_worker(index: int) -> ModelBuild:
    """Build one model in a worker process: read its observations here and write its files here (with their
    twins) into the release."""
    assert _JOB is not None, "a model worker runs only in a process forked by ModelWorkers"
    job, writer, exports = _JOB
    assert job.loaded is not None, "the workers read the observations"
    definition, log = job.definitions[index], job.loaded.log  # this process's copy of the log
    problems, warned = log.total, len(log.warnings)
    started = time.perf_counter()
    observations = job.loaded.observations(definition)
    if log.total > problems:
        raise ObservationProblems(definition.model.code)
    part = writer.part()
    built = build_model(job, definition, observations, part, exports, None,
                        {"load": time.perf_counter() - started})
    part.flush()
    built.files, built.linked, built.bytes = part.files, part.linked, part.bytes
    built.warnings, built.observed = tuple(log.warnings[warned:]), observation_count(observations)
    return built


class ModelWorkers:
    """Where a build's models are built: here with one job, else in the writer's worker processes (they
    fork when the first model is submitted, inheriting the job, the writer and the exports' scratch
    folder; once the models are built they write the rest of the release's files)."""

    def __init__(self, job: ModelJob, writer: ReleaseWriter, exports: ExportChunks):
        self.job, self.writer, self.exports = job, writer, exports
        self.parallel = job.observations is None  # the workers read them
        assert not self.parallel or writer.workers > 1, "reading observations in workers needs workers"

    def __enter__(self) -> "ModelWorkers":
        global _JOB
        _JOB = (self.job, self.writer, self.exports)
        return self

    def __exit__(self, *_: object) -> None:
        global _JOB
        _JOB = None
        if self.job.observations is not None:
            self.job.observations.clear()

    def models(self, out: ValidatedWriter) -> Iterator[ModelBuild]:
        """Yield every model's build, in the models' order, and the public models' exports once their rows are
        all written: here with one job, else in the workers (the largest models first, the next free
        worker taking the next, so none is left with a large one at the end; the exports' copies are
        made here and their twins by the workers while the last models are built)."""
        job, definitions = self.job, self.job.definitions
        if not self.parallel:
            assert job.observations is not None
            for definition in definitions:
                # popped: only this model's observations are held while it is built
                built = build_model(job, definition, job.observations.pop(definition.model.code), self.writer,
                                    self.exports, out.progress)
                yield built
            out.add(self.exports.render_public())
            return
        for definition in definitions:
            self.exports.register(definition.model.code, definition.model.custom)
        assert job.loaded is not None
        # How much work a model is: the results its documents hold a country and year (the model's, each
        # section's, each indicator's), then its observations' bytes. On the demo this orders the models
        # as their build times do (sdg 1.69 s … acme_aml 0.48 s); the bytes alone put supplychainrisk
        # (0.59 s) last, and the other worker waited for it.
        work = [(1 + len(d.sections) + len(d.indicators), job.loaded.observations_bytes(d)) for d in definitions]
        largest_first = sorted(range(len(definitions)), key=lambda i: work[i], reverse=True)
        futures = {index: self.writer.submit(_build_in_worker, index) for index in largest_first}
        for index, definition in enumerate(definitions):
            if not definition.model.custom:
                self.writer.result(futures[index])  # raises what the model's build raised
        out.add(self.exports.render_public())
        for index in range(len(definitions)):
            built = self.writer.result(futures[index])
            self.writer.merge(built.files, built.linked, built.bytes)
            if out.progress:
                out.progress(built.documents, job.total)
            yield built
