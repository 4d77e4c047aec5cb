"""Shared by the benchmarks: repeated measurements, summaries, and rows for BENCHMARKS.md."""
from __future__ import annotations

import datetime
import json
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "BENCHMARKS.md"


def median_ms(action, runs: int) -> float:
    """Return the median time of `action()` over `runs` calls, in milliseconds."""
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        action()
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


def summary(values: list[float]) -> dict:
    return {"median": statistics.median(values), "min": min(values), "max": max(values), "runs": len(values)}


def fmt(stats: dict, unit: str = "s", digits: int = 2) -> str:
    return (f"{stats['median']:.{digits}f}{unit} (min {stats['min']:.{digits}f}, max {stats['max']:.{digits}f}, "
            f"n={stats['runs']})")


def run_json(args: list[str], timeout: float = 1800, env: dict | None = None) -> dict:
    """Run a measurement in a fresh Python process (its own peak memory) and read its JSON line."""
    result = subprocess.run([sys.executable, *args], capture_output=True, text=True, timeout=timeout, cwd=ROOT,
                            env=env)
    if result.returncode != 0:
        raise RuntimeError(f"{' '.join(args)} failed:\n{result.stderr[-3000:]}")
    return json.loads(result.stdout.strip().splitlines()[-1])


def record(section: str, command: str, lines: list[str]) -> None:
    """Replace the section of BENCHMARKS.md with the newest figures, keeping the others."""
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    machine = f"{platform.machine()}, {__import__('os').cpu_count()} cores, Python {platform.python_version()}"
    block = [f"## {section}", "", f"`{command}` — {stamp}, {machine}", "", *lines, ""]
    text = RESULTS.read_text() if RESULTS.exists() else "# Benchmarks\n\nWritten by the scripts in `benchmarks/` " \
                                                          "(see its README); each section is the latest run.\n\n"
    parts = text.split("\n## ")
    head, sections = parts[0], {p.split("\n", 1)[0]: "## " + p for p in parts[1:]}
    sections[section] = "\n".join(block)
    RESULTS.write_text(head.rstrip() + "\n\n" + "\n".join(s.rstrip() + "\n" for s in sections.values()))
    print("\n".join(block))


def pss_kib(pids: set[int]) -> int:
    """Return the proportional set size of processes (a process gone meanwhile counts nothing): pages shared since
    a fork count once in all, which a sum of RSS would count once per process."""
    total = 0
    for pid in pids:
        try:
            text = Path(f"/proc/{pid}/smaps_rollup").read_text()
        except OSError:
            continue
        total += sum(int(line.split()[1]) for line in text.splitlines() if line.startswith("Pss:"))
    return total
