"""Serving benchmark: wrk against the real nginx.conf serving the demo release with 10,000 real keys,
for an endpoint mix, against nginx's `return 200` ceiling and the same files by plain direct path
(no keys, no maps) in the same run, and against a dynamic peer (FastAPI + uvicorn, 2 workers).
Loopback only; every wrk run is bounded by --seconds.

    python3 -m benchmarks.serving [--runs 3] [--seconds 10] [--connections 64]
"""
from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

from generator.serve.runtime import NginxRuntime

from .common import ROOT, record, summary

MIX = [  # (path, user or None for a 403) — every kind of request the issue names
    ("/api/v1/riskscores/sovereign/DEU/", "user1"), ("/api/v1/riskscores/esg/nga/", "user2"),
    ("/api/v1/riskscores/sdg/BRA", "user3"), ("/api/v1/riskscores/aml/FRA/", "user4"),
    ("/api/v1/riskscores/supplychainrisk/CHN/", "user5"), ("/api/v1/riskscores/aml/", "user6"),
    ("/api/v1/riskscores/esg/?ordering=-country_name", "user7"),
    ("/api/v1/riskscores/sovereign/?country_name=United+States", "user8"),
    ("/api/v1/configuration/countries/?model=name", "user9"), ("/api/v1/riskscores/country/IND/", "user10"),
    ("/api/v1/configuration/riskscoremodels/", "user11"), ("/api/v1/riskscores/sovereign/JPN/", None),
]
STATIC = {  # the same mix as files by direct path, for the plain static floor
    "/api/v1/riskscores/sovereign/DEU/": "/api/v1/riskscores/sovereign/DEU/index.json",
    "/api/v1/riskscores/esg/nga/": "/api/v1/riskscores/esg/NGA/index.json",
    "/api/v1/riskscores/sdg/BRA": "/api/v1/riskscores/sdg/BRA/index.json",
    "/api/v1/riskscores/aml/FRA/": "/api/v1/riskscores/aml/FRA/index.json",
    "/api/v1/riskscores/supplychainrisk/CHN/": "/api/v1/riskscores/supplychainrisk/CHN/index.json",
    "/api/v1/riskscores/aml/": "/api/v1/riskscores/aml/index.json",
    "/api/v1/riskscores/esg/?ordering=-country_name": "/api/v1/riskscores/esg/ordering=-country_name/index.json",
    "/api/v1/riskscores/sovereign/?country_name=United+States": "/api/v1/riskscores/sovereign/filter=USA/index.json",
    "/api/v1/configuration/countries/?model=name": "/api/v1/configuration/countries/model=name/index.json",
    "/api/v1/riskscores/country/IND/": "/api/v1/riskscores/country/IND/index.json",
    "/api/v1/configuration/riskscoremodels/": "/api/v1/configuration/riskscoremodels/index.json",
    "/api/v1/riskscores/sovereign/JPN/": "/api/v1/configuration/countries/filter=JPN/index.json",
}
KEY_COUNT = 10_000
# What nginx sends of itself on every file: left out of the contract floor's constant headers
OWN_HEADERS = {"server", "date", "content-type", "content-length", "last-modified", "connection", "etag",
               "accept-ranges", "keep-alive", "transfer-encoding"}


def contract_headers(port: int, path: str, authorization: str) -> list[tuple[str, str]]:
    """Return the headers the API adds to a real answer (`path`, asked with `authorization`): what the contract
    floor sends as constants."""
    from tests.live import send
    answer = send(port, "GET", path, {"Authorization": authorization})
    return [(name, value) for name, value in answer.raw_headers if name.lower() not in OWN_HEADERS]


def site_with_keys(base: Path, data: str) -> dict[str, str]:
    """Return every serving benchmark's set-up, in `base` (tests.live.worker_readable_folder): the demo release
    built into its site/ and KEY_COUNT keys in its keys.csv (one user in ten granted the custom model);
    each user's key. The keys file is of the format every runtime reads, keys as typed: one that keeps
    digests converts it in place when it first reads it (benchmarks.serving_ab gives each its own copy)."""
    from generator.contract.key_format import new_key
    from generator.publish.build_release import build
    build(Path(data), base / "site")
    plain = {f"user{n}": new_key() for n in range(KEY_COUNT)}
    (base / "keys.csv").write_text("user,key,models,active\n" + "".join(
        f"{user},{key},{'acme_aml' if n % 10 == 0 else ''},yes\n" for n, (user, key) in enumerate(plain.items())))
    os.chmod(base / "keys.csv", 0o600)
    return plain


