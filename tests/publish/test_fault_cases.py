"""The fault cases of a hostile operator, a careless data team and a crashing machine: never publish
what a server rejects, always apply a revocation, one identity for every name. One promise per test,
named by what it proves. Every process here is started by the test and ended by its PID; waits are
bounded."""
from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import urllib.parse
from pathlib import Path

import orjson
import pytest

from generator.contract import key_format
from generator.errors import DataError, PublishError
from generator.history.catalogue import PUBLISH, Catalogue, switching
from generator.history.site import CURRENT, RELEASES, current_release, switch_to
from generator.publish.build_release import build
from generator.serve.keys import load_keys, read_keys
from generator.serve.nginx.configuration import check_release
from generator.serve.status import read_statuses

from ..conftest import TINY, riskapi
from ..live import digest_of, free_port, serving_copy_of, wait_for

pytestmark = pytest.mark.faults



# ---- one identity: users ---------------------------------------------------------------------------

def test_keys_add_refuses_a_user_that_differs_only_in_letter_case(tmp_path):
    keys = tmp_path / "keys.csv"
    assert riskapi("keys", "add", "alice", "--keys", keys).exit_code == 0
    twin = riskapi("keys", "add", "ALICE", "--keys", keys)
    assert twin.exit_code == 1
    assert "user 'ALICE' is 'alice' of the keys file in other letter case" in twin.output
    assert [k.user for k in read_keys(keys)] == ["alice"]


def test_revoke_takes_any_letter_case_of_the_user(tmp_path):
    keys = tmp_path / "keys.csv"
    riskapi("keys", "add", "alice", "--keys", keys)
    assert riskapi("keys", "revoke", "Alice", "--keys", keys).exit_code == 0
    assert [k.active for k in read_keys(keys)] == [False]


def test_a_hand_written_case_twin_is_a_located_line_that_serves_no_key(tmp_path):
    with serving_copy_of(TINY, tmp_path) as server:
        twin_key = "9f86d081884c7d659a2feaa0c55ad015"
        original = server.keys_file.read_text()
        server.keys_file.write_text(original + f"ALICE,{digest_of(server.keys_file, twin_key)},,yes,\n")
        server.runtime.refresh()  # nginx accepts the configuration: the twin is left out, not merged
        line = len(original.splitlines()) + 1
        assert server.runtime.status.state["live"]["keyProblems"] == [
            f"{server.keys_file}:{line}: user 'ALICE' is 'alice' of line 2 in other letter case (users are the same "
            "whatever their case: write it 'alice')"]
        server.keys["ALICE"] = twin_key
        assert server.get("/api/v1/riskscores/acme_aml/", user="ALICE").status == 403
        assert server.get("/api/v1/riskscores/acme_aml/", user="alice").status == 200


def test_revoke_works_while_other_lines_are_bad_and_keeps_them_as_written(tmp_path):
    keys = tmp_path / "keys.csv"
    riskapi("keys", "add", "alice", "--keys", keys)
    riskapi("keys", "add", "bob", "--keys", keys)
    bad = ['mallory,abc,,yes', 'eve,"unclosed,,yes', 'dave,\udce9bytes,,yes']
    with keys.open("ab") as handle:
        handle.write("\n".join(bad).encode("utf-8", "surrogateescape") + b"\n")
    before = keys.read_bytes()
    result = riskapi("keys", "revoke", "bob", "--keys", keys)
    assert result.exit_code == 0, result.output
    assert "revoked 1 key(s) of bob" in result.output
    assert "3 line(s) of the keys file serve no key until fixed" in result.output  # warned, on stderr
    after = keys.read_bytes()
    assert after.splitlines()[-3:] == before.splitlines()[-3:]  # the bad lines, byte for byte
    assert {k.user: k.active for k in read_keys(keys)} == {"alice": True, "bob": False}


def test_a_keys_file_with_a_byte_order_mark_is_read(tmp_path):
    keys = tmp_path / "keys.csv"
    keys.write_bytes(b"\xef\xbb\xbfuser,key,models,active\nalice,9f86d081884c7d659a2feaa0c55ad015,,yes\n")
    read = load_keys(keys)
    assert (read.problems, [k.user for k in read.keys]) == ([], ["alice"])


