"""Keys at rest: no file the project writes holds a key in any form a server accepts (as typed, upper-cased,
USER:KEY, HTTP Basic's Base64), on nginx and both edges; and a keys file of keys as typed (every site before
digests) is converted in place, every key of it still answering."""
from __future__ import annotations

import base64
import os
import subprocess

import pytest
from click.testing import CliRunner

from generator.cli import main
from generator.contract.key_format import DIGEST, checksum, key_digest
from generator.serve.keys import load_keys, read_secret, secret_path

from ..conftest import ROOT, TINY
from ..live import digest_of, serving_copy_of, wait_for

PATH = "/api/v1/riskscores/sovereign/"


def forms(user: str, key: str) -> list[bytes]:
    """Return every form of a key a server takes (apikey USER:KEY, the bare key, Bearer, Basic), as bytes a file
    could hold; searched in lower case, so a key in any letter case is found too."""
    basic = base64.b64encode(f"{user}:{key}".encode())
    return [key.lower().encode(), f"{user}:{key}".lower().encode(), basic, base64.b64encode(key.encode())]


def holders(files: dict[str, bytes], keys: dict[str, str]) -> list[tuple[str, str]]:
    """Return (file, user) for every file that holds a form of a user's key."""
    found = []
    for name, body in files.items():
        lowered = body.lower()
        for user, key in keys.items():
            if any(form in body or form in lowered for form in forms(user, key)):
                found.append((name, user))
    return found


def tree(folder) -> dict[str, bytes]:
    return {str(path): path.read_bytes() for path in folder.rglob("*") if path.is_file() and not path.is_symlink()}


ALICE_BODY = "cra_live_" + "0123456789abcdefghijklmno"  # its checksum is added here: a scanner finds no key in this file
OLD_KEYS = {  # keys as a site made before digests holds them: the API's format, 32 hex digits, a weak one
    "alice": ALICE_BODY + checksum(ALICE_BODY),
    "bob": "9f86d081884c7d659a2feaa0c55ad015",
    "dave": "0000000000000000",  # accepted once with --allow-weak: 53 bits, yet found by nobody here
}


def test_a_keys_file_of_keys_as_typed_is_converted_in_place_and_each_key_still_answers(tmp_path):
    alice = OLD_KEYS["alice"]
    with serving_copy_of(TINY, tmp_path) as server:
        keys = server.keys_file
        rows = [f"{user},{key},{'acme_aml' if user == 'alice' else ''},yes" for user, key in OLD_KEYS.items()]
        rows.append(f"mallory,{'5' * 12}abcdefghijklmnopqrst,,maybe")  # a bad line's key: digested all the same
        keys.write_text("user,key,models,active\n" + "\n".join(rows) + "\n")
        os.remove(secret_path(keys))  # a site before digests has no secret: the conversion makes it
        server.runtime.refresh()  # what a running serve does within a second
        text = keys.read_text()
        secret = read_secret(keys)
        assert text.splitlines()[0] == "user,key_digest,models,active,expires"
        assert text.splitlines()[1] == f"alice,{key_digest(secret, alice)},acme_aml,yes,"
        assert text.splitlines()[4] == f"mallory,{key_digest(secret, '5' * 12 + 'abcdefghijklmnopqrst')},,maybe,"
        assert oct(secret_path(keys).stat().st_mode & 0o777) == "0o600" and DIGEST.fullmatch(
            text.splitlines()[2].split(",")[1])
        assert holders({"keys": text.encode()}, OLD_KEYS) == []
        server.keys.update(OLD_KEYS)
        for user in OLD_KEYS:
            for form in ("apikey", "bare", "basic"):
                assert server.get(PATH, user=user, form=form).status == 200, (user, form)
        upper = server.get(PATH, user=None, headers={"Authorization": f"Bearer {OLD_KEYS['bob'].upper()}"})
        assert upper.status == 200  # njs folds a key sent in capitals, as the map matched before
        assert server.get(PATH, user=None, headers={"Authorization": f"apikey bob:{alice}"}).status == 403
        capitals = OLD_KEYS["bob"].upper()  # folded by njs, and its user still held to the key's
        assert server.get(PATH, user=None, headers={"Authorization": f"apikey BOB:{capitals}"}).status == 200
        assert server.get(PATH, user=None, headers={"Authorization": f"apikey alice:{capitals}"}).status == 403
        prefix = tree(server.runtime.prefix)
        assert any(digest_of(keys, OLD_KEYS["dave"]).encode() in body for body in prefix.values())
        assert holders(prefix, OLD_KEYS) == []
        again = CliRunner().invoke(main, ["keys", "migrate", "--keys", str(keys)])
        assert again.exit_code == 0 and "holds digests already: nothing to convert" in again.output
        assert keys.read_text() == text


