"""Custom models: variants of endpoints 1 and 5 grow with the clients, not with the subsets (docs/api.md)."""
from __future__ import annotations

import json
import re
import shutil

from click.testing import CliRunner

from generator.cli import main
from generator.contract import locations
from generator.history.site import CURRENT
from generator.publish.build_release import build
from generator.serve.keys import ApiKey
from generator.serve.nginx.key_map import render_key_map
from tools.synthetic_data import add_model_copy

from ..cli.test_cli import TINY_GROUPS
from ..conftest import GOLDEN, TINY
from ..live import start_live_server


def test_audiences_are_the_public_set_each_model_and_the_sets_clients_hold():
    # 3 custom models and clients holding {a, b} twice, {c} and {a, b, x} (x is no custom model):
    # public + a + b + c + {a, b} = 5 variants (every subset would be 2³ = 8; 20 models, 2²⁰).
    found = locations.audiences(("a", "b", "c"), [{"a", "b"}, {"a", "b"}, {"c"}, {"a", "b", "x"}])
    assert [locations.audience_name(a) for a in found] == ["public", "a", "b", "c", "a+b"]
    assert len(locations.audiences(tuple(f"m{i:02d}" for i in range(20)))) == 21


def test_nginx_key_map_rows_grow_with_users_plus_releases_times_grant_sets():
    # 1,000 users, 3 of them granted a (2) or a+b (1); 4 releases, each with models a and b and the
    # variants public, a, b and a+b — except r1, which has only a: {a} there, {a, b} served as {a}.
    # Rows: 1,000 digests → owner; 1,000 users × 2 (a bare key, a key that names its user) → key user; 3 users →
    # grant set; 2 grant sets × 4 releases = 8 audience rows (none for public, the default): never 1,000 × 4.
    keys = [ApiKey(f"user{i:04d}", f"{i:040x}", ("a",) if i in (1, 2) else ("a", "b") if i == 3 else (), True, False)
            for i in range(1000)]
    every = [frozenset(), frozenset("a"), frozenset("b"), frozenset("ab")]
    releases = [("r1", ("a",), [frozenset(), frozenset("a")])] + [(f"r{n}", ("a", "b"), every) for n in (2, 3, 4)]
    text = render_key_map(keys, releases, "5" * 64)
    maps = {m.group(1): [line.strip() for line in m.group(2).strip().splitlines()]
            for m in re.finditer(r"map \S+ \$(\w+) \{\n(.*?)\n\}", text, re.S)}
    assert len(maps["key_owner"]) == 1 + 1000 and maps["key_owner"][2] == f"{1:040x} user0001;"
    assert len(maps["key_user"]) == 1 + 2000 and maps["key_user"][3:5] == ['"\\\\:user0001" user0001;',
                                                                         '"\\\\user0001:user0001" user0001;']
    assert maps["grant_set"] == ["default public;", '"\\\\user0001" a;', '"\\\\user0002" a;', '"\\\\user0003" a+b;']
    assert sorted(maps["audience"][1:]) == ['"\\\\r1:a" a;', '"\\\\r1:a+b" a;', '"\\\\r2:a" a;', '"\\\\r2:a+b" a+b;',
                                             '"\\\\r3:a" a;', '"\\\\r3:a+b" a+b;', '"\\\\r4:a" a;', '"\\\\r4:a+b" a+b;']


def test_files_grouped_by_visibility_are_what_each_audience_may_know_of():
    # every file of the golden release, for the public, alice's {acme_aml} and an unknown set's audience
    files = sorted(p.relative_to(GOLDEN).as_posix() for p in GOLDEN.rglob("*") if p.is_file())
    grouped = locations.VisibleFiles(files)
    for grants in (frozenset(), frozenset({"acme_aml"}), frozenset({"acme_aml", "other"})):
        expected = [f for f in files if locations.visible_to(f, grants, {"acme_aml", "other"})]
        assert grouped.of(grants, {"acme_aml", "other"}) == expected
        assert grouped.count(grants, {"acme_aml", "other"}) == len(expected)
    assert any("acme_aml" in f for f in grouped.of(frozenset({"acme_aml"}), {"acme_aml"}))
    assert not any("acme_aml" in f for f in grouped.of(frozenset(), {"acme_aml"}))


def test_a_client_without_its_own_variant_is_served_the_largest_one_it_holds():
    existing = locations.audiences(("a", "b", "c"), [{"a", "b"}])
    assert locations.audience_for(frozenset("ab"), existing) == frozenset("ab")
    assert locations.audience_for(frozenset("abc"), existing) == frozenset("ab")  # 2 of its 3
    assert locations.audience_for(frozenset("bc"), existing) == frozenset("b")  # a tie: the first by name
    assert locations.audience_for(frozenset(), existing) == frozenset()


