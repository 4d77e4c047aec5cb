"""Scale benchmark: the demo generator at 1×, 4× and 10× entities (countries; plus more models and
years on request), to show how build time and peak memory grow; prints the growth exponent, and
the floor (benchmarks.build's: the same bytes serialised, written and compressed) at each scale.

    python3 -m benchmarks.scale [--factors 1,4,10] [--models 6] [--years 17] [--in-memory] [--jobs N]

--in-memory builds into /dev/shm: the growth of the computation without the disk's writeback,
which bounds the 10× build's publish stage (2.5 GB written) on this machine.
"""
from __future__ import annotations

import argparse
import math
import os
import shutil
import tempfile
from pathlib import Path

from .common import record, run_json


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--factors", default="1,4,10")
    parser.add_argument("--models", type=int, default=6)
    parser.add_argument("--years", type=int, default=17)
    parser.add_argument("--in-memory", action="store_true", help="build into /dev/shm instead of the disk")
    parser.add_argument("--jobs", type=int, default=None, help="riskapi build --jobs [default: one per core]")
    args = parser.parse_args()
    env = {**os.environ, "TMPDIR": "/dev/shm"} if args.in_memory else None
    from generator.building.model_jobs import default_jobs
    from tools.synthetic_data import DemoSpec, write_demo_data
    jobs = args.jobs or default_jobs()
    rows = []
    for factor in (int(f) for f in args.factors.split(",")):
        folder = Path(tempfile.mkdtemp(prefix=f"bench-scale-{factor}-"))
        try:
            countries = 249 * factor
            write_demo_data(DemoSpec.make(countries=countries, models=args.models, years=args.years,
                                          last_year=2026), folder)
            result = run_json(["-m", "benchmarks.build", "--measure", "build", "--data", str(folder),
                               "--jobs", str(jobs)], timeout=3600, env=env)
            # the floor at the same scale: what serialising, writing and compressing the same bytes
            # costs there (a build's bytes outgrow the disk's writeback where the floor's do too)
            result["floor"] = run_json(["-m", "benchmarks.build", "--measure", "floor", "--data", str(folder)],
                                       timeout=3600, env=env)["wall"]
            rows.append((factor, countries, result))
        finally:
            shutil.rmtree(folder, ignore_errors=True)
    base_factor, _, base = rows[0]
    lines = ["| entities | countries | documents | MB | build s | × time | floor s | × floor time | build / floor | "
             "peak MB (largest process) | peak MB in all (PSS) | stages (summed over the processes) |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for factor, countries, r in rows:
        stages = ", ".join(f"{k} {v:.1f}" for k, v in r["stages"].items())
        lines.append(f"| {factor}× | {countries} | {r['documents']} | {r['bytes'] / 1e6:.0f} | {r['wall']:.1f} | "
                     f"{r['wall'] / base['wall']:.2f} | {r['floor']:.1f} | {r['floor'] / base['floor']:.2f} | "
                     f"{r['wall'] / r['floor']:.2f} | {r['peak_mb']:.0f} | {r['peak_all_mb']:.0f} | {stages} |")
    last_factor, _, last = rows[-1]
    exponent = math.log(last["wall"] / base["wall"]) / math.log(last_factor / base_factor)
    lines += ["", f"- growth exponent of build time in entities: **{exponent:.2f}** (1.0 is linear; goal: "
                  f"{last_factor}× entities ≤ {last_factor * 1.1:.0f}× time: "
                  f"{'met' if last['wall'] / base['wall'] <= last_factor * 1.1 else 'not met'})",
              f"- per output byte instead of per entity ({last['bytes'] / base['bytes']:.2f}× the bytes at "
              f"{last_factor}×; the generator's 1× holds sparse territories, its made-up countries are all full): "
              f"exponent **{math.log(last['wall'] / base['wall']) / math.log(last['bytes'] / base['bytes']):.2f}**",
              f"- the floor (the same bytes serialised, written and compressed, 2 threads) grows "
              f"{last['floor'] / base['floor']:.2f}× at {last_factor}×; the build / floor ratio goes from "
              f"{base['wall'] / base['floor']:.2f} to {last['wall'] / last['floor']:.2f} ("
              + ("not rising beyond 5 %: the build grows no faster than writing its bytes does on this machine"
                 if last['wall'] / last['floor'] <= 1.05 * base['wall'] / base['floor'] else
                 "rising: the build's cost per byte grows faster than the floor's") + ")",
              f"- peak memory at {last_factor}×: {last['peak_mb']:.0f} MB the largest process, "
              f"{last['peak_all_mb']:.0f} MB in all (the processes' proportional set sizes; goal < 1500 MB in all: "
              f"{'met' if last['peak_all_mb'] < 1500 else 'not met'})"]
    flag = " --in-memory" if args.in_memory else ""
    record("Scale (in memory)" if args.in_memory else "Scale",
           f"python3 -m benchmarks.scale --factors {args.factors}{flag} --jobs {jobs}", lines)


if __name__ == "__main__":
    main()
