"""Custom-model scaling: documents, bytes and build time with 20 bespoke models and 200 clients against 1 and 0.

The demo data with its one custom model (acme_aml) is the floor measured in the same run; the 20-model
case adds 19 copies of acme_aml, and 200 clients each hold 1 to 3 of the 20 (seeded), whose distinct
sets of several models get a variant of endpoints 1 and 5. Each build runs in a fresh process, in
/dev/shm (so the disk's writeback does not blur the computation's growth).

    python3 -m benchmarks.audiences [--runs 3] [--clients 200] [--models 20]
    python3 -m benchmarks.audiences --runs 1 --clients 1000 --models 100
"""
from __future__ import annotations

import argparse
import json
import random
import shutil
import tempfile
import time
from pathlib import Path

from .common import ROOT, fmt, record, run_json, summary


def measure(data: str, grants: str) -> None:
    """Measure one build of `data` with the grant sets in the JSON file `grants`; prints documents and time."""
    from generator.publish.build_release import build
    sets = [frozenset(g) for g in json.loads(Path(grants).read_text())]
    site = Path(tempfile.mkdtemp(prefix="bench-audiences-", dir="/dev/shm"))
    try:
        started = time.perf_counter()
        report = build(Path(data), site, grant_sets=sets)
        wall = time.perf_counter() - started
    finally:
        shutil.rmtree(site, ignore_errors=True)
    print(json.dumps({"wall": wall, "documents": report.documents, "bytes": report.bytes}))


def prepare(folder: Path, custom: int, clients: int, seed: int = 7) -> tuple[Path, Path, int]:
    """Return the demo data with `custom` custom models and the grant sets of `clients` clients."""
    from generator.contract.locations import audiences
    from tools.synthetic_data import add_model_copy
    data = folder / f"data-{custom}-{clients}"
    shutil.copytree(ROOT / "data", data)
    codes = ["acme_aml"] + [f"acme_aml_{n:02d}" for n in range(2, custom + 1)] if custom else []
    for code in codes[1:]:
        add_model_copy(data, "acme_aml", code)
    rng = random.Random(seed)
    sets = [sorted(rng.sample(codes, rng.randint(1, min(3, len(codes))))) for _ in range(clients)] if codes else []
    grants = folder / f"grants-{custom}-{clients}.json"
    grants.write_text(json.dumps(sets))
    return data, grants, len(audiences(tuple(codes), [frozenset(s) for s in sets]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--clients", type=int, default=200)
    parser.add_argument("--models", type=int, default=20)
    parser.add_argument("--measure", nargs=2, metavar=("DATA", "GRANTS"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure:
        measure(*args.measure)
        return
    folder = Path(tempfile.mkdtemp(prefix="bench-audiences-data-"))
    try:
        cases = [(1, 0), (1, args.clients), (args.models, 0), (args.models, args.clients)]
        rows = []
        for custom, clients in cases:
            data, grants, variants = prepare(folder, custom, clients)
            runs = [run_json(["-m", "benchmarks.audiences", "--measure", str(data), str(grants)])
                    for _ in range(args.runs)]
            rows.append((custom, clients, variants, runs[0]["documents"], runs[0]["bytes"],
                         summary([r["wall"] for r in runs])))
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    base_documents, base_bytes, base_time = rows[0][3], rows[0][4], rows[0][5]["median"]
    lines = ["| custom models | clients | audiences | documents | × documents | bytes | × bytes | build (in memory) "
             "| × time |", "|---|---|---|---|---|---|---|---|---|"]
    for custom, clients, variants, documents, size, wall in rows:
        lines.append(f"| {custom} | {clients} | {variants} | {documents:,} | {documents / base_documents:.2f} | "
                     f"{size / 1e6:,.0f} MB | {size / base_bytes:.2f} | {fmt(wall)} | {wall['median'] / base_time:.2f} |")
    (_, _, _, _, models_bytes, models_wall), (_, _, _, _, all_bytes, all_wall) = rows[2], rows[3]
    lines += ["", f"- **what {args.clients:,} clients add to {args.models} custom models: time "
              f"{all_wall['median'] / models_wall['median']:.2f}×, bytes {all_bytes / models_bytes:.2f}×** "
              f"(goal ≤ 1.1: the clients' audiences cost next to nothing beside the models)",
              "- each custom model adds its own endpoints 3 and 4 and its exports, and one audience; each "
              "distinct set of several models that clients hold adds one audience: the variants of endpoints 1 "
              "and 5 (the model list, the release document and one small document per country). No export "
              "depends on the audience. The floor is the first row, measured in the same run."]
    record(f"Custom models and clients: {args.models} and {args.clients:,}",
           f"python3 -m benchmarks.audiences --models {args.models} --clients {args.clients} --runs {args.runs}",
           lines)

if __name__ == "__main__":
    main()
