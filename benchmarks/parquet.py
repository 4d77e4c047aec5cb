"""The Parquet exports and the point-in-time panel: what they add to a build of the demo data,
what a reader of one model's two columns fetches over HTTP from nginx, and how the panel grows.

- Build: the same build with the Parquet exports and without them (the exports' Parquet writing replaced
  by nothing, the floor of this run), interleaved, 2 jobs, in memory (`/dev/shm`): a first build (nothing
  before it), and rebuilds after a data release (one model's observations changed, models in turn), which
  copy the row groups whose rows did not change from the release before; goal ≤ 1.10× with the panel.
- Reading: the demo release served by `riskapi serve` (the real nginx.conf); pyarrow reads the public
  models' `scores.parquet` with a Range request per read (as fsspec does), asking for `country_code` and
  `score` of `sovereign`; the bytes fetched against the file's; goal ≤ 25 %.
- The panel: the demo data, then `--revisions` more releases, each changing one model's observations (as
  benchmarks/objects.py does: every value of its first numeric indicator nudged, models in turn); after
  each build the panel is brought up to date, timed against the build; at the end the public models'
  panel against one release's `scores.parquet` (goal ≤ 1.5× when ≤ 10 % of the values change a release),
  with the share of values that changed."""
from __future__ import annotations

import argparse
import contextlib
import shutil
import statistics
import tempfile
import time
from pathlib import Path
from typing import Callable, Iterator

from generator.contract.locations import export

from .common import ROOT, record


class _NoParquet:
    """What the build does of the Parquet exports in the floor: nothing."""

    def __init__(self, *_: object) -> None:
        pass

    def add(self, rows: list, lines: bytes) -> None:
        pass

    def close(self) -> None:
        pass


@contextlib.contextmanager
def without_parquet() -> Iterator[None]:
    """Yield a build without the Parquet exports: rows handed to nothing, nothing joined, no Parquet file added."""
    from generator.building.render import parquet
    from generator.publish.build_release import model_jobs
    saved = (parquet.ParquetRows, parquet.join, model_jobs.ValidatedWriter.add_one)
    add_one = saved[2]

    def only_text(self, route, document):  # type: ignore[no-untyped-def]
        if not route.file.endswith(".parquet"):
            add_one(self, route, document)

    parquet.ParquetRows = _NoParquet  # type: ignore[misc,assignment]
    parquet.join = lambda *_: None  # type: ignore[assignment]
    model_jobs.ValidatedWriter.add_one = only_text  # type: ignore[method-assign]
    try:
        yield
    finally:
        parquet.ParquetRows, parquet.join = saved[0], saved[1]  # type: ignore[misc]
        model_jobs.ValidatedWriter.add_one = saved[2]  # type: ignore[method-assign]


def build_seconds(folder: Path, parquet: bool) -> float:
    from generator.publish.build_release import build
    site = folder / ("with" if parquet else "without")
    shutil.rmtree(site, ignore_errors=True)
    context = contextlib.nullcontext() if parquet else without_parquet()
    with context:
        started = time.perf_counter()
        build(ROOT / "data", site, jobs=2)
        return time.perf_counter() - started


def revisable_data(folder: Path) -> tuple[Path, Callable[[int], None]]:
    """Return a copy of the demo data in `folder`, and what makes its revision n (1, 2, …): one model's
    observations changed, the models in turn (as benchmarks/objects.py revises them)."""
    from .objects import _revise
    shutil.copytree(ROOT / "data", folder)
    models = sorted(p.stem for p in (folder / "observations").glob("*.csv"))
    return folder, lambda revision: _revise(folder, models[(revision - 1) % len(models)], revision)


def revision_seconds(folder: Path, runs: int) -> dict[bool, list[float]]:
    """Return a rebuild after a data release, with the Parquet exports and without: the demo data built once into
    each site (not timed), then `runs` revisions each changing one model's observations (models in turn,
    as panel_growth does), each built into both sites (which goes first alternates), every release kept."""
    from generator.publish.build_release import build
    data, revise = revisable_data(folder / "revised-data")
    sites = {parquet: folder / f"revised-{'with' if parquet else 'without'}" for parquet in (True, False)}

    def timed(parquet: bool) -> float:
        with contextlib.nullcontext() if parquet else without_parquet():
            started = time.perf_counter()
            build(data, sites[parquet], guard=None, keep=runs + 2, force=True, jobs=2)
            return time.perf_counter() - started
    for parquet in (True, False):
        timed(parquet)
    times: dict[bool, list[float]] = {True: [], False: []}
    for run in range(runs):
        revise(run + 1)
        for parquet in ((True, False) if run % 2 else (False, True)):
            times[parquet].append(timed(parquet))
    return times


