"""Object-store benchmark: what a revision costs in the bucket the edges read (S3 for CloudFront, R2 for
the Worker), as manifests over content-addressed objects (generator/serve/deploy/objects.py).

    python3 -m benchmarks.objects [--revisions 30] [--data data]
    python3 -m benchmarks.objects --revisions 30 --custom 100 --clients 1000   (the demo + 100 custom models)
    python3 -m benchmarks.objects --revisions 30 --countries 2490             (synthetic, 10× the countries)

Builds the data, then `--revisions` more releases, each changing one model's observations (every
value of its first numeric indicator nudged by the revision's number, models in turn), all kept. With
`--custom N --clients M`, the demo data gets N custom models and M clients holding 1 to 3 of them
(benchmarks.audiences' seeded draw), and the builds make a variant for each set they hold; with
`--countries N`, the data is the synthetic generator's at N countries. After each,
the objects every kept release names are worked out exactly as `riskapi deploy s3` does, against what
the bucket holds from the revisions before: what a revision uploads (objects, bytes) against the bytes
of the files it changed (its release folder's files whose bytes differ from the release before, their
encodings included: what nginx's disk holds anew). The floor, in the same run: those changed bytes.
Then the bucket's whole size and each platform's limits with their margin, the list prices, and
`riskapi deploy cloudflare --strict` and `deploy cloudfront --strict` of the last site with a key per
client (they fail, naming the limit, where one is exceeded).
"""
from __future__ import annotations

import argparse
import csv
import gzip
import json
import os
import shutil
import stat
import tempfile
import time
from pathlib import Path

from generator.serve.deploy.cloudflare import R2_FREE_BYTES, R2_GB_MONTH, SCRIPT_FILES, SCRIPT_LIMITS

from .common import record

# Platform limits and list prices (2026, as published; check before you budget)
R2_WRITES = 4.50  # $ per million class A operations (writes, lists); storage: deploy.cloudflare's
S3_STORAGE, S3_PUTS = 0.023, 5.00  # S3 Standard: $ per GB-month; $ per million PUT/LIST


def _numeric(path: Path) -> tuple[list[str], list[list[str]], list[list[str]]]:
    """Return a model's observations: the header, every row, and the rows whose value is a number."""
    with open(path, newline="") as source:
        rows = list(csv.reader(source))
    header, body = rows[0], rows[1:]
    value = header.index("value")
    return header, body, [row for row in body if row[value].replace(".", "", 1).replace("-", "", 1).isdigit()]


def _revise(data: Path, model: str, revision: int) -> None:
    """Move every observation of the model's first numeric indicator by a small step: one model's scores
    change."""
    path = data / "observations" / f"{model}.csv"
    header, body, numeric = _numeric(path)
    value = header.index("value")
    first = numeric[0][0]
    for row in numeric:
        if row[0] == first:
            row[value] = f"{float(row[value]) * (1 + revision / 1000):.6g}"
    with open(path, "w", newline="") as out:
        csv.writer(out, lineterminator="\n").writerows([header, *body])


def _changed_bytes(before: Path | None, after: Path) -> int:
    """Return the bytes of a release folder's files (encodings included) that differ from the release before."""
    from generator.history.site import read_manifest
    old = read_manifest(before) if before else {}
    return sum(entry["size"] for path, entry in read_manifest(after).items()
               if not path.startswith("nginx/") and old.get(path, {}).get("sha256") != entry["sha256"])


def _disk_bytes(folder: Path) -> tuple[int, int]:
    """Return the bytes of the files under a folder counted per path, and with hard links counted once: one
    walk (31 releases of 238,000 files are millions of entries)."""
    per_path, by_inode = 0, {}
    for root, _, names in os.walk(folder):
        for name in names:
            info = os.lstat(os.path.join(root, name))
            if stat.S_ISREG(info.st_mode):
                per_path += info.st_size
                by_inode[info.st_ino] = info.st_size
    return per_path, sum(by_inode.values())


