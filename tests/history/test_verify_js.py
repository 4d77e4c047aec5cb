"""The JavaScript citation verifier (generator/building/render/templates/docs/verify.js: one ES module, WebCrypto alone) on
the same citations as `riskapi verify`, in Node 22: every valid one verifies with the same
release and live periods, every tampered one fails, as the Python verifier says."""
from __future__ import annotations

import base64
import json
import subprocess

import orjson
import pytest

from generator.contract.locations import url_of
from generator.history.catalogue import Catalogue
from generator.history.layout import manifest
from generator.history.proof.citation import CitationError, make_citation, verify_citation
from generator.history.proof.leaves import release_leaves
from generator.history.proof.note import (
    COSIGNATURE,
    Checkpoint,
    Signer,
    note_text,
    read_checkpoint,
    read_signer,
    read_verifier,
    sign,
)
from generator.history.site import RELEASES, rollback
from generator.publish.build_release import build
from generator.publish.promote import promote

from ..conftest import ROOT, TINY
from ..live import NODE_22


def flip(text: str) -> str:
    raw = bytearray(base64.b64decode(text))
    raw[0] ^= 1
    return base64.b64encode(bytes(raw)).decode()


@pytest.fixture(scope="module")
def history(tmp_path_factory):
    """Return a site with a signed log that lived: a release live twice (a rollback), one pruned, one staged and
    promoted; and a checkpoint held at size 2."""
    base = tmp_path_factory.mktemp("js")
    site = base / "site"
    first = build(TINY, site, keep=2).release
    with Catalogue.open(site) as catalogue:
        vkey = catalogue.use_log_key(base / "log.key")
        held = catalogue.latest_checkpoint().note
    build(TINY, site, force=True, keep=2)
    rollback(site)
    staged = build(TINY, site, force=True, stage=True, keep=2).release
    promote(site, staged)
    return site, vkey, held, first


