"""riskapi deploy s3 against a real S3 server: Ceph's RADOS Gateway on 127.0.0.1 (tests/ceph.py)."""
from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import signal
import subprocess
import sys

import orjson
import pytest
from click.testing import CliRunner

from generator.cli import main
from generator.contract.serving import TWINS
from generator.history.site import RELEASES, current_release
from generator.publish.build_release import build
from generator.serve.deploy import objects
from generator.serve.deploy.edge_release import served_files
from generator.serve.deploy.objects import object_key

from ..conftest import DEMO_DATA, TINY, make_nga_black
from ..live import free_port
from ..waiting import wait_for

TYPES = {".json": "application/json; charset=utf-8", ".html": "text/html; charset=utf-8",
         ".js": "text/javascript; charset=utf-8", ".csv": "text/csv; charset=utf-8",
         ".jsonl": "application/x-ndjson; charset=utf-8", ".tile": "application/octet-stream",
         ".css": "text/css; charset=utf-8",
         ".parquet": "application/vnd.apache.parquet"}


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


def _bodies(client, bucket, prefix=""):
    """Return what every manifest in the bucket names, by release: path → (key, mtime, size, sha256, the SHA-256s of its
    encodings by coding)."""
    named = {}
    for key in sorted(_objects(client, bucket, f"{prefix}manifests/")):
        head = orjson.loads(client.get_object(Bucket=bucket, Key=key)["Body"].read())
        files: dict = {}
        for shard in head["shards"]:
            for path, entry in orjson.loads(client.get_object(Bucket=bucket, Key=prefix + shard)["Body"].read()).items():
                assert path not in files, path  # the shards' ranges do not overlap
                files[path] = (object_key(entry[2], path), *entry[:3], entry[3] if len(entry) > 3 else {})
        named[head["release"]] = (head, files)
    return named


def _whole(client, bucket, prefix=""):
    """Return the bucket's promise: every object a manifest names is there, and the live release has one."""
    held = set(_objects(client, bucket, f"{prefix}objects/"))

    def shard_of(key):
        return orjson.loads(client.get_object(Bucket=bucket, Key=prefix + key)["Body"].read())

    for release, (head, files) in _bodies(client, bucket, prefix).items():
        assert {prefix + shard for shard in head["shards"]} <= held, release
        # what the sweep keeps for this manifest (objects.named_by), twins of text files included
        missing = {prefix + key for key in objects.named_by(head, shard_of)} - held
        assert not missing, (release, sorted(missing)[:5])
        for path, (key, _, size, _, _) in files.items():
            assert prefix + key in held, (release, path)
            if size > head["compressed_over"] and not path.endswith((".tile", ".parquet")):  # bytes: no twins
                assert {prefix + key + twin for twin in TWINS} <= held, (release, path)
    pointer = _objects(client, bucket, f"{prefix}current.json")
    if pointer:
        assert _pointer(client, bucket, prefix)["release"] in _bodies(client, bucket, prefix)


