"""riskapi cite and riskapi verify: a citation fetched from each server verifies offline with the
log's verifier key alone and tells the release and when it was live; any byte changed — of the document,
a proof, an entry, the checkpoint — a wrong key, another log, a malformed file, or a log that does not
extend a checkpoint held before, and it fails with one line (exit 1, no traceback)."""
from __future__ import annotations

import json
import shutil

import orjson
import pytest
from click.testing import CliRunner

from generator.cli import main
from generator.history.catalogue import Catalogue, read_history
from generator.history.proof.citation import tlog_proof
from generator.history.proof.note import Checkpoint, Signer, note_text, read_checkpoint, read_signer, sign
from generator.history.proof.tree import leaf_hash, verify_inclusion
from generator.history.site import CURRENT, rollback
from generator.publish.build_release import build

from ..conftest import LOOPBACK, SERVERS, TINY, riskapi
from ..live import serve_process, wait_for, worker_readable_folder

API = "/api/v1"



def cite(url: str, key: str, out, *extra) -> dict:
    result = riskapi("cite", url, "--key", key, "-o", out, *extra)
    assert result.exit_code == 0, result.output
    return json.loads(out.read_bytes())


def verify(citation, vkey, *extra):
    return riskapi("verify", citation, "--trust", vkey, *extra)


SERVED_BY = SERVERS  # every test taking `live` runs on nginx, the Worker and CloudFront (conftest.py)


def test_a_citation_from_every_server_verifies_offline_and_tells_the_release(live, tmp_path):
    url = f"http://127.0.0.1:{live.port}{API}/riskscores/sovereign/aut"  # as a client may write it
    citation = cite(url, f"alice:{live.keys['alice']}", tmp_path / "c.json")
    release = (live.site / CURRENT).resolve().name
    assert citation["release"] == release and citation["document"]["path"] == f"{API}/riskscores/sovereign/AUT/"
    document = live.get(f"{API}/riskscores/sovereign/AUT/").body
    (tmp_path / "doc.json").write_bytes(document)
    checked = verify(tmp_path / "c.json", live.log_vkey, "--document", tmp_path / "doc.json")
    assert checked.exit_code == 0, checked.output
    start = read_history(live.site).periods[-1].start_text
    assert f"is a document of release {release}" in checked.output
    assert f"live from {start} until the checkpoint at least (still live)" in checked.output
    # a citation is small: the document's proof and the log's two entries with theirs, and the checkpoint
    assert len((tmp_path / "c.json").read_bytes()) < 3 * 1024


@pytest.fixture(scope="module")
def cited(nginx_server, tmp_path_factory):
    """Return one citation from nginx, with the document and the verifier key, for the tampering below."""
    folder = tmp_path_factory.mktemp("cited")
    citation = cite(f"http://127.0.0.1:{nginx_server.port}{API}/riskscores/sovereign/AUT/",
                    f"bob:{nginx_server.keys['bob']}", folder / "c.json")
    (folder / "doc.json").write_bytes(nginx_server.get(f"{API}/riskscores/sovereign/AUT/", user="bob").body)
    return folder, citation, nginx_server.log_vkey


def tampered(cited, tmp_path, change) -> object:
    folder, citation, vkey = cited
    changed = json.loads(json.dumps(citation))
    change(changed)
    (tmp_path / "t.json").write_bytes(orjson.dumps(changed))
    return verify(tmp_path / "t.json", vkey, "--document", folder / "doc.json")


def flip(text: str) -> str:
    """Return a base64 hash with one bit changed."""
    import base64
    raw = bytearray(base64.b64decode(text))
    raw[0] ^= 1
    return base64.b64encode(bytes(raw)).decode()


