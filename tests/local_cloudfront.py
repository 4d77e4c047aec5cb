"""A site's releases on a local S3 + CloudFront, for operators trying a CloudFront deploy before AWS (and the
tests' own way to it, tests/live.py): Ceph's RADOS Gateway on 127.0.0.1 as the bucket, `riskapi deploy s3`
into it, `riskapi deploy cloudfront`, and the generated functions and Lambda@Edge run by the Node harness
(tests/clients/cloudfront_harness.mjs) on a port, until Ctrl-C; then everything it started is stopped.

    python3 -m tests.local_cloudfront --site site --keys keys/keys.csv --port 8090

Needs what scripts/test.sh installs (Ceph, Node 22 in tests/clients)."""
from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

from click.testing import CliRunner

from generator.cli import main as riskapi

from .ceph import start_ceph_s3
from .live import NODE_22, NODE_TOOLS, free_port, wait_for

BUCKET = "risk-local-cloudfront"


def deploy(site: Path, keys: Path, functions: Path, s3) -> None:
    """Deploy the site's releases into a bucket of `s3` that anyone may read (as CloudFront's origin access reads
    it), and the CloudFront parts written into `functions`."""
    client = s3.client()
    with contextlib.suppress(client.exceptions.BucketAlreadyOwnedByYou):
        client.create_bucket(Bucket=BUCKET)
    client.put_bucket_policy(Bucket=BUCKET, Policy=json.dumps({"Version": "2012-10-17", "Statement": [
        {"Effect": "Allow", "Principal": "*", "Action": "s3:GetObject", "Resource": f"arn:aws:s3:::{BUCKET}/*"}]}))
    for command, env in ((["deploy", "s3", "--site", str(site), "--bucket", BUCKET, "--endpoint-url", s3.endpoint],
                          s3.env()),
                         (["deploy", "cloudfront", "--site", str(site), "--keys", str(keys), "--out", str(functions)],
                          None)):
        done = CliRunner().invoke(riskapi, [*command, "-q"], env=env)
        if done.exit_code != 0:
            raise SystemExit(f"riskapi {' '.join(command[:2])}: {done.output.strip()}")


CEPH_TOOLS = ("ceph", "ceph-mon", "ceph-osd", "radosgw", "radosgw-admin")  # what tests/ceph.py starts


def missing_tools() -> list[str]:
    """Return what this recipe runs that the machine lacks: Ceph's daemons, Node 22 in tests/clients, the harness."""
    missing = [tool for tool in CEPH_TOOLS if shutil.which(tool) is None]
    if not (NODE_22 / "node").is_file():
        missing.append(f"Node 22 ({NODE_22 / 'node'})")
    return missing


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python3 -m tests.local_cloudfront", description=__doc__.split("\n\n")[0])
    parser.add_argument("--site", type=Path, default=Path("site"))
    parser.add_argument("--keys", type=Path, default=Path("keys/keys.csv"))
    parser.add_argument("--port", type=int, default=8090)
    options = parser.parse_args(argv)
    missing = missing_tools()
    if missing:
        raise SystemExit(f"{', '.join(missing)} not found. Debian's Ceph: sudo apt-get install -y "
                         "--no-install-recommends ceph-mon ceph-osd radosgw ceph-common; Node 22 and the harness: "
                         "npm install --prefix tests/clients (scripts/test.sh installs both)")
    print("starting a local S3 (Ceph's RADOS Gateway; about 20 s)…", file=sys.stderr, flush=True)
    s3 = start_ceph_s3(free_port)
    harness = None
    try:
        functions = Path(tempfile.mkdtemp(prefix="riskapi-cloudfront-"))
        deploy(options.site, options.keys, functions, s3)
        harness = subprocess.Popen([str(NODE_22 / "node"), str(NODE_TOOLS.parent / "cloudfront_harness.mjs"),
                                    str(functions), f"{s3.endpoint}/{BUCKET}", str(options.port)],
                                   env={**os.environ, **s3.env()}, start_new_session=True)
        wait_for(lambda: _listening(options.port) or harness.poll() is not None, seconds=60,
                 what="the CloudFront harness")
        if harness.poll() is not None:
            raise SystemExit(f"the CloudFront harness stopped (code {harness.returncode})")
        print(f"serving the site through CloudFront's functions on http://127.0.0.1:{options.port}/api/v1/ "
              f"(the bucket {BUCKET} on {s3.endpoint}; Ctrl-C stops)", flush=True)
        # Ctrl-C or SIGTERM ends the harness (the finally below); the harness may end by itself too
        for stopping in (signal.SIGTERM, signal.SIGINT):
            signal.signal(stopping, lambda *_: os.killpg(harness.pid, signal.SIGTERM))
        harness.wait()
        return 0
    finally:
        if harness is not None and harness.poll() is None:
            os.killpg(harness.pid, signal.SIGTERM)
            harness.wait(timeout=30)
        s3.stop()


def _listening(port: int) -> bool:
    with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=0.5):
        return True
    return False


if __name__ == "__main__":
    sys.exit(main())
