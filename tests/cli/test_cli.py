"""The riskapi command through click's runner: output, exit codes 0 / 1 / 2."""
import re
import subprocess
import sys

import pytest

from generator.contract import locations
from generator.history.site import current_release, live_periods, releases

from ..conftest import TINY, replace_in, riskapi

# the tiny data's countries with their values of the group filters (tests/fixtures/tiny/countries.csv)
TINY_GROUPS = {"AUT": {"region": "Europe & Central Asia", "income": "High income"},
               "CIV": {"region": "Sub-Saharan Africa", "income": "Lower middle income"},
               "NGA": {"region": "Sub-Saharan Africa", "income": "Lower middle income"}}



# What only building a release needs: riskapi imports it in the commands that build, so every other
# command (keys, status, serve, deploy) starts in a fifth of a second, not half a second.
BUILD_LIBRARIES = ("pyarrow", "numpy", "jinja2", "jsonschema_rs", "brotli")


def test_the_cli_starts_without_the_libraries_only_a_build_needs():
    done = subprocess.run([sys.executable, "-c", "import sys, generator.cli; print(' '.join(sorted(sys.modules)))"],
                          capture_output=True, text=True, check=True, timeout=60)
    imported = set(done.stdout.split())
    assert "generator.cli.releases" in imported and "click" in imported  # every command registered
    assert [name for name in BUILD_LIBRARIES if name in imported] == []


def test_build_prints_a_summary_and_the_change_headline(tmp_path):
    result = riskapi("build", "--data", TINY, "--site", tmp_path)
    assert result.exit_code == 0, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 2
    # locations.document_count(3 countries, 3 models, 2 audiences). A list (endpoints 2 and 3) has 6 selections
    # of its group filters: 2 regions, 2 income groups and 2 pairs of both (Europe & Central Asia and High
    # income: AUT; Sub-Saharan Africa and Lower middle income: CIV, NGA); so 4 orderings × (1 + 6) + 3
    # one-country answers + 1 empty = 32 documents. 2 × 4 (endpoints 1 and 5) + 32 (endpoint 2)
    # + 3 × (32 + 3 + 3) (endpoints 3 and 4, exports) + 3 (root, openapi.json, Data Package)
    # + 2 × 2 (release, changes) + 3 = 164
    assert locations.document_count(TINY_GROUPS, 3, 2) == 164
    assert re.fullmatch(r"published release \d{8}T\d{6}Z: 164 documents \(of 2 audiences\), 0\.\d MB \(0 files "
                        r"unchanged\), 3 models × 3 countries in \d+\.\ds", lines[0]), lines[0]
    assert current_release(tmp_path) in lines[0]
    # all but what names the release (the root, and the release and change documents of 2 audiences): 159 - 5
    assert lines[1] == ("changes in every audience's documents: first release: 154 documents (riskapi diff shows "
                        "them; a key's /changes/ lists those it may see)")


def test_build_verbose_shows_stages(tmp_path):
    result = riskapi("-v", "build", "--data", TINY, "--site", tmp_path)
    assert result.exit_code == 0, result.output
    assert re.search(r"stages: load [\d.]+s, score [\d.]+s, render [\d.]+s, validate [\d.]+s, publish [\d.]+s",
                     result.output)


def test_build_quiet_prints_nothing(tmp_path):
    result = riskapi("-q", "build", "--data", TINY, "--site", tmp_path)
    assert (result.exit_code, result.output) == (0, "")


def test_bad_data_exits_1_with_located_messages_and_publishes_nothing(tmp_path, data_copy):
    replace_in(data_copy / "countries.csv", "NGA,Nigeria", "NGA,Nigeria,extra")
    result = riskapi("build", "--data", data_copy, "--site", tmp_path / "site")
    assert result.exit_code == 1, result.output
    assert f"{data_copy}/countries.csv:4: has 7 cells, the header has 6" in result.output
    assert releases(tmp_path / "site") == []


def test_check_writes_nothing(tmp_path):
    result = riskapi("check", "--data", TINY)
    assert result.exit_code == 0, result.output
    # current model scores: sovereign AUT, CIV; sdg AUT, CIV; acme_aml AUT, CIV, NGA
    assert result.output.startswith(f"{TINY} is valid: 3 models, 3 countries, 7 current model scores")