TAMPERING = {
    "the document's sha256": (lambda c: c["document"].update(sha256="0" * 64), "not the one cited"),
    "the document's path": (lambda c: c["document"].update(path=API + "/riskscores/sovereign/DEU/"),
                            "is not in the tree"),
    "a hash of the document's proof": (lambda c: c["tree"]["proof"].__setitem__(0, flip(c["tree"]["proof"][0])),
                                       "is not in the tree"),
    "the document's index": (lambda c: c["tree"].update(index=c["tree"]["index"] - 1), "is not in the tree"),
    "the tree's root": (lambda c: c["tree"].update(root=flip(c["tree"]["root"])), "not the one the log states"),
    "an entry": (lambda c: c["entries"][1].update(entry=c["entries"][1]["entry"].replace("publish", "promote")),
                 "is not in the log"),
    "a hash of the entries' proofs": (lambda c: c["hashes"].__setitem__(0, flip(c["hashes"][0])),
                                      "is not in the log"),
    "an entry's proof naming another's hashes": (lambda c: c["entries"][0].update(proof=c["entries"][1]["proof"]),
                                                 "is not in the log"),
    "an entry's proof naming no hash": (lambda c: c["entries"][0].update(proof=[99]), "does not hold"),
    "an entry left out": (lambda c: c["entries"].pop(0), "no entry of the log making"),
    "the checkpoint's size": (lambda c: c.update(checkpoint=c["checkpoint"].replace("\n2\n", "\n3\n", 1)),
                              "does not verify"),
    "the checkpoint's signature": (lambda c: c.update(checkpoint=c["checkpoint"][:-6] + "AAAA=\n"),
                                   "does not verify"),
    "the release": (lambda c: c.update(release="20200101T000000Z"), "no entry of the log making"),
}


@pytest.mark.parametrize("what", TAMPERING)
def test_any_change_to_a_citation_fails_with_one_line(cited, tmp_path, what):
    change, said = TAMPERING[what]
    result = tampered(cited, tmp_path, change)
    assert result.exit_code == 1 and said in result.output, result.output
    assert len(result.output.strip().splitlines()) == 1 and "Traceback" not in result.output


def test_the_document_a_wrong_key_another_log_or_a_bad_file_fail_with_one_line(cited, tmp_path):
    folder, citation, vkey = cited
    (tmp_path / "other.json").write_bytes(b'{"detail": "not this"}')
    assert "not the one cited" in verify(folder / "c.json", vkey, "--document", tmp_path / "other.json").output
    stranger = Signer.generate("127.0.0.1:8080/api/v1/log").verifier.vkey  # the same name, another key
    assert "no signature of a trusted key" in verify(folder / "c.json", stranger).output
    other_log = Signer.generate("example.org/log").verifier.vkey
    assert verify(folder / "c.json", other_log).exit_code == 1
    for bad in (b"", b"{", b"[]", b'{"format": "riskapi-citation/1"}', (folder / "c.json").read_bytes()[:500]):
        (tmp_path / "bad.json").write_bytes(bad)
        result = verify(tmp_path / "bad.json", vkey)
        assert result.exit_code == 1 and "Traceback" not in result.output and len(result.output.splitlines()) == 1
    assert riskapi("verify", folder / "c.json", "--trust", "not-a-key").exit_code == 1


def test_each_entry_s_proof_is_a_c2sp_tlog_proof(cited):
    _, citation, _ = cited
    for position, item in enumerate(citation["entries"]):
        lines = tlog_proof(citation, position).split("\n")
        assert lines[0] == "c2sp.org/tlog-proof@v1" and lines[1] == f"index {item['index']}"
        blank = lines.index("")
        import base64
        proof = [base64.b64decode(h) for h in lines[2:blank]]
        checkpoint = read_checkpoint("\n".join(lines[blank + 1:blank + 4]).encode() + b"\n")
        assert verify_inclusion(leaf_hash(item["entry"].encode()), item["index"], checkpoint.size, proof,
                                checkpoint.root)


# ---- periods, a checkpoint held before, a rotated key: a site of our own served by riskapi serve ----------

def served_size(serve) -> int:
    import urllib.request
    with urllib.request.urlopen(f"http://127.0.0.1:{serve.port}{API}/log/checkpoint", timeout=10) as answer:
        return read_checkpoint(answer.read().split(b"\n\n")[0] + b"\n").size


def checkpoint_size(citation: dict) -> int:
    return read_checkpoint(citation["checkpoint"].split("\n\n")[0].encode() + b"\n").size


def log_size(site) -> int:
    with Catalogue.open(site) as catalogue:
        return catalogue.latest_checkpoint().size


