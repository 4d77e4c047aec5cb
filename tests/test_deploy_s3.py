"""riskapi deploy s3 against a real S3 server: Ceph's RADOS Gateway on 127.0.0.1 (tests/ceph.py)."""
from __future__ import annotations

import hashlib
import os
import signal
import subprocess
import sys
import time

import orjson
import pytest
from click.testing import CliRunner

from generator.build import build
from generator.cli import main
from generator.deploy.edge import TWINS, served_files
from generator.publish import RELEASES, current_release

from .conftest import DEMO_DATA, TINY
from .live import free_port

TYPES = {".json": "application/json; charset=utf-8", ".html": "text/html; charset=utf-8",
         ".js": "text/javascript; charset=utf-8", ".csv": "text/csv; charset=utf-8",
         ".jsonl": "application/x-ndjson; charset=utf-8"}


@pytest.fixture
def bucket(s3, request):
    name = "risk-" + hashlib.sha256(request.node.name.encode()).hexdigest()[:12]
    s3.client().create_bucket(Bucket=name)
    return name


def _deploy(s3, site, bucket, *extra):
    return CliRunner().invoke(main, ["deploy", "s3", "--site", str(site), "--bucket", bucket, "--endpoint-url",
                                     s3.endpoint, *extra], env=s3.env())


def _pointer(client, bucket, prefix=""):
    return orjson.loads(client.get_object(Bucket=bucket, Key=f"{prefix}current.json")["Body"].read())


def _objects(client, bucket, prefix):
    found = {}
    for page in client.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix):
        for item in page.get("Contents", []):
            found[item["Key"]] = item
    return found


def test_every_file_is_uploaded_with_its_metadata_and_the_pointer_is_written_last(s3, bucket, tmp_path):
    site = tmp_path / "site"
    build(TINY, site)
    release = current_release(site)
    result = _deploy(s3, site, bucket, "--prefix", "risk", "--cache-control", "private, max-age=60")
    assert result.exit_code == 0, result.output
    client, base = s3.client(), f"risk/releases/{release}/"
    objects = _objects(client, bucket, base)
    release_dir = site / RELEASES / release
    files = served_files(release_dir)
    twins = [f + t for f in files for t in TWINS if (release_dir / (f + t)).is_file()]
    assert set(objects) == {base + f for f in files + twins} | {base + "edge/release.json"}
    assert not any("nginx/" in key or key.endswith("manifest.json") for key in objects)
    for relative in files + twins:
        answer = client.get_object(Bucket=bucket, Key=base + relative)
        body = answer["Body"].read()
        assert body == (release_dir / relative).read_bytes(), relative
        original = relative.removesuffix(".gz").removesuffix(".br")
        assert answer["ContentType"] == TYPES["." + original.rsplit(".", 1)[1]], relative
        assert answer.get("ContentEncoding") == {".gz": "gzip", ".br": "br"}.get(relative[len(original):]), relative
        assert answer["CacheControl"] == "private, max-age=60"
        assert answer["Metadata"]["sha256"] == hashlib.sha256(body).hexdigest()
        assert answer["Metadata"]["release"] == release
    assert _pointer(client, bucket, "risk/") == {"release": release, "previous": None}
    switched = _objects(client, bucket, "risk/current.json")["risk/current.json"]["LastModified"]  # in ms
    assert switched >= max(item["LastModified"] for item in objects.values())
    again = _deploy(s3, site, bucket, "--prefix", "risk/", "--cache-control", "private, max-age=60")
    assert again.exit_code == 0, again.output
    # the list of releases (one per audience, with and without the staged ones), its feeds and the TimeMap
    timeline = _objects(client, bucket, "risk/releases/timeline/")
    assert {key.removeprefix("risk/releases/timeline/") for key in timeline} == {
        name + twin for name in ("lists/index.json", "lists/audience=acme_aml/index.json", "lists/preview/index.json",
                                 "lists/preview/audience=acme_aml/index.json") for twin in ("", ".gz", ".br")
    } | {"timemap.link"} | {  # the lists are over 1 KB: twins beside them, as beside a release's files;
        f"feeds/{audience}feed.{kind}" for audience in ("", "audience=acme_aml/") for kind in ("json", "atom")
    }  # the feeds of one release are not (750 and 900 bytes)
    assert f"0 objects uploaded (0.0 MB), {len(objects) + len(timeline)} already there" in again.output