def two_custom_models(folder):
    data = folder / "data"
    shutil.copytree(TINY, data)
    add_model_copy(data, "acme_aml", "beta_aml")
    return data


def variants(site, path: str) -> list[str]:
    folder = site / CURRENT / path.strip("/")
    return sorted(p.name for p in folder.iterdir() if p.is_dir() and p.name.startswith("audience="))


def test_a_build_renders_variants_for_the_grant_sets_given(tmp_path):
    data = two_custom_models(tmp_path)
    build(data, tmp_path / "a")
    assert variants(tmp_path / "a", "api/v1/configuration/riskscoremodels") == [
        "audience=acme_aml", "audience=beta_aml"]
    report = build(data, tmp_path / "b", grant_sets=[frozenset({"acme_aml", "beta_aml"})])
    assert variants(tmp_path / "b", "api/v1/configuration/riskscoremodels") == [
        "audience=acme_aml", "audience=acme_aml+beta_aml", "audience=beta_aml"]
    # 3 countries: (1 model list + 3 country answers) per audience, one audience more
    assert report.documents == locations.document_count(TINY_GROUPS, 4, 4)
    both = json.loads((tmp_path / "b" / CURRENT /
                       "api/v1/configuration/riskscoremodels/audience=acme_aml+beta_aml/index.json").read_bytes())
    assert [m["code"] for m in both] == ["acme_aml", "beta_aml", "sdg", "sovereign"]


def test_a_new_grant_set_works_at_once_and_gets_its_variant_at_the_next_build(tmp_path):
    data = two_custom_models(tmp_path)
    server = start_live_server(data)
    try:
        site, keys = server.base / "site", server.base / "keys" / "keys.csv"
        added = CliRunner().invoke(main, ["keys", "add", "dora", "--models", "acme_aml,beta_aml", "--keys", str(keys),
                                          "--site", str(site)])
        assert added.exit_code == 0, added.output
        key = added.output.splitlines()[0]
        assert ("note: release " in added.output and "has no variant of the model list and country answers for "
                "acme_aml+beta_aml; until `riskapi build` renders it, dora sees acme_aml there") in added.output
        server.runtime.refresh()
        server.keys["dora"] = key
        # both models' own routes work at once; the model list is the largest variant dora holds
        assert server.get("/api/v1/riskscores/beta_aml/", user="dora").status == 200
        assert server.get("/api/v1/riskscores/acme_aml/CIV/", user="dora").status == 200
        before = [m["code"] for m in json.loads(server.get("/api/v1/configuration/riskscoremodels/", user="dora").body)]
        assert before == ["acme_aml", "sdg", "sovereign"]
        # the next build renders dora's own variant (riskapi build reads the keys file)
        rebuilt = CliRunner().invoke(main, ["build", "--data", str(data), "--site", str(site), "--keys", str(keys)])
        assert rebuilt.exit_code == 0, rebuilt.output
        server.runtime.refresh()
        answer = server.get("/api/v1/configuration/riskscoremodels/", user="dora")
        assert [m["code"] for m in json.loads(answer.body)] == ["acme_aml", "beta_aml", "sdg", "sovereign"]
        assert answer.body == server.release_file(
            "api/v1/configuration/riskscoremodels/audience=acme_aml+beta_aml/index.json")
        # a client with one grant is unchanged, and one without cannot tell beta_aml exists
        assert server.get("/api/v1/riskscores/beta_aml/", user="alice").status == 404
        assert server.get("/api/v1/riskscores/beta_aml/", user="bob").status == 404
    finally:
        server.runtime.stop()
        shutil.rmtree(server.base, ignore_errors=True)


def test_keys_add_says_nothing_when_the_variant_exists(tmp_path, tiny_site):
    keys = tmp_path / "keys.csv"
    added = CliRunner().invoke(main, ["keys", "add", "erin", "--models", "acme_aml", "--keys", str(keys),
                                      "--site", str(tiny_site)])
    assert added.exit_code == 0 and "note:" not in added.output


def test_keys_add_against_a_release_from_before_audiences_were_listed(tmp_path, tiny_site):
    # Such a release (its release.json without "audiences") had a variant for every grant set, so a
    # grant needs no note; it crashed on an empty list of audiences before.
    site = tmp_path / "site"
    shutil.copytree(tiny_site, site, symlinks=True)
    info = site / CURRENT / "nginx" / "release.json"
    info.write_text(json.dumps({"custom_models": ["acme_aml"]}))
    added = CliRunner().invoke(main, ["keys", "add", "erin", "--models", "acme_aml", "--keys", str(tmp_path / "k.csv"),
                                      "--site", str(site)])
    assert added.exit_code == 0, added.output
    assert "note:" not in added.output
