"""S3 deploy benchmark: the demo release to a local S3 server (Ceph's RADOS Gateway, tests/ceph.py),
a first deploy and an unchanged second one, against the floor of the same PutObject calls with the
same bytes and no checks, measured in the same run.

    python3 -m benchmarks.s3_deploy [--runs 3]
"""
from __future__ import annotations

import argparse
import shutil
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from .common import fmt, record, summary


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--data", default="data")
    args = parser.parse_args()
    from generator.history.site import RELEASES, current_release
    from generator.publish.build_release import build
    from generator.serve.deploy import s3
    from generator.serve.deploy.edge_release import served_files
    from generator.serve.deploy.objects import release_objects
    from tests.ceph import start_ceph_s3
    from tests.live import free_port
    work = Path(tempfile.mkdtemp(prefix="bench-s3-"))
    server = start_ceph_s3(free_port)
    try:
        site = work / "site"
        build(Path(args.data), site)
        release = current_release(site)
        release_dir = site / RELEASES / release
        client = server.client()
        objects = release_objects(release_dir, release, served_files(release_dir)).objects
        first, second, floor = [], [], []
        for run in range(args.runs):
            bucket = f"bench-{run}"
            client.create_bucket(Bucket=bucket)
            started = time.perf_counter()
            report = s3.deploy(client, bucket, site)
            first.append(time.perf_counter() - started)
            started = time.perf_counter()
            again = s3.deploy(client, bucket, site)
            second.append(time.perf_counter() - started)
            assert again.uploaded == 0
            client.create_bucket(Bucket=f"floor-{run}")
            started = time.perf_counter()
            with ThreadPoolExecutor(s3.UPLOADERS) as pool:  # the same objects, bare PutObject calls
                list(pool.map(lambda key, bucket=f"floor-{run}": client.put_object(
                    Bucket=bucket, Key=key, Body=objects[key].read()), objects))
            floor.append(time.perf_counter() - started)
    finally:
        server.stop()
        shutil.rmtree(work, ignore_errors=True)
    ratios = summary([f / b for f, b in zip(first, floor)])
    lines = [
        f"- demo release {release}: {report.uploaded} objects, {report.bytes / 1e6:.0f} MB (each distinct body of its "
        f"documents, exports and pages once, their .gz/.br encodings, the manifest's shards, the list of releases) to "
        f"Ceph RGW on 127.0.0.1 (one memstore OSD), {s3.UPLOADERS} uploads at once",
        f"- **first deploy**: {fmt(summary(first))}; floor (PutObject of the same objects, no metadata, no listing, "
        "no manifest, no sweep): "
        f"{fmt(summary(floor))}; **{ratios['median']:.2f}× the floor**",
        f"- **unchanged second deploy**: {fmt(summary(second))}, 0 objects uploaded (a listing of the bucket's "
        "objects against the release's hashes, from its manifest.json)",
    ]
    record("S3 deploy", f"python3 -m benchmarks.s3_deploy --runs {args.runs}", lines)


if __name__ == "__main__":
    main()