def test_a_killed_deploy_leaves_the_live_release_and_the_next_one_finishes_it(s3, bucket, tmp_path):
    site = tmp_path / "site"
    build(TINY, site)
    first = current_release(site)
    assert _deploy(s3, site, bucket).exit_code == 0
    build(DEMO_DATA, site, guard=None)  # the demo release: ~11,000 objects, time to stop it mid-way
    second = current_release(site)
    process = subprocess.Popen([sys.executable, "-m", "generator.cli", "deploy", "s3", "--site", str(site),
                                "--bucket", bucket, "--endpoint-url", s3.endpoint], env=s3.env(),
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    client = s3.client()
    try:
        deadline = time.monotonic() + 120
        while len(_objects(client, bucket, f"releases/{second}/")) < 50:
            assert process.poll() is None, "the deploy ended before it could be stopped"
            assert time.monotonic() < deadline
            time.sleep(0.1)
    finally:
        os.kill(process.pid, signal.SIGKILL)
        process.wait(timeout=10)
    assert _pointer(client, bucket) == {"release": first, "previous": None}  # still the old release
    uploaded = len(_objects(client, bucket, f"releases/{second}/"))
    result = _deploy(s3, site, bucket)
    assert result.exit_code == 0, result.output
    assert _pointer(client, bucket) == {"release": second, "previous": first}
    skipped = int(result.output.split(", ")[1].split()[0])
    assert skipped >= uploaded - 8  # what the killed deploy finished is not sent again (8 were in flight)


def test_old_releases_are_pruned_but_never_the_one_live_before(s3, bucket, tmp_path):
    site = tmp_path / "site"
    ids = []
    for _ in range(3):
        build(TINY, site, force=True)
        ids.append(current_release(site))
        assert _deploy(s3, site, bucket, "--keep", "1").exit_code == 0
    client = s3.client()
    kept = {key.split("/")[1] for key in _objects(client, bucket, "releases/")} - {"timeline"}
    assert kept == {ids[1], ids[2]}  # the newest, and the one live before it
    assert _pointer(client, bucket) == {"release": ids[2], "previous": ids[1]}


def test_the_readme_line_works_as_written(s3, bucket, tmp_path):
    import shlex

    from .test_readme_commands import S3_LINE
    site = tmp_path / "site"
    build(TINY, site)
    args = shlex.split(S3_LINE.format(site=site, bucket=bucket, endpoint=s3.endpoint))[1:]
    result = CliRunner().invoke(main, args, env=s3.env())
    assert result.exit_code == 0, result.output
    assert _pointer(s3.client(), bucket, "risk/")["release"] == current_release(site)


def test_a_site_without_a_release_is_one_line(s3, tmp_path):
    result = _deploy(s3, tmp_path / "empty", "risk-none")
    assert result.exit_code == 1 and "has no current release" in result.output


def test_what_goes_wrong_on_the_way_is_one_line_and_switches_nothing(s3, bucket, tmp_path, monkeypatch):
    site = tmp_path / "site"
    build(TINY, site)
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_PROFILE", "AWS_SHARED_CREDENTIALS_FILE",
                 "AWS_CONFIG_FILE"):
        monkeypatch.delenv(name, raising=False)
    base = ["deploy", "s3", "--site", str(site), "--bucket", bucket, "--endpoint-url", s3.endpoint]
    nowhere = {**s3.env(), "AWS_SHARED_CREDENTIALS_FILE": str(tmp_path / "none"), "AWS_CONFIG_FILE": str(tmp_path / "none")}
    cases = [
        ({k: v for k, v in nowhere.items() if k not in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY")}, base,
         f"Error: no S3 credentials for s3://{bucket} at {s3.endpoint}: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY"),
        ({**nowhere, "AWS_SECRET_ACCESS_KEY": "wrong"}, base,
         f"Error: s3://{bucket} at {s3.endpoint} refused the credentials (SignatureDoesNotMatch)"),
        (nowhere, base[:5] + ["no-such-bucket"] + base[6:],
         f"Error: there is no bucket no-such-bucket at {s3.endpoint}: create it first"),
        (nowhere, base[:7] + [f"http://127.0.0.1:{free_port()}"],  # nothing listens there
         "Error: cannot reach http://127.0.0.1:"),
    ]
    for env, args, expected in cases:
        result = CliRunner().invoke(main, args, env=env)
        assert result.exit_code == 1 and result.output.startswith(expected), result.output
        assert result.output.count("\n") == 1 and "nothing was switched" in result.output
        assert "internal error" not in result.output and "-v" not in result.output
    assert _objects(s3.client(), bucket, "current.json") == {}  # nothing was switched


def test_without_boto3_the_deploy_says_what_to_install(tmp_path, monkeypatch):
    import builtins
    site = tmp_path / "site"
    build(TINY, site)
    real_import = builtins.__import__

    def no_boto3(name, *args, **kwargs):  # as on a machine where the s3 extra was not installed
        if name == "boto3" or name.startswith("boto3."):
            raise ModuleNotFoundError("No module named 'boto3'", name="boto3")
        return real_import(name, *args, **kwargs)
    monkeypatch.setattr(builtins, "__import__", no_boto3)
    result = CliRunner().invoke(main, ["deploy", "s3", "--site", str(site), "--bucket", "b"])
    assert result.exit_code == 1
    assert result.output == ("Error: riskapi deploy s3 needs boto3: install the s3 extra (pip install 'riskapi[s3]' "
                             "from a wheel, pip install -e '.[s3]' in a checkout)\n")
