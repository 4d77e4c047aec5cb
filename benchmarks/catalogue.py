"""The release catalogue: what a read (every serve poll, every command) and a switch cost, against floors
measured in the same run — a bare SQLite open-and-read of one row, and the text journal's synced
append of one line, which the catalogue replaced.

A site's catalogue of `--releases` releases and `--switches` switches (made directly, no release
folders: the catalogue alone is read); each measure is the median of `--runs` calls.

    python3 -m benchmarks.catalogue [--releases 1000] [--switches 5000] [--runs 200]
"""
from __future__ import annotations

import argparse
import os
import shutil
import sqlite3
import tempfile
from pathlib import Path

from .common import median_ms, record


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--releases", type=int, default=1000)
    parser.add_argument("--switches", type=int, default=5000)
    parser.add_argument("--runs", type=int, default=200)
    args = parser.parse_args()
    from generator.history.catalogue import PUBLISH, Catalogue, read_history
    from generator.history.catalogue.store import catalogue_path
    base = Path(tempfile.mkdtemp(prefix="bench-catalogue-"))
    try:
        site = base / "site"
        ids = [f"20260101T{n // 3600 % 24:02d}{n // 60 % 60:02d}{n % 60:02d}Z" for n in range(args.releases)]
        with Catalogue.open(site) as catalogue:
            with catalogue.transaction() as db:  # made in one transaction: the set-up is not measured
                db.executemany("INSERT INTO release (id, built_at, staged) VALUES (?, 0, 0)", [(r,) for r in ids])
                db.executemany("INSERT INTO switch (action, release, at, clock, state) VALUES (?, ?, ?, ?, 'done')",
                               [(PUBLISH, ids[n % len(ids)], n, n) for n in range(args.switches)])
        os.symlink(f"releases/{ids[(args.switches - 1) % len(ids)]}", site / "current")
        size = catalogue_path(site).stat().st_size

        def bare_read() -> None:
            connection = sqlite3.connect(catalogue_path(site))
            connection.execute("SELECT id FROM release LIMIT 1").fetchone()
            connection.close()

        journal = base / "journal"

        def journal_append() -> None:
            with open(journal, "a") as handle:
                handle.write(f"publish {ids[0]} 2026-01-01T00:00:00Z\n")
                handle.flush()
                os.fsync(handle.fileno())

        def switch() -> None:
            with Catalogue.open(site) as catalogue:
                catalogue.confirm(catalogue.intend(PUBLISH, ids[0]))

        floor_read = median_ms(bare_read, args.runs)
        read = median_ms(lambda: read_history(site).periods, args.runs)
        from generator.serve.catalogue_watch import CatalogueWatch
        watch = CatalogueWatch(site)
        watch.state()
        poll = median_ms(watch.state, args.runs)
        floor_switch = median_ms(journal_append, args.runs)
        switched = median_ms(switch, args.runs)
    finally:
        shutil.rmtree(base, ignore_errors=True)
    lines = [
        f"- a catalogue of {args.releases:,} releases and {args.switches:,} switches: {size / 1024:,.0f} KiB",
        f"- a read (open, check whole, read, reconcile with `current`, the live periods): {read:.2f} ms median, "
        f"{read / floor_read:.1f}× a bare SQLite open and one-row read ({floor_read:.2f} ms): each command "
        "reads it once or a few times",
        f"- `riskapi serve`'s poll (twice a second) when nothing changed: {poll:.3f} ms median, {poll / floor_read:.2f}× "
        "the bare read (a few stat calls; the catalogue is read whole when its files change, and every 5 s)",
        f"- a switch (its intent and its confirmation, two synced transactions): {switched:.2f} ms median, "
        f"{switched / floor_switch:.1f}× the text journal's synced append of one line ({floor_switch:.2f} ms)",
        f"- medians of {args.runs} calls each; the demo's sites hold a few releases and switches, where both are "
        "well under these",
    ]
    record("Release catalogue", f"python3 -m benchmarks.catalogue --releases {args.releases} --switches "
                                f"{args.switches} --runs {args.runs}", lines)


if __name__ == "__main__":
    main()