def test_each_body_is_one_object_named_by_its_hash_and_the_manifest_and_pointer_come_after(s3, bucket, tmp_path):
    site = tmp_path / "site"
    build(TINY, site)
    release = current_release(site)
    result = _deploy(s3, site, bucket, "--prefix", "risk")
    assert result.exit_code == 0, result.output
    client = s3.client()
    release_dir = site / RELEASES / release
    files = served_files(release_dir)
    head, named = _bodies(client, bucket, "risk/")[release]
    assert sorted(named) == sorted(files) and not any("nginx/" in f or f.endswith("manifest.json") for f in named)
    assert head["tables"]["countries"]["civ"] == "CIV" and head["compressed_over"] == 1024
    objects = _objects(client, bucket, "risk/objects/")
    for relative, (key, mtime, size, sha256, codings) in named.items():
        assert key.startswith(f"objects/{sha256}.")
        body = (release_dir / relative).read_bytes()
        assert key == f"objects/{hashlib.sha256(body).hexdigest()}.{relative.rsplit('.', 1)[1]}" and size == len(body)
        assert mtime == int((release_dir / relative).stat().st_mtime)
        answer = client.get_object(Bucket=bucket, Key="risk/" + key)
        assert answer["Body"].read() == body, relative
        assert answer["ContentType"] == TYPES["." + relative.rsplit(".", 1)[1]] and "ContentEncoding" not in answer
        for twin, coding in (("", None), (".gz", "gzip"), (".br", "br")):
            if twin and size > 1024 and not relative.endswith((".tile", ".parquet")):  # the release's own twins, as nginx serves them
                encoded = client.get_object(Bucket=bucket, Key=f"risk/{key}{twin}")
                encoded_body = encoded["Body"].read()
                assert encoded_body == (release_dir / (relative + twin)).read_bytes()
                assert encoded["ContentEncoding"] == coding
                # each encoding's SHA-256 beside the body's: what the edges send as its Repr-Digest
                assert codings[coding] == hashlib.sha256(encoded_body).hexdigest(), relative
            elif twin:
                assert codings == {}, relative
    # byte-identical documents are one object (the tiny release's empty lists under many filters)
    assert len({entry[0] for entry in named.values()}) < len(named)
    # Parquet files over 1 KB have no twins, in the release's folder as in the bucket, and no manifest names
    # one (it named two a Parquet file, never uploaded, until the writer and the manifests shared one rule)
    parquet = [relative for relative, (_, _, size, _, _) in named.items() if relative.endswith(".parquet") and size > 1024]
    assert parquet and not any((release_dir / (relative + twin)).exists() for relative in parquet for twin in TWINS)
    pointer = _pointer(client, bucket, "risk/")
    assert (pointer["release"], pointer["previous"], pointer["answered"]) == (release, None, [release])
    switched = _objects(client, bucket, "risk/current.json")["risk/current.json"]["LastModified"]  # in ms
    manifest = _objects(client, bucket, f"risk/manifests/{release}.json")[f"risk/manifests/{release}.json"]
    assert switched >= manifest["LastModified"] >= max(item["LastModified"] for item in objects.values())
    # the list of releases (one per audience, with and without the staged ones), its feeds and the TimeMap
    # 4 lists (per audience, with and without staged ones: none staged, so the same two by two): 2 bodies
    # over 1 KB with 2 encodings each = 6; the TimeMap; 4 feeds, the same two by two = 2; the log of releases:
    # its checkpoint, its one tile and its one entry bundle (2 entries, none over 1 KB) = 3; the point-in-time
    # panel: the public models' and each of the 3 models' (bytes: no encodings) = 4; the current Data Package
    # and the DCAT-AP catalogue, each over 1 KB with 2 encodings = 6: 22 objects
    assert len(pointer["timeline"]) == 2 * 3 + 1 + 2 + 3 + 4 + 6
    assert {prefix for prefix in pointer["timeline"]} <= set(k.removeprefix("risk/") for k in objects)
    _whole(client, bucket, "risk/")
    again = _deploy(s3, site, bucket, "--prefix", "risk/")
    assert again.exit_code == 0, again.output
    # nothing sent again: every body, and the manifest's shards, which a manifest already there keeps as is
    assert f"0 objects uploaded (0.0 MB), {len(objects) - len(head['shards'])} already there" in again.output