def test_keys_migrate_converts_and_says_where_the_secret_is(tmp_path):
    keys = tmp_path / "keys.csv"
    keys.write_text("user,key,models,active\nbob,9f86d081884c7d659a2feaa0c55ad015,,yes\n")
    done = CliRunner().invoke(main, ["keys", "migrate", "--keys", str(keys)])
    assert done.exit_code == 0, done.output
    assert f"converted 1 key(s) of {keys} to their digests under the secret in {keys}.secret" in done.output
    assert [k.digest for k in load_keys(keys).keys] == [digest_of(keys, "9f86d081884c7d659a2feaa0c55ad015")]
    assert "9f86d081884c7d659a2feaa0c55ad015" not in keys.read_text()


def test_a_keys_file_whose_secret_is_lost_is_a_clear_error_that_changes_nothing(tmp_path):
    keys = tmp_path / "keys.csv"
    CliRunner().invoke(main, ["keys", "add", "alice", "--keys", str(keys)])
    before = keys.read_bytes()
    os.remove(secret_path(keys))
    refused = CliRunner().invoke(main, ["keys", "add", "bob", "--keys", str(keys)])
    assert refused.exit_code == 1 and refused.output.startswith(f"Error: {keys}.secret: the keys file's secret is "
                                                                "missing: every key's digest")
    assert keys.read_bytes() == before and not secret_path(keys).exists()


@pytest.mark.slow  # nginx, workerd, the CloudFront harness and the S3 server: the whole suite runs it
def test_no_file_of_any_server_nor_the_bucket_holds_a_key(nginx_server, edge, cloudfront, s3, tmp_path):
    servers = {"nginx": nginx_server, "workerd": edge, "cloudfront": cloudfront}
    for name, server in servers.items():  # every form, so every log has seen each of them
        for form in ("apikey", "bare", "basic"):
            assert server.get(PATH, user="alice", form=form).status == 200, (name, form)
        assert server.get(PATH, user="carol").status == 403, name  # a revoked key, sent all the same
    out = tmp_path / "own-nginx"
    written = CliRunner().invoke(main, ["nginx-config", "--out", str(out), "--site", str(nginx_server.site),
                                        "--keys", str(nginx_server.keys_file)])
    assert written.exit_code == 0, written.output
    log = nginx_server.runtime.prefix / "logs" / "access.log"
    wait_for(lambda: b"alice" in log.read_bytes(), 30, "nginx's buffered access log written")
    usage = CliRunner().invoke(main, ["usage", "--site", str(nginx_server.site), "--log", str(log), "--format", "csv"])
    assert usage.exit_code == 0 and "alice" in usage.output
    files = {**tree(nginx_server.base), **tree(out), "usage": usage.output.encode()}
    client = s3.client()
    for page in client.get_paginator("list_objects_v2").paginate(Bucket="risk-cloudfront"):
        for item in page.get("Contents", []):
            files[f"s3:{item['Key']}"] = client.get_object(Bucket="risk-cloudfront", Key=item["Key"])["Body"].read()
    tracked = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    files.update({name: (ROOT / name).read_bytes() for name in tracked.decode().split("\0")
                  if name and (ROOT / name).is_file()})
    # what was searched: the keys file, serve's prefix and logs, both deploy outputs, workerd's own state
    # (its R2 and Workers KV), the bucket, nginx-config's output, usage, and the checkout
    searched = {name.split("/")[-1] for name in files}
    assert {"keys.csv", "keys.conf", "access.log", "keys-kv.json", "kvs.json", "viewer-request.js"} <= searched
    assert any(name.startswith("s3:") for name in files) and any("wrangler-state" in name for name in files)
    assert any(digest_of(nginx_server.keys_file, nginx_server.keys["alice"]).encode() in body
               for name, body in files.items() if name.endswith("keys.conf"))  # the digest is what they hold
    assert holders(files, nginx_server.keys) == []
