"""What keeping a release costs, on each platform: the demo release A, then B after a realistic data
revision (one model's latest year revised by 1 %), both kept.

    python3 -m benchmarks.releases

On disk (nginx) a kept release costs only the files that changed: unchanged files are hard links to the
previous release's. The floor, measured in the same run, is the bytes of exactly the files whose
content changed (with their .gz/.br twins): no layout can keep B for less. S3 has no links (each
release's prefix holds every object), Static Assets counts every file of every kept release, and the
CloudFront KeyValueStore holds each kept release's tables; their counts per release are read off the
same two releases. 10x the countries is estimated from the 1x figures (files and entries grow with
countries; BENCHMARKS' scale section measures a 10x build).
"""
from __future__ import annotations

import csv
import io
import os
import shutil
import tempfile
from pathlib import Path

from .common import record

REVISED_MODEL = "sovereign"
STATIC_ASSETS_FILES = (("Free", 20_000), ("Paid", 100_000))
KVS_BYTES = 5 * 2 ** 20


def revise(observations: Path) -> int:
    """Raise every numeric value of the latest date in an observations file by 1 %; return how many."""
    rows = list(csv.DictReader(io.StringIO(observations.read_text(encoding="utf-8"))))
    latest = max(row["date"] for row in rows)
    changed = 0
    for row in rows:
        try:
            value = float(row["value"])
        except ValueError:
            continue
        if row["date"] == latest:
            row["value"] = f"{value * 1.01:.6g}"
            changed += 1
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=list(rows[0]), lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    observations.write_text(out.getvalue(), encoding="utf-8")
    return changed


def disk_bytes(folders: list[Path]) -> int:
    """Bytes of the files under `folders`, each inode counted once (as du counts hard links)."""
    seen, total = set(), 0
    for folder in folders:
        for path in folder.rglob("*"):
            info = path.lstat()
            if path.is_file() and (info.st_dev, info.st_ino) not in seen:
                seen.add((info.st_dev, info.st_ino))
                total += info.st_blocks * 512
    return total


def main() -> None:
    from generator.build import build
    from generator.deploy.cloudflare import MAX_FILE_BYTES
    from generator.deploy.cloudfront import entries_bytes, store_entries
    from generator.deploy.edge import served_files
    from generator.keys import add_key, read_keys
    from generator.publish import RELEASES, read_manifest
    work = Path(tempfile.mkdtemp(prefix="bench-releases-"))
    try:
        data, site, keys = work / "data", work / "site", work / "keys.csv"
        shutil.copytree("data", data)
        add_key(keys, "alice")
        first = build(data, site, force=True).release
        revised = revise(data / "observations" / f"{REVISED_MODEL}.csv")
        second = build(data, site, force=True).release
        a, b = site / RELEASES / first, site / RELEASES / second
        files_a, files_b = read_manifest(a), read_manifest(b)
        changed = [p for p, entry in files_b.items() if files_a.get(p, {}).get("sha256") != entry["sha256"]]
        floor = sum((b / p).stat().st_blocks * 512 for p in changed)
        exports = sum((b / p).stat().st_blocks * 512 for p in changed if p.startswith("api/v1/exports/"))
        alone, both = disk_bytes([a]), disk_bytes([a, b])
        added = both - alone
        release_bytes = sum(entry["size"] for entry in files_b.values())
        served = served_files(b)
        assets = sum(-(-(b / p).stat().st_size // MAX_FILE_BYTES) for p in served)
        entries = [e for e in store_entries(b, second, read_keys(keys), "private, no-cache", "0" * 64)
                   if not e[0].startswith("k:") and e[0] != "release"]
        kvs = entries_bytes(entries)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    ratio = added / floor if floor else float("nan")
    mb = 1e6
    lines = [
        f"Demo release, then a revision of `{REVISED_MODEL}` ({revised:,} values of its latest year +1 %): "
        f"{len(changed):,} of {len(files_b):,} files changed; {exports / mb:.1f} MB of them are the bulk exports (with "
        f"their twins), which hold every model's rows and so change whenever one model does.",
        "",
        "| platform | what a kept release costs | releases that fit (1x) | at 10x the countries (estimated) |",
        "|---|---|---|---|",
        f"| disk (nginx) | {added / mb:.1f} MB for B beside A ({alone / mb:.1f} MB alone): **{ratio:.2f}x the floor** "
        f"of its changed files ({floor / mb:.1f} MB) | as many as the disk holds: ~{added / mb:.0f} MB each for a "
        f"revision of one model | ~{10 * added / mb:.0f} MB each |",
        f"| S3 (+ CloudFront) | {len(files_b):,} objects, {release_bytes / mb:.1f} MB (no links: every release "
        f"prefix holds its objects; unchanged ones are not sent again) | unlimited (storage billed per GB) | "
        f"~{10 * len(files_b):,} objects, ~{10 * release_bytes / mb:.0f} MB |",
        f"| Cloudflare Static Assets | {assets:,} files | "
        + ", ".join(f"{limit // assets} on {plan} ({limit:,} files)" for plan, limit in STATIC_ASSETS_FILES)
        + f" | {10 * assets:,} files: "
        + ", ".join(f"{limit // (10 * assets)} on {plan}" for plan, limit in STATIC_ASSETS_FILES) + " |",
        f"| CloudFront KeyValueStore | {len(entries):,} entries, {kvs / mb:.2f} MB | {KVS_BYTES // kvs - 1} in 5 MiB "
        f"(with room for the next, which a deploy writes before the oldest goes) | ~{10 * kvs / mb:.1f} MB each: "
        f"{max(KVS_BYTES // (10 * kvs) - 1, 0)} with room for the next |",
    ]
    print(f"disk: {added:,} bytes added for B, floor {floor:,} ({ratio:.2f}x)")
    record("Releases kept", "python3 -m benchmarks.releases", lines)


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    main()