def test_a_revision_s_manifest_keeps_its_base_s_ranges_and_rewrites_only_the_shards_it_changed(
        s3, bucket, tmp_path, monkeypatch):
    # the tiny release's 69 files in shards of 4 (the deploy runs in this process), so the change below
    # falls in some ranges and misses others
    monkeypatch.setattr(objects, "SHARD_FILES", 4)
    site, data = tmp_path / "site", tmp_path / "data"
    shutil.copytree(TINY, data)
    build(data, site)
    first = current_release(site)
    assert _deploy(s3, site, bucket).exit_code == 0
    make_nga_black(data)  # acme_aml: NGA grey → black; its documents, the lists and the country's change
    build(data, site)
    second = current_release(site)
    result = _deploy(s3, site, bucket)
    assert result.exit_code == 0, result.output
    client = s3.client()
    heads = _bodies(client, bucket)
    (base, old), (revised, new) = heads[first], heads[second]
    assert len(base["shards"]) == -(-len(old) // 4) and base["bounds"][0] == ""
    assert revised["bounds"] == base["bounds"]  # the same files: the base's ranges, kept
    # read through its shards, the revision's table is its folder's, file by file
    listed = orjson.loads((site / RELEASES / second / "manifest.json").read_text())["files"]
    assert {path: list(entry[1:]) for path, entry in new.items()} == {
        path: [int((site / RELEASES / second / path).stat().st_mtime), listed[path]["size"], listed[path]["sha256"],
               {coding: listed[path + twin]["sha256"] for twin, coding in TWINS.items() if path + twin in listed}]
        for path in served_files(site / RELEASES / second)}
    # a shard is new exactly where a file of its range changed (a new body, or a new mtime: rewritten)
    changed = {path for path in new if new[path] != old.get(path)}
    touched = {at for at, bound in enumerate(revised["bounds"])
               if any(bound <= path < ([*revised["bounds"], "~"][at + 1]) for path in changed)}
    assert {at for at, key in enumerate(revised["shards"]) if key != base["shards"][at]} == touched
    assert 0 < len(touched) < len(revised["shards"])  # the others are the base's own objects, not sent again
    _whole(client, bucket)


def test_a_killed_deploy_leaves_the_live_release_and_the_next_one_finishes_it(s3, bucket, tmp_path):
    site = tmp_path / "site"
    build(TINY, site)
    first = current_release(site)
    assert _deploy(s3, site, bucket).exit_code == 0
    build(DEMO_DATA, site, guard=None)  # the demo release: ~7,000 new objects, time to stop it mid-way
    second = current_release(site)
    client = s3.client()
    before = len(_objects(client, bucket, "objects/"))
    process = subprocess.Popen([sys.executable, "-m", "generator.cli", "deploy", "s3", "--site", str(site),
                                "--bucket", bucket, "--endpoint-url", s3.endpoint], env=s3.env(),
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        def uploading() -> bool:
            assert process.poll() is None, "the deploy ended before it could be stopped"
            return len(_objects(client, bucket, "objects/")) >= before + 50
        wait_for(uploading, 120, "50 objects uploaded", every=0.1)
    finally:
        os.kill(process.pid, signal.SIGKILL)
        process.wait(timeout=10)
    assert _pointer(client, bucket)["release"] == first  # still the old release
    assert set(_bodies(client, bucket)) == {first}  # no manifest of the new one before its objects
    _whole(client, bucket)
    uploaded = len(_objects(client, bucket, "objects/")) - before
    result = _deploy(s3, site, bucket)
    assert result.exit_code == 0, result.output
    assert (_pointer(client, bucket)["release"], _pointer(client, bucket)["previous"]) == (second, first)
    skipped = int(result.output.split(", ")[1].split()[0])
    # what the killed deploy finished is not sent again (8 were in flight), nor the first release's objects
    # (all but its list of releases, feeds and TimeMap, 9 objects, and its Data Package and catalogue, 6:
    # those changed)
    assert skipped >= before - 9 - 6 + uploaded - 8
    _whole(client, bucket)


def test_old_releases_are_pruned_a_deploy_late_and_their_objects_swept(s3, bucket, tmp_path):
    site = tmp_path / "site"
    ids = []
    for _ in range(3):
        build(TINY, site, force=True)
        ids.append(current_release(site))
        assert _deploy(s3, site, bucket, "--keep", "1").exit_code == 0
    client = s3.client()
    # the newest and the one live before; the oldest stays one deploy more, as the edges still on the
    # deploy before may answer it until they are switched
    assert set(_bodies(client, bucket)) == set(ids)
    pointer = _pointer(client, bucket)
    assert (pointer["release"], pointer["previous"], pointer["answered"]) == (ids[2], ids[1], ids[1:])
    assert pointer["before"]["answered"] == ids[:2]
    oldest = {key for key, *_ in _bodies(client, bucket)[ids[0]][1].values()}
    others = {key for r in ids[1:] for key, *_ in _bodies(client, bucket)[r][1].values()}
    assert oldest - others  # the oldest has bodies of its own (its release id in its documents)
    result = _deploy(s3, site, bucket, "--keep", "1")
    assert result.exit_code == 0 and f"pruned {ids[0]}" in result.output, result.output
    assert set(_bodies(client, bucket)) == set(ids[1:])
    held = {key.removeprefix("") for key in _objects(client, bucket, "objects/")}
    assert not (oldest - others) & held and others <= held  # what only it named went; nothing the others name
    _whole(client, bucket)


def test_an_upload_or_prune_stopped_at_any_point_never_loses_an_object_a_kept_release_names(s3, bucket, tmp_path,
                                                                                              monkeypatch):
    """The deploy stopped at its Nth write or delete (a kill there: nothing after it runs), for N drawn at
    random over every write and delete a deploy makes; after each, the bucket keeps its promise, and the
    next deploy — after the next build, a promote of a staged one, a rollback — finishes the work."""
    import random

    from generator.history.site import rollback, staged_releases
    from generator.publish.promote import promote
    from generator.serve.deploy import s3 as s3_deploy
    site = tmp_path / "site"
    build(TINY, site)
    assert _deploy(s3, site, bucket, "--keep", "1").exit_code == 0
    client = s3.client()
    real_put, real_delete = s3_deploy.Bucket.put, s3_deploy.Bucket.delete
    calls = [0]

    def stopping_at(limit):
        def counted(real):
            def call(self, *args, **kwargs):
                calls[0] += 1
                if calls[0] == limit:
                    raise KeyboardInterrupt(f"stopped at write or delete {limit}")
                return real(self, *args, **kwargs)
            return call
        monkeypatch.setattr(s3_deploy.Bucket, "put", counted(real_put))
        monkeypatch.setattr(s3_deploy.Bucket, "delete", counted(real_delete))

    seed = random.randrange(1 << 30)
    draw = random.Random(seed)
    steps = [lambda: build(TINY, site, force=True), lambda: build(TINY, site, force=True, stage=True),
             lambda: promote(site, staged_releases(site)[-1], guard=None), lambda: rollback(site),
             lambda: build(TINY, site, force=True)]
    total = 0
    for step in steps:
        step()
        # stopped at writes or deletes drawn over those of the last whole deploy (one past the end: none)
        for limit in sorted(draw.sample(range(1, max(total, 3) + 2), 3)):
            calls[0] = 0
            stopping_at(limit)
            with contextlib.suppress(KeyboardInterrupt):
                s3_deploy.deploy(client, bucket, site, keep=1)
            _whole(client, bucket)  # (seed {seed}: the draw to try again)
        calls[0] = 0
        stopping_at(0)  # counted, never stopped
        s3_deploy.deploy(client, bucket, site, keep=1)
        total = calls[0]
        _whole(client, bucket)
        assert _pointer(client, bucket)["release"] == current_release(site), seed


def test_the_readme_line_works_as_written(s3, bucket, tmp_path):
    import shlex

    from ..cli.test_readme_commands import S3_LINE
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


KILLS = {  # where a deploy is killed: the test of a put or prune call that os._exit(9)s there, as a kill -9
    "mid-upload": "calls[0] == 5",  # its fifth write: an object of the new release
    "before the pointer": "key == 'current.json'",  # every object and manifest written, nothing switched
    "before the prune": "key == 'prune'",  # switched, the bucket's lease written: nothing pruned or swept
}


@pytest.mark.parametrize("where", KILLS)
def test_a_deploy_killed_then_a_prune_then_the_deploy_resumed_keeps_what_its_record_names(s3, bucket, tmp_path, where):
    from generator.history.catalogue import read_history
    from generator.history.site import releases

    from ..fault_checks import then_stage_promote_rollback
    site = tmp_path / "site"
    a, b, c = [build(TINY, site, force=True).release for _ in range(3)]
    assert _deploy(s3, site, bucket, "--keep", "3").exit_code == 0
    d = build(TINY, site, force=True).release
    script = ("import os, sys; from generator.serve.deploy import s3; from generator.cli import main\n"
              "real_put, real_prune, calls = s3.Bucket.put, s3.prune, [0]\n"
              "def put(self, key, *args, **kwargs):\n"
              "    calls[0] += 1\n"
              f"    if {KILLS[where]}: os._exit(9)\n"
              "    return real_put(self, key, *args, **kwargs)\n"
              "def prune(*args, key='prune'):\n"
              f"    if {KILLS[where]}: os._exit(9)\n"
              "    return real_prune(*args)\n"
              "s3.Bucket.put, s3.prune = put, prune\n"
              "main(sys.argv[1:])\n")
    killed = subprocess.run([sys.executable, "-c", script, "deploy", "s3", "--site", str(site), "--bucket", bucket,
                             "--endpoint-url", s3.endpoint, "--keep", "3"], env=s3.env(), capture_output=True)
    assert killed.returncode == 9, killed.stderr
    client = s3.client()
    switched = where == "before the prune"
    assert _pointer(client, bucket)["release"] == (d if switched else c)
    _whole(client, bucket)
    e = build(TINY, site, force=True, keep=3).release  # keep 3: a and b pruned
    assert read_history(site).removed == {a, b}
    assert {a, b} <= set(releases(site))  # the bucket's lease: the edges on its live manifest may answer them
    result = _deploy(s3, site, bucket, "--keep", "3")
    assert result.exit_code == 0, result.output
    pointer = _pointer(client, bucket)
    before = [b, c, d] if switched else [a, b, c]
    assert (pointer["release"], pointer["answered"], pointer["before"]["answered"]) == (e, [c, d, e], before)
    # every release the bucket's record names (this deploy's and the one before, which edges may still be on)
    # has its manifest and every object it names
    assert set(_bodies(client, bucket)) == {c, d, e, *before}
    _whole(client, bucket)
    # the next deploy: what the prune took leaves the bucket, and its folders the site (the bucket's lease let go)
    assert _deploy(s3, site, bucket, "--keep", "3").exit_code == 0
    assert set(_bodies(client, bucket)) == {c, d, e}
    assert not {a, b} & set(releases(site))
    _whole(client, bucket)
    then_stage_promote_rollback(site)
    assert _deploy(s3, site, bucket, "--keep", "3").exit_code == 0
    _whole(client, bucket)
    assert _pointer(client, bucket)["release"] == current_release(site)
