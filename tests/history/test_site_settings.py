"""What a site remembers outside its catalogue (site/site-settings.json): its address, its retention, the
log's key, origin, earlier verifier keys and witnesses, rewritten at each change and read back by
`riskapi releases --repair`, so a lost catalogue forgets nothing the operator set. And the log
named after the site's real address: `riskapi log init` refuses the loopback default unless told, a build
whose address does not name the log says so, and a rotation makes a new key and keeps the old one's file."""
from __future__ import annotations

import os
import shutil

import orjson
import pytest

from generator.building.render.release_info import release_site_url
from generator.history.catalogue import CATALOGUE, Catalogue
from generator.history.catalogue.settings import SETTINGS_COPY
from generator.history.layout import read_release_info
from generator.history.proof.note import open_note, read_checkpoint, read_verifier
from generator.history.site import RELEASES, current_release, releases

from ..conftest import LOOPBACK, TINY, riskapi
from ..fault_checks import then_stage_promote_rollback, without_the_log_copy

SITE_URL = "https://risk.example.com"



def signed_by(site, vkey) -> bool:
    """Return whether the site's latest checkpoint verifies with `vkey` and states the whole log."""
    with Catalogue.open(site) as catalogue:
        note, size = catalogue.latest_checkpoint().note, len(catalogue.log_entries())
    return read_checkpoint(open_note(note, [read_verifier(vkey)]).text).size == size


@pytest.mark.parametrize("lose", [lambda site: None, without_the_log_copy], ids=["log-copy", "folders-alone"])
def test_a_repair_takes_back_the_address_retention_and_log_key_so_a_plain_build_prunes_nothing_kept(tmp_path, lose):
    site, key = tmp_path / "site", tmp_path / "keys" / "log.key"
    for count in range(7):  # seven releases, all kept by --keep 10
        built = riskapi("build", "--data", TINY, "--site", site, "--force", "--keep", 10, "--keep-days", 30,
                    "--site-url", SITE_URL)
        assert built.exit_code == 0, built.output
        if count == 0:
            vkey = riskapi("log", "init", "--site", site, "--key", key).output.strip().splitlines()[-1]
    kept = releases(site)
    assert len(kept) == 7
    copy = orjson.loads((site / SETTINGS_COPY).read_bytes())["settings"]
    assert (copy["site_url"], copy["keep"], copy["keep_days"], copy["log_key"]) == (SITE_URL, "10", "30.0", str(key))
    os.remove(site / CATALOGUE)
    lose(site)
    repaired = riskapi("releases", "--site", site, "--repair")
    assert repaired.exit_code == 0, repaired.output
    assert f"address {SITE_URL}, --keep 10, --keep-days 30.0, log key {key}" in repaired.output
    # a plain build: the retention and address as the operator last gave them, the log signed with its key
    plain = riskapi("build", "--data", TINY, "--site", site, "--force")
    assert plain.exit_code == 0, plain.output
    assert "pruned" not in plain.output and set(kept) < set(releases(site))
    assert release_site_url(site / RELEASES / current_release(site)) == SITE_URL
    assert signed_by(site, vkey)
    assert read_release_info(site / RELEASES / current_release(site))  # a whole release
    then_stage_promote_rollback(site)
    assert set(kept) < set(releases(site))


def test_a_log_is_not_named_after_the_loopback_default_unless_told(tmp_path):
    site, key = tmp_path / "site", tmp_path / "log.key"
    refused = riskapi("log", "init", "--site", site, "--key", key)  # before any build: no address known
    assert refused.exit_code == 1 and "--site-url" in refused.output and not key.exists()
    assert riskapi("build", "--data", TINY, "--site", site).exit_code == 0  # built at the default address
    refused = riskapi("log", "init", "--site", site, "--key", key)
    assert refused.exit_code == 1 and "127.0.0.1:8080, for ever" in refused.output and not key.exists()
    made = riskapi("log", "init", "--site", site, "--key", key, "--site-url", "http://127.0.0.1:18990")
    assert made.exit_code == 0, made.output
    assert made.output.strip().splitlines()[-1].startswith("127.0.0.1:18990/api/v1/log+")
    # the address given is the site's from now on; another one refused: a log's name never changes
    moved = riskapi("log", "init", "--site", site, "--key", key, "--site-url", "https://elsewhere.example")
    assert moved.exit_code == 1 and "never changes" in moved.output
    rebuilt = riskapi("build", "--data", TINY, "--site", site, "--force")
    assert rebuilt.exit_code == 0 and "not after" not in rebuilt.output, rebuilt.output
    assert release_site_url(site / RELEASES / current_release(site)) == "http://127.0.0.1:18990"
    elsewhere = riskapi("build", "--data", TINY, "--site", site, "--force", "--site-url", "https://risk.example.com")
    assert elsewhere.exit_code == 0
    assert "log of releases is named 127.0.0.1:18990/api/v1/log, not after https://risk.example.com" in elsewhere.output
    then_stage_promote_rollback(site)


def test_a_rotation_of_the_key_in_use_makes_a_new_one_and_keeps_the_old_ones_file(tmp_path):
    site, key = tmp_path / "site", tmp_path / "keys" / "log-signing.key"
    assert riskapi("build", "--data", TINY, "--site", site).exit_code == 0
    old = riskapi("log", "init", "--site", site, "--key", key, "--site-url", LOOPBACK).output.strip().splitlines()[-1]
    old_secret = key.read_bytes()
    rotated = riskapi("log", "init", "--site", site, "--key", key, "--rotate")
    assert rotated.exit_code == 0, rotated.output
    new = rotated.output.strip().splitlines()[-1]
    assert new != old and new.split("+")[0] == old.split("+")[0]  # the same log, another key
    assert key.read_bytes() != old_secret and oct(key.stat().st_mode & 0o777) == "0o600"
    kept = key.with_name(f"log-signing.key.{old.split('+')[1]}.retired")
    assert kept.read_bytes() == old_secret
    status = riskapi("log", "status", "--site", site).output
    assert f"signed by {new}" in status and old not in status
    assert signed_by(site, new)
    # the next build's API root publishes both: the new key in use, the old one retired
    assert riskapi("build", "--data", TINY, "--site", site, "--force").exit_code == 0
    root = orjson.loads((site / RELEASES / current_release(site) / "api/v1/index.json").read_bytes())
    assert (root["log"]["verifierKey"], root["log"]["retiredVerifierKeys"]) == (new, [old])
    # and the settings survive a repair: the key in use signs, the retired one is still published
    os.remove(site / CATALOGUE)
    shutil.rmtree(site / "log")
    assert riskapi("releases", "--site", site, "--repair").exit_code == 0
    assert riskapi("build", "--data", TINY, "--site", site, "--force").exit_code == 0
    root = orjson.loads((site / RELEASES / current_release(site) / "api/v1/index.json").read_bytes())
    assert (root["log"]["verifierKey"], root["log"]["retiredVerifierKeys"]) == (new, [old])
    assert signed_by(site, new)
    then_stage_promote_rollback(site)
