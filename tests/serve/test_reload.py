"""Keys and releases change under a running nginx: picked up by a graceful reload, no rebuild."""
import json

from generator.history.site import rollback
from generator.publish.build_release import build
from generator.serve.keys import add_key, revoke

from ..conftest import make_nga_black

PATH = "/api/v1/riskscores/acme_aml/NGA/"


def test_revoked_key_is_refused_after_reload(module_server):
    dave = add_key(module_server.keys_file, "dave").key
    assert module_server.runtime.refresh() is True
    module_server.keys["dave"] = dave
    assert module_server.get(PATH.replace("acme_aml", "sovereign"), user="dave").status == 200
    revoke(module_server.keys_file, "dave")
    assert module_server.runtime.refresh() is True
    answer = module_server.get(PATH.replace("acme_aml", "sovereign"), user="dave")
    assert (answer.status, json.loads(answer.body)) == (403, {"detail": "Invalid API key."})


def test_new_grant_takes_effect_without_rebuild(module_server):
    erin = add_key(module_server.keys_file, "erin").key
    module_server.runtime.refresh()
    module_server.keys["erin"] = erin
    assert module_server.get(PATH, user="erin").status == 404
    module_server.keys["erin"] = add_key(module_server.keys_file, "erin", ("acme_aml",), replace_old=True).key
    module_server.runtime.refresh()
    assert module_server.get(PATH, user="erin").status == 200
    assert module_server.get(PATH, user="erin", form="bare").status == 200


def test_nothing_changed_means_no_reload(module_server):
    assert module_server.runtime.refresh() is False


def test_new_release_is_served_after_reload_and_etags_survive_identical_data(module_server):
    before = module_server.get(PATH)
    unchanged = module_server.get("/api/v1/riskscores/sovereign/AUT/")
    make_nga_black(module_server.data)
    build(module_server.data, module_server.site)
    assert module_server.runtime.refresh() is True
    after = module_server.get(PATH)
    assert json.loads(before.body)["results"][0]["score"] == 50.0
    assert json.loads(after.body)["results"][0]["score"] == 100.0  # black: 100 of 100 points
    assert after.header("etag") != before.header("etag")
    # a document whose bytes did not change keeps its ETag: a client's conditional request is a 304
    again = module_server.get("/api/v1/riskscores/sovereign/AUT/", headers={"If-None-Match": unchanged.header("etag")})
    assert again.status == 304
    # rolling back serves the previous release again
    rollback(module_server.site)
    module_server.runtime.refresh()
    assert module_server.get(PATH).body == before.body


def test_a_bad_keys_line_serves_no_key_and_every_other_line_goes_on(module_server):
    """A bad line is skipped (its key is refused), the rest of the file is applied, and the problem is
    reported by line in the serve's status, never with the key."""
    keys_conf = module_server.keys_file
    original = keys_conf.read_text()
    try:
        keys_conf.write_text(original + "mallory,abc,,yes,\n")  # a key typed where its digest belongs
        assert module_server.runtime.refresh() is True
        assert module_server.get("/api/v1/riskscores/sovereign/").status == 200  # the others' keys work
        assert "mallory" not in (module_server.runtime.conf / "runtime" / "keys.conf").read_text()
        problems = module_server.runtime.status.state["live"]["keyProblems"]
        line = len(original.splitlines()) + 1
        assert problems == [f"{keys_conf}:{line}: key_digest is not a key's digest (40 hex characters); a key is added "
                            "with `riskapi keys add USER --key KEY`, which keeps only its digest"]
    finally:
        keys_conf.write_text(original)
        module_server.runtime.refresh()


def test_rebuild_with_identical_data_keeps_every_etag(module_server):
    paths = ["/api/v1/riskscores/sovereign/AUT/", "/api/v1/riskscores/acme_aml/", "/api/v1/configuration/countries/",
             "/api/v1/riskscores/country/CIV/", "/api/v1/configuration/riskscoremodels/"]
    build(module_server.data, module_server.site)  # the release now matches the data folder (earlier tests changed both)
    module_server.runtime.refresh()
    before = {path: module_server.get(path).header("etag") for path in paths}
    build(module_server.data, module_server.site, force=True)
    assert module_server.runtime.refresh() is True  # a new release id, so nginx reloads …
    from generator.history.site import current_release
    assert module_server.get(paths[0]).header("x-release") == current_release(module_server.site)  # … and names it
    after = {path: module_server.get(path).header("etag") for path in paths}
    assert after == before  # … yet every validator a client holds stays valid
    assert all(module_server.get(p, headers={"If-None-Match": e}).status == 304 for p, e in before.items())