def test_a_symlinked_keys_file_stays_a_link_after_an_edit(tmp_path):
    real = tmp_path / "secret" / "keys.csv"
    real.parent.mkdir()
    riskapi("keys", "add", "alice", "--keys", real)
    link = tmp_path / "keys.csv"
    link.symlink_to(real)
    riskapi("keys", "add", "bob", "--keys", link)
    assert link.is_symlink()
    assert [k.user for k in read_keys(real)] == ["alice", "bob"]


# ---- key strength ------------------------------------------------------------------------------------

@pytest.mark.parametrize("key, why", [
    ("0000000000000000", "about 53 bits (16 characters of a 10-character alphabet)"),  # 16 × log2 10 = 53.2
    ("password-password", "about 90 bits (17 characters of a 40-character alphabet)"),  # 17 × log2 40 = 90.5
    ("passwordpasswordpasswordpassword", "it uses only 7 different characters"),  # 32 × log2 26 = 150 bits
    ("0123456789abcdef0123456789abcdef", "it repeats a shorter text"),  # 32 × 4 = 128 bits, 16 different
])
def test_a_guessable_key_is_refused_unless_allowed(tmp_path, key, why):
    keys = tmp_path / "keys.csv"
    refused = riskapi("keys", "add", "alice", "--key", key, "--keys", keys)
    assert refused.exit_code == 1 and why in refused.output, refused.output
    allowed = riskapi("keys", "add", "alice", "--key", key, "--keys", keys, "--allow-weak")
    assert allowed.exit_code == 0 and "warning: a weak key was accepted" in allowed.output


def test_a_random_32_hex_key_is_accepted(tmp_path):
    # 32 × log2 16 = 128 bits: exactly what generated keys have
    result = riskapi("keys", "add", "alice", "--key", "9f86d081884c7d659a2feaa0c55ad015", "--keys", tmp_path / "k.csv")
    assert result.exit_code == 0 and "warning" not in result.output


# ---- nothing published that a server rejects ----------------------------------------------------------

def with_countries(data: Path, *rows: str) -> None:
    with (data / "countries.csv").open("a", encoding="utf-8") as handle:
        for row in rows:
            handle.write(row + "\n")


def test_country_names_that_are_map_keywords_or_regexes_are_served_as_themselves(tmp_path):
    data = tmp_path / "data"
    shutil.copytree(TINY, data)
    with_countries(data, "AAA,default,Europe & Central Asia,High income,no,country",
                   "BBB,include,Europe & Central Asia,High income,no,country",
                   "CCC,~.*,Europe & Central Asia,High income,no,country",
                   "DDD,\\,Europe & Central Asia,High income,no,country")
    with serving_copy_of(data, tmp_path / "served") as server:
        def filtered(name: str) -> list[str]:
            answer = server.get(f"/api/v1/configuration/countries/?name={urllib.parse.quote(name)}")
            assert answer.status == 200, answer.body
            return [c["code"] for c in orjson.loads(answer.body)]
        assert filtered("default") == ["AAA"] and filtered("include") == ["BBB"]
        assert filtered("~.*") == ["CCC"]
        assert filtered("Austria") == ["AUT"]  # not the country named ~.*
        assert filtered("Nowhere") == []


@pytest.mark.parametrize("row, problem", [
    ("XXX,AUSTRIA,Europe & Central Asia,High income,yes,country",
     "countries.csv:5: column name: 'AUSTRIA' is 'Austria' of line 2 in other letter case or Unicode form"),
    ("XXX,ＡＵＳＴＲＩＡ,Europe & Central Asia,High income,yes,country",  # full-width letters: NFKC folds them
     "countries.csv:5: column name: 'ＡＵＳＴＲＩＡ' is 'Austria' of line 2 in other letter case or Unicode form"),
    ("XXX," + "x" * 10_000 + ",Europe & Central Asia,High income,yes,country",
     "countries.csv:5: column name: is too long to look up: a client sends it as up to 10000 bytes, over 200"),
    # the region and income filters match ignoring case too: one value, one spelling
    ("XXX,Xland,EUROPE & Central Asia,High income,yes,country",
     "countries.csv:5: column region: 'EUROPE & Central Asia' is 'Europe & Central Asia' of line 2 in other letter "
     "case or Unicode form (the region filter matches ignoring case: write it as on line 2)"),
    ("XXX,Xland,Europe & Central Asia,high income,yes,country",
     "countries.csv:5: column income: 'high income' is 'High income' of line 2 in other letter case"),
])
def test_a_country_name_or_group_no_server_can_look_up_is_a_located_error(data_copy, row, problem):
    with_countries(data_copy, row)
    with pytest.raises(DataError) as caught:
        build(data_copy, data_copy.parent / "site")
    assert problem in caught.value.format_message()
    assert not (data_copy.parent / "site" / CURRENT).exists()


