"""Where a build's time goes beyond its floor: py-spy samples a build of the demo (2 jobs, in memory:
/dev/shm) in every process and thread, and each sample is counted to the innermost part it is in. The
floor's own work (serialising, compressing, writing) is what the floor benchmark does too; the rest is
what the build adds above it (benchmarks/build.py measures the two). Needs py-spy (the bench extra).

    python3 -m benchmarks.build_profile [--jobs 2] [--rate 250]
"""
from __future__ import annotations

import argparse
import collections
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from .common import ROOT, record

# (part, whether the floor does it too, a frame it is in: the innermost frame that matches decides)
PARTS = (
    ("compressing (gzip, brotli)", True, r"^(deflate|crc32|zlib_|Brotli|compress_stream|_BrotliStream|GzipPartFile)"),
    ("serialising JSON (orjson)", True, r"orjson"),
    ("writing files", True, r"^(write|writev|open64|openat|close|fsync|syncfs|rename|unlinkat|fstatat64|mkdir)\b"
                            r"|^ReleaseFiles\.(write|_hand_over)"),
    ("validating (JSON Schema)", False, r"is_valid|^ValidatedWriter\._check|jsonschema"),
    ("hashing (manifest, tree, row groups)", False, r"sha256|_hashlib|HASH"),
    ("Parquet exports and panel", False, r"generator/building/render/parquet\.py|generator/switch/panel\.py|pyarrow"),
    ("export rows (CSV, JSON Lines)", False, r"generator/building/render/exports\.py|_csv\.c"),
    ("importing modules as the build runs", False, r"<frozen importlib"),
    ("rendering the documents", False, r"generator/building/render/"),
    ("scoring", False, r"generator/building/scoring/"),
    ("loading the CSVs", False, r"generator/building/load/"),
    ("the release's files, manifest and tree", False, r"generator/building/(output|release_tree|writer)"),
)
FLOOR = {name for name, in_floor, _ in PARTS if in_floor}
BUILD = "build (generator/publish/build_release.py"  # a sample outside it is the script's imports: not timed


def part_of(frames: list[str]) -> str | None:
    """Return the part a sample's stack (root first) is in: its innermost frame that names one; None outside the
    build (the imports before it starts, as the build benchmark's clock starts after them)."""
    if not any(frame.startswith(BUILD) for frame in frames) and not any("_process_worker" in f for f in frames):
        return None
    for frame in reversed(frames):
        for name, _, pattern in PARTS:
            if re.search(pattern, frame):
                return name
    return "other (the workers' hand-over, waiting, Python itself)"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--rate", type=int, default=250)
    parser.add_argument("--data", default="data")
    args = parser.parse_args()
    if not shutil.which("py-spy"):
        sys.exit("py-spy is missing: pip install -e '.[bench]'")
    folder = Path(tempfile.mkdtemp(prefix="bench-build-profile-", dir="/dev/shm"))
    try:
        script = folder / "build.py"
        script.write_text("from pathlib import Path\nfrom generator.publish.build_release import build\n"
                          f"build(Path({str(Path(args.data).resolve())!r}), Path({str(folder / 'site')!r}), "
                          f"jobs={args.jobs})\n")
        samples = folder / "samples.raw"
        subprocess.run(["py-spy", "record", "--subprocesses", "--threads", "--native", "-r", str(args.rate), "-f", "raw",
                        "-o", str(samples), "--", sys.executable, str(script)], cwd=ROOT, check=True,
                       capture_output=True, timeout=600)
        counts: collections.Counter[str] = collections.Counter()
        lines_above: collections.Counter[str] = collections.Counter()  # the project's innermost line, above the floor
        for line in samples.read_text().splitlines():
            stack, _, count = line.rpartition(" ")
            frames = stack.split(";")
            part = part_of(frames)
            if part is not None:
                counts[part] += int(count)
                ours = [frame for frame in frames if "(generator/" in frame]
                if ours and part not in FLOOR:
                    lines_above[ours[-1]] += int(count)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    total = sum(counts.values())
    lines = [f"py-spy at {args.rate} Hz over a build of `data/` with {args.jobs} jobs in memory, every process and "
             f"thread ({total} samples, imports left out); each sample counted to the innermost part it is in:", "",
             "| part | share of the build's samples | the floor does it too |", "|---|---|---|"]
    lines += [f"| {name} | {100 * n / total:.1f} % | {'yes' if name in FLOOR else 'no'} |"
              for name, n in counts.most_common()]
    above = sum(n for name, n in counts.items() if name not in FLOOR)
    lines += ["", f"- Above the floor's work: {100 * above / total:.0f} % of the samples; the project's lines most "
                  "sampled there (the innermost of its frames): "
                  + ", ".join(f"`{frame}` {100 * n / total:.1f} %" for frame, n in lines_above.most_common(6))]
    record("Build profile", f"python3 -m benchmarks.build_profile --jobs {args.jobs}", lines)


if __name__ == "__main__":
    main()
