"""One nginx configuration against another: the working tree's (or its runtime with --candidate FILE as
nginx.conf) against a past commit's (--base REV), each rendered and run by its own commit's runtime
(benchmarks/ab_server.py: its nginx.conf, templates and key map) over the same release and keys, in
interleaved wrk runs with the serving benchmark's mix. First every probe request is asked of both, and
any difference in status, headers (but Date and a file's validators) or body stops the run: a change of
configuration measured here must answer exactly as before. Loopback only.

    python3 -m benchmarks.serving_ab --base REV [--candidate FILE] [--runs 5] [--seconds 6] [--label TEXT]
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import shutil
import statistics
import subprocess
import sys
from email.utils import formatdate
from pathlib import Path

from .common import ROOT, record, summary
from .serving import MIX, lua_script, site_with_keys, wrk


def probes(auth: dict[str, str], release: str, live_from: str) -> list[tuple[str, str, dict[str, str]]]:
    """Return (method, target, headers): every kind of answer the configuration decides — keys in each form,
    refusals, variants, errors, preflight, release-scoped answers, TimeGate and pages."""
    good, basic, custom = auth["user1"], auth["basic"], auth["user10"]
    asked = [(path, {"Authorization": good}) for path, _ in MIX]
    return [("GET", path, headers) for path, headers in asked] + [
        ("GET", "/api/v1/riskscores/sovereign/DEU/", {"Authorization": basic}),
        ("GET", "/api/v1/riskscores/sovereign/DEU/", {"Authorization": "Bearer nope"}),
        ("GET", "/api/v1/riskscores/sovereign/DEU/", {}),
        ("GET", "/api/v1/riskscores/acme_aml/", {"Authorization": custom}),
        ("GET", "/api/v1/riskscores/acme_aml/", {"Authorization": good}),
        ("GET", "/api/v1/riskscores/sovereign/?country_code=XX", {"Authorization": good}),
        ("GET", "/api/v1/riskscores/sovereign/?ordering=nope", {"Authorization": good}),
        ("GET", "/api/v1/riskscores/sovereign/ZZZ/", {"Authorization": good}),
        ("GET", "/api/v1/configuration/countries/?code=deu&name=germany", {"Authorization": good}),
        ("GET", "/api/v1/exports/scores.csv", {"Authorization": good, "Range": "bytes=0-99"}),
        ("GET", "/api/v1/exports/sovereign/scores.parquet", {"Authorization": good}),
        ("HEAD", "/api/v1/", {"Authorization": good}),
        ("OPTIONS", "/api/v1/riskscores/sovereign/", {"Origin": "https://example.org"}),
        ("POST", "/api/v1/riskscores/sovereign/", {"Authorization": good}),
        ("GET", "/api/v1/riskscores/sovereign/?as_of=2020-01-01T00:00:00Z", {"Authorization": good}),
        ("GET", "/api/v1/riskscores/sovereign/", {"Authorization": good,
                                                  "Accept-Datetime": live_from}),
        ("GET", f"/api/v1/releases/{release}/riskscores/sovereign/DEU/", {"Authorization": good}),
        ("GET", f"/api/v1/releases/{release}/datapackage.json", {}),
        ("GET", "/api/v1/releases/19990101T000000Z/", {"Authorization": good}),
        ("GET", "/api/v1/releases/", {"Authorization": good}),
        ("GET", "/api/v1/releases/feed.atom", {}),
        ("GET", "/api/v1/releases/timemap", {"Authorization": good}),
        ("GET", "/api/v1/log/checkpoint", {}),
        ("GET", "/api/v1/catalog.jsonld", {}),
        ("GET", "/", {}), ("GET", "/docs/models/sovereign/", {}), ("GET", "/nowhere", {}), ("GET", "/favicon.ico", {}),
        ("GET", "/api/v1/riskscores/sovereign/%7B", {"Authorization": good}),
        ("GET", "/api/v1/riskscores/sovereign/{", {"Authorization": good}),
    ]


# Not the configuration's to decide: the time, and the validators of files each runtime writes itself (its
# list of releases, a second apart); the body and Repr-Digest still tell whether the same file was served
OWN = {"date", "etag", "last-modified"}


def answer(port: int, method: str, target: str, headers: dict[str, str]) -> tuple:
    """Return what a configuration decides of one answer: its status, headers (but OWN) and body."""
    from tests.live import send
    sent = send(port, method, target, headers)
    return sent.status, sorted((n.lower(), v) for n, v in sent.raw_headers if n.lower() not in OWN), sent.body


SECTION = "Serving: one change at a time"


def _rows_but(label: str) -> list[str]:
    """Return the table's rows BENCHMARKS.md has of other changes: each step's effect is kept as measured."""
    from .common import RESULTS
    text = RESULTS.read_text() if RESULTS.exists() else ""
    section = text.split(f"## {SECTION}\n", 1)[1].split("\n## ", 1)[0] if f"## {SECTION}\n" in text else ""
    rows = [line for line in section.splitlines() if line.startswith("| ") and not line.startswith("| change ")]
    return [row for row in rows if not row.startswith(f"| {label} |")]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", required=True, help="the commit whose nginx.conf is the baseline")
    parser.add_argument("--candidate", help="an nginx.conf to measure (default: the working tree's)")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--seconds", type=int, default=6)
    parser.add_argument("--connections", type=int, default=64)
    parser.add_argument("--label", default="", help="what the candidate changes, for BENCHMARKS.md")
    parser.add_argument("--unchecked", action="store_true",
                        help="diagnosis only: measure a candidate whose answers differ (what a part costs)")
    parser.add_argument("--data", default="data")
    args = parser.parse_args()
    if not shutil.which("wrk"):
        sys.exit("wrk is missing: apt-get install -y wrk")
    from generator.history.site import CURRENT
    from tests.live import auth_header, free_port, worker_readable_folder

    base = worker_readable_folder("bench-ab-")
    servers: dict[str, subprocess.Popen] = {}
    ports: dict[str, tuple[int, int]] = {}  # name → (port, nginx master's pid)
    try:
        tree = base / "base-tree"  # the past commit's files, whose runtime serves the base
        tree.mkdir()
        archive = subprocess.run(["git", "archive", args.base], cwd=ROOT, check=True, capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", str(tree)], input=archive, check=True)
        keys = site_with_keys(base, args.data)
        auth = {user: auth_header(user, key, "apikey") for user, key in keys.items()}
        auth["basic"] = auth_header("USER2", keys["user2"], "basic")  # a user in another letter case
        for name, source in (("base", tree), ("candidate", ROOT)):
            shutil.copy(base / "keys.csv", base / f"keys-{name}.csv")  # each runtime's own: one may convert it
            command = [sys.executable, str(ROOT / "benchmarks" / "ab_server.py"), str(base / "site"),
                       str(base / f"keys-{name}.csv"), str(base / name), str(free_port())]
            if name == "candidate" and args.candidate:
                command.append(str(Path(args.candidate).resolve()))
            servers[name] = subprocess.Popen(command, cwd=source, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                             text=True, env={**os.environ, "PYTHONPATH": str(source)})
            said = servers[name].stdout.readline().split()  # type: ignore[union-attr]
            if len(said) != 2:
                sys.exit(f"the {name}'s runtime did not start")
            ports[name] = (int(said[0]), int(said[1]))
        release = (base / "site" / CURRENT).resolve().name
        # an instant both servers know the release was live at: when it went live (each server's record
        # runs to when it started, so "now" would be past the one started first)
        listed = json.loads(answer(ports["base"][0], "GET", "/api/v1/releases/", {"Authorization": auth["user1"]})[2])
        live_from = formatdate(datetime.datetime.fromisoformat(listed["releases"][0]["liveFrom"]).timestamp(),
                               usegmt=True)
        asked = probes(auth, release, live_from)
        for method, target, headers in asked:
            seen = {name: answer(port, method, target, headers) for name, (port, _) in ports.items()}
            if seen["base"] != seen["candidate"] and not args.unchecked:
                sys.exit(f"{method} {target} {headers}: answers differ\n base:      {str(seen['base'])[:1500]}\n"
                         f" candidate: {str(seen['candidate'])[:1500]}")
        script = base / "mix.lua"
        script.write_text(lua_script([(path, auth[user] if user else None) for path, user in MIX]))
        results: dict[str, list[dict]] = {name: [] for name in ports}
        for _ in range(args.runs):  # interleaved: both see the same machine noise
            for name, (port, master) in ports.items():
                results[name].append(wrk(port, script, args.seconds, args.connections, master))
        rate = {name: summary([r["rate"] for r in rs]) for name, rs in results.items()}
        cpu = {name: summary([r["cpu_us"] for r in rs]) for name, rs in results.items()}
        user = {name: summary([r["user_us"] for r in rs]) for name, rs in results.items()}
        user_ratio = statistics.median(c["user_us"] / b["user_us"]
                                       for b, c in zip(results["base"], results["candidate"]))
        cpu_ratio = statistics.median(c["cpu_us"] / b["cpu_us"] for b, c in zip(results["base"], results["candidate"]))
        rate_ratio = statistics.median(c["rate"] / b["rate"] for b, c in zip(results["base"], results["candidate"]))
        base_commit = subprocess.run(["git", "rev-parse", "--short", args.base], cwd=ROOT, capture_output=True,
                                     text=True).stdout.strip()
        candidate = args.candidate or "the working tree"
        lines = [f"{args.label or 'candidate'} — nginx.conf of {candidate} against {base_commit}'s; {len(asked)} probe requests answered identically; wrk -t2 "
                 f"-c{args.connections} -d{args.seconds}s × {args.runs} interleaved:", "",
                 f"- requests/s: base {rate['base']['median']:.0f}, candidate {rate['candidate']['median']:.0f} "
                 f"(candidate / base {rate_ratio:.3f})",
                 f"- nginx CPU per request: base {cpu['base']['median']:.2f} µs, candidate "
                 f"{cpu['candidate']['median']:.2f} µs (candidate / base {cpu_ratio:.3f}); of it in nginx's own code "
                 f"(user CPU): base {user['base']['median']:.2f} µs, candidate {user['candidate']['median']:.2f} µs "
                 f"(candidate / base {user_ratio:.3f})"]
        print("\n".join(lines))
        if args.label:
            row = (f"| {args.label} | {base_commit} → {candidate} | {rate_ratio:.3f} | {cpu_ratio:.3f} "
                   f"({cpu['base']['median']:.2f} → {cpu['candidate']['median']:.2f} µs) | {user_ratio:.3f} "
                   f"({user['base']['median']:.2f} → {user['candidate']['median']:.2f} µs) |")
            record(SECTION, "python3 -m benchmarks.serving_ab --base REV --label TEXT",
                   [f"Each change to nginx.conf alone, against the one before it, every probe answered the same; "
                    f"wrk -t2 -c{args.connections} -d{args.seconds}s × {args.runs} interleaved, medians "
                    "(ratios: candidate / base; about ±2 % between two runs of the same configuration):", "",
                    "| change | nginx.conf | requests/s | nginx CPU per request | of it, nginx's own code (user) |",
                    "|---|---|---|---|---|", *_rows_but(args.label), row])
    finally:
        for server in servers.values():  # its standard input closed: it stops its nginx and ends
            server.stdin.close()  # type: ignore[union-attr]
            server.wait(30)
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