def unservable(release: Path) -> None:
    """Make a release's routing hold what nginx cannot take (a country code with a space: two map
    values), as a release built by an older riskapi or edited by hand could."""
    path = release / "nginx" / "routing.json"
    routing = orjson.loads(path.read_bytes())
    routing["countries"].append("X Y")
    path.write_bytes(orjson.dumps(routing))


def test_check_release_names_the_line_nginx_rejects(tmp_path):
    site = tmp_path / "site"
    build(TINY, site)
    release = site / RELEASES / current_release(site)
    assert check_release(release) is None
    unservable(release)
    rejected = check_release(release)
    assert 'invalid number of the map parameters' in rejected and "country-codes.conf" in rejected


def test_build_refuses_a_release_nginx_rejects_and_keeps_the_live_one(tmp_path, monkeypatch):
    site = tmp_path / "site"
    build(TINY, site)
    live = current_release(site)
    import generator.publish.build_release as building
    real = building.render_release_maps

    def broken(*args):  # what an nginx of another version, or a map entry no check foresaw, would refuse
        files = real(*args)
        routing = orjson.loads(files["nginx/routing.json"])
        routing["countries"].append("X Y")
        files["nginx/routing.json"] = orjson.dumps(routing)
        return files
    monkeypatch.setattr(building, "render_release_maps", broken)
    with pytest.raises(PublishError) as caught:
        build(TINY, site, force=True)
    message = caught.value.format_message()
    assert message.startswith("nginx rejects this release's configuration, so it was not published")
    assert "invalid number of the map parameters" in message
    assert current_release(site) == live and len(list((site / RELEASES).iterdir())) == 1


# ---- a revocation always lands -----------------------------------------------------------------------

def rejected_release(site: Path) -> str:
    """Return a copy of the live release whose nginx maps nginx rejects, made current (as a release built by an
    older riskapi, or edited by hand, would be)."""
    live = current_release(site)
    new = live + "-99"
    shutil.copytree(site / RELEASES / live, site / RELEASES / new, symlinks=True)
    unservable(site / RELEASES / new)
    with Catalogue.open(site) as catalogue:
        catalogue.add_release(new)
    with switching(site, PUBLISH, new):
        switch_to(site, new)
    return new