def fetched_fraction(folder: Path) -> tuple[int, int, int]:
    """Return (bytes fetched, the file's bytes, requests) reading one model's two columns over HTTP from nginx."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from tests.live import RangeReader, serve_process
    site = folder / "with"
    with serve_process(site, folder / "keys.csv") as served:  # alice's key, made for it
        def get(path: str, headers: dict[str, str]):
            import urllib.request

            from tests.live import Response
            request = urllib.request.Request(f"http://127.0.0.1:{served.port}{path}",
                                             headers={"Authorization": f"apikey alice:{served.key}", **headers})
            with urllib.request.urlopen(request, timeout=30) as answer:
                return Response(answer.status, {k.lower(): v for k, v in answer.headers.items()}, answer.read())
        path = export("parquet").url
        size = len(get(path, {}).body)
        reader = RangeReader(get, path, size)
        pq.read_table(pa.PythonFile(reader, mode="r"), columns=["country_code", "score"],
                      filters=[("model", "=", "sovereign")], pre_buffer=False)
        return sum(n for _, n in reader.fetched), size, len(reader.fetched)


def panel_growth(folder: Path, revisions: int) -> dict:
    """Build the data and `revisions` revised releases (all kept), the panel updated after each; its
    time against the build's, its size against one release's export, and the values changed a release."""
    from generator.publish.build_release import build
    from generator.switch.panel import panel_files, update_panel
    (data, revise), site = revisable_data(folder / "data"), folder / "panel-site"
    builds, updates = [], []
    for revision in range(revisions + 1):
        if revision:
            revise(revision)
        started = time.perf_counter()
        build(data, site, guard=None, keep=revisions + 1, force=True, jobs=2)
        builds.append(time.perf_counter() - started)
        started = time.perf_counter()
        update_panel(site)
        updates.append(time.perf_counter() - started)
    import pyarrow.parquet as pq
    public, _ = panel_files(site)
    exported = site / "current" / export("parquet").file
    rows = pq.ParquetFile(exported).metadata.num_rows
    panel_rows = pq.ParquetFile(public).metadata.num_rows
    return {"revisions": revisions, "build": statistics.median(builds[1:]), "update": statistics.median(updates[1:]),
            "first_update": updates[0], "ratio": statistics.median([u / b for u, b in zip(updates[1:], builds[1:])]),
            "panel_bytes": public.stat().st_size, "export_bytes": exported.stat().st_size,
            "changed": (panel_rows - rows) / revisions / rows, "panel_rows": panel_rows, "rows": rows}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--revisions", type=int, default=30)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(dir="/dev/shm") as place:
        folder = Path(place)
        folder.chmod(0o755)  # nginx's workers read the site
        times: dict[bool, list[float]] = {True: [], False: []}
        for _ in range(args.runs):
            for parquet in (False, True):  # interleaved: the machine's drift falls on both
                times[parquet].append(build_seconds(folder, parquet))
        ratios = [a / b for a, b in zip(times[True], times[False])]
        revised = revision_seconds(folder, 2 * args.runs)
        revised_ratios = [a / b for a, b in zip(revised[True], revised[False])]
        fetched, size, requests = fetched_fraction(folder)
        exports_folder = folder / "with" / "current" / Path(export("parquet").file).parent
        exports = sorted(exports_folder.rglob("*.parquet"))
        parquet_bytes = sum(p.stat().st_size for p in exports)
        csv_bytes = sum(p.stat().st_size for p in exports_folder.rglob("*.csv"))
        grown = panel_growth(folder, args.revisions)
    revised_ratio = statistics.median(revised_ratios)
    lines = [
        "| measure | value |", "|---|---|",
        f"| first build with the Parquet exports / without (floor), 2 jobs, in memory | **{statistics.median(ratios):.3f}×** "
        f"(min {min(ratios):.3f}, max {max(ratios):.3f}; {statistics.median(times[True]):.2f} s against "
        f"{statistics.median(times[False]):.2f} s, {args.runs} interleaved runs) |",
        f"| rebuild after a data release (one model's observations changed) with the Parquet exports / without "
        f"(floor): unchanged row groups copied from the release before | **{revised_ratio:.3f}×** (min "
        f"{min(revised_ratios):.3f}, max {max(revised_ratios):.3f}; {statistics.median(revised[True]):.2f} s against "
        f"{statistics.median(revised[False]):.2f} s, {len(revised_ratios)} revisions, models in turn) |",
        f"| one model's two columns read over HTTP from nginx (pyarrow, a Range request a read) | **{fetched:,}** of "
        f"{size:,} bytes: **{fetched / size:.1%}** in {requests} requests |",
        f"| the release's Parquet exports ({len(exports)} files) against its CSV ones | {parquet_bytes / 1e6:.2f} MB "
        f"against {csv_bytes / 1e6:.2f} MB ({parquet_bytes / csv_bytes:.1%}) |",
    ]
    lines += [
        f"| the panel brought up to date after a build, one model changed (median of {grown['revisions']}) | "
        f"**{grown['update']:.2f} s**, {grown['ratio']:.1%} of the build ({grown['build']:.2f} s); the first "
        f"release's (every model): {grown['first_update']:.2f} s |",
        f"| rebuild after a data release with the Parquet exports and the panel / today's | "
        f"**{revised_ratio * (1 + grown['ratio']):.3f}×** (the rebuild's ratio and the panel's share multiplied) |",
        f"| first build with the Parquet exports and the panel / today's | "
        f"{statistics.median(ratios) * (1 + grown['first_update'] / statistics.median(times[True])):.3f}× "
        f"(the first build's ratio and its panel's share, every model new, multiplied) |",
        f"| the public models' panel after {grown['revisions']} revisions / one release's `scores.parquet` | "
        f"**{grown['panel_bytes'] / grown['export_bytes']:.2f}×** ({grown['panel_bytes'] / 1e6:.2f} MB against "
        f"{grown['export_bytes'] / 1e6:.2f} MB; {grown['panel_rows']:,} rows against {grown['rows']:,}: "
        f"{grown['changed']:.1%} of the values changed a release) |",
    ]
    record("Parquet exports", f"python3 -m benchmarks.parquet --runs {args.runs} --revisions {args.revisions}", lines)


if __name__ == "__main__":
    main()
