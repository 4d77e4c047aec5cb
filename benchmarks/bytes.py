"""Bytes benchmark: total and per-document sizes (raw and gzip) of the demo release, and the share of
conditional requests answered 304 after a rebuild with unchanged data (real nginx, real keys).

    python3 -m benchmarks.bytes
"""
from __future__ import annotations

import http.client
import os
import shutil
import statistics
import tempfile
from collections import defaultdict
from pathlib import Path

from .common import record

KINDS = [("endpoint 4 (model × country)", lambda p: p.count("/") == 5 and p.startswith("api/v1/riskscores/")
          and "=" not in p and "/country/" not in p),
         ("endpoint 3 (lists, orderings)", lambda p: p.startswith("api/v1/riskscores/") and "/country/" not in p
          and (p.count("/") == 4 or p.count("=") == 1 and "ordering=" in p)),
         ("endpoint 3 (regions, income groups, both; orderings)", lambda p: p.startswith("api/v1/riskscores/")
          and ("region=" in p or "income=" in p)),
         ("endpoint 3 (filter answers)", lambda p: p.startswith("api/v1/riskscores/") and "filter=" in p),
         ("endpoint 5 (country, all audiences)", lambda p: "/riskscores/country/" in p),
         ("endpoints 1 and 2", lambda p: p.startswith("api/v1/configuration/"))]


def url_for(relative: str) -> str | None:
    """Return the request that the public variant of a document answers (None for audience variants)."""
    from generator.contract.locations import url_of
    return None if "audience=" in relative else url_of(relative)


def main() -> None:
    from generator.history.site import CURRENT, read_manifest
    from generator.publish.build_release import build
    from generator.serve.keys import add_key
    from generator.serve.runtime import NginxRuntime, ServeSettings
    from tests.live import free_port

    base = Path(tempfile.mkdtemp(prefix="bench-bytes-"))
    os.chmod(base, 0o755)
    runtime = None
    try:
        site = base / "site"
        build(Path("data"), site)
        manifest = read_manifest(site / CURRENT)
        documents = {p: e for p, e in manifest.items() if p.endswith("index.json")}
        raw_total = sum(e["size"] for e in documents.values())
        gz_total = sum(manifest.get(p + ".gz", e)["size"] for p, e in documents.items())
        br_total = sum(manifest.get(p + ".br", e)["size"] for p, e in documents.items())
        lines = [f"- {len(documents)} documents, **{raw_total / 1e6:.1f} MB** raw; **{gz_total / 1e6:.1f} MB** as "
                 f"served with gzip ({raw_total / gz_total:.1f}× smaller), **{br_total / 1e6:.1f} MB** with brotli "
                 f"({raw_total / br_total:.1f}× smaller); files ≤ 1 KB are served plain", "",
                 "| kind | documents | median raw KB | max raw KB | median gzip KB |", "|---|---|---|---|---|"]
        for label, matches in KINDS:
            chosen = [p for p in documents if matches(p)]
            if not chosen:
                continue
            raw = [documents[p]["size"] / 1024 for p in chosen]
            gz = [manifest.get(p + ".gz", documents[p])["size"] / 1024 for p in chosen]
            lines.append(f"| {label} | {len(chosen)} | {statistics.median(raw):.1f} | {max(raw):.1f} | "
                         f"{statistics.median(gz):.1f} |")
        key = add_key(base / "keys.csv", "bench", ("acme_aml",)).key  # sees every model
        runtime = NginxRuntime(ServeSettings(site=site, keys=base / "keys.csv", port=free_port()), base / "nginx")
        runtime.start()
        urls = [u for u in (url_for(p) for p in sorted(documents)) if u]
        headers = {"Authorization": key}

        def etag(url, extra=None):
            connection = http.client.HTTPConnection("127.0.0.1", runtime.settings.port, timeout=10)
            connection.request("GET", url, headers={**headers, **(extra or {})})
            answer = connection.getresponse()
            answer.read()
            connection.close()
            return answer.status, answer.getheader("etag")

        before = {url: etag(url)[1] for url in urls}
        build(Path("data"), site)
        runtime.refresh()
        statuses = defaultdict(int)
        for url, tag in before.items():
            statuses[etag(url, {"If-None-Match": tag})[0]] += 1
        share = statuses[304] / len(urls)
        lines += ["", f"- after a rebuild with unchanged data and a reload: **{share:.1%}** of {len(urls)} conditional "
                      f"requests (every public document) answered 304 ({dict(statuses)})"]
        record("Bytes", "python3 -m benchmarks.bytes", lines)
    finally:
        if runtime:
            runtime.stop()
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