def test_a_release_live_twice_is_cited_with_both_periods_and_since_proves_the_log_extends(tmp_path):
    base = worker_readable_folder("riskapi-cite-")
    try:
        site, keys = base / "site", base / "keys" / "keys.csv"
        first = build(TINY, site).release
        vkey = riskapi("log", "init", "--site-url", LOOPBACK, "--site", site,
                   "--key", base / "keys" / "log.key").output.strip().splitlines()[-1]
        with serve_process(site, keys) as serve:
            url = f"http://127.0.0.1:{serve.port}{API}/releases/{first}/riskscores/sovereign/AUT/"
            key = f"alice:{serve.key}"
            held = tmp_path / "held.checkpoint"  # the checkpoint a client saved at size 2
            held.write_bytes(serve_checkpoint(serve))
            build(TINY, site, force=True)
            rollback(site)  # the first live again: two periods
            build(TINY, site, force=True)  # and another after it: the second period ends
            # serve reloads nginx for each switch: cited once the log it serves is the site's whole log
            citation = wait_for(lambda: (lambda c: c if checkpoint_size(c) == log_size(site) else None)(
                cite(url, key, tmp_path / "c.json", "--since", held)), what="a citation at the log's size")
        periods = [(p.start_text, p.end_text) for p in read_history(site).periods if p.release == first]
        assert len(periods) == 2 and all(end for _, end in periods)
        checked = verify(tmp_path / "c.json", vkey, "--since", held)
        assert checked.exit_code == 0, checked.output
        for start, end in periods:
            assert f"live from {start} until {end}" in checked.output
        assert citation["document"]["path"] == f"{API}/riskscores/sovereign/AUT/"  # the route's, not the scoped
        # an entry between a switch and the next one left out: the period cannot be told
        gap = json.loads(json.dumps(citation))
        inner = [i for i, e in enumerate(gap["entries"]) if '"event":"release"' in e["entry"]][-1]
        gap["entries"].pop(inner)
        (tmp_path / "gap.json").write_bytes(orjson.dumps(gap))
        assert "is missing" in verify(tmp_path / "gap.json", vkey).output
        # a checkpoint held before that the log does not extend (another history), or none proved: refused
        rewritten = held.read_text().replace(held.read_text().split("\n")[2], flip(held.read_text().split("\n")[2]))
        (tmp_path / "forged.checkpoint").write_text(rewritten)
        assert verify(tmp_path / "c.json", vkey, "--since", tmp_path / "forged.checkpoint").exit_code == 1
        plain = tmp_path / "plain.json"
        shutil.copy(tmp_path / "c.json", plain)
        without = json.loads(plain.read_bytes())
        del without["since"]
        plain.write_bytes(orjson.dumps(without))
        assert "cite again with --since" in verify(plain, vkey, "--since", held).output
        # the citation's own checkpoint held before: the same log, nothing to prove; one of the same size with
        # another root, signed by the log's own key (a fork it signed): refused
        own = tmp_path / "own.checkpoint"
        own.write_text(citation["checkpoint"])
        same = verify(plain, vkey, "--since", own)
        assert same.exit_code == 0, same.output
        at = read_checkpoint(note_text(own.read_bytes()))
        fork = Checkpoint(at.origin, at.size, bytes([at.root[0] ^ 1]) + at.root[1:]).text()
        (tmp_path / "fork.checkpoint").write_bytes(
            sign(fork, [read_signer((base / "keys" / "log.key").read_text().strip())]))
        forked = verify(plain, vkey, "--since", tmp_path / "fork.checkpoint")
        assert forked.exit_code == 1 and "history was rewritten" in forked.output, forked.output
        bad_proof = json.loads(json.dumps(citation))
        bad_proof["since"]["proof"] = [flip(h) for h in bad_proof["since"]["proof"]]
        (tmp_path / "bad.json").write_bytes(orjson.dumps(bad_proof))
        assert "does not extend" in verify(tmp_path / "bad.json", vkey, "--since", held).output
    finally:
        shutil.rmtree(base, ignore_errors=True)


def serve_checkpoint(serve) -> bytes:
    import urllib.request
    with urllib.request.urlopen(f"http://127.0.0.1:{serve.port}{API}/log/checkpoint", timeout=10) as answer:
        return answer.read()


