"""The API's key format (generator/contract/key_format.py): a prefix, 129 random bits and a checksum, so a
scanner finds a leaked key and a mistyped one is told apart — checked here by Yelp's detect-secrets running
the documented rule, and by `riskapi keys add`."""
from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

from click.testing import CliRunner

from generator.cli import main
from generator.contract import key_format

from ..conftest import ROOT

PLUGIN = ROOT / "docs" / "scanning" / "country_risk_keys.py"
GITLEAKS = ROOT / "docs" / "scanning" / "gitleaks.toml"
DETECT_SECRETS = str(Path(sys.executable).parent / "detect-secrets")  # its command, in this environment


def test_the_checksum_is_the_crc32_in_base_36():
    # CRC-32 of "123456789" is 0xCBF43926 = 3,421,780,262 (the CRC's published check value), which in base 36 is
    # 1·36^6 + 20·36^5 + 21·36^4 + 8·36^3 + 22·36^2 + 19·36 + 26: the digits 1, k, l, 8, m, j, q
    assert key_format.checksum("123456789") == "1kl8mjq"
    # a small CRC is zero-padded to 7 characters: CRC-32 of "" is 0
    assert key_format.checksum("") == "0000000"


def test_a_new_key_has_the_format_and_its_checksum_holds():
    keys = {key_format.new_key() for _ in range(200)}
    assert len(keys) == 200
    for key in keys:
        assert len(key) == 41 and re.fullmatch(key_format.PATTERN, key) and key == key.lower()
        assert key_format.checksum(key[:-7]) == key[-7:] and key_format.checksum_problem(key) is None
    key = sorted(keys)[0]
    typo = key[:12] + ("0" if key[12] != "0" else "1") + key[13:]  # one character of the random part mistyped
    assert key_format.checksum_problem(typo) == ("its checksum does not match: it is not a key of this API "
                                                 "(mistyped or cut short?)")
    assert key_format.checksum_problem(key[:-1]).startswith("a key starting cra_ has 41 characters")
    assert key_format.checksum_problem("9f86d081884c7d659a2feaa0c55ad015") is None  # the format before: no checksum


def test_keys_add_prints_a_key_of_the_format_and_refuses_a_mistyped_one(tmp_path):
    keys = tmp_path / "keys.csv"
    added = CliRunner().invoke(main, ["keys", "add", "ann", "--keys", str(keys)])
    assert added.exit_code == 0, added.output
    key = added.output.strip()
    assert key_format.checksum_problem(key) is None and key.startswith("cra_live_")
    before = keys.read_bytes()
    typo = key[:-1] + ("0" if key[-1] != "0" else "1")
    refused = CliRunner().invoke(main, ["keys", "add", "bea", "--key", typo, "--keys", str(keys)])
    assert refused.exit_code != 0
    assert "not a key of this API's format: its checksum does not match" in refused.output
    assert typo not in refused.output and keys.read_bytes() == before  # nothing written, the key not echoed


def _scan(folder: Path, *paths: str, without: tuple[str, ...] = ()) -> dict:
    """Return detect-secrets' run over `paths` (in `folder`, which names them) with the documented plugin alone
    (every built-in one disabled), and the filters `without` names disabled: its JSON report."""
    listed = subprocess.run([DETECT_SECRETS, "scan", "--list-all-plugins"],
                            capture_output=True, text=True, check=True).stdout.split()
    disabled = [argument for name in listed for argument in ("--disable-plugin", name)]
    disabled += [argument for path in without for argument in ("--disable-filter", path)]
    done = subprocess.run([DETECT_SECRETS, "scan", "--plugin", str(PLUGIN), *disabled, *map(str, paths)],
                          capture_output=True, text=True, cwd=folder, timeout=300)
    assert done.returncode == 0, done.stderr
    import json
    return json.loads(done.stdout)


def test_the_documented_rules_find_a_key_and_nothing_in_the_project(tmp_path):
    key = key_format.new_key()
    leaked = tmp_path / "leaked.env"
    leaked.write_text(f"# a deploy script's settings\nRISK_API_KEY={key}\nOTHER=9f86d081884c7d659a2feaa0c55ad015\n")
    clean = tmp_path / "clean.env"
    clean.write_text("RISK_API_KEY=9f86d081884c7d659a2feaa0c55ad015\nNOTE=cra_live_ is this API's key prefix\n")
    documented = _scan(tmp_path, leaked.name, clean.name)  # as docs/operate.md runs it: every default filter
    found = documented["results"]
    assert [(item["type"], item["line_number"]) for item in found[leaked.name]] == [("Country risk API key", 2)]
    assert clean.name not in found
    # the project's own files (those it tracks, as they are now): no key of the format anywhere, in the same
    # run that finds the leaked one among them (so the run read what it was given; detect-secrets scans files
    # under the folder it runs in, so the files are copied into one)
    tracked = [name for name in subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True,
                                               check=True).stdout.split()
               if (ROOT / name).is_file()]  # a link to a folder (generator/resources/schemas) is its files
    tree = tmp_path / "tree"
    for name in tracked:
        (tree / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(ROOT / name, tree / name)
    shutil.copyfile(leaked, tree / leaked.name)
    # without the heuristic filters, which only ever drop a finding (so none found here is none with them)
    # and take three quarters of the run's time over the project's files
    heuristic = tuple(f["path"] for f in documented["filters_used"] if ".heuristic." in f["path"])
    # the report was read: it names the filter that took most of the time (py-spy, the quick run)
    assert "detect_secrets.filters.heuristic.is_indirect_reference" in heuristic
    assert list(_scan(tree, leaked.name, *tracked, without=heuristic)["results"]) == [leaked.name]
    # both documented rules are the contract's pattern, between word boundaries
    gitleaks = tomllib.loads(GITLEAKS.read_text())["rules"][0]["regex"]
    plugin = re.search(r're\.compile\(r"(.*)"\)', PLUGIN.read_text())[1]
    assert gitleaks == plugin == rf"\b{key_format.PATTERN}\b"
