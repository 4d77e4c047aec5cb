"""Where nginx's time goes per request of the API: `perf record -g` on the workers of the real nginx.conf
(the demo release, 10,000 keys) under wrk with the serving benchmark's mix, grouped by what the time is
spent on. Needs Debian's linux-perf (perf_event_paranoid ≤ 2 lets a process profile its own children).
Loopback only; wrk runs --seconds + 4, perf --seconds.

    python3 -m benchmarks.serving_profile [--seconds 8]
"""
from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import time

from .common import record
from .serving import KEY_COUNT, MIX, lua_script, site_with_keys

# nginx's functions by what they do for a request, as the profile is read (the rest: "other nginx")
GROUPS = (
    ("variables and complex values (maps' keys and values, add_header values, try_files paths)",
     r"^ngx_http_(complex_value|script_|get_indexed_variable|get_flushed_variable|variable_)"),
    ("hash lookups (every map, headers)", r"^ngx_hash_"),
    ("map lookups (their own code)", r"^ngx_http_map_"),
    ("regular expressions (nginx's side)", r"^ngx_(http_)?regex_"),
    ("the open file cache and the file's metadata", r"^ngx_(open_cached_file|file_info|open_and_stat)"),
    ("parsing the request", r"^ngx_http_parse_"),
    ("writing the response (headers, sendfile)", r"^ngx_(http_write_filter|linux_sendfile|http_header_filter|"
                                                 r"http_headers_filter|writev|http_send_header|output_chain)"),
    ("memory pools and formatting", r"^ngx_(p[nc]?alloc|palloc|vslprintf|sprintf|cpystrn)"),
)


def grouped(report: str) -> list[tuple[str, float]]:
    """Turn `perf report --sort dso,symbol` lines into the share of all samples of each DSO group and nginx group."""
    shares: dict[str, float] = {}
    for line in report.splitlines():
        found = re.match(r"\s*([\d.]+)%\s+(\S+)\s+\[[.k]\]\s+(\S+)", line)
        if not found:
            continue
        share, dso, symbol = float(found[1]), found[2], found[3]
        if dso == "[kernel.kallsyms]":
            group = "the kernel (TCP over loopback, sendfile, scheduling)"
        elif dso.startswith("libpcre2"):
            group = "PCRE2 (every regular expression: locations, maps, Authorization)"
        elif dso.startswith("libc"):
            group = "libc (copies, setsockopt, malloc)"
        elif dso == "nginx":
            group = next((name for name, pattern in GROUPS if re.match(pattern, symbol)), "other nginx")
        else:
            group = f"{dso}"
        shares[group] = shares.get(group, 0.0) + share
    return sorted(shares.items(), key=lambda item: -item[1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=int, default=8)
    parser.add_argument("--data", default="data")
    args = parser.parse_args()
    for tool, package in (("wrk", "wrk"), ("perf", "linux-perf")):
        if not shutil.which(tool):
            sys.exit(f"{tool} is missing: apt-get install -y {package}")
    from generator.serve.runtime import NginxRuntime, ServeSettings
    from generator.system.processes import children
    from tests.live import auth_header, free_port, worker_readable_folder

    base = worker_readable_folder("bench-profile-")
    api = None
    try:
        keys = site_with_keys(base, args.data)
        api = NginxRuntime(ServeSettings(site=base / "site", keys=base / "keys.csv", port=free_port()), base / "api")
        api.start()
        script = base / "api.lua"
        script.write_text(lua_script([(p, auth_header(u, keys[u], "apikey") if u else None) for p, u in MIX]))
        workers = sorted(children(api.master_pid))
        load = subprocess.Popen(["wrk", "-t2", "-c64", f"-d{args.seconds + 4}s", "-s", str(script),
                                 f"http://127.0.0.1:{api.settings.port}"], stdout=subprocess.DEVNULL)
        time.sleep(2)  # wrk's connections made: the profile is of requests, not of connecting
        data = base / "perf.data"
        subprocess.run(["perf", "record", "-F", "1999", "-g", "-o", str(data), "-p", ",".join(map(str, workers)),
                        "--", "sleep", str(args.seconds)], check=True, capture_output=True, timeout=args.seconds + 60)
        load.wait(args.seconds + 30)
        report = subprocess.run(["perf", "report", "-i", str(data), "--no-children", "--sort", "dso,symbol",
                                 "--stdio", "-g", "none"], capture_output=True, text=True, check=True,
                                timeout=300).stdout
        lines = [f"`perf record -F 1999 -g` on the API's nginx workers for {args.seconds} s under wrk -t2 -c64 (the "
                 f"serving benchmark's mix, {KEY_COUNT} keys); the share of all samples of each part:", "",
                 "| where | share of the workers' time |", "|---|---|"]
        groups = grouped(report)
        lines += [f"| {group} | {share:.1f} % |" for group, share in groups if share >= 0.1]
        part = dict(groups)
        regex = sum(share for group, share in groups if "regular expression" in group or group.startswith("PCRE2"))
        machinery = sum(part.get(name, 0.0) for name, _ in GROUPS[:3])
        lines += ["", f"- Regular expressions (every location's, map's and the Authorization forms'): {regex:.1f} %; "
                      f"variables, complex values, hash and map lookups: {machinery:.1f} % — what the API's "
                      "maps and headers cost is building values per request, not matching them"]
        top = [line.split() for line in report.splitlines() if re.match(r"\s*[\d.]+%\s+nginx\s", line)][:8]
        lines += ["", "nginx's own functions first: " + ", ".join(f"`{parts[3]}` {parts[0]}" for parts in top)]
        record("Serving profile", f"python3 -m benchmarks.serving_profile --seconds {args.seconds}", lines)
    finally:
        if api is not None:
            api.stop()
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