def test_strict_turns_warnings_into_errors(data_copy):
    replace_in(data_copy / "indicators.csv", "0.6667,annual", "0.6,annual")
    replace_in(data_copy / "indicators.csv", "0.3333,annual", "0.4,annual")
    relaxed = riskapi("check", "--data", data_copy)
    assert relaxed.exit_code == 0 and "2 warning(s) (--strict makes them errors)" in relaxed.output
    strict = riskapi("check", "--strict", "--data", data_copy)
    assert strict.exit_code == 1
    assert "has warnings, and --strict makes them errors" in strict.output


def test_releases_and_rollback(tmp_path):
    for _ in range(2):
        assert riskapi("-q", "build", "--data", TINY, "--site", tmp_path, "--force").exit_code == 0
    first, second = releases(tmp_path)
    listing = [line for line in riskapi("releases", "--site", tmp_path).output.splitlines() if not line.startswith("    live")]
    assert listing == [f"  {first}  {_files(tmp_path, first)} files  (riskapi rollback goes here)",
                       f"* {second}  {_files(tmp_path, second)} files"]
    back = riskapi("rollback", "--site", tmp_path)
    assert (back.exit_code, back.output) == (0, f"current release is now {first}\n")
    again = riskapi("rollback", "--site", tmp_path)
    assert again.exit_code == 1 and f"no release that was live before {first}" in again.output


def test_live_periods_stay_true_through_two_rollbacks(tmp_path, monkeypatch):
    from generator.history import catalogue
    instants = iter(f"2026-11-24T10:00:0{n}Z" for n in range(10))  # a clock that ticks a second a reading
    monkeypatch.setattr(catalogue.instants, "now_ms", lambda: catalogue.parse_instant(next(instants)))
    for _ in range(3):
        assert riskapi("-q", "build", "--data", TINY, "--site", tmp_path, "--force").exit_code == 0
    # each switch is dated the next whole second after its clock's reading: a build after the first reads
    # the clock twice (before it starts, whether it is behind; then for its switch): :00, then :02, :04 —
    # live at :01, :03, :05
    a, b, c = releases(tmp_path)
    assert riskapi("rollback", "--site", tmp_path).exit_code == 0  # reads :05: dated :06, back to b
    assert riskapi("rollback", "--site", tmp_path).exit_code == 0  # reads :06: dated :07, back to a
    periods = [(p.release, p.start_text, p.end_text) for p in live_periods(tmp_path)]
    assert periods == [(a, "2026-11-24T10:00:01Z", "2026-11-24T10:00:03Z"),
                       (b, "2026-11-24T10:00:03Z", "2026-11-24T10:00:05Z"),
                       (c, "2026-11-24T10:00:05Z", "2026-11-24T10:00:06Z"),
                       (b, "2026-11-24T10:00:06Z", "2026-11-24T10:00:07Z"),
                       (a, "2026-11-24T10:00:07Z", None)]
    listing = riskapi("releases", "--site", tmp_path).output.splitlines()
    assert listing[:3] == [f"* {a}  {_files(tmp_path, a)} files",
                           "    live 2026-11-24T10:00:01Z → 2026-11-24T10:00:03Z",
                           "    live 2026-11-24T10:00:07Z → now"]
    assert listing[-2:] == [f"  {c}  {_files(tmp_path, c)} files  (rolled back from)",
                            "    live 2026-11-24T10:00:05Z → 2026-11-24T10:00:06Z"]


def _files(site, release_id) -> int:
    import orjson
    return len(orjson.loads((site / "releases" / release_id / "manifest.json").read_bytes())["files"])


def test_usage_errors_exit_2(tmp_path):
    assert riskapi("build", "--no-such-option").exit_code == 2
    assert riskapi("no-such-command").exit_code == 2


def test_synthetic_data_tool_writes_a_dataset_that_checks(tmp_path, capsys):
    from tools.synthetic_data import main as synthetic_data
    out = tmp_path / "demo"
    synthetic_data(["--out", str(out), "--countries", "12", "--models", "6", "--years", "3", "--last-year", "2024"])
    assert capsys.readouterr().out.startswith(f"wrote {out}: 12 countries, 6 models,")
    checked = riskapi("check", "--strict", "--data", out)
    assert checked.exit_code == 0, checked.output