def _keys(path: Path, grant_sets: list[list[str]], clients: int) -> None:
    """Write a keys file of `clients` users with one key each, holding the grant sets drawn (else none)."""
    import secrets
    rows = [f"client{i:05d},{secrets.token_hex(16)},{';'.join(grant_sets[i]) if i < len(grant_sets) else ''},yes\n"
            for i in range(clients)]
    path.write_text("user,key,models,active\n" + "".join(rows))
    path.chmod(0o600)


def _strict(site: Path, keys: Path, out: Path, keep: int) -> list[str]:
    """Run deploy cloudflare --strict and deploy cloudfront --strict of the site: what each wrote, or why it
    failed; where Cloudflare's Free plan fails, again held to the Paid plan's limits (--plan paid)."""
    from click.testing import CliRunner

    from generator.cli import main as cli
    def deploy(platform: str, *extra: str) -> tuple[bool, str]:
        done = CliRunner().invoke(cli, ["deploy", platform, "--site", str(site), "--keys", str(keys), "--out",
                                        str(out / platform), "--keep", str(keep), "--strict", "-q", *extra])
        if done.exit_code:
            return False, f"**fails**: {done.output.strip()[-300:]}"
        verdict = "**succeeds**"
        if platform == "cloudflare":
            script = len(gzip.compress(b"".join((out / platform / f).read_bytes() for f in SCRIPT_FILES)))
            entries = len(json.loads((out / platform / "keys-kv.json").read_text()))
            verdict += (f": the Worker's script {script / 1e3:.0f} KB compressed (Free allows 3 MiB: "
                        f"{script / dict(SCRIPT_LIMITS)['Free']:.1%}), {entries:,} Workers KV entries")
            verdict += "".join(f"; {line.strip()}" for line in done.output.splitlines() if "in R2" in line)
        else:
            store = json.loads((out / platform / "kvs.json").read_text())["data"]
            size = sum(len(e["key"].encode()) + len(e["value"].encode()) for e in store)
            lam = sum(p.stat().st_size for p in (out / platform / "origin-lambda").iterdir())
            gate = (out / platform / "viewer-request.js").stat().st_size
            verdict += (f": KeyValueStore {len(store):,} entries, {size / 1e6:.2f} MB of 5 MiB ({size / 5 / 2 ** 20:.1%}); "
                        f"key gate {gate:,} bytes of 10 KB; origin Lambda {lam / 1e6:.2f} MB unzipped of 50 MB")
        return True, verdict

    said = []
    fits, verdict = deploy("cloudflare", "--kv-namespace", "0f2ac74b")
    said.append(f"- `riskapi deploy cloudflare --strict` ({keep} releases kept): {verdict}")
    if not fits:
        _, verdict = deploy("cloudflare", "--kv-namespace", "0f2ac74b", "--plan", "paid")
        said.append(f"- `riskapi deploy cloudflare --strict --plan paid` ({keep} releases kept): {verdict}")
    _, verdict = deploy("cloudfront")
    said.append(f"- `riskapi deploy cloudfront --strict` ({keep} releases kept): {verdict}")
    return said