@pytest.mark.slow  # seconds of servers and processes: the whole suite runs it, --quick does not
def test_a_revocation_lands_within_seconds_while_nginx_rejects_the_new_release(place):
    site, keys = place / "site", place / "keys.csv"
    assert riskapi("build", "--data", TINY, "--site", site, "-q").exit_code == 0
    alice = riskapi("keys", "add", "alice", "--keys", keys).output.strip()
    bob = riskapi("keys", "add", "bob", "--keys", keys).output.strip()
    port = free_port()
    serve = subprocess.Popen([sys.executable, "-m", "generator.cli", "serve", "--port", str(port), "--site",
                              str(site), "--keys", str(keys)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                             text=True)
    try:
        assert serve.stdout.readline().startswith("serving release")
        import urllib.request

        def status_of(key: str) -> tuple[int, str]:
            request = urllib.request.Request(f"http://127.0.0.1:{port}/api/v1/riskscores/sovereign/",
                                             headers={"Authorization": key})
            try:
                with urllib.request.urlopen(request, timeout=5) as answer:
                    return answer.status, answer.headers["X-Release"]
            except urllib.error.HTTPError as error:
                return error.code, error.headers["X-Release"]

        served = current_release(site)
        bad = rejected_release(site)
        assert riskapi("keys", "revoke", "bob", "--keys", keys).exit_code == 0
        # a state, with a deadline for a loaded machine (how soon it lands is a benchmark's: BENCHMARKS.md)
        wait_for(lambda: status_of(bob)[0] == 403, seconds=30, what="403 for the revoked key")
        assert status_of(alice) == (200, served)  # still the release nginx accepted
        shown = riskapi("status", "--site", site)
        assert shown.exit_code == 0
        assert f"live: release {served}" in shown.output
        assert f"rejected: release {bad}" in shown.output and "invalid number of the map parameters" in shown.output
        assert alice not in shown.output and bob not in shown.output
        # the next good release is served again
        assert riskapi("build", "--data", TINY, "--site", site, "--force", "-q").exit_code == 0
        wait_for(lambda: status_of(alice)[1] == current_release(site), seconds=30, what="the next release")
    finally:
        serve.send_signal(signal.SIGTERM)
        serve.wait(timeout=20)
    assert read_statuses(site) == []  # a stopped serve leaves no status behind


def test_a_keys_file_that_cannot_be_read_never_holds_back_a_new_release(tmp_path):
    with serving_copy_of(TINY, tmp_path) as server:
        good = server.keys_file.read_bytes()
        server.keys_file.write_text("name,secret\n")  # a wrong header: no line of it can be trusted
        build(server.data, server.site, force=True)
        server.runtime.refresh()
        answer = server.get("/api/v1/riskscores/sovereign/", user="bob")  # the keys served before
        assert (answer.status, answer.header("x-release")) == (200, current_release(server.site))
        rejection = server.runtime.status.state["rejected"][0]
        assert (rejection["what"], rejection["name"]) == ("keys file", str(server.keys_file))
        assert rejection["reason"] == f"{server.keys_file}:1: the header must be user,key_digest,models,active,expires"
        server.keys_file.write_bytes(good)


# ---- atomic on disk ------------------------------------------------------------------------------------

@pytest.mark.slow  # 100 and more builds
def test_release_ids_sort_by_their_count_past_99_builds_in_a_second(tmp_path):
    from generator.history.site import release_order, releases
    site = tmp_path / "site"
    build(TINY, site)
    first = current_release(site)
    # 99 more releases of that second, as a fast loop of builds would leave them ("-02" … "-99")
    future = "29991231T235959Z"
    for count in range(2, 100):
        shutil.copytree(site / RELEASES / first, site / RELEASES / f"{future}-{count:02d}", symlinks=True)
        with Catalogue.open(site) as catalogue:
            catalogue.add_release(f"{future}-{count:02d}")
    with switching(site, PUBLISH, f"{future}-99"):
        switch_to(site, f"{future}-99")
    assert releases(site)[-1] == f"{future}-99"
    build(TINY, site, force=True)
    build(TINY, site, force=True)
    assert releases(site)[-2:] == [f"{future}-100", f"{future}-101"]  # as text, -100 would sort before -99
    assert current_release(site) == f"{future}-101"
    assert sorted(["X-100", "X-99", "X"], key=release_order) == ["X", "X-99", "X-100"]


STEPS = [  # (where the build is killed, patched function, before or after it runs)
    ("before the catalogue knows the release", "generator.history.catalogue.Catalogue.add_release", "before"),
    ("after the catalogue knows it, before it is moved into place", "os.rename", "before"),
    ("after the move, before the switch's intent", "generator.history.catalogue.Catalogue.intend", "before"),
    ("after the intent, before the switch", "generator.building.writer.switch_to", "before"),
    ("after the switch, before its confirmation", "generator.history.catalogue.Catalogue.confirm", "before"),
    ("after the confirmation, before the pruned folders go", "generator.building.writer.ReleaseWriter._delete_pruned",
     "before"),
]


def killed_build(site: Path, target: str, when: str) -> int:
    """Build in a forked child that dies (os._exit, as a SIGKILL would leave things) at `target`."""
    pid = os.fork()
    if pid == 0:  # the child: never returns
        try:
            import importlib
            module_name, _, name = target.rpartition(".")
            if module_name.rpartition(".")[2][:1].isupper():  # a class's method
                module_name, _, class_name = module_name.rpartition(".")
                owner = getattr(importlib.import_module(module_name), class_name)
            else:
                owner = importlib.import_module(module_name)
            real = getattr(owner, name)

            def dying(*args, **kwargs):
                if when == "after":
                    real(*args, **kwargs)
                if target != "os.rename" or ".tmp-" in str(args[0]):
                    os._exit(9)
                return real(*args, **kwargs)
            setattr(owner, name, dying)
            build(TINY, site, force=True)
        finally:
            os._exit(0)
    return os.waitpid(pid, 0)[1] >> 8


@pytest.mark.parametrize("step, target, when", STEPS, ids=[s[0] for s in STEPS])
def test_a_build_killed_at_any_step_leaves_current_whole_and_the_history_true(tmp_path, step, target, when):
    from generator.history.site import missing_files, releases, was_live
    site = tmp_path / "site"
    build(TINY, site)
    build(TINY, site, force=True)
    before, older = current_release(site), releases(site)[0]
    assert killed_build(site, target, when) == 9
    live = current_release(site)
    assert missing_files(site / RELEASES / live) == 0  # whole, wherever the kill came
    assert was_live(site)[-1] == live  # the journal replays to what is current
    switched = step.startswith(("after the switch", "after the confirmation"))
    assert (live != before) == switched
    listed = riskapi("releases", "--site", site).output
    assert "never live" not in listed.splitlines()[-1] or not switched
    # a rollback goes to the release live before the current one, never to one that never went live
    assert riskapi("rollback", "--site", site).exit_code == 0
    assert current_release(site) == (before if switched else older)
    assert riskapi("build", "--data", TINY, "--site", site, "--force", "-q").exit_code == 0


def test_a_release_rolled_back_from_is_listed_as_such_not_as_never_live(tmp_path):
    site = tmp_path / "site"
    build(TINY, site)
    build(TINY, site, force=True)
    bad = current_release(site)
    assert riskapi("rollback", "--site", site).exit_code == 0
    line = next(row for row in riskapi("releases", "--site", site).output.splitlines() if bad in row)
    assert "rolled back from" in line and "never live" not in line


# ---- contained failures: the data folder --------------------------------------------------------------

def problems_of(data: Path) -> str:
    with pytest.raises(DataError) as caught:
        build(data, data.parent / "site")
    assert not (data.parent / "site" / CURRENT).exists()
    return caught.value.format_message().replace(f"{data}/", "")


def test_a_data_file_linking_outside_the_folder_is_refused_unread(data_copy, tmp_path):
    secret = tmp_path / "credentials"
    secret.write_text("aws_secret_access_key=abcdefSECRET\n")
    (data_copy / "models.csv").unlink()
    (data_copy / "models.csv").symlink_to(secret)
    message = problems_of(data_copy)
    assert "models.csv: is a link to a file outside the data folder; not read" in message
    assert "SECRET" not in message
    result = riskapi("check", "--data", data_copy)  # check says the same
    assert result.exit_code == 1 and "SECRET" not in result.output


def test_a_link_inside_the_data_folder_is_read(data_copy):
    (data_copy / "kept").mkdir()
    (data_copy / "models.csv").rename(data_copy / "kept" / "models.csv")
    (data_copy / "models.csv").symlink_to(data_copy / "kept" / "models.csv")
    build(data_copy, data_copy.parent / "site")
    assert current_release(data_copy.parent / "site")


def test_a_first_build_of_a_header_only_observations_file_is_refused(data_copy):
    path = data_copy / "observations" / "sovereign.csv"
    path.write_text(path.read_text().splitlines()[0] + "\n")
    assert "observations/sovereign.csv:1: has no observations" in problems_of(data_copy)


def test_a_header_only_countries_file_is_one_located_error(data_copy):
    path = data_copy / "countries.csv"
    path.write_text(path.read_text().splitlines()[0] + "\n")
    assert "countries.csv:1: has no countries" in problems_of(data_copy)


def test_an_unknown_file_in_observations_is_a_located_error(data_copy):
    shutil.copy(data_copy / "observations" / "sdg.csv", data_copy / "observations" / "sdgs.csv")
    assert "observations/sdgs.csv: is not the observations of a model of models.csv" in problems_of(data_copy)


@pytest.mark.parametrize("old, new, problem", [
    # risk_points of 10^20: past 2^53, where JSON numbers stop being exact (and orjson's 64 bits end)
    ("sovereign,gdp_growth,x < 0,100", "sovereign,gdp_growth,x < 0,100000000000000000000",
     "scoring.csv:2: column risk_points: '100000000000000000000' is too large (write at most 9007199254740991 "
     "(2^53 - 1))"),
    ("sovereign,gdp_growth,x < 0,100", "sovereign,gdp_growth,x < 0,1_00",  # Python's int() reads 100
     "scoring.csv:2: column risk_points: '1_00' is not a whole number"),
    ("sovereign,economy,Economy,Growth and prices,0.6,", "sovereign,economy,Economy,Growth and prices,0_6,",
     "sections.csv:2: column default_weight: '0_6' is not a number"),
])
def test_numbers_python_would_misread_are_located_errors(data_copy, old, new, problem):
    from ..conftest import replace_in
    replace_in(data_copy / ("scoring.csv" if "gdp_growth" in old else "sections.csv"), old, new)
    assert problem in problems_of(data_copy)
    result = riskapi("check", "--data", data_copy)
    assert result.exit_code == 1 and problem.split(": ", 1)[1] in result.output  # check agrees


def test_one_bad_section_weight_is_one_problem_not_a_flood_of_unknown_indicators(data_copy):
    from ..conftest import replace_in
    replace_in(data_copy / "sections.csv", "Growth and prices,0.6,", "Growth and prices,0.6x,")
    message = problems_of(data_copy)
    assert "has problems: 1 found" in message.splitlines()[0]
    assert "is not an indicator" not in message
    # sovereign's economy section holds gdp_growth and inflation: their 6 scoring rows and 11 observations
    assert "scoring.csv: 6 rows not checked against indicators.csv" in message
    assert "observations/sovereign.csv: 11 rows not checked against indicators.csv" in message


def test_text_that_a_spreadsheet_runs_is_neutralised_in_the_csv_export_only(data_copy):
    for name in ("scoring.csv", "observations/acme_aml.csv"):
        path = data_copy / name
        path.write_text(path.read_text().replace("grey", "=2+3"))
    site = data_copy.parent / "site"
    build(data_copy, site)
    release = site / CURRENT
    rows = [line for line in (release / "api/v1/exports/acme_aml/scores.csv").read_text().splitlines()
            if line.startswith("acme_aml,CIV,indicator,fatf_list,")]
    assert rows == ["acme_aml,CIV,indicator,fatf_list,2024-12-31,current,50.0,Medium,3,2,3,50,100,100.0,,,'=2+3,"
                    "FATF call for action=no; FATF increased monitoring=yes"]
    document = orjson.loads((release / "api/v1/riskscores/acme_aml/CIV/index.json").read_bytes())
    assert document["indicators"][0]["results"][0]["data"]["value"][0] == "=2+3"  # JSON keeps it exact
    import pyarrow.parquet as pq
    typed = [row for row in pq.read_table(release / "api/v1/exports/acme_aml/scores.parquet").to_pylist()
             if (row["country_code"], row["reference"]) == ("CIV", "fatf_list")]  # and Parquet, typed
    assert [(row["raw_value"], row["raw_components"]) for row in typed] == [
        ("=2+3", [("FATF call for action", "no"), ("FATF increased monitoring", "yes")])]


# ---- the keys file at the edge: the Worker compares what nginx compares --------------------------------

@pytest.mark.slow  # workerd
def test_bad_keys_lines_serve_no_key_on_nginx_and_in_workerd_alike(place):
    from ..live import start_edge_server
    with serving_copy_of(TINY, place) as nginx:
        twin, bad = "9f86d081884c7d659a2feaa0c55ad015", "3c59dc048e8850243be8079a5c74d079"
        kept = {key: digest_of(nginx.keys_file, key) for key in (twin, bad, nginx.keys["bob"])}
        with nginx.keys_file.open("a") as handle:
            handle.write(f"ALICE,{kept[twin]},,yes,\n")  # alice in other letter case: one user, so this line is refused
            handle.write(f"dave,{kept[bad]},,maybe,\n")  # a bad cell
            handle.write(f"erin,{kept[nginx.keys['bob']]},,yes,\n")  # bob's key again: neither line serves it
        nginx.runtime.refresh()
        nginx.keys.update({"ALICE": twin, "dave": bad, "erin": nginx.keys["bob"]})
        edge = start_edge_server(nginx)
        try:
            for server in (nginx, edge):
                statuses = {user: server.get("/api/v1/riskscores/acme_aml/", user=user).status
                            for user in ("alice", "ALICE", "dave", "bob", "erin", "carol")}
                assert statuses == {"alice": 200, "ALICE": 403, "dave": 403, "bob": 403, "erin": 403,
                                    "carol": 403}, server
                # alice's own key in other letter case is alice on both (nginx compares credentials ignoring case)
                assert server.get("/api/v1/riskscores/acme_aml/", headers={
                    "Authorization": f"apikey ALICE:{nginx.keys['alice']}"}).status == 200
        finally:
            edge.runtime.stop()


# ---- contained failures: the build's own processes ------------------------------------------------------

@pytest.mark.slow  # seconds of servers and processes: the whole suite runs it, --quick does not
def test_a_build_under_any_memory_limit_ends_and_leaves_the_live_release(tmp_path):
    """ulimit -v from 100 to 600 MB, 50 MB apart: what fails first differs (a shared library that cannot
    be mapped, a thread's stack, orjson, the write worker, Arrow's allocator, a native allocation that
    aborts), but every build ends — one ran forever at 55–65 MB, waiting for work a dead thread held —
    with exit 0 or an error, and the live release untouched."""
    import resource
    site = tmp_path / "site"
    build(TINY, site)
    live = current_release(site)
    outcomes = {}
    for megabytes in range(100, 601, 50):
        limit = megabytes * 2 ** 20
        try:
            done = subprocess.run([sys.executable, "-m", "generator.cli", "build", "--data", str(TINY), "--site",
                                   str(site), "--force"], capture_output=True, text=True, timeout=60,
                                  preexec_fn=lambda limit=limit: resource.setrlimit(resource.RLIMIT_AS, (limit, limit)))
        except subprocess.TimeoutExpired:
            raise AssertionError(f"the build hung under a limit of {megabytes} MB") from None
        outcomes[megabytes] = done.returncode
        if done.returncode == 1:
            assert "internal error" not in done.stderr, done.stderr  # said as what it is
        if done.returncode != 0:
            assert current_release(site) == live, (megabytes, done.stdout[-1000:], done.stderr[-2000:])
        live = current_release(site)
        assert "Traceback" not in done.stdout
    assert outcomes[600] == 0  # the tiny build needs 400–500 MB of address space (~150 MB of it pyarrow's libraries)


# ---- serve: signals and what a kill leaves ---------------------------------------------------------------

def start_private_serve(site: Path, keys: Path, port: int) -> subprocess.Popen:
    """Start `riskapi serve` with a private prefix of its own (no --prefix), as the README's command runs it."""
    serve = subprocess.Popen([sys.executable, "-m", "generator.cli", "serve", "--port", str(port), "--site",
                              str(site), "--keys", str(keys)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                             text=True)
    first = serve.stdout.readline()
    assert first.startswith("serving release"), first
    return serve


def private_prefix_of(first_line_pid: int) -> Path:
    import tempfile

    from generator.serve.loop import OWNER, PRIVATE_PREFIX
    return next(p for p in Path(tempfile.gettempdir()).glob(f"{PRIVATE_PREFIX}*")
                if (p / OWNER).is_file() and (p / OWNER).read_text() == str(first_line_pid))


@pytest.fixture
def site_and_keys(place) -> tuple[Path, Path]:
    """Return a built site and a keys file of one key in a folder nginx workers may enter."""
    site, keys = place / "site", place / "keys.csv"
    riskapi("build", "--data", TINY, "--site", site, "-q")
    riskapi("keys", "add", "alice", "--keys", keys)
    return site, keys


def test_sighup_rereads_serve_and_sigterm_removes_its_key_map(site_and_keys):
    site, keys = site_and_keys
    serve = start_private_serve(site, keys, free_port())
    prefix = private_prefix_of(serve.pid)
    assert (prefix / "conf" / "runtime" / "keys.conf").is_file()
    serve.send_signal(signal.SIGHUP)
    lines = iter(serve.stdout.readline, "")
    assert any(line.startswith("re-read on SIGHUP") for line in lines)  # and it goes on serving
    assert serve.poll() is None
    serve.send_signal(signal.SIGTERM)
    assert serve.wait(timeout=20) == 0
    assert not prefix.exists()  # the key map went with it


def test_the_key_map_a_killed_serve_left_is_removed_by_the_next_serve(site_and_keys):
    site, keys = site_and_keys
    killed = start_private_serve(site, keys, free_port())
    left = private_prefix_of(killed.pid)
    killed.kill()  # kill -9: no handler runs, its prefix (and keys.conf) stays behind
    killed.wait(timeout=10)
    assert (left / "conf" / "runtime" / "keys.conf").is_file()
    serve = start_private_serve(site, keys, free_port())
    try:
        assert not left.exists()
    finally:
        serve.send_signal(signal.SIGTERM)
        serve.wait(timeout=20)


def test_keys_add_shows_the_new_key_before_it_is_saved(tmp_path, monkeypatch):
    """A kill right after the keys file is replaced must not leave a key nobody saw (with --replace,
    the user's only key): the key is printed first; a failed save says the key shown was not saved."""
    keys = tmp_path / "keys.csv"
    old = riskapi("keys", "add", "alice", "--keys", keys).output.strip()

    def full_disk(path, lines):
        raise OSError(28, "No space left on device", str(path))
    import generator.serve.keys.edits as edits
    monkeypatch.setattr(edits, "write_lines", full_disk)
    result = riskapi("keys", "add", "alice", "--replace", "--keys", keys)
    assert result.exit_code == 1
    shown, warning = result.output.splitlines()[:2]
    assert key_format.checksum_problem(shown) is None and shown.startswith("cra_live_")  # a key, whole
    assert warning == "error: the key above was NOT saved (see below); nothing changed in the keys file"
    assert [(k.digest, k.active) for k in read_keys(keys)] == [(digest_of(keys, old), True)]


def test_a_site_path_with_spaces_is_served_and_one_with_a_dollar_is_refused_clearly(place):
    import urllib.request
    site, keys = place / "my site", place / "keys.csv"
    riskapi("build", "--data", TINY, "--site", site, "-q")
    key = riskapi("keys", "add", "alice", "--keys", keys).output.strip()
    port = free_port()
    serve = start_private_serve(site, keys, port)
    try:
        request = urllib.request.Request(f"http://127.0.0.1:{port}/api/v1/riskscores/sovereign/",
                                         headers={"Authorization": key})
        with urllib.request.urlopen(request, timeout=5) as answer:
            assert answer.status == 200
    finally:
        serve.send_signal(signal.SIGTERM)
        serve.wait(timeout=20)
    odd = place / "cost$site"
    shutil.copytree(site, odd, symlinks=True)
    refused = subprocess.run([sys.executable, "-m", "generator.cli", "serve", "--port", str(free_port()), "--site",
                              str(odd), "--keys", str(keys)], capture_output=True, text=True, timeout=30)
    assert refused.returncode == 1
    assert "nginx would read the '$' in this path as a variable" in refused.stderr


def test_a_keys_line_with_its_columns_swapped_never_shows_the_key(tmp_path):
    keys = tmp_path / "keys.csv"
    key = "9f86d081884c7d659a2feaa0c55ad0~5"  # a ~ is no user's letter: the user cell is refused
    keys.write_text(f"user,key,models,active\n{key},alice,,yes\nbob,3c59dc048e8850243be8079a5c74d079,{key},yes\n")
    problems = load_keys(keys).problems
    assert problems == [f"{keys}:2: user '9f86…d0~5' may only use letters, digits and . _ @ - (at most 64)",
                        f"{keys}:3: model '9f86…d0~5' is not a model code (separate several with ';'; @preview "
                        "lets a key read staged releases)"]
