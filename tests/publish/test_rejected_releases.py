"""Never publish what a server rejects, and a revocation always lands: a release nginx's `-t` refuses
is never made live (its line named), country names and groups are served as themselves or refused
where no server could look them up, and a keys change is applied while a new release is held back."""
from __future__ import annotations

import shutil
import signal
import subprocess
import sys
import urllib.parse
import urllib.request
from pathlib import Path

import orjson
import pytest

from generator.errors import DataError, PublishError
from generator.history.catalogue import PUBLISH, Catalogue, switching
from generator.history.site import CURRENT, RELEASES, current_release, switch_to
from generator.publish.build_release import build
from generator.serve.nginx.configuration import check_release
from generator.serve.status import read_statuses

from ..conftest import TINY, riskapi
from ..live import free_port, serving_copy_of, wait_for

pytestmark = pytest.mark.faults

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
