"""nginx with 100,000 keys: the time of a reload after a key change (render, `nginx -t`, SIGHUP, old
workers gone), nginx's memory, and a request's time, against the same with 200 keys (the floor) in
the same run. Bounded: `--reloads` reloads and `--requests` sequential requests per size, loopback.

    python3 -m benchmarks.keys_at_scale [--keys 100000] [--reloads 5] [--requests 500]
"""
from __future__ import annotations

import argparse
import http.client
import os
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from .common import ROOT, pss_kib, record


def write_keys(path: Path, count: int) -> str:
    """Return a keys file of `count` users (a tenth granted the custom model), as `riskapi keys add` keeps them: their
    digests under the file's secret; returns the first user's header."""
    from generator.contract.key_format import key_digest, new_key
    from generator.serve.keys import site_secret
    keys = [new_key() for _ in range(count)]
    secret = site_secret(path)
    path.write_text("user,key_digest,models,active,expires\n" + "".join(
        f"client{i:06d},{key_digest(secret, key)},{'acme_aml' if i % 10 == 0 else ''},yes,\n"
        for i, key in enumerate(keys)))
    os.chmod(path, 0o600)
    return f"apikey client000000:{keys[0]}"


def added_line(path: Path, user: str) -> str:
    """Return the line `riskapi keys add USER` appends: a new key's digest."""
    from generator.contract.key_format import key_digest, new_key
    from generator.serve.keys import read_secret
    return f"{user},{key_digest(read_secret(path), new_key())},,yes,\n"


def measure(base: Path, site: Path, count: int, reloads: int, requests: int) -> dict:
    from generator.serve.runtime import NginxRuntime, ServeSettings
    from generator.system.processes import children
    from tests.live import free_port
    keys = base / f"keys-{count}.csv"
    header = write_keys(keys, count)
    port = free_port()
    runtime = NginxRuntime(ServeSettings(site=site, keys=keys, port=port), base / f"nginx-{count}")
    started = time.perf_counter()
    runtime.start()
    start_seconds = time.perf_counter() - started
    try:
        times = []
        for i in range(reloads):  # a key change: one more line, as `riskapi keys add` makes
            with keys.open("a") as more:
                more.write(added_line(keys, f"extra{count}x{i}"))
            started = time.perf_counter()
            assert runtime.reload()
            times.append(time.perf_counter() - started)
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        latencies = []
        for _ in range(requests):
            started = time.perf_counter()
            connection.request("GET", "/api/v1/riskscores/sovereign/AUT/", headers={"Authorization": header})
            answer = connection.getresponse()
            answer.read()
            latencies.append(time.perf_counter() - started)
            assert answer.status == 200, answer.status
        connection.close()
        memory = pss_kib({runtime.master_pid} | children(runtime.master_pid))
        map_bytes = sum(p.stat().st_size for p in (runtime.conf / "runtime").glob("keys*.conf"))
    finally:
        runtime.stop()
    return {"start": start_seconds, "reload": statistics.median(times), "request_ms": statistics.median(latencies) * 1e3,
            "rss_mib": memory / 1024, "map_mb": map_bytes / 1e6}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keys", type=int, default=100_000)
    parser.add_argument("--reloads", type=int, default=5)
    parser.add_argument("--requests", type=int, default=500)
    args = parser.parse_args()
    from generator.publish.build_release import build
    base = Path(tempfile.mkdtemp(prefix="bench-keys-"))
    os.chmod(base, 0o755)
    try:
        site = base / "site"
        build(ROOT / "tests" / "fixtures" / "tiny", site)
        floor = measure(base, site, 200, args.reloads, args.requests)
        many = measure(base, site, args.keys, args.reloads, args.requests)
    finally:
        shutil.rmtree(base, ignore_errors=True)
    lines = [f"- the tiny release, one nginx worker per core; a reload after one key is added (render, `nginx -t`, "
             f"SIGHUP, the old workers gone): median of {args.reloads}; {args.requests} sequential requests on one "
             "keep-alive connection",
             f"- 200 keys (floor): start {floor['start']:.2f} s, reload {floor['reload']:.2f} s, nginx "
             f"{floor['rss_mib']:.0f} MiB (proportional set size of master and workers), a request {floor['request_ms']:.2f} ms, "
             f"key map {floor['map_mb']:.2f} MB",
             f"- **{args.keys:,} keys: reload {many['reload']:.2f} s ({many['reload'] / floor['reload']:.1f}× the "
             f"floor), nginx {many['rss_mib']:.0f} MiB ({many['rss_mib'] / floor['rss_mib']:.1f}×), a request "
             f"{many['request_ms']:.2f} ms ({many['request_ms'] / floor['request_ms']:.2f}×)**, start "
             f"{many['start']:.2f} s, key map {many['map_mb']:.1f} MB"]
    record("Keys at scale (nginx)", f"python3 -m benchmarks.keys_at_scale --keys {args.keys} --reloads "
                                    f"{args.reloads} --requests {args.requests}", lines)


if __name__ == "__main__":
    main()
