"""Build benchmark: a full build of the demo data, per stage and peak memory, against the floor of
serialising, writing and gzipping the same bytes with no computation, measured in the same run.

    python3 -m benchmarks.build [--runs 3] [--data data] [--jobs 1,2]

Each build runs with each number of jobs (`riskapi build --jobs N`: N processes build the models); the
floor uses 2 threads, the cores of the machine this was written for.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from .common import fmt, pss_kib, record, run_json, summary

GOAL, GOAL_JOBS = 1.5, 2  # build / floor with 2 jobs; one job's goal is to be no slower than before


def _family(pid: int) -> set[int]:
    from generator.system.processes import children
    found, todo = {pid}, [pid]
    while todo:
        for child in children(todo.pop()) - found:
            found.add(child)
            todo.append(child)
    return found


def measure_build(data: str, jobs: int, sample_memory: bool) -> None:
    """Measure one full build into a fresh site folder; prints stage times (summed over its processes), totals,
    the peak memory of its largest process, and with `sample_memory` of the build in all: the largest
    sum, sampled every 0.25 s, of the proportional set sizes of the build and its workers (pages shared
    since the fork once). Sampling is not timed: reading a 300 MB process's PSS takes ~9 ms, which the
    kernel spends walking the page tables the workers fault in."""
    import threading

    from generator.publish.build_release import build
    site = Path(tempfile.mkdtemp(prefix="bench-build-"))
    peak_all, done = [0.0], threading.Event()

    def sample() -> None:
        while not done.wait(0.25):
            peak_all[0] = max(peak_all[0], pss_kib(_family(os.getpid())) / 1024)
    sampler = threading.Thread(target=sample, daemon=True)
    os.sync()  # what earlier runs left dirty (the floor's files, removed trees) is not this build's to write
    if sample_memory:
        sampler.start()
    try:
        started = time.perf_counter()
        report = build(Path(data), site, jobs=jobs)
        wall = time.perf_counter() - started
    finally:
        done.set()
        if sample_memory:
            sampler.join()
        shutil.rmtree(site, ignore_errors=True)
    own, children = (resource.getrusage(who).ru_maxrss / 1024 for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN))
    print(json.dumps({"wall": wall, "stages": report.stages, "documents": report.documents, "bytes": report.bytes,
                      "peak_mb": max(own, children), "peak_all_mb": peak_all[0]}))


def measure_floor(data: str) -> None:
    """Measure the floor: the same documents, already in memory as objects: serialise, write and compress them, and the
    exports' bytes (2 threads)."""
    import orjson

    from generator.building.output.twins import COMPRESSED_FORMS
    from generator.contract.serving import has_twins
    from generator.publish.build_release import build
    from generator.system.files import sync_tree
    source = Path(tempfile.mkdtemp(prefix="bench-floor-src-"))
    target = Path(tempfile.mkdtemp(prefix="bench-floor-"))
    try:
        build(Path(data), source)
        release = source / "current"
        documents = [(p.relative_to(release), orjson.loads(p.read_bytes())) for p in release.rglob("index.json")]
        exports = [(p.relative_to(release), p.read_bytes()) for p in release.rglob("scores.*")
                   if p.suffix in (".csv", ".jsonl")]  # the bulk exports: written and compressed as they are
        os.sync()  # the source release written above is on disk before the clock starts, not during
        started = time.perf_counter()

        def write(relative, body: bytes) -> None:
            path = target / relative
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(body)
            if has_twins(str(relative), len(body)):
                for suffix, compressor in COMPRESSED_FORMS:  # the same .gz and .br a release carries
                    stream = compressor()
                    path.with_name(path.name + suffix).write_bytes(stream.compress(body) + stream.flush())

        with ThreadPoolExecutor(2) as pool:
            for relative, document in documents:
                pool.submit(write, relative, orjson.dumps(document))
            for relative, body in exports:
                pool.submit(write, relative, body)
        wall = time.perf_counter() - started
        sync_tree(target)  # as a build puts its release on disk before naming it (files.sync_tree)
        synced = time.perf_counter() - started
    finally:
        shutil.rmtree(source, ignore_errors=True)
        shutil.rmtree(target, ignore_errors=True)
    print(json.dumps({"wall": wall, "synced": synced, "documents": len(documents)}))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--data", default="data")
    parser.add_argument("--jobs", default="1,2", help="numbers of jobs to build with, comma-separated")
    parser.add_argument("--measure", choices=["build", "floor"], help=argparse.SUPPRESS)
    parser.add_argument("--sample-memory", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure == "build":
        return measure_build(args.data, int(args.jobs), args.sample_memory)
    if args.measure == "floor":
        return measure_floor(args.data)
    jobs = [int(n) for n in args.jobs.split(",")]
    # Where the files go: the real disk (writeback stalls make it noisy) and memory (/dev/shm:
    # what the computation costs against the floor, without the disk). On disk every run starts with
    # the page cache written back (os.sync before the clock), so none writes what another left dirty;
    # the build's time holds the syncs that put its release on disk before it is named, the floor's none.
    placements = {"disk": os.environ.get("TMPDIR", tempfile.gettempdir()), "memory": "/dev/shm"}
    lines = []
    for placement, folder in placements.items():
        env = {**os.environ, "TMPDIR": folder}
        builds: dict[int, list[dict]] = {n: [] for n in jobs}
        floors = []
        for _ in range(args.runs):  # interleaved, so each sees the same machine noise
            floors.append(run_json(["-m", "benchmarks.build", "--measure", "floor", "--data", args.data], env=env))
            for n in jobs:
                builds[n].append(run_json(["-m", "benchmarks.build", "--measure", "build", "--data", args.data,
                                           "--jobs", str(n)], env=env))
        sampled = {n: run_json(["-m", "benchmarks.build", "--measure", "build", "--data", args.data, "--jobs", str(n),
                                "--sample-memory"], env=env) for n in jobs}  # one more, for its memory alone
        floor_wall, floor_synced = summary([f["wall"] for f in floors]), summary([f["synced"] for f in floors])
        first = builds[jobs[0]][0]
        if not lines:
            lines.append(f"- documents: {first['documents']}, {first['bytes'] / 1e6:.1f} MB (JSON, and the CSV and "
                         "JSON Lines exports of the public models and of each model; plus .gz and .br beside files over 1 KB)")
        lines.append(f"- **{placement}** (`{folder}`): floor (orjson + write + gzip and brotli of the same documents "
                     f"and exports, 2 threads) {fmt(floor_wall)}; synced as a release is (`syncfs`) "
                     f"{fmt(floor_synced)}")
        for n, runs in builds.items():
            ratios = summary([b["wall"] / f["wall"] for b, f in zip(runs, floors)])
            durable = summary([b["wall"] / f["synced"] for b, f in zip(runs, floors)])
            stages = {stage: summary([b["stages"][stage] for b in runs]) for stage in runs[0]["stages"]}
            lines += [
                f"  - `--jobs {n}`: full build {fmt(summary([b['wall'] for b in runs]))}; peak memory "
                f"{max(b['peak_mb'] for b in [*runs, sampled[n]]):.0f} MB the largest process, "
                f"{sampled[n]['peak_all_mb']:.0f} MB in all (PSS, one more build sampled); **build / floor: "
                f"{ratios['median']:.2f}×** (min {ratios['min']:.2f}, max {ratios['max']:.2f}); "
                + (f"goal ≤ {GOAL}× {'met' if ratios['median'] <= GOAL else 'not met'}; " if n == GOAL_JOBS else "")
                + "against the synced floor "
                f"**{durable['median']:.2f}×** (min {durable['min']:.2f}, max {durable['max']:.2f})",
                "    - stages (median, summed over the processes): "
                + ", ".join(f"{s} {v['median']:.2f}s" for s, v in stages.items()),
            ]
    record("Build", f"python3 -m benchmarks.build --runs {args.runs} --jobs {args.jobs}", lines)


if __name__ == "__main__":
    sys.exit(main())
