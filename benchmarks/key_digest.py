"""What working out a key's digest costs nginx per request, several ways, against a key map of plain keys
(nginx.conf's before keys were kept as digests): an nginx server on loopback for each, with a map of 10,000
keys and answering `return 200 $user`, so the key check is nearly all of the work:

- plain: the map keyed by the key as sent;
- set-misc: `set_hmac_sha256` (Debian's libnginx-mod-http-set-misc, C and OpenSSL) and `set_encode_hex`,
  the map keyed by the HMAC-SHA-256 of the key under a site secret;
- njs: `js_set` of the same HMAC with njs's crypto module, the same map;
- set-misc's `set_sha1` and `set_md5` of the secret and the key (nginx's own hashes): `set_sha1` is what
  nginx.conf does (contract/key_format.py), MD5 the cheapest hash nginx has.

The keys at rest are digests in all but the first. wrk sends one of the keys (it is found), and
nginx's workers' CPU per request is read from /proc (wrk left out), in interleaved runs.

    python3 -m benchmarks.key_digest [--runs 3] [--seconds 5]

Needs nginx with the njs and set-misc modules (apt-get install libnginx-mod-http-js
libnginx-mod-http-set-misc) and wrk."""
from __future__ import annotations

import argparse
import hashlib
import hmac
import secrets
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from generator.contract import key_format

from .common import record, summary
from .serving import wrk

MODULES = Path("/usr/lib/nginx/modules")
NEEDED = ("ndk_http_module.so", "ngx_http_set_misc_module.so", "ngx_http_js_module.so")
KEY_COUNT = 10_000
SECRET = secrets.token_hex(32)
NJS = """function hmac(r) {
  return require("crypto").createHmac("sha256", SECRET).update(r.variables.credential).digest("hex");
}
export default { hmac };
"""
# Every kind reads the credential as nginx.conf does (a map of the header's forms), then looks it up.
CREDENTIAL = 'map $http_authorization $credential {\n    default "";\n    "~*^\\s*bearer\\s+(?<c>\\S+)\\s*$" $c;\n}\n'
KINDS = {
    "plain": ('map $credential $user {{\n    default "";\n{plain}}}\n', "", ""),
    "set-misc": ('map $key_digest $user {{\n    default "";\n{digests}}}\n', "",
                 'set_hmac_sha256 $raw_digest "{secret}" $credential;\n        set_encode_hex $key_digest $raw_digest;\n'),
    "set-misc-sha1": ('map $key_digest $user {{\n    default "";\n{sha1_digests}}}\n', "",
                      'set_hmac_sha1 $raw_digest "{secret}" $credential;\n        set_encode_hex $key_digest $raw_digest;\n'),
    "set-misc-keyed-sha1": ('map $key_digest $user {{\n    default "";\n{keyed_sha1}}}\n', "",
                            'set_sha1 $key_digest "{secret}$credential";\n'),
    "set-misc-keyed-md5": ('map $key_digest $user {{\n    default "";\n{keyed_md5}}}\n', "",
                           'set_md5 $key_digest "{secret}$credential";\n'),
    "njs": ('map $key_digest $user {{\n    default "";\n{digests}}}\n',
            'js_import digest from digest.js;\n    js_set $key_digest digest.hmac;\n', ""),
}
LABELS = {"plain": "the key map of plain keys (nginx.conf before keys were digests)",
          "set-misc": "HMAC-SHA-256 by set-misc's set_hmac_sha256, map of digests",
          "set-misc-sha1": "HMAC-SHA-1 by set-misc's set_hmac_sha1, map of digests",
          "set-misc-keyed-sha1": "SHA-1 of the secret and the key by set-misc's set_sha1 (nginx's own SHA-1)",
          "set-misc-keyed-md5": "MD5 of the secret and the key by set-misc's set_md5 (nginx's own MD5)",
          "njs": "HMAC-SHA-256 by njs (js_set), map of digests"}