def _parquet_files(site: Path, release: str, kept: int) -> str:
    """Return what the Parquet exports and the point-in-time panel add (docs/deploy.md's limits): a release's
    exports (new bytes every release: they name it) and the panel the last deploy's list holds."""
    from generator.contract.locations import export
    from generator.history.site import RELEASES
    from generator.switch.panel import panel_files
    folder = Path(export("parquet").file).parent  # the exports' folder, as the route table places it
    exports = sorted((site / RELEASES / release / folder).rglob("*.parquet"))
    exported = sum(path.stat().st_size for path in exports)
    public, models = panel_files(site)
    panel = [path for path in (public, *models.values()) if path]
    held = sum(path.stat().st_size for path in panel)
    return (f"- the Parquet files: a release's exports {len(exports):,} files, {exported / 1e6:.2f} MB "
            f"({kept} kept: {kept * exported / 1e6:.0f} MB of the bucket); the point-in-time panel after "
            f"{kept - 1} revisions {len(panel):,} files, {held / 1e6:.2f} MB (the public models' "
            f"{(public.stat().st_size if public else 0) / 1e6:.2f} MB)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--revisions", type=int, default=30)
    parser.add_argument("--data", default="data")
    parser.add_argument("--custom", type=int, default=0, help="custom models added to the demo data")
    parser.add_argument("--clients", type=int, default=200)
    parser.add_argument("--countries", type=int, default=0, help="synthetic data at this many countries")
    args = parser.parse_args()
    from generator.history.site import RELEASES, built_against, current_release
    from generator.publish.build_release import build
    from generator.serve.deploy.edge_release import edge_timeline, served_files, timeline_files
    from generator.serve.deploy.objects import ReleaseObjects, release_objects
    from generator.serve.deploy.s3 import timeline_objects
    work = Path(tempfile.mkdtemp(prefix="bench-objects-"))
    try:
        data, site = work / "data", work / "site"
        grant_sets: list[list[str]] = []
        if args.custom:
            from .audiences import prepare
            prepared, grants, _ = prepare(work, args.custom, args.clients)
            prepared.rename(data)
            grant_sets = json.loads(grants.read_text())
        elif args.countries:
            from tools.synthetic_data import DemoSpec, write_demo_data
            write_demo_data(DemoSpec.make(countries=args.countries, last_year=2026), data)
        else:
            shutil.copytree(args.data, data)
        holding = [frozenset(g) for g in grant_sets]
        models = sorted(p.stem for p in (data / "observations").glob("*.csv") if _numeric(p)[2])
        known: dict[str, ReleaseObjects] = {}  # release → its objects (a release never changes: worked out once)
        held: dict[str, int] = {}  # the bucket: object key → size
        rows, previous, lists, buckets = [], None, [], []
        started = time.monotonic()
        for revision in range(args.revisions + 1):
            if revision:
                _revise(data, models[(revision - 1) % len(models)], revision)
            build(data, site, guard=None, keep=args.revisions + 1, force=True, grant_sets=holding)
            release = current_release(site)
            edge, _ = edge_timeline(site, keep=args.revisions + 1)
            wanted: dict[str, int] = {}
            heads, head = 0, 0
            for answered in edge.answered:
                folder = site / RELEASES / answered
                if answered not in known:  # shards over the ranges of the release it was built against, as deploy s3 writes them
                    base = known.get(built_against(folder) or "")
                    known[answered] = release_objects(folder, answered, served_files(folder), base)
                objects = known[answered]
                heads += len(objects.head)
                head = len(objects.head) if answered == release else head  # the one manifest written
                for key, body in objects.objects.items():
                    if key not in wanted:
                        wanted[key] = len(body.source) if isinstance(body.source, bytes) else body.source.stat().st_size
            documents, stamp = timeline_files(edge)
            listing = {key: len(body.read()) for key, body in timeline_objects(documents, stamp).items()}
            wanted.update(listing)
            new = {key: size for key, size in wanted.items() if key not in held}
            # the files the revision changed: its release folder's, and the list of releases, feeds and
            # TimeMap (per audience) that now name it — files every server must serve anew
            listed = sum(size for key, size in listing.items() if key not in held)
            changed = _changed_bytes(site / RELEASES / previous if previous else None, site / RELEASES / release)
            changed += listed
            rows.append((revision, len(new) + 1, sum(new.values()) + head, changed, heads, len(edge.answered)))
            lists.append(listed)
            print(f"revision {revision}: {rows[-1][1]:,} objects, {rows[-1][2] / 1e6:.1f} MB uploaded, "
                  f"{changed / 1e6:.1f} MB changed ({listed / 1e6:.1f} MB of it the list of releases), "
                  f"{sum(wanted.values()) / 1e9:.2f} GB in the bucket, "
                  f"{time.monotonic() - started:.0f} s", flush=True)
            held = wanted  # what a deploy leaves after its sweep (every release kept: nothing goes)
            buckets.append(sum(held.values()) + heads)
            previous = release
        elapsed = time.monotonic() - started
        stored = sum(held.values()) + heads
        disk, distinct_disk = _disk_bytes(site / RELEASES)
        print(f"nginx's disk: {distinct_disk / 1e9:.2f} GB, hard links once ({disk / 1e9:.2f} GB per path)", flush=True)
        documents_count = known[release].files
        parquet_line = _parquet_files(site, release, args.revisions + 1)
        _keys(work / "keys.csv", grant_sets, args.clients)
        strict = _strict(site, work / "keys.csv", work / "deploys", args.revisions + 1)
        revisions = rows[1:]
        projected = (buckets[-1] + (30 - args.revisions) * (buckets[-1] - buckets[0]) / args.revisions
                     if 0 < args.revisions < 30 else 0)
        ratios = [uploaded / changed for _, _, uploaded, changed, _, _ in revisions if changed]
        worst = max(ratios)
        first = rows[0]
        source = (f"the demo data with {args.custom} custom models, {args.clients} clients" if args.custom else
                  f"synthetic data, {args.countries:,} countries" if args.countries else f"`{args.data}`")
        lines = [
            f"- data: {source} ({documents_count:,} files a release), {args.revisions} revisions after the first "
            "release, each changing one model's "
            f"observations (models in turn), every release kept ({rows[-1][5]} answered at the end); "
            f"{elapsed:.0f} s in all (builds included)",
            f"- first release: {first[1]:,} objects, {first[2] / 1e6:.1f} MB uploaded (its files, their encodings, "
            "the manifest's shards, the list of releases)",
            f"- the files a revision changes: its release folder's (encodings included) and the list of releases, its "
            f"feeds and the TimeMap of each audience, which now name it ({sum(lists[1:]) / len(lists[1:]) / 1e6:.1f} MB "
            "a revision on average)",
            f"- per revision, uploaded / the bytes of its changed files (the floor): median "
            f"**{sorted(ratios)[len(ratios) // 2]:.3f}×**, worst **{worst:.3f}×** (goal ≤ 1.1×: "
            f"{'met' if worst <= 1.1 else 'not met'}); objects per revision "
            f"{min(r[1] for r in revisions):,}–{max(r[1] for r in revisions):,}, bytes "
            f"{min(r[2] for r in revisions) / 1e6:.1f}–{max(r[2] for r in revisions) / 1e6:.1f} MB",
            f"- the bucket after {args.revisions + 1} kept releases: {len(held):,} objects, {stored / 1e9:.2f} GB (R2's "
            f"free 10 GB: {stored / R2_FREE_BYTES:.0%} used); the same releases on nginx's disk "
            f"{distinct_disk / 1e9:.2f} GB (hard links counted once; {disk / 1e9:.2f} GB counted per release)",
            parquet_line,
            *([f"- at 30 revisions (31 kept), from the {args.revisions} measured (what a revision adds to the bucket, "
               f"on average, times 30; each changes one of the {len(models)} models in turn): the bucket ≈ "
               f"{projected / 1e9:.1f} GB (R2's free 10 GB: {projected / R2_FREE_BYTES:.0%})"] if projected else []),
            f"- list prices: storage ${stored / 1e9 * R2_GB_MONTH:.3f}/month on R2 (free under 10 GB), "
            f"${stored / 1e9 * S3_STORAGE:.3f}/month on S3; writes per revision "
            f"{sum(r[1] for r in revisions) / len(revisions):,.0f} (R2 ${sum(r[1] for r in revisions) / len(revisions) * R2_WRITES / 1e6:.4f}, "
            f"S3 ${sum(r[1] for r in revisions) / len(revisions) * S3_PUTS / 1e6:.4f})",
            "",
            "| revision | objects uploaded | MB uploaded | MB of changed files | × changed |",
            "|---|---|---|---|---|",
            *[f"| {r} | {n:,} | {up / 1e6:.2f} | {ch / 1e6:.2f} | {up / ch:.3f} |" for r, n, up, ch, _, _ in revisions[:5]],
            f"| … ({len(revisions) - 5} more) | | | | |" if len(revisions) > 5 else "",
            "",
            *strict,
        ]
        flags = (f" --custom {args.custom} --clients {args.clients}" if args.custom else
                 f" --countries {args.countries}" if args.countries else "")
        title = ("Object storage (revisions, custom models)" if args.custom else
                 "Object storage (revisions, 10× countries)" if args.countries else "Object storage (revisions)")
        record(title, f"python3 -m benchmarks.objects --revisions {args.revisions}{flags}", lines)
    finally:
        # after the record: removing millions of paths takes long on a slow disk, and a run stopped
        # then has its results written already
        print(f"removing {work}", flush=True)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
