"""Reloads: how many requests a graceful nginx reload drops for clients that keep connections open
and never retry, measured against the same clients with no reload (the floor) in the same run.

A request racing the close of an idle keep-alive connection by an old worker is the one failure
nginx has at a reload (the connection is closed as the request arrives). Bounded: `--reloads`
reloads, one every `--every` seconds, `--clients` threads, loopback only.

    python3 -m benchmarks.reloads [--reloads 20] [--every 0.5] [--clients 8]
"""
from __future__ import annotations

import argparse
import http.client
import os
import shutil
import tempfile
import threading
import time
from pathlib import Path

from .common import ROOT, record


def hammer(port: int, key: str, stop: threading.Event, counts: dict, lock: threading.Lock) -> None:
    """GET over one keep-alive connection until told to stop; a failed request is counted, never retried."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    ok = failed = 0
    while not stop.is_set():
        try:
            connection.request("GET", "/api/v1/riskscores/sovereign/AUT/", headers={"Authorization": key})
            answer = connection.getresponse()
            answer.read()
            ok += answer.status == 200
            failed += answer.status != 200
        except (http.client.HTTPException, OSError):
            failed += 1
            connection.close()
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    connection.close()
    with lock:
        counts["ok"] += ok
        counts["failed"] += failed


def run(runtime, port: int, key: str, clients: int, seconds: float, reload_every: float | None) -> dict:
    stop, lock, counts = threading.Event(), threading.Lock(), {"ok": 0, "failed": 0, "reloads": 0}
    threads = [threading.Thread(target=hammer, args=(port, key, stop, counts, lock)) for _ in range(clients)]
    for thread in threads:
        thread.start()
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        time.sleep(reload_every or 0.1)
        if reload_every:
            runtime.reload()
            counts["reloads"] += 1
    stop.set()
    for thread in threads:
        thread.join(timeout=30)
    return counts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reloads", type=int, default=20)
    parser.add_argument("--every", type=float, default=0.5)
    parser.add_argument("--clients", type=int, default=8)
    args = parser.parse_args()
    from generator.publish.build_release import build
    from generator.serve.keys import add_key
    from generator.serve.runtime import NginxRuntime, ServeSettings
    from tests.live import free_port
    base = Path(tempfile.mkdtemp(prefix="bench-reloads-"))
    os.chmod(base, 0o755)
    try:
        build(ROOT / "tests" / "fixtures" / "tiny", base / "site")
        key = add_key(base / "keys.csv", "bench").key
        port = free_port()
        runtime = NginxRuntime(ServeSettings(site=base / "site", keys=base / "keys.csv", port=port), base / "nginx")
        runtime.start()
        try:
            seconds = args.reloads * args.every
            floor = run(runtime, port, key, args.clients, seconds, None)
            reloading = run(runtime, port, key, args.clients, seconds, args.every)
        finally:
            runtime.stop()
    finally:
        shutil.rmtree(base, ignore_errors=True)
    per_reload = reloading["failed"] / max(1, reloading["reloads"])
    lines = [
        f"- {args.clients} keep-alive clients that never retry, {seconds:.0f} s each run, loopback",
        f"- no reload (floor): {floor['ok']:,} answered, {floor['failed']} failed",
        f"- {reloading['reloads']} reloads: {reloading['ok']:,} answered, {reloading['failed']} failed = "
        f"{per_reload:.2f} per reload ({per_reload / args.clients:.2f} per open connection per reload; "
        f"{reloading['failed'] / max(1, reloading['ok'] + reloading['failed']):.4%} of requests)",
        "- The failures are requests that raced an old worker closing its idle keep-alive connection; "
        "nginx has no setting that removes the race. Clients should retry an idempotent GET once on a "
        "connection reset (what browsers do); `riskapi serve` reloads only when the release or the content "
        "of the keys file changed.",
    ]
    record("Reloads", f"python3 -m benchmarks.reloads --reloads {args.reloads} --every {args.every} "
                      f"--clients {args.clients}", lines)


if __name__ == "__main__":
    main()