def configuration(kind: str, folder: Path, port: int, keys: list[str]) -> Path:
    """Return an nginx configuration of `kind` in `folder`, its key map holding `keys` (or their digests)."""
    maps, http_extra, server_extra = KINDS[kind]
    plain = "".join(f'    "{key}" "user{n}";\n' for n, key in enumerate(keys))
    digests = "".join(f'    "{hmac.new(SECRET.encode(), key.encode(), hashlib.sha256).hexdigest()}" "user{n}";\n'
                      for n, key in enumerate(keys))
    sha1_digests = "".join(f'    "{hmac.new(SECRET.encode(), key.encode(), hashlib.sha1).hexdigest()}" "user{n}";\n'
                           for n, key in enumerate(keys))
    keyed_sha1 = "".join(f'    "{hashlib.sha1((SECRET + key).encode()).hexdigest()}" "user{n}";\n'
                         for n, key in enumerate(keys))
    keyed_md5 = "".join(f'    "{hashlib.md5((SECRET + key).encode()).hexdigest()}" "user{n}";\n'
                        for n, key in enumerate(keys))
    (folder / "digest.js").write_text(NJS.replace("SECRET", f'"{SECRET}"'))
    key_map = maps.format(plain=plain, digests=digests, sha1_digests=sha1_digests, keyed_sha1=keyed_sha1, keyed_md5=keyed_md5)
    loads = "".join(f"load_module {MODULES / name};\n" for name in NEEDED)
    text = (f"{loads}daemon off;\nworker_processes 2;\npid {folder}/nginx.pid;\nerror_log {folder}/error.log;\n"
            "events { worker_connections 1024; }\n"
            f"http {{\n    access_log off;\n    map_hash_max_size 1048576;\n    map_hash_bucket_size 128;\n"
            f"    {CREDENTIAL}    {http_extra}{key_map}"
            f"    server {{\n        listen 127.0.0.1:{port};\n        "
            f"{server_extra.format(secret=SECRET)}"
            '        if ($user = "") { return 403; }\n        return 200 "$user\\n";\n    }\n}\n')
    conf = folder / "nginx.conf"
    conf.write_text(text)
    return conf


def start(conf: Path) -> subprocess.Popen:
    process = subprocess.Popen(["nginx", "-p", str(conf.parent), "-c", str(conf)], stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE)
    deadline = time.monotonic() + 30
    while not (conf.parent / "nginx.pid").exists():
        if process.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError(f"nginx did not start: {process.stderr.read().decode()[-2000:]}")
        time.sleep(0.05)
    return process


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--seconds", type=int, default=5)
    args = parser.parse_args()
    missing = [name for name in NEEDED if not (MODULES / name).exists()] + ([] if shutil.which("wrk") else ["wrk"])
    if missing:
        sys.exit(f"missing: {', '.join(missing)} (apt-get install libnginx-mod-http-js libnginx-mod-http-set-misc wrk)")
    from tests.live import free_port, send
    keys = [key_format.new_key() for _ in range(KEY_COUNT)]
    base = Path(tempfile.mkdtemp(prefix="key-digest-"))
    servers, ports = {}, {}
    script = base / "key.lua"
    script.write_text(f'wrk.headers["Authorization"] = "Bearer {keys[4321]}"\n')
    try:
        for kind in KINDS:
            folder = base / kind
            folder.mkdir()
            ports[kind] = free_port()
            servers[kind] = start(configuration(kind, folder, ports[kind], keys))
            answer = send(ports[kind], "GET", "/", {"Authorization": f"Bearer {keys[4321]}"})
            assert (answer.status, answer.body) == (200, b"user4321\n"), (kind, answer.status, answer.body)
            refused = send(ports[kind], "GET", "/", {"Authorization": f"Bearer {key_format.new_key()}"})
            assert refused.status == 403, (kind, refused.status)
        results = {kind: [] for kind in KINDS}
        for _ in range(args.runs):  # interleaved: the machine's drift falls on every kind alike
            for kind in KINDS:
                results[kind].append(wrk(ports[kind], script, args.seconds, 64, servers[kind].pid))
    finally:
        for process in servers.values():
            process.terminate()
            process.wait(timeout=15)
        shutil.rmtree(base, ignore_errors=True)
    cpu = {kind: summary([r["cpu_us"] for r in runs]) for kind, runs in results.items()}
    rate = {kind: summary([r["rate"] for r in runs]) for kind, runs in results.items()}
    lines = [f"wrk -t2 -c64 -d{args.seconds}s, {args.runs} interleaved runs each; {KEY_COUNT:,} keys in the map; "
             "one key sent as `Bearer KEY` (found); `return 200 $user`, so the key check is the work.", "",
             "| key check | nginx CPU µs a request (median, min–max) | over plain | requests/s |", "|---|---|---|---|"]
    for kind in KINDS:
        lines.append(f"| {LABELS[kind]} | {cpu[kind]['median']:.2f} ({cpu[kind]['min']:.2f}–{cpu[kind]['max']:.2f}) "
                     f"| {cpu[kind]['median'] - cpu['plain']['median']:+.2f} µs | {rate[kind]['median']:.0f} |")
    record("Key digests", f"python3 -m benchmarks.key_digest --runs {args.runs} --seconds {args.seconds}", lines)


if __name__ == "__main__":
    main()