@pytest.mark.slow  # seconds of servers and processes: the whole suite runs it, --quick does not
def test_citations_made_before_a_key_rotation_still_verify(tmp_path):
    base = worker_readable_folder("riskapi-rotate-")
    try:
        site, keys = base / "site", base / "keys" / "keys.csv"
        build(TINY, site)
        old = riskapi("log", "init", "--site-url", LOOPBACK, "--site", site,
                  "--key", base / "keys" / "one.key").output.strip().splitlines()[-1]
        with serve_process(site, keys) as serve:
            url = f"http://127.0.0.1:{serve.port}{API}/riskscores/sovereign/AUT/"
            cite(url, f"alice:{serve.key}", tmp_path / "before.json")
            # rotated in place, as `riskapi log init --rotate` on the default key does: the old one kept beside
            new = riskapi("log", "init", "--rotate", "--site", site, "--key", base / "keys" / "one.key")
            assert new.exit_code == 0, new.output
            assert (base / "keys" / f"one.key.{old.split('+')[1]}.retired").is_file()
            new_vkey = new.output.strip().splitlines()[-1]
            build(TINY, site, force=True)
            wait_for(lambda: checkpoint_size(cite(url, f"alice:{serve.key}", tmp_path / "after.json")) == 4
                     and new_vkey.split("+")[1] in serve_checkpoint_id(serve), what="a citation under the new key")
            root = json.loads(serve.get(f"{API}/")[1])["log"]  # the API root names both keys
            assert (root["verifierKey"], root["retiredVerifierKeys"]) == (new_vkey, [old])
        assert verify(tmp_path / "before.json", old).exit_code == 0
        assert verify(tmp_path / "after.json", new_vkey).exit_code == 0
        assert verify(tmp_path / "after.json", old).exit_code == 1
        both = riskapi("verify", tmp_path / "before.json", "--trust", old, "--trust", new_vkey)
        assert both.exit_code == 0, both.output
    finally:
        shutil.rmtree(base, ignore_errors=True)


def serve_checkpoint_id(serve) -> str:
    """Return the key ID of the served checkpoint's signature, in hex."""
    import base64
    line = serve_checkpoint(serve).decode().rstrip("\n").split("\n")[-1]
    return base64.b64decode(line.split(" ")[-1])[:4].hex()


def test_the_documented_cite_and_verify_lines_run_as_written(nginx_server, tmp_path):
    import shlex

    from ..cli.test_readme_commands import CITE_LINE, VERIFY_LINE
    since = tmp_path / "saved.checkpoint"  # what a client saved of the log before
    since.write_bytes(nginx_server.get(f"{API}/log/checkpoint", user=None).body)
    document = tmp_path / "doc.json"
    document.write_bytes(nginx_server.get(f"{API}/configuration/countries/?code=aut").body)
    values = dict(url=f"http://127.0.0.1:{nginx_server.port}{API}/configuration/countries/?code=aut",
                  key=f"alice:{nginx_server.keys['alice']}", out=tmp_path / "c.json", since=since,
                  vkey=nginx_server.log_vkey, document=document)
    said = {}
    for line in (CITE_LINE, VERIFY_LINE):
        result = CliRunner().invoke(main, shlex.split(line.format(**values))[1:])
        assert result.exit_code == 0, f"{line}\n{result.output}"
        said[line] = result
    citation = json.loads((tmp_path / "c.json").read_bytes())
    assert citation["document"]["path"] == f"{API}/configuration/countries/?code=AUT"
    # cite says what it wrote (on standard error: standard output stays empty when -o names the file)
    cited = said[CITE_LINE]
    assert cited.stdout == ""
    assert cited.stderr.startswith(f"wrote {tmp_path / 'c.json'}: {API}/configuration/countries/?code=AUT (SHA-256 "
                                   f"{citation['document']['sha256']}) of release {citation['release']}")


def test_cite_refuses_bytes_that_are_not_those_the_unencoded_digest_names(live, tmp_path):
    # the document as nginx answers it, then as a proxy that cut it short would pass it on: its headers
    # (Unencoded-Digest of the whole) over fewer bytes
    import http.server
    import threading
    answer = live.get(f"{API}/riskscores/sovereign/AUT/", headers={"Accept-Encoding": "identity"})
    assert answer.header("Unencoded-Digest")

    class CutShort(http.server.BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802 (http.server's name)
            body = answer.body[:-10]
            self.send_response(200)
            for name in ("X-Release", "Unencoded-Digest"):
                self.send_header(name, answer.header(name))
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass
    proxy = http.server.ThreadingHTTPServer(("127.0.0.1", 0), CutShort)
    thread = threading.Thread(target=proxy.serve_forever)
    thread.start()
    try:
        url = f"http://127.0.0.1:{proxy.server_address[1]}{API}/riskscores/sovereign/AUT/"
        result = riskapi("cite", url, "--key", f"alice:{live.keys['alice']}", "-o", tmp_path / "c.json")
    finally:
        proxy.shutdown()
        proxy.server_close()
        thread.join()
    assert result.exit_code == 1
    assert result.output.strip().endswith(f"{url}: the bytes received are not those its Unencoded-Digest names "
                                          "(cut short or changed on the way); ask again")
    assert not (tmp_path / "c.json").exists()