def contract_server(port: int, root: Path, headers: list[tuple[str, str]], log: Path) -> str:
    """Return a server block of the same files by direct path that says what the API says (its headers as
    constants) and logs as it logs (the same fields, the same buffering): the contract's own floor."""
    from generator.contract.serving import ACCESS_LOG
    fields = "".join(field for field, _ in ACCESS_LOG).replace("$log_user", "$remote_user")
    fields = fields.replace("$request_path", "$uri").replace("$log_key", "-")
    from generator.serve.nginx.contract_blocks import double_quoted
    added = "".join(f"    add_header {name} {double_quoted(value)} always;\n" for name, value in headers)
    return (f"  log_format contract '{fields}';\n"
            f"  server {{ listen 127.0.0.1:{port}; root {root}; access_log {log} contract buffer=64k flush=1s;\n"
            f"{added}"
            "    location / { }\n  }\n")


def lua_script(requests: list[tuple[str, str | None]]) -> str:
    rows = ",\n".join(
        '  {"%s", %s}' % (path, f'"{auth}"' if auth else "nil") for path, auth in requests)
    return ("local requests = {\n" + rows + "\n}\nlocal i = 0\nrequest = function()\n  i = i + 1\n"
            "  local r = requests[(i % #requests) + 1]\n  local h = {}\n  if r[2] then h['Authorization'] = r[2] end\n"
            "  return wrk.format('GET', r[1], h)\nend\n")


def cpu_seconds(pids: set[int], user_only: bool = False) -> float:
    """Return the user and system CPU the processes used so far (their /proc stat, in clock ticks); with `user_only`,
    user CPU alone: nginx's own code, without the kernel's TCP work that every target shares."""
    from generator.system.processes import stat_fields
    ticks = 0
    for pid in pids:
        fields = stat_fields(pid)
        if fields is not None:
            ticks += int(fields[11]) + (0 if user_only else int(fields[12]))  # utime, stime
    return ticks / os.sysconf("SC_CLK_TCK")


def wrk(port: int, script: Path, seconds: int, connections: int, server: int | None = None) -> dict:
    """Run wrk once; with `server` (an nginx master's pid), the CPU its workers spent per request too:
    what the server itself pays, which wrk on the same two cores does not blur."""
    from generator.system.processes import children
    workers = children(server) if server else set()
    before, user_before = cpu_seconds(workers), cpu_seconds(workers, user_only=True)
    out = subprocess.run(["wrk", "-t2", f"-c{connections}", f"-d{seconds}s", "--latency", "-s", str(script),
                          f"http://127.0.0.1:{port}"], capture_output=True, text=True, timeout=seconds + 30).stdout
    served = int(re.search(r"(\d+) requests in", out)[1])
    cpu_us = (cpu_seconds(workers) - before) * 1e6 / served if workers else None
    user_us = (cpu_seconds(workers, user_only=True) - user_before) * 1e6 / served if workers else None
    rate = float(re.search(r"Requests/sec:\s+([\d.]+)", out)[1])
    latency = {p: _ms(re.search(rf"\s{p}%\s+([\d.]+\w+)", out)[1]) for p in ("50", "99")}
    errors = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    sockets = re.search(r"Socket errors: (.*)", out)
    return {"rate": rate, "p50": latency["50"], "p99": latency["99"], "non2xx": int(errors[1]) if errors else 0,
            "socket_errors": sockets[1] if sockets else "", "cpu_us": cpu_us,
            "user_us": user_us}


def _ms(text: str) -> float:
    value, unit = re.fullmatch(r"([\d.]+)(\w+)", text).groups()
    return float(value) * {"us": 0.001, "ms": 1.0, "s": 1000.0}[unit]


class UnloggedRuntime(NginxRuntime):
    """The API's own runtime with its access log off: what logging costs (diagnosis only)."""

    def render(self):
        state = super().render()
        http = self.conf / "runtime" / "http.conf"
        http.write_text(re.sub(r"(?m)^access_log .*$", "access_log off;", http.read_text()))
        return state