def citations(history) -> list[dict]:
    """Return each document of each kept release cited, with and without `since`, and tampered ones."""
    site, vkey, held, _ = history
    with Catalogue.open(site) as catalogue:
        entries, note = catalogue.log_entries(), catalogue.latest_checkpoint().note
    cases = []
    for folder in sorted((site / RELEASES).iterdir()):
        files = manifest(folder)["files"]
        leaves = release_leaves(files)
        for path in sorted(p for p in files if p.startswith("api/") and p.endswith("index.json"))[::9]:
            body = (folder / path).read_bytes()
            citation = make_citation("http://x" + url_of(path), url_of(path), body, folder.name, leaves, entries,
                                     note, held)
            text = orjson.dumps(citation).decode()
            cases.append({"citation": text, "vkeys": [vkey], "document": base64.b64encode(body).decode(),
                          "since": held.decode()})
            cases.append({"citation": text, "vkeys": [vkey], "document": None, "since": None})
    valid = json.loads(cases[0]["citation"])
    for change in (lambda c: c["document"].update(sha256="0" * 64), lambda c: c["tree"]["proof"].reverse(),
                   lambda c: c["hashes"].__setitem__(0, flip(c["hashes"][0])),
                   lambda c: c["entries"][0].update(entry=c["entries"][0]["entry"].replace("2", "3", 1)),
                   lambda c: c.update(checkpoint=c["checkpoint"].replace("\n", "\n\n", 1)),
                   lambda c: c["entries"].pop(len(c["entries"]) // 2), lambda c: c.update(format="x"),
                   lambda c: c["since"].update(proof=[flip(h) for h in c["since"]["proof"]])):
        changed = json.loads(json.dumps(valid))
        change(changed)
        cases.append({"citation": orjson.dumps(changed).decode(), "vkeys": [vkey], "document": None,
                      "since": held.decode()})
    cases.append({"citation": cases[0]["citation"], "vkeys": [Signer.generate("127.0.0.1:8080/api/v1/log").verifier.vkey],
                  "document": None, "since": None})  # a key of the same name, another key
    cases.append({"citation": "{", "vkeys": [vkey], "document": None, "since": None})
    # the checkpoint held before is the citation's own (one without a proof from anything): nothing to prove;
    # one of the same size with another root, signed by the log's own key (a fork it signed), refused
    plain = json.loads(cases[0]["citation"])
    del plain["since"]
    cases.append({"citation": orjson.dumps(plain).decode(), "vkeys": [vkey], "document": None, "since": note.decode()})
    forked = read_checkpoint(note_text(note))
    forged = Checkpoint(forked.origin, forked.size, bytes([forked.root[0] ^ 1]) + forked.root[1:]).text()
    signer = read_signer((site.parent / "log.key").read_text().strip())
    cases.append({"citation": cases[0]["citation"], "vkeys": [vkey], "document": None,
                  "since": sign(forged, [signer]).decode()})
    # cosigned by a witness (C2SP tlog-cosignature): counted against a quorum; a broken cosignature refused
    witness, stranger = (Signer.generate(name, COSIGNATURE) for name in ("witness.example/one", "witness.example/two"))
    cosigned = json.loads(cases[0]["citation"])
    text = cosigned["checkpoint"][:cosigned["checkpoint"].rfind("\n\n") + 1].encode()
    cosigned["checkpoint"] += witness.signature_line(text, 1764000000)
    broken = json.loads(json.dumps(cosigned))
    broken["checkpoint"] = broken["checkpoint"][:-10] + "AAAAAAAA=\n"
    for citation, witnesses, quorum in ((cosigned, [witness], 1), (cosigned, [witness, stranger], 1),
                                        (cosigned, [witness, stranger], 2), (broken, [witness], 1)):
        cases.append({"citation": orjson.dumps(citation).decode(), "vkeys": [vkey], "document": None, "since": None,
                      "witnesses": [w.verifier.vkey for w in witnesses], "quorum": quorum})
    return cases


def python_says(case: dict) -> dict:
    try:
        verified = verify_citation(case["citation"].encode(), [read_verifier(k) for k in case["vkeys"]],
                                   base64.b64decode(case["document"]) if case["document"] else None,
                                   case["since"].encode() if case["since"] else None,
                                   [read_verifier(k, (COSIGNATURE,)) for k in case.get("witnesses", [])],
                                   case.get("quorum", 0))
    except CitationError as error:
        return {"ok": False, "error": str(error)}
    return {"ok": True, "release": verified.release, "path": verified.path, "pruned": verified.pruned,
            "periods": [{"from": start, "until": end} for start, end in verified.periods]}


def node(cases, tmp_path, *extra) -> dict:
    (tmp_path / "cases.json").write_text(json.dumps(cases))
    result = subprocess.run([str(NODE_22 / "node"), str(ROOT / "tests" / "clients" / "verify_citations.mjs"),
                             str(tmp_path / "cases.json"), *extra], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_node_verifies_every_citation_as_python_does(history, tmp_path):
    cases = citations(history)
    said = node(cases, tmp_path)["results"]
    expected = [python_says(case) for case in cases]
    valid = sum(e["ok"] for e in expected)
    # the ten tampered cases and the forked checkpoint fail in Python, and the two witnessed ones that do not
    # meet their policy; the citation's own checkpoint held before verifies
    assert valid >= 11 and len(expected) - valid == 13
    assert [e["ok"] for e in expected[-6:-4]] == [True, False] and "rewritten" in expected[-5]["error"]
    assert [e["ok"] for e in expected[-4:]] == [True, True, False, False]
    for case_index, (js, py) in enumerate(zip(said, expected)):
        if py["ok"]:
            assert js == py, case_index
        else:
            assert not js["ok"] and js["error"] and "\n" not in js["error"], (case_index, py["error"])
    # the release live twice: two periods, both ended
    _, _, _, first = history
    twice = [e for e, case in zip(expected, cases) if e["ok"] and e["release"] == first]
    assert twice and all(len(e["periods"]) == 2 for e in twice)

