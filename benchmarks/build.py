"""Build benchmark: a full build of the demo data, per stage and peak memory, against the floor of
serialising, writing and gzipping the same bytes with no computation, measured in the same run.

    python3 -m benchmarks.build [--runs 3] [--data data]
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

from .common import fmt, record, run_json, summary


def measure_build(data: str) -> None:
    """One full build into a fresh site folder; prints stage times, totals and peak memory as JSON."""
    from generator.build import build
    site = Path(tempfile.mkdtemp(prefix="bench-build-"))
    try:
        started = time.perf_counter()
        report = build(Path(data), site)
        wall = time.perf_counter() - started
    finally:
        shutil.rmtree(site, ignore_errors=True)
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"wall": wall, "stages": report.stages, "documents": report.documents, "bytes": report.bytes,
                      "peak_mb": peak_mb}))


def measure_floor(data: str) -> None:
    """The same documents, already in memory as objects: serialise, write and compress them, and the
    exports' bytes (2 threads)."""
    import orjson

    from generator.build import build
    from generator.publish import COMPRESSED_FORMS, GZIP_MIN_BYTES
    source = Path(tempfile.mkdtemp(prefix="bench-floor-src-"))
    target = Path(tempfile.mkdtemp(prefix="bench-floor-"))
    try:
        build(Path(data), source)
        release = source / "current"
        documents = [(p.relative_to(release), orjson.loads(p.read_bytes())) for p in release.rglob("index.json")]
        exports = [(p.relative_to(release), p.read_bytes()) for p in release.rglob("scores.*")
                   if p.suffix in (".csv", ".jsonl")]  # the bulk exports: written and compressed as they are
        started = time.perf_counter()

        def write(relative, body: bytes) -> None:
            path = target / relative
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(body)
            if len(body) > GZIP_MIN_BYTES:
                for suffix, compressor in COMPRESSED_FORMS:  # the same .gz and .br a release carries
                    stream = compressor()
                    path.with_name(path.name + suffix).write_bytes(stream.compress(body) + stream.flush())

        with ThreadPoolExecutor(2) as pool:
            for relative, document in documents:
                pool.submit(write, relative, orjson.dumps(document))
            for relative, body in exports:
                pool.submit(write, relative, body)
        wall = time.perf_counter() - started
    finally:
        shutil.rmtree(source, ignore_errors=True)
        shutil.rmtree(target, ignore_errors=True)
    print(json.dumps({"wall": wall, "documents": len(documents)}))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--data", default="data")
    parser.add_argument("--measure", choices=["build", "floor"], help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure == "build":
        return measure_build(args.data)
    if args.measure == "floor":
        return measure_floor(args.data)
    # Where the files go: the real disk (writeback stalls make it noisy) and memory (/dev/shm:
    # what the computation costs against the floor, without the disk).
    placements = {"disk": os.environ.get("TMPDIR", tempfile.gettempdir()), "memory": "/dev/shm"}
    lines = []
    for placement, folder in placements.items():
        env = {**os.environ, "TMPDIR": folder}
        builds, floors = [], []
        for _ in range(args.runs):  # interleaved, so both see the same machine noise
            floors.append(run_json(["-m", "benchmarks.build", "--measure", "floor", "--data", args.data], env=env))
            builds.append(run_json(["-m", "benchmarks.build", "--measure", "build", "--data", args.data], env=env))
        build_wall = summary([b["wall"] for b in builds])
        floor_wall = summary([f["wall"] for f in floors])
        ratios = summary([b["wall"] / f["wall"] for b, f in zip(builds, floors)])
        stages = {stage: summary([b["stages"][stage] for b in builds]) for stage in builds[0]["stages"]}
        first = builds[0]
        if not lines:
            lines.append(f"- documents: {first['documents']}, {first['bytes'] / 1e6:.1f} MB (JSON, and the CSV and "
                         "JSON Lines exports of the public models and of each model; plus .gz and .br beside files over 1 KB)")
        lines += [
            f"- **{placement}** (`{folder}`): full build {fmt(build_wall)}; peak memory "
            f"{max(b['peak_mb'] for b in builds):.0f} MB; floor (orjson + write + gzip and brotli of the same "
            f"documents and exports, 2 threads) {fmt(floor_wall)}",
            f"  - **build / floor: {ratios['median']:.1f}×** (min {ratios['min']:.1f}, max {ratios['max']:.1f}); "
            f"goal ≤ 3× {'met' if ratios['median'] <= 3 else 'not met'}",
            "  - stages (median): " + ", ".join(f"{s} {v['median']:.2f}s" for s, v in stages.items()),
        ]
    record("Build", f"python3 -m benchmarks.build --runs {args.runs}", lines)

if __name__ == "__main__":
    sys.exit(main())