def test_verbosity_works_after_the_command_too(tmp_path):
    # README writes `riskapi build … [-v|-q]`: the options after the command mean what they mean before it
    assert (riskapi("build", "--data", TINY, "--site", tmp_path / "a", "-q").output, ) == ("", )
    after = riskapi("build", "--data", TINY, "--site", tmp_path / "b", "-v")
    assert after.exit_code == 0 and "stages: load" in after.output
    assert riskapi("-q", "build", "--data", TINY, "--site", tmp_path / "c").output == ""
    assert riskapi("keys", "list", "--keys", tmp_path / "keys.csv", "-q").exit_code == 0


def test_keep_and_keep_days_decide_what_a_build_prunes(tmp_path, monkeypatch):
    from generator.history import catalogue
    real_now = catalogue.now_ms
    # a build after the first reads the clock twice: before it starts (is it behind?), then for its switch
    old = iter(["2020-01-01T00:00:00Z", "2020-01-02T00:00:00Z", "2020-01-02T00:00:00Z", "2020-01-03T00:00:00Z",
                "2020-01-03T00:00:00Z"])
    monkeypatch.setattr(catalogue.instants, "now_ms", lambda: catalogue.parse_instant(next(old, None) or catalogue.rfc3339(real_now())))
    ids = []
    for _ in range(6):  # 1-3 went live in 2020 (3 stayed live until 4 went live, today); 4-6 today
        assert riskapi("-q", "build", "--data", TINY, "--site", tmp_path, "--force", "--keep", "1",
                   "--keep-days", "1").exit_code == 0
        ids.append(current_release(tmp_path))
    # kept: the newest (6), the rollback target (5), and every release live in the last day: 3, 4, 5, 6
    assert releases(tmp_path) == ids[2:]
    # the site remembers the retention given last: a build without the options keeps by it
    assert riskapi("-q", "build", "--data", TINY, "--site", tmp_path, "--force").exit_code == 0
    assert releases(tmp_path) == ids[2:] + [current_release(tmp_path)]
    ids.append(current_release(tmp_path))
    assert riskapi("-q", "build", "--data", TINY, "--site", tmp_path, "--force", "--keep-days", "0").exit_code == 0
    assert releases(tmp_path) == [ids[6], current_release(tmp_path)]  # no days: the newest and the previous


def test_stage_preview_and_promote_from_the_command_line(tmp_path):
    site, keys = tmp_path / "site", tmp_path / "keys.csv"
    assert riskapi("-q", "build", "--data", TINY, "--site", site).exit_code == 0
    live = current_release(site)
    added = riskapi("-v", "keys", "add", "reviewer", "--preview", "--keys", keys)
    assert added.exit_code == 0 and "that may read staged releases" in added.output
    assert keys.read_text().splitlines()[1].endswith(",@preview,yes,")  # the grant in the models column
    listed = riskapi("keys", "list", "--keys", keys)
    assert "\tpreview\tactive" in listed.output
    staged = riskapi("build", "--data", TINY, "--site", site, "--force", "--stage")
    assert staged.exit_code == 0 and staged.output.startswith("staged release ")
    staged_id = releases(site)[-1]
    assert current_release(site) == live
    assert f"staged: riskapi promote {staged_id} makes it live" in riskapi("releases", "--site", site).output
    promoted = riskapi("promote", staged_id, "--site", site)
    assert promoted.exit_code == 0 and promoted.output == f"release {staged_id} is current (it replaced {live})\n"
    assert current_release(site) == staged_id
    again = riskapi("promote", staged_id, "--site", site)
    assert again.exit_code == 1 and f"{staged_id} is not a staged release" in again.output


@pytest.mark.parametrize("command", [["releases", "--site", "{site}"], ["keys", "list", "--keys", "{keys}"]])
def test_a_listing_whose_reader_goes_away_ends_quietly(tmp_path, command):
    # `riskapi releases | head -1`: the reader closes the pipe before riskapi has written; no "Broken pipe"
    site, keys = tmp_path / "site", tmp_path / "keys.csv"
    assert riskapi("-q", "build", "--data", TINY, "--site", site).exit_code == 0
    assert riskapi("keys", "add", "alice", "--keys", keys).exit_code == 0
    listing = subprocess.Popen([sys.executable, "-m", "generator.cli",
                                *[part.format(site=site, keys=keys) for part in command]],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    listing.stdout.close()  # gone before the first line
    assert listing.wait(timeout=60) == 0
    assert listing.stderr.read() == b""