class UndigestedRuntime(NginxRuntime):
    """The API's own runtime without its integrity fields (the maps of every file's Unencoded-Digest and of
    each coding's Repr-Digest left empty): what they cost nginx per request (diagnosis only)."""

    def render(self):
        state = super().render()
        for name in ("digests.conf", "coded-digests.conf"):
            (self.conf / "runtime" / name).write_text("")
        return state


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--seconds", type=int, default=10)
    parser.add_argument("--connections", type=int, default=64)
    parser.add_argument("--data", default="data")
    args = parser.parse_args()
    if not shutil.which("wrk"):
        sys.exit("wrk is missing: apt-get install -y wrk")
    from generator.history.site import CURRENT
    from generator.serve.runtime import ServeSettings
    from tests.live import auth_header, free_port, worker_readable_folder

    base = worker_readable_folder("bench-serve-")
    processes = []
    try:
        keys = site_with_keys(base, args.data)
        release = (base / "site" / CURRENT).resolve()

        api = NginxRuntime(ServeSettings(site=base / "site", keys=base / "keys.csv", port=free_port()), base / "api")
        api.start()
        processes.append(api)
        # The same API without its access log: what the one line per request (user names) costs.
        unlogged = UnloggedRuntime(ServeSettings(site=base / "site", keys=base / "keys.csv", port=free_port()),
                                   base / "api-unlogged")
        unlogged.start()
        processes.append(unlogged)
        undigested = UndigestedRuntime(ServeSettings(site=base / "site", keys=base / "keys.csv", port=free_port()),
                                       base / "api-undigested")
        undigested.start()
        processes.append(undigested)
        # The floors: nginx with nothing but `return 200`, and the same files by direct path.
        floor_port = free_port()
        floor_conf = base / "floor" / "nginx.conf"
        floor_conf.parent.mkdir()
        floor_conf.write_text(
            f"daemon off; worker_processes auto; pid {base}/floor/nginx.pid; error_log {base}/floor/error.log;\n"
            "events { worker_connections 4096; }\n"
            f"http {{ access_log off; sendfile on; tcp_nopush on; keepalive_requests 100000;\n"
            f"  client_body_temp_path {base}/floor/body; proxy_temp_path {base}/floor/proxy;\n"
            f"  fastcgi_temp_path {base}/floor/fcgi; uwsgi_temp_path {base}/floor/uwsgi; scgi_temp_path {base}/floor/scgi;\n"
            f"  default_type application/json; open_file_cache max=20000 inactive=120s;\n"
            f"  server {{ listen 127.0.0.1:{floor_port}; root {release};\n"
            "    location = /ceiling { return 200 'ok'; }\n    location / { }\n  }\n}\n")
        contract_port = free_port()
        sent = contract_headers(api.settings.port, MIX[0][0], auth_header(MIX[0][1], keys[MIX[0][1]], "apikey"))
        floor_conf.write_text(floor_conf.read_text().removesuffix("}\n") + contract_server(
            contract_port, release, sent, base / "floor" / "access.log") + "}\n")
        floor = subprocess.Popen(["nginx", "-p", str(base / "floor"), "-c", str(floor_conf), "-e", "stderr"],
                                 start_new_session=True)
        peer_port = free_port()
        peer = subprocess.Popen([sys.executable, "-m", "uvicorn", "benchmarks.peer_app:app", "--host", "127.0.0.1",
                                 "--port", str(peer_port), "--workers", "2", "--log-level", "warning",
                                 "--no-access-log"], cwd=ROOT, start_new_session=True,
                                env={**os.environ, "RISKAPI_PEER_RELEASE": str(release),
                                     "RISKAPI_PEER_KEYS": str(base / "keys.csv")})
        time.sleep(4)  # uvicorn loads every document into memory

        def auth(user):
            return auth_header(user, keys[user], "apikey") if user else None
        scripts = {}
        for name, requests in {
            "ceiling": [("/ceiling", None)],
            "static": [(STATIC[path], None) for path, _ in MIX],
            "contract": [(STATIC[path], None) for path, _ in MIX],
            "api": [(path, auth(user)) for path, user in MIX],
            "unlogged": [(path, auth(user)) for path, user in MIX],
            "undigested": [(path, auth(user)) for path, user in MIX],
            "peer": [(path, auth(user)) for path, user in MIX],
        }.items():
            scripts[name] = base / f"{name}.lua"
            scripts[name].write_text(lua_script(requests))
        ports = {"ceiling": floor_port, "static": floor_port, "contract": contract_port, "api": api.settings.port,
                 "unlogged": unlogged.settings.port, "undigested": undigested.settings.port, "peer": peer_port}
        masters = {"static": floor.pid, "contract": floor.pid, "api": api.master_pid, "unlogged": unlogged.master_pid,
                   "undigested": undigested.master_pid}
        results = {name: [] for name in scripts}
        for _ in range(args.runs):  # interleaved so every target sees the same machine noise
            for name in scripts:
                results[name].append(wrk(ports[name], scripts[name], args.seconds, args.connections,
                                         masters.get(name)))
        rate = {name: summary([r["rate"] for r in rs]) for name, rs in results.items()}
        p99 = {name: summary([r["p99"] for r in rs]) for name, rs in results.items()}
        p50 = {name: summary([r["p50"] for r in rs]) for name, rs in results.items()}
        api_vs_static = summary([a["rate"] / s["rate"] for a, s in zip(results["api"], results["static"])])
        api_vs_contract = summary([a["rate"] / c["rate"] for a, c in zip(results["api"], results["contract"])])
        contract_vs_static = summary([c["rate"] / s["rate"] for c, s in zip(results["contract"], results["static"])])
        api_vs_peer = summary([a["rate"] / p["rate"] for a, p in zip(results["api"], results["peer"])])
        forbidden = sum(r["non2xx"] for r in results["api"])
        # every floor answers 200: a 404 is a floor set up wrong (a wrong root), which would flatter the API
        assert not any(r["non2xx"] for name in ("static", "contract") for r in results[name]), "a floor answered an error"
        lines = [f"wrk -t2 -c{args.connections} -d{args.seconds}s, {args.runs} interleaved runs each; "
                 f"{KEY_COUNT} keys in the key map; mix of {len(MIX)} requests (endpoint 4 documents, full, "
                 "ordered and filtered lists, endpoint 5, endpoint 1, one 403); no Accept-Encoding.", "",
                 "| target | requests/s (median, min–max) | p50 ms | p99 ms |", "|---|---|---|---|"]
        labels = {"ceiling": "nginx `return 200` (ceiling)", "static": "same files by direct path (floor)",
                  "contract": "the contract floor: the same files with the API's headers (constants) and its log",
                  "api": "**the API** (real nginx.conf, keys, maps)",
                  "unlogged": "the API without its access log (diagnosis only)",
                  "undigested": "the API without its digests (diagnosis only)",
                  "peer": "FastAPI + uvicorn, 2 workers"}
        for name, label in labels.items():
            lines.append(f"| {label} | {rate[name]['median']:.0f} ({rate[name]['min']:.0f}–{rate[name]['max']:.0f}) | "
                         f"{p50[name]['median']:.2f} | {p99[name]['median']:.2f} |")
        unlogged_vs_static = summary([a["rate"] / s["rate"] for a, s in zip(results["unlogged"], results["static"])])
        lines += ["", f"- API / contract floor: **{api_vs_contract['median']:.2f}** (goal ≥ 0.90: "
                      f"{'met' if api_vs_contract['median'] >= 0.9 else 'not met'}); the contract floor / the "
                      f"floor: {contract_vs_static['median']:.2f} (what the contract's headers and log cost)",
                  f"- API / static floor: **{api_vs_static['median']:.2f}**; without the access log "
                  f"{unlogged_vs_static['median']:.2f}",
                  f"- API / dynamic peer: **{api_vs_peer['median']:.1f}×** (goal ≥ 5×: "
                  f"{'met' if api_vs_peer['median'] >= 5 else 'not met'})",
                  f"- API p99 at {args.connections} connections: {p99['api']['median']:.2f} ms (goal < 10 ms: "
                  f"{'met' if p99['api']['median'] < 10 else 'not met'})",
                  f"- non-2xx answers from the API: {forbidden} (the planted 403s: 1 in {len(MIX)})"]
        cpu = {name: summary([r["cpu_us"] for r in results[name]]) for name in masters}
        user = {name: summary([r["user_us"] for r in results[name]]) for name in masters}
        lines += [f"- nginx's own CPU per request (its workers' user + system time over the requests served; "
                  f"wrk left out): the floor {cpu['static']['median']:.1f} µs, the contract floor "
                  f"{cpu['contract']['median']:.1f} µs, the API {cpu['api']['median']:.1f} µs "
                  f"({cpu['api']['median'] / cpu['static']['median']:.2f}× the direct path's: goal ≤ 1.3, "
                  f"{'met' if cpu['api']['median'] <= 1.3 * cpu['static']['median'] else 'not met'}), without its access log "
                  f"{cpu['unlogged']['median']:.1f} µs, without its digests {cpu['undigested']['median']:.1f} µs",
                  f"- of it in nginx's own code (user CPU; the rest is the kernel's TCP work, the same for every "
                  f"target): the floor {user['static']['median']:.1f} µs, the contract floor "
                  f"{user['contract']['median']:.1f} µs, the API {user['api']['median']:.1f} µs"]
        record("Serving", f"python3 -m benchmarks.serving --runs {args.runs} --seconds {args.seconds}", lines)
    finally:
        for process in processes:
            process.stop()
        for name in ("floor", "peer"):
            process = locals().get(name)
            if process is not None:
                process.terminate()
                process.wait(20)
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
