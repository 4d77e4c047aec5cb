"""HEAD of a file the Worker stores in parts: answered from the sizes, without reading the parts.

    python3 -m benchmarks.edge_head [--requests 20] [--data data]

The demo release, deployed with `riskapi deploy cloudflare`, runs in `wrangler dev` (Cloudflare's
workerd); each request is timed from outside: HEAD and GET of the largest export (62 MiB, stored in
25 MiB parts), against the floor of the same run, HEAD of one small document (a single asset).
Needs `scripts/test.sh` (or `npm install --prefix tests/clients`) for Node 22 and wrangler.
"""
from __future__ import annotations

import argparse
import shutil
import statistics
import tempfile
import time
import urllib.request
from pathlib import Path

from .common import record
from .edge import wrangler_dev


def timed(port: int, method: str, path: str, key: str) -> tuple[float, int]:
    """Seconds for one whole answer (its body read), and the body's length."""
    asked = urllib.request.Request(f"http://127.0.0.1:{port}{path}", method=method,
                                   headers={"Authorization": f"apikey alice:{key}"})
    started = time.perf_counter()
    with urllib.request.urlopen(asked, timeout=120) as answer:
        length = len(answer.read())
    return time.perf_counter() - started, length


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--requests", type=int, default=20)
    parser.add_argument("--data", default="data")
    args = parser.parse_args()
    from generator.build import build
    from generator.cli import main as cli
    from generator.keys import add_key
    work = Path(tempfile.mkdtemp(prefix="bench-edge-head-"))
    try:
        site, keys_file, project = work / "site", work / "keys.csv", work / "cloudflare"
        build(Path(args.data), site)
        key = add_key(keys_file, "alice", ("acme_aml",)).key
        try:
            cli(["deploy", "cloudflare", "--site", str(site), "--keys", str(keys_file), "--out", str(project), "-q"])
        except SystemExit as done:
            assert done.code in (0, None), done.code
        export = "/api/v1/exports/scores.jsonl"
        size = (site / "current" / export.lstrip("/")).stat().st_size  # the public models': the largest
        parts = len(list((project / "public").rglob("api/v1/exports/scores.jsonl.part*")))
        with wrangler_dev(project) as port:
            for _ in range(3):  # warm up
                timed(port, "HEAD", "/api/v1/riskscores/sovereign/AUT/", key)
                timed(port, "HEAD", export, key)
            floor = [timed(port, "HEAD", "/api/v1/riskscores/sovereign/AUT/", key)[0] for _ in range(args.requests)]
            head = [timed(port, "HEAD", export, key)[0] for _ in range(args.requests)]
            gets = []
            for _ in range(3):
                seconds, length = timed(port, "GET", export, key)
                assert length == size, (length, size)
                gets.append(seconds)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    floor_ms, head_ms, get_ms = (statistics.median(v) * 1e3 for v in (floor, head, gets))
    record("Edge: HEAD of a file in parts", f"python3 -m benchmarks.edge_head --requests {args.requests}", [
        f"- demo release in `wrangler dev`; the public models' export `{export}`: "
        f"{size / 2 ** 20:.1f} MiB, stored as {parts} parts of at most 25 MiB",
        f"- floor, HEAD of one small document (one asset): median {floor_ms:.1f} ms ({args.requests} requests)",
        f"- **HEAD of the export: median {head_ms:.1f} ms, {head_ms / floor_ms:.1f}× the floor** "
        f"({args.requests} requests): its length from the release's sizes, no part read",
        f"- GET of the export, for scale: median {get_ms:.0f} ms (3 requests, every byte read and checked)",
    ])


if __name__ == "__main__":
    main()
