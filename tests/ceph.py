"""A real S3 server for the tests: Debian's Ceph RADOS Gateway on 127.0.0.1, with one monitor and one
in-memory OSD (memstore), cephx keys of its own, in a private folder; stopped by the pids it wrote.

Learnt setting it up (Ceph 16.2, Debian 12): the monitor's address must be a msgr2 one
(`monmaptool --addv a [v2:…]`); the OSD must be put in the CRUSH map by hand; `ceph -s` waits for a
manager that is not there (`ceph osd stat` does not); radosgw does not connect with `auth … = none`,
so every daemon gets a cephx key. Start to first answer: ~40 s.
"""
from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import tempfile
import urllib.request
import uuid
from dataclasses import dataclass
from pathlib import Path

from .waiting import wait_for

ACCESS_KEY, SECRET_KEY = "RISKAPITESTKEY", "riskapi-test-secret"

CONF = """[global]
fsid = {fsid}
mon host = [v2:127.0.0.1:{mon_port}]
public addr = 127.0.0.1
cluster addr = 127.0.0.1
public network = 127.0.0.0/8
cluster network = 127.0.0.0/8
ms bind ipv6 = false
keyring = {base}/keyring
osd objectstore = memstore
memstore device bytes = 2147483648
osd pool default size = 1
osd pool default min size = 1
osd crush chooseleaf type = 0
osd pool default pg autoscale mode = off
osd pool default pg num = 8
mon allow pool size one = true
mon max pg per osd = 1000
mon data avail warn = 1
mon data avail crit = 0
run dir = {base}/run
log file = {base}/log/$name.log
admin socket = {base}/run/$name.asok
pid file = {base}/run/$name.pid

[mon.a]
mon data = {base}/mon
[osd.0]
osd data = {base}/osd
[client.rgw.a]
rgw data = {base}/rgw
rgw frontends = beast endpoint=127.0.0.1:{rgw_port}
"""


@dataclass
class CephS3:
    base: Path
    endpoint: str

    def client(self):
        import boto3
        return boto3.client("s3", endpoint_url=self.endpoint, aws_access_key_id=ACCESS_KEY,
                            aws_secret_access_key=SECRET_KEY, region_name="us-east-1")

    def env(self) -> dict[str, str]:
        """Return what `riskapi deploy s3` reads its credentials from (boto3's usual environment)."""
        return {**os.environ, "AWS_ACCESS_KEY_ID": ACCESS_KEY, "AWS_SECRET_ACCESS_KEY": SECRET_KEY,
                "AWS_DEFAULT_REGION": "us-east-1"}

    def stop(self) -> None:
        """End the daemons this server started, by the pids they wrote; then remove its folder."""
        pids = []
        for pid_file in (self.base / "run").glob("*.pid"):
            with contextlib.suppress(ProcessLookupError, ValueError):
                pids.append(int(pid_file.read_text()))
                os.kill(pids[-1], signal.SIGTERM)
        with contextlib.suppress(AssertionError):  # a daemon that outlasts its SIGTERM is killed
            wait_for(lambda: not any(Path(f"/proc/{pid}").exists() for pid in pids), 15, "daemons ended", every=0.2)
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        shutil.rmtree(self.base, ignore_errors=True)


def _run(base: Path, *args: str, timeout: float = 60) -> str:
    done = subprocess.run([*args], cwd=base, capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, f"{' '.join(args)}: {done.stdout}{done.stderr}"
    return done.stdout


def start_ceph_s3(free_port) -> CephS3:
    base = Path(tempfile.mkdtemp(prefix="riskapi-ceph-"))
    for folder in ("run", "log", "mon", "osd", "rgw"):
        (base / folder).mkdir()
    mon_port, rgw_port = free_port(), free_port()
    conf = base / "ceph.conf"
    fsid = str(uuid.uuid4())
    conf.write_text(CONF.format(fsid=fsid, mon_port=mon_port, rgw_port=rgw_port, base=base))
    ceph = ["-c", str(conf)]
    keyring = str(base / "keyring")
    _run(base, "ceph-authtool", "--create-keyring", keyring, "--gen-key", "-n", "mon.", "--cap", "mon", "allow *")
    for name, caps in (("client.admin", ["mon", "allow *", "osd", "allow *", "mgr", "allow *"]),
                       ("client.rgw.a", ["mon", "allow rw", "osd", "allow rwx"]),
                       ("osd.0", ["mon", "allow profile osd", "osd", "allow *"])):
        _run(base, "ceph-authtool", keyring, "--gen-key", "-n", name, *[x for pair in zip(["--cap"] * 3, caps[::2],
                                                                                      caps[1::2]) for x in pair])
    _run(base, "monmaptool", "--create", "--addv", "a", f"[v2:127.0.0.1:{mon_port}]", "--fsid", fsid, "monmap")
    _run(base, "ceph-mon", *ceph, "--mkfs", "-i", "a", "--monmap", "monmap", "--keyring", keyring)
    server = CephS3(base, f"http://127.0.0.1:{rgw_port}")
    try:
        _run(base, "ceph-mon", *ceph, "-i", "a")
        _run(base, "ceph", *ceph, "auth", "import", "-i", keyring)
        _run(base, "ceph", *ceph, "osd", "create")
        _run(base, "ceph", *ceph, "osd", "crush", "add-bucket", "localhost", "host")
        _run(base, "ceph", *ceph, "osd", "crush", "move", "localhost", "root=default")
        _run(base, "ceph", *ceph, "osd", "crush", "add", "osd.0", "1.0", "host=localhost")
        _run(base, "ceph-osd", *ceph, "-i", "0", "--mkfs")
        _run(base, "ceph-osd", *ceph, "-i", "0")
        _wait(lambda: "1 up" in _run(base, "ceph", *ceph, "osd", "stat", timeout=15), "the OSD")
        _run(base, "radosgw", *ceph, "-n", "client.rgw.a", "--setuser", "root", "--setgroup", "root")
        _wait(lambda: urllib.request.urlopen(server.endpoint, timeout=2).status == 200, "radosgw")
        _run(base, "radosgw-admin", *ceph, "-n", "client.admin", "user", "create", "--uid", "riskapi",
             "--display-name", "riskapi tests", "--access-key", ACCESS_KEY, "--secret-key", SECRET_KEY)
    except BaseException:
        server.stop()
        raise
    return server


def _wait(ready, what: str, seconds: float = 90) -> None:
    try:
        wait_for(ready, seconds, what, every=0.5, ignoring=(OSError, AssertionError, subprocess.TimeoutExpired))
    except AssertionError:
        raise RuntimeError(f"{what} did not come up within {seconds:.0f} s") from None
