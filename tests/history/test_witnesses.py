"""Witnesses of the log of releases, run on loopback (tests/witness_server.py, written from C2SP
tlog-witness): each new checkpoint is sent with the proof it extends the last one each cosigned; their
cosignatures (tlog-cosignature, Ed25519, timestamped) are published with it, served, cited, and counted
by `riskapi verify --witness … --quorum K`; a witness that is down, or one that refuses, never stops a
release and is asked again. Each case is checked again after the next build, promote and rollback."""
from __future__ import annotations

import json
import shlex

import orjson
from click.testing import CliRunner

from generator.cli import main
from generator.contract.locations import url_of
from generator.history.catalogue import Catalogue
from generator.history.layout import manifest
from generator.history.proof.citation import make_citation
from generator.history.proof.leaves import release_leaves
from generator.history.proof.note import COSIGNATURE, cosigned_by, read_checkpoint, read_verifier
from generator.history.site import CURRENT
from generator.publish.build_release import build

from ..conftest import LOOPBACK, TINY, riskapi
from ..fault_checks import then_stage_promote_rollback
from ..witness_server import Witness, serve


def latest(site):
    with Catalogue.open(site) as catalogue:
        return catalogue.latest_checkpoint(), catalogue.log_entries()


def cite_current(site, out) -> None:
    """Cite a document of the current release, made offline from the site as cite makes it."""
    folder = (site / CURRENT).resolve()
    files = manifest(folder)["files"]
    path = "api/v1/riskscores/sovereign/AUT/index.json"
    checkpoint, entries = latest(site)
    citation = make_citation("http://x" + url_of(path), url_of(path), (folder / path).read_bytes(), folder.name,
                             release_leaves(files), entries, checkpoint.note)
    out.write_bytes(orjson.dumps(citation))


def test_two_witnesses_cosign_each_checkpoint_and_verify_counts_them(tmp_path):
    site = tmp_path / "site"
    build(TINY, site)
    vkey = riskapi("log", "init", "--site-url", LOOPBACK, "--site", site,
               "--key", tmp_path / "log.key").output.strip().splitlines()[-1]
    one, two = Witness("witness.example/one", vkey), Witness("witness.example/two", vkey)
    servers = [serve(one), serve(two)]
    try:
        for (_, url), witness in zip(servers, (one, two)):
            assert riskapi("log", "witness", "add", url, witness.vkey, "--site", site).exit_code == 0
        assert riskapi("log", "witness", "add", servers[0][1], vkey, "--site", site).exit_code == 1  # a log's key
        built = riskapi("build", "--data", TINY, "--site", site, "--force")
        # the log: the first release and its switch, then this build's release and switch: 4 entries
        assert built.exit_code == 0 and built.output.count("cosigned size 4") == 2, built.output
        checkpoint, _ = latest(site)
        witnesses = [read_verifier(w.vkey, (COSIGNATURE,)) for w in (one, two)]
        assert set(cosigned_by(checkpoint.note, witnesses)) == {one.vkey, two.vkey}
        assert read_checkpoint(checkpoint.note.split(b"\n\n")[0] + b"\n").size == 4 == one.size == two.size
        listed = riskapi("log", "witness", "list", "--site", site).output
        assert listed.count("cosigned size 4") == 2
        # the citation carries the cosignatures: verify counts those of the witnesses it is given
        cite_current(site, tmp_path / "c.json")
        both = riskapi("verify", tmp_path / "c.json", "--trust", vkey, "--witness", one.vkey, "--witness", two.vkey)
        assert both.exit_code == 0 and "cosigned by 2 witness(es)" in both.output, both.output
        from ..cli.test_readme_commands import COSIGN_LINE, WITNESS_VERIFY_LINE  # the documented lines, as written
        values = dict(site=site, out=tmp_path / "c.json", vkey=vkey, witness=one.vkey, other=two.vkey)
        for line in (WITNESS_VERIFY_LINE, COSIGN_LINE):
            result = CliRunner().invoke(main, shlex.split(line.format(**values))[1:])
            assert result.exit_code == 0, f"{line}\n{result.output}"
        stranger = Witness("witness.example/three", vkey)
        short = riskapi("verify", tmp_path / "c.json", "--trust", vkey, "--witness", one.vkey, "--witness", stranger.vkey)
        assert short.exit_code == 1 and "cosigned by 1 of the witnesses given; 2 needed" in short.output
        one_of_two = riskapi("verify", tmp_path / "c.json", "--trust", vkey, "--witness", one.vkey, "--witness",
                         stranger.vkey, "--quorum", "1")
        assert one_of_two.exit_code == 0, one_of_two.output
        tampered = json.loads((tmp_path / "c.json").read_bytes())
        lines = tampered["checkpoint"].split("\n")
        witness_line = next(i for i, line in enumerate(lines) if line.startswith("\u2014 witness.example/one "))
        lines[witness_line] = lines[witness_line][:-8] + "AAAAAAA="
        tampered["checkpoint"] = "\n".join(lines)
        (tmp_path / "t.json").write_bytes(orjson.dumps(tampered))
        broken = riskapi("verify", tmp_path / "t.json", "--trust", vkey, "--witness", one.vkey, "--quorum", "1")
        assert broken.exit_code == 1 and "cosignature of witness.example/one does not verify" in broken.output
        then_stage_promote_rollback(site)
        assert riskapi("log", "cosign", "--site", site).exit_code == 0
        checkpoint, entries = latest(site)
        assert one.size == two.size == len(entries) == checkpoint.size
        assert set(cosigned_by(checkpoint.note, witnesses)) == {one.vkey, two.vkey}
    finally:
        for server, _ in servers:
            server.shutdown()


def test_a_witness_down_or_refusing_never_stops_a_release_and_is_asked_again(tmp_path):
    site = tmp_path / "site"
    build(TINY, site)
    vkey = riskapi("log", "init", "--site-url", LOOPBACK, "--site", site,
               "--key", tmp_path / "log.key").output.strip().splitlines()[-1]
    witness = Witness("witness.example/one", vkey)
    server, url = serve(witness)
    try:
        assert riskapi("log", "witness", "add", url, witness.vkey, "--site", site).exit_code == 0
        witness.refuse = True
        built = riskapi("build", "--data", TINY, "--site", site, "--force")
        assert built.exit_code == 0 and "did not cosign: answered 500" in built.output  # the release is live
        assert riskapi("log", "cosign", "--site", site).exit_code == 1
        witness.refuse = False
        assert riskapi("log", "cosign", "--site", site).exit_code == 0 and witness.size == 4
        # a witness that has seen another history (its state says a size the log never had): 409, then the
        # proof from the size it says; one that saw a different tree at that size refuses (422)
        witness.size, witness.root = 3, b"\x00" * 32
        built = riskapi("build", "--data", TINY, "--site", site, "--force")
        assert built.exit_code == 0 and "answered 422" in built.output, built.output
        server.shutdown()  # a witness gone
        server.server_close()
        built = riskapi("build", "--data", TINY, "--site", site, "--force")
        assert built.exit_code == 0 and "not reached" in built.output
        then_stage_promote_rollback(site)
    finally:
        server.shutdown()
